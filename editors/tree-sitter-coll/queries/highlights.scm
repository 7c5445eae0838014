; Highlights for .coll. Capture names are the tree-sitter CLI's standard names, which Neovim's
; nvim-treesitter and most editors also understand. When several patterns capture the same node,
; the LAST one wins (tree-sitter CLI and Neovim alike): general patterns first, specific ones later.

(identifier) @variable

; Comments and literals

(comment) @comment

(string) @string
(escape_sequence) @string.escape

(integer) @number
(decimal) @number
(unit) @type.builtin

(boolean) @constant.builtin
(auto) @constant.builtin

; Keywords

"import" @keyword
[
  "param"
  "let"
  "generator"
  "topology"
  "collective"
  "schedule"
  "model"
  "target"
] @keyword
[
  "compute"
  "switch"
] @keyword
[
  "link"
  "use"
  "as"
] @keyword
[
  "for"
  "in"
  "if"
  "else"
] @keyword

; Operators and punctuation

[
  "<->"
  "->"
] @operator
[
  "||"
  "&&"
  "=="
  "!="
  "<"
  "<="
  ">"
  ">="
  ".."
  "+"
  "-"
  "*"
  "/"
  "%"
  "!"
  "="
] @operator

[
  "("
  ")"
  "["
  "]"
  "{"
  "}"
] @punctuation.bracket

[
  ";"
  ":"
  ","
  "."
] @punctuation.delimiter

; Names

(import_declaration path: (identifier) @module)

(generator_definition name: (identifier) @function)
(call_expression function: (identifier) @function)
(call_expression
  function: (identifier) @function.builtin
  (#match? @function.builtin "^(min|max|abs|floor|ceil|pow|len|first)$"))

(parameter name: (identifier) @variable.parameter)
(named_argument name: (identifier) @variable.parameter)
(type (identifier) @type)

(topology_definition name: (identifier) @type)
(model_declaration name: (identifier) @type)

; Collective kinds, schedule families, model kinds and targets: constants of the language.
(collective_declaration kind: (identifier) @constant.builtin)
(schedule_declaration family: (identifier) @constant.builtin)
(model_declaration kind: (identifier) @constant.builtin)
(target_declaration kind: (identifier) @constant.builtin)

(property key: (identifier) @property)

; Values that mean something in their property: dtypes, ops, `all`, stage encodings, ...
(property
  key: (identifier) @property
  value: (identifier) @constant
  (#match? @property "^(dtype|op|participants|leader|routing|proto)$"))
; Recursive multiplying stage encodings in lists (`stages: [c4m2, a2, e4m2]`). Matched by their
; form rather than by the `stages` key: tree-sitter's highlighter drops the first element of a
; list captured through its parent property.
(list
  (identifier) @constant
  (#match? @constant "^(a[0-9]+|[ce][0-9]+m[0-9]+|[mn][0-9]+g[0-9]+a[0-9]+)$"))

(link_attribute name: (identifier) @attribute)

(field_expression field: (identifier) @property)
