-- Filetype detection, buffer settings, regex highlighting and indentation (no server needed).
local T = _G.T

T.test("*.coll files get filetype coll", function()
  T.open("examples/quickstart.coll")
  T.eq(vim.bo.filetype, "coll", "filetype")
  T.open("stdlib/ring.coll")
  T.eq(vim.bo.filetype, "coll", "filetype of a stdlib file")
end)

T.test("ftplugin: comments and indentation settings", function()
  T.open("examples/quickstart.coll")
  T.eq(vim.bo.commentstring, "// %s", "commentstring")
  T.eq(vim.bo.comments, "://", "comments")
  T.eq(vim.bo.shiftwidth, 4, "shiftwidth")
  T.eq(vim.bo.expandtab, true, "expandtab")
  T.eq(vim.bo.indentexpr, "CollIndent(v:lnum)", "indentexpr")
end)

T.test("syntax: highlighting groups in examples/quickstart.coll", function()
  T.open("examples/quickstart.coll")
  T.eq(vim.b.current_syntax, "coll", "b:current_syntax")
  T.syn_at([[^// The README]], "collComment")
  T.syn_at([[^param hosts]], "collDeclaration")
  T.syn_at([[\<hosts: int]], "collVariableDef")
  T.syn_at([[: \zsint\>]], "collType")
  T.syn_at([[= \zs8;]], "collNumber")
  T.syn_at([[^generator]], "collDeclaration")
  T.syn_at([[\<ring_of(n]], "collFunctionDef")
  T.syn_at([[\<compute\>]], "collNode")
  T.syn_at([[\<for\>]], "collRepeat")
  T.syn_at([[ \zsin 0]], "collRepeat")
  T.syn_at([[0\zs\.\.n]], "collOperator")
  T.syn_at([[\<link\>]], "collStatement")
  T.syn_at([[<->]], "collArrow")
  T.syn_at([[\<latency\>]], "collAttribute")
  T.syn_at([[ring_of(hosts, \zs25 GB/s]], "collQuantityNumber")
  T.syn_at([[25 \zsGB/s]], "collUnit")
  T.syn_at([[25 GB\zs/s]], "collUnit")
  T.syn_at([[lab = \zsring_of]], "collCall")
  T.syn_at([[^collective \zsallreduce]], "collKind")
  T.syn_at([[^    \zssize:]], "collProperty")
  T.syn_at([[dtype: \zsf32]], "collDtype")
  T.syn_at([[op: \zssum]], "collConstant")
  T.syn_at([[^schedule \zsrecursive_multiplying]], "collKind")
  T.syn_at([[stages: \[\zsa2]], "collStage")
  T.syn_at([=[, \zsa4\]]=], "collStage")
end)

T.test("syntax: constructs not in the examples", function()
  T.scratch({
    "import \"lib/x.coll\";", -- 1
    "model aries: pipelining_postal { alpha_p: 500 ns; beta: 0.4 ns/B; }", -- 2
    "target sim { model: aries; }", -- 3
    "let s = \"a\\\"b\"; // TODO: more", -- 4
    "let bad = 3 $ 4;", -- 5
    "let odd = 10 GB/n + 1_000 + 0.5;", -- 6
    "schedule canary { leader: round_robin; }", -- 7
    "topology t { link a -> b : 1 GB/s, parallel 2; assert len(a) == 1; }", -- 8
    "let x = true && !false || auto;", -- 9
    "schedule recursive_multiplying { stages: [c4m2, m1g1a2, n1g1a2, e4m2]; }", -- 10
    "let y = min(a, b) + max(1, 2) + floor(z);", -- 11
  })
  T.syn_at([[^import]], "collImport")
  T.syn_at([["lib]], "collString")
  T.syn_at([[^model]], "collDeclaration")
  T.syn_at([[\<aries:]], "collModelName")
  T.syn_at([[pipelining_postal]], "collKind")
  T.syn_at([[alpha_p]], "collProperty")
  T.syn_at([[ns/B]], "collUnit")
  T.syn_at([[^target \zssim]], "collKind")
  T.syn_at([[{ \zsmodel: aries]], "collProperty")
  T.syn_at([[\\"]], "collEscape")
  T.syn_at([[TODO]], "collTodo")
  T.syn_at([[\$]], "collError")
  T.syn_at([[GB/n]], "collUnit")
  T.syn_at([[1_000]], "collNumber")
  T.syn_at([[0\.5]], "collNumber")
  T.syn_at([[round_robin]], "collConstant")
  T.syn_at([[ -> ]], "collArrow", 1)
  T.syn_at([[\<parallel\>]], "collAttribute")
  T.syn_at([[\<assert\>]], "collAssert")
  T.syn_at([[\<true\>]], "collBoolean")
  T.syn_at([[&&]], "collOperator")
  T.syn_at([[|| \zsauto]], "collAuto")
  T.syn_at([[c4m2]], "collStage")
  T.syn_at([[m1g1a2]], "collStage")
  T.syn_at([[e4m2]], "collStage")
  T.syn_at([[\<min(a]], "collBuiltin")
  T.syn_at([[\<floor(]], "collBuiltin")
end)

local function coll_files()
  local files = {}
  for _, dir in ipairs({ "examples", "stdlib" }) do
    for _, f in ipairs(vim.fn.globpath(T.repo .. "/" .. dir, "*.coll", false, true)) do
      table.insert(files, dir .. "/" .. vim.fn.fnamemodify(f, ":t"))
    end
  end
  table.sort(files)
  assert(#files > 0, "no .coll files found")
  return files
end

T.test("syntax: no collError in any example or stdlib file", function()
  for _, rel in ipairs(coll_files()) do
    T.open(rel)
    for l, text in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do
      for c = 1, #text do
        if T.syn(l, c) == "collError" then
          error(string.format("%s:%d:%d: collError in %q", rel, l, c, text))
        end
      end
    end
  end
end)

T.test("indent: re-indenting every example and stdlib file with = changes nothing", function()
  for _, rel in ipairs(coll_files()) do
    T.open(rel)
    local want = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    local flat = {}
    for i, line in ipairs(want) do
      flat[i] = (line:gsub("^%s+", ""))
    end
    vim.api.nvim_buf_set_lines(0, 0, -1, false, flat)
    vim.cmd("silent normal! gg=G")
    local got = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    for i = 1, #want do
      if got[i] ~= want[i] then
        error(string.format("%s:%d: expected %q, got %q", rel, i, want[i], got[i] or "<missing>"))
      end
    end
    vim.cmd("silent! edit!")
  end
end)

T.test("lua/collc.lua: setup() registers the FileType autocmd and does not fail without collc", function()
  local collc = require("collc")
  local notified = {}
  local orig = vim.notify
  vim.notify = function(msg, level)
    table.insert(notified, { msg = msg, level = level })
  end
  local ok, err = pcall(function()
    collc.setup({ path = "/nonexistent/collc" })
    T.eq(collc.command(), { "/nonexistent/collc", "lsp" }, "server command")
    T.open("examples/ring_8.coll")
    local aus = vim.api.nvim_get_autocmds({ group = "collc_lsp", event = "FileType" })
    T.eq(#aus, 1, "FileType autocmds in group collc_lsp")
    T.eq(aus[1].pattern, "coll", "autocmd pattern")
    T.eq(#notified, 1, "warnings about the missing binary (once)")
    T.eq(notified[1].level, vim.log.levels.WARN, "warning level")
    T.eq(vim.fn.exists(":CollcRestart"), 2, ":CollcRestart exists")
    T.eq(collc.find_root(T.repo .. "/examples", { ".git" }), T.repo, "project root")
  end)
  vim.notify = orig
  vim.api.nvim_del_augroup_by_name("collc_lsp")
  if not ok then
    error(err, 0)
  end
end)
