" Vim syntax file
" Language:    coll (collc's collective-communication schedules)
" Filenames:   *.coll
" Regex highlighting that needs neither tree-sitter nor the language server (Neovim 0.7+, Vim 8).
" grammar/coll.lalrpop and src/syntax/lexer.rs are the authority; keep this in step with them.

if exists("b:current_syntax")
  finish
endif

let s:cpo_save = &cpo
set cpo&vim

syn case match
syn sync fromstart

" Keywords. `model` is a match, not a keyword, because `model:` is also a property name.
syn keyword collImport      import
syn keyword collDeclaration param let generator topology collective schedule target
syn match   collDeclaration "\<model\>\%(\s*:\)\@!"
syn keyword collNode        compute switch
syn keyword collStatement   link use as
syn keyword collRepeat      for in
syn keyword collConditional if else
syn keyword collAssert      assert
syn keyword collBoolean     true false
syn keyword collAuto        auto

" Calls: generators and the built-in functions.
syn match collCall    "\<\h\w*\ze\s*("
syn match collBuiltin "\<\%(min\|max\|abs\|floor\|ceil\|pow\|len\|first\)\ze\s*("

" Names being defined (after calls, so `generator g(` is a definition).
syn match collFunctionDef  "\%(\<generator\s\+\)\@<=\h\w*"
syn match collTopologyName "\%(\<topology\s\+\)\@<=\h\w*"
syn match collNodeName     "\%(\<\%(compute\|switch\)\s\+\)\@<=\h\w*"
syn match collModelName    "\%(\<model\s\+\)\@<=\h\w*"
syn match collVariableDef  "\%(\<\%(param\|let\|for\)\s\+\)\@<=\h\w*"

" Kinds after the item keyword: collective kinds, schedule families, model kinds, targets.
syn match collKind "\%(\<collective\s\+\)\@<=\%(allreduce\|allgather\|reduce_scatter\|broadcast\|reduce\|barrier\)\>"
syn match collKind "\%(\<schedule\s\+\)\@<=\%(recursive_multiplying\|recursive_doubling\|ring\|binomial\|nccl_tree\|forest\|canary\|static_trees\)\>"
syn match collKind "\%(\<model\s\+\h\w*\s*:\s*\)\@<=\%(postal\|pipelining_postal\|loggp\|flow\|packet\)\>"
syn match collKind "\%(\<target\s\+\)\@<=\%(msccl\|mpi\|p4\|goal\|sim\)\>"

" Types of params and generator parameters (`n: int`).
syn match collType "\%(:\s*\)\@<=\%(int\|number\|size\|time\|bandwidth\|inverse_bandwidth\|bool\|string\|list\|node\)\>"

" Property names in `{ key: value; }` blocks (one per line, or after `{` or `;`).
syn match collProperty "\%(^\|[{;]\)\s*\zs\h\w*\ze\s*:"

" Values with a meaning in their property.
syn keyword collDtype i32 i64 f16 bf16 f32 f64
syn match collConstant "\%(\<op\s*:\s*\)\@<=\%(sum\|prod\|min\|max\)\>\%(\s*(\)\@!"
syn match collConstant "\%(\<participants\s*:\s*\)\@<=all\>"
syn match collConstant "\%(\<leader\s*:\s*\)\@<=\%(first\|hash\|round_robin\)\>"
syn match collConstant "\%(\<routing\s*:\s*\)\@<=\%(adaptive\|ecmp\|minimal\)\>"
syn match collConstant "\%(\<proto\s*:\s*\)\@<=\%(simple\|ll\|ll128\)\>"

" Recursive multiplying stage encodings inside `stages: [...]`: a4, c8m2, e8m2, m1g1a3, n1g1a2.
syn region collStageList matchgroup=collDelimiter start="\%(\<stages\s*:\s*\)\@<=\[" end="\]"
      \ contains=collStage,collComment,collNumber
syn match collStage "\<\%(a\d\+\|[ce]\d\+m\d\+\|[mn]\d\+g\d\+a\d\+\)\>" contained

" Link attributes after the bandwidth: `, latency 1 us, parallel 4`.
syn match collAttribute "\%(,\s*\)\@<=\%(latency\|parallel\)\>\%(\s*[,;:)]\)\@!"

" Numbers, then quantities (defined later, so they win at the same start): a number and a unit
" on one line are one token, `300 GB/s`, `25Gbps`, `0.4 ns/B`. Note `10 GB/n` is the unit GB/n.
syn match collNumber   "\<\d[0-9_]*\%(\.\d[0-9_]*\)\="
syn match collQuantity "\<\d[0-9_]*\%(\.\d[0-9_]*\)\=[ \t]*\a\w*\%(/\a\w*\)\=" contains=collQuantityNumber,collUnit
syn match collQuantityNumber "\d[0-9_]*\%(\.\d[0-9_]*\)\=" contained
syn match collUnit           "\a\w*\%(/\a\w*\)\=" contained

" Punctuation and operators (later items win: `..` over `.`, `<->` over `<`).
syn match collDelimiter "[;,:.]"
syn match collOperator "\.\.\|==\|!=\|<=\|>=\|&&\|||\|[-+*/%!<>=]"
syn match collArrow    "<->\|->"

" Strings and comments (last, so they win over everything inside them).
syn match  collEscape  "\\." contained
syn region collString  start=+"+ skip=+\\.+ end=+"\|$+ contains=collEscape oneline
syn keyword collTodo   TODO FIXME XXX NOTE contained
syn match  collComment "//.*$" contains=collTodo,@Spell

" Characters that belong to no token (error E0002).
syn match collError "[$@#?~^\\'`]"

hi def link collImport         Include
hi def link collDeclaration    Keyword
hi def link collNode           StorageClass
hi def link collStatement      Statement
hi def link collRepeat         Repeat
hi def link collConditional    Conditional
hi def link collAssert         Keyword
hi def link collBoolean        Boolean
hi def link collAuto           Constant
hi def link collFunctionDef    Function
hi def link collTopologyName   Identifier
hi def link collNodeName       Identifier
hi def link collModelName      Identifier
hi def link collVariableDef    Identifier
hi def link collCall           Function
hi def link collBuiltin        Function
hi def link collKind           Type
hi def link collType           Type
hi def link collProperty       Identifier
hi def link collDtype          Constant
hi def link collConstant       Constant
hi def link collStage          Constant
hi def link collAttribute      Label
hi def link collNumber         Number
hi def link collQuantityNumber Number
hi def link collUnit           Type
hi def link collArrow          Special
hi def link collOperator       Operator
hi def link collDelimiter      Delimiter
hi def link collEscape         SpecialChar
hi def link collString         String
hi def link collTodo           Todo
hi def link collComment        Comment
hi def link collError          Error

let b:current_syntax = "coll"

let &cpo = s:cpo_save
unlet s:cpo_save
