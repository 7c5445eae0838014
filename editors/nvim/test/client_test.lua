-- lua/collc.lua without a real server: a stand-in `collc` records how it was started.
-- (Tests against the real `collc lsp` belong in their own *_test.lua next to this file.)
local T = _G.T

T.test("lua/collc.lua: start() runs `<path> lsp` once per project root", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  local log = dir .. "/started"
  local fake = dir .. "/collc"
  local f = assert(io.open(fake, "w"))
  -- Records its arguments, then reads requests without ever answering, like a slow server.
  f:write("#!/bin/sh\necho \"$*\" >> '" .. log .. "'\nexec cat > /dev/null\n")
  f:close()
  vim.fn.setfperm(fake, "rwxr-xr-x")

  local collc = require("collc")
  collc.setup({ path = fake })
  local ok, err = pcall(function()
    T.open("examples/ring_8.coll")
    local id = collc.start(0)
    assert(type(id) == "number", "start() returned " .. vim.inspect(id))
    -- A second buffer of the same project reuses the client.
    vim.cmd("edit " .. vim.fn.fnameescape(T.repo .. "/examples/torus_4x4.coll"))
    T.eq(collc.start(0), id, "client of a second buffer in the same root")
    vim.wait(3000, function()
      return vim.fn.filereadable(log) == 1
    end, 20)
    T.eq(vim.fn.readfile(log), { "lsp" }, "arguments the server was started with")
  end)
  collc.stop(true)
  vim.api.nvim_del_augroup_by_name("collc_lsp")
  vim.fn.delete(dir, "rf")
  if not ok then
    error(err, 0)
  end
end)
