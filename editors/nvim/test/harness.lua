-- Headless test harness for the Neovim support. Run by test/run.sh as
--   nvim --headless -u NONE -i NONE -n -c "luafile editors/nvim/test/harness.lua"
-- from the repository root. It puts editors/nvim on the runtimepath, turns on filetype
-- detection, plugins, indentation and syntax, then runs every test/*_test.lua file in name
-- order. A test file calls T.test(name, fn); fn fails by raising an error (T.eq, assert, error).
-- To add tests (the language server's, say), drop a new test/NAME_test.lua next to this one.
--
-- T.skip(reason) ends a test as skipped. Output goes to stdout (headless `print` goes to stderr);
-- the last line is "nvim: N passed, M failed, K skipped", and Neovim exits 1 (`cquit 1`) if
-- anything failed.
local ok_all, err_all = pcall(function()
  local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
  local nvim_dir = vim.fn.fnamemodify(here, ":h")
  local repo = vim.fn.fnamemodify(nvim_dir, ":h:h")
  vim.opt.runtimepath:prepend(nvim_dir)
  package.path = nvim_dir .. "/lua/?.lua;" .. package.path
  vim.cmd("filetype plugin indent on")
  vim.cmd("syntax on")

  local T = { repo = repo, nvim_dir = nvim_dir, tests = {}, passed = 0, failed = 0, skipped = 0 }
  _G.T = T

  function T.out(s)
    io.stdout:write(s .. "\n")
  end

  function T.test(name, fn)
    table.insert(T.tests, { name = name, fn = fn })
  end

  local SKIP = "\0skip\0"

  --- Ends the current test as skipped (when what it needs is missing).
  function T.skip(reason)
    error({ [SKIP] = reason }, 0)
  end

  function T.eq(actual, expected, what)
    if not vim.deep_equal(actual, expected) then
      error(string.format("%s: expected %s, got %s", what or "value", vim.inspect(expected), vim.inspect(actual)), 2)
    end
  end

  --- Opens a file (relative to the repository root) in a fresh buffer; returns its number.
  function T.open(rel)
    vim.cmd("silent! %bwipeout!")
    vim.cmd("edit " .. vim.fn.fnameescape(repo .. "/" .. rel))
    return vim.api.nvim_get_current_buf()
  end

  --- A scratch buffer with the given lines and filetype coll.
  function T.scratch(lines)
    vim.cmd("silent! %bwipeout!")
    vim.cmd("enew")
    vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
    vim.bo.filetype = "coll"
    return vim.api.nvim_get_current_buf()
  end

  --- 1-based line and column of the first match of a Vim regex in the current buffer.
  function T.find(pattern)
    vim.fn.cursor(1, 1)
    local pos = vim.fn.searchpos(pattern, "cW")
    if pos[1] == 0 then
      error("pattern not found: " .. pattern, 2)
    end
    return pos[1], pos[2]
  end

  --- Name of the syntax group at a position (1-based line and column).
  function T.syn(line, col)
    return vim.fn.synIDattr(vim.fn.synID(line, col, 1), "name")
  end

  --- Asserts the syntax group at the first match of `pattern` (plus `offset` columns).
  function T.syn_at(pattern, group, offset)
    local l, c = T.find(pattern)
    c = c + (offset or 0)
    local got = T.syn(l, c)
    if got ~= group then
      local text = vim.api.nvim_buf_get_lines(0, l - 1, l, false)[1]
      error(string.format("%s at %d:%d in %q: expected %s, got %q", pattern, l, c, text, group, got), 2)
    end
  end

  local files = vim.fn.globpath(here, "*_test.lua", false, true)
  table.sort(files)
  for _, f in ipairs(files) do
    dofile(f)
  end
  for _, t in ipairs(T.tests) do
    local ok, err = pcall(t.fn)
    if ok then
      T.passed = T.passed + 1
      T.out("ok   " .. t.name)
    elseif type(err) == "table" and err[SKIP] then
      T.skipped = T.skipped + 1
      T.out("skip " .. t.name .. ": " .. err[SKIP])
    else
      T.failed = T.failed + 1
      T.out("FAIL " .. t.name .. ": " .. tostring(err))
    end
  end
  T.out(string.format("nvim: %d passed, %d failed, %d skipped", T.passed, T.failed, T.skipped))
  if T.failed > 0 then
    error("failures")
  end
end)

if not ok_all then
  if tostring(err_all):find("failures") == nil then
    io.stdout:write("harness error: " .. tostring(err_all) .. "\n")
  end
  vim.cmd("cquit 1")
else
  vim.cmd("qall!")
end
