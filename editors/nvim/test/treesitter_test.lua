-- The tree-sitter grammar (editors/tree-sitter-coll) in Neovim's own tree-sitter runtime:
-- the ABI-14 parser loads, every example and stdlib file parses without errors, and
-- queries/highlights.scm compiles and captures what it should. Needs COLL_TS_PARSER, the
-- parser built as a shared library (editors/test.sh sets it); skipped without it.
local T = _G.T
local parser_path = os.getenv("COLL_TS_PARSER")

local function need_parser()
  if parser_path == nil or parser_path == "" then
    T.skip("COLL_TS_PARSER is not set")
  end
  -- Neovim 0.7: vim.treesitter.require_language(lang, path); later versions: language.add.
  if vim.treesitter.language.add then
    vim.treesitter.language.add("coll", { path = parser_path })
  else
    vim.treesitter.require_language("coll", parser_path)
  end
end

local function parse_query(text)
  if vim.treesitter.query.parse then
    return vim.treesitter.query.parse("coll", text)
  end
  return vim.treesitter.parse_query("coll", text)
end

local function root_of(buf)
  local parser = vim.treesitter.get_parser(buf, "coll")
  return parser:parse()[1]:root()
end

T.test("tree-sitter: the parser loads and parses every example and stdlib file without errors", function()
  need_parser()
  local files = {}
  for _, dir in ipairs({ "examples", "stdlib" }) do
    for _, f in ipairs(vim.fn.globpath(T.repo .. "/" .. dir, "*.coll", false, true)) do
      table.insert(files, dir .. "/" .. vim.fn.fnamemodify(f, ":t"))
    end
  end
  assert(#files > 0, "no files")
  for _, rel in ipairs(files) do
    local buf = T.open(rel)
    local root = root_of(buf)
    T.eq(root:type(), "source_file", rel .. " root")
    if root:has_error() then
      error(rel .. " has ERROR or MISSING nodes: " .. root:sexpr():sub(1, 400))
    end
  end
end)

T.test("tree-sitter: highlights.scm compiles in Neovim and captures the expected names", function()
  need_parser()
  local f = assert(io.open(T.repo .. "/editors/tree-sitter-coll/queries/highlights.scm"))
  local query = parse_query(f:read("*a"))
  f:close()
  local buf = T.open("examples/quickstart.coll")
  local root = root_of(buf)
  -- The last capture of a node wins, as in Neovim's highlighter.
  local at = {}
  for id, node in query:iter_captures(root, buf, 0, -1) do
    local r, c = node:range()
    at[r .. ":" .. c .. ":" .. vim.treesitter.get_node_text(node, buf)] = query.captures[id]
  end
  local function want(pattern, text, capture)
    local l, c = T.find(pattern)
    local key = (l - 1) .. ":" .. (c - 1) .. ":" .. text
    T.eq(at[key], capture, "capture of " .. text .. " at " .. l .. ":" .. c)
  end
  want([[^param]], "param", "keyword")
  want([[^generator \zsring_of]], "ring_of", "function")
  want([[<->]], "<->", "operator")
  want([[25 \zsGB/s]], "GB/s", "type.builtin")
  want([[\<latency\>]], "latency", "attribute")
  want([[^collective \zsallreduce]], "allreduce", "constant.builtin")
  want([[dtype: \zsf32]], "f32", "constant")
  want([[stages: \[\zsa2]], "a2", "constant")
  want([[^// The README]], vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1], "comment")
end)

T.test("tree-sitter: setup_treesitter() highlights coll buffers with Neovim's own runtime", function()
  need_parser()
  local collc = require("collc")
  T.eq(collc.setup_treesitter({ parser = parser_path }), true, "setup_treesitter()")
  local ok, err = pcall(function()
    local buf = T.open("examples/dgx_a100_2x8.coll")
    assert(vim.treesitter.highlighter.active[buf] ~= nil, "no tree-sitter highlighter on the buffer")
    T.eq(vim.bo[buf].syntax, "", "regex syntax turned off under tree-sitter")
    -- Redraw once so that the highlighter runs its queries over the buffer.
    vim.cmd("redraw")
  end)
  vim.api.nvim_del_augroup_by_name("collc_treesitter")
  if not ok then
    error(err, 0)
  end
end)
