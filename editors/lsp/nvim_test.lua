-- The real `collc lsp` under Neovim 0.7's built-in LSP client, headless. Run by
-- editors/lsp-test.sh as
--   COLLC_BIN=target/debug/collc nvim --headless -u NONE -i NONE -n -c 'luafile editors/lsp/nvim_test.lua'
-- It opens editors/lsp/error.coll (one error, E0024), starts the server with
-- vim.lsp.start_client, waits for the diagnostic with its code, asks for hover and definition
-- (also into the standard library) with vim.lsp.buf_request_sync, completes and formats, fixes
-- the error by editing the buffer (an incremental didChange) and waits for the diagnostics to
-- clear. Results go to stdout; the last line is "nvim-lsp: N passed, M failed" and Neovim exits
-- 1 (`cquit 1`) on any failure.
local passed, failed = 0, 0
local function out(s)
  io.stdout:write(s .. "\n")
end

local ok_all, err_all = pcall(function()
  local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
  local bin = assert(os.getenv("COLLC_BIN"), "COLLC_BIN must name the collc binary")
  local file = here .. "/error.coll"
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.lsp.start_client({
    name = "collc",
    cmd = { bin, "lsp" },
    root_dir = here,
    on_exit = function(code)
      out("server exited with code " .. tostring(code))
    end,
  })
  assert(id, "vim.lsp.start_client failed")
  assert(vim.lsp.buf_attach_client(buf, id), "buf_attach_client failed")

  local function test(name, fn)
    local ok, err = pcall(fn)
    if ok then
      passed = passed + 1
      out("ok   " .. name)
    else
      failed = failed + 1
      out("FAIL " .. name .. ": " .. tostring(err))
    end
  end

  -- Zero-based line and UTF-16 column of the first match of a plain string in the buffer.
  local function pos(needle, shift)
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    for i, l in ipairs(lines) do
      local c = l:find(needle, 1, true)
      if c then
        local col = vim.str_utfindex(l, c - 1 + (shift or 0))
        return { line = i - 1, character = col }
      end
    end
    error("not in the buffer: " .. needle)
  end

  local function request(method, position, extra)
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = position }
    for k, v in pairs(extra or {}) do
      params[k] = v
    end
    local results, err = vim.lsp.buf_request_sync(buf, method, params, 10000)
    assert(results, method .. ": " .. tostring(err))
    local r = results[id]
    assert(r, method .. ": no reply from collc")
    assert(r.err == nil, method .. ": error " .. vim.inspect(r.err))
    return r.result
  end

  test("diagnostics arrive with their code", function()
    local diags = {}
    assert(vim.wait(15000, function()
      diags = vim.diagnostic.get(buf)
      return #diags > 0
    end, 50), "no diagnostics within 15 s")
    assert(#diags == 1, "expected one diagnostic, got " .. vim.inspect(diags))
    local d = diags[1]
    assert(d.code == "E0024", "code: " .. vim.inspect(d.code))
    assert(d.source == "collc", "source: " .. vim.inspect(d.source))
    assert(d.lnum == pos("summ").line and d.col == pos("summ").character,
      "position: " .. d.lnum .. ":" .. d.col)
    assert(d.message:find("unknown reduction op `summ`", 1, true), d.message)
    assert(d.message:find("did you mean `sum`", 1, true), d.message)
    out("     " .. d.code .. " at " .. (d.lnum + 1) .. ":" .. (d.col + 1) .. ": " .. d.message:gsub("\n.*", ""))
  end)

  test("hover on a stdlib generator shows its signature and doc", function()
    local h = request("textDocument/hover", pos("ring(n:", 1))
    local v = h.contents.value
    assert(v:find("generator ring(n: int, bw: bandwidth, lat: time = 0 ns)", 1, true), v)
    assert(v:find("standard library module `ring`", 1, true), v)
  end)

  test("hover on a param shows its declaration and value", function()
    local h = request("textDocument/hover", pos("n: n", 3))
    local v = h.contents.value
    assert(v:find("param n: int = 8", 1, true) and v:find("value: 8", 1, true), v)
  end)

  test("definition of a param is its declaration", function()
    local r = request("textDocument/definition", pos("n: n", 3))
    local loc = r[1] or r
    assert(loc.uri == vim.uri_from_bufnr(buf), loc.uri)
    assert(loc.range.start.line == pos("param n").line, vim.inspect(loc.range))
  end)

  test("definition of a stdlib generator opens the stdlib file", function()
    local r = request("textDocument/definition", pos("ring(n:", 1))
    local loc = r[1] or r
    local path = vim.uri_to_fname(loc.uri)
    assert(path:match("/ring%.coll$"), path)
    local lines = vim.fn.readfile(path)
    local line = lines[loc.range.start.line + 1]
    assert(line and line:find("generator ring(", 1, true), vim.inspect(line))
  end)

  test("completion offers the reduction ops", function()
    local r = request("textDocument/completion", pos("summ", 0))
    local items = r.items or r
    local labels = {}
    for _, it in ipairs(items) do
      labels[it.label] = true
    end
    assert(labels.sum and labels.max, vim.inspect(vim.tbl_keys(labels)))
  end)

  test("fixing the error in the buffer clears the diagnostic", function()
    local p = pos("summ")
    vim.api.nvim_buf_set_text(buf, p.line, p.character, p.line, p.character + 4, { "sum" })
    assert(vim.wait(15000, function()
      return #vim.diagnostic.get(buf) == 0
    end, 50), "diagnostics not cleared: " .. vim.inspect(vim.diagnostic.get(buf)))
  end)

  test("formatting a formatted file changes nothing", function()
    local results = vim.lsp.buf_request_sync(buf, "textDocument/formatting", {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      options = { tabSize = 4, insertSpaces = true },
    }, 10000)
    local r = assert(results and results[id], "no reply")
    assert(r.err == nil, vim.inspect(r.err))
    assert(#(r.result or {}) == 0, vim.inspect(r.result))
  end)

  local client = vim.lsp.get_client_by_id(id)
  client.stop()
  vim.wait(5000, function()
    return client.is_stopped()
  end, 50)
end)

if not ok_all then
  failed = failed + 1
  out("harness error: " .. tostring(err_all))
end
out(string.format("nvim-lsp: %d passed, %d failed", passed, failed))
if failed > 0 then
  vim.cmd("cquit 1")
else
  vim.cmd("qall!")
end
