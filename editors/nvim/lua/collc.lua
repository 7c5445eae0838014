-- collc language server client for Neovim 0.7+ (built-in LSP client, no plugins needed).
--
--   require("collc").setup()                      -- starts `collc lsp` for every coll buffer
--   require("collc").setup({ path = "/opt/collc/bin/collc" })
--   require("collc").setup({ cmd = { "cargo", "run", "-q", "--", "lsp" }, on_attach = my_on_attach })
--   require("collc").setup_treesitter({ parser = "/path/to/coll.so" })  -- optional, see below
--
-- Uses vim.lsp.start_client + vim.lsp.buf_attach_client (the Neovim 0.7 API; vim.lsp.start is
-- 0.8+). One server runs per project root (the nearest directory with one of `root_markers`,
-- else the file's directory) and every coll buffer under that root attaches to it.
local M = {}

local defaults = {
  -- The collc binary; a bare name is looked up on PATH. Ignored when `cmd` is set.
  path = "collc",
  -- The full server command line, if `path` + "lsp" is not what you want.
  cmd = nil,
  -- Files or directories that mark a project root.
  root_markers = { ".git" },
  -- Passed through to vim.lsp.start_client.
  on_attach = nil,
  capabilities = nil,
  settings = nil,
  init_options = nil,
  handlers = nil,
  cmd_env = nil,
}

M.config = vim.deepcopy(defaults)

local clients = {} -- root directory -> client id
local warned = false

local function exists(p)
  return vim.loop.fs_stat(p) ~= nil
end

--- The project root of a directory: the nearest ancestor (or itself) holding a root marker.
function M.find_root(dir, markers)
  local d = dir
  while d and d ~= "" do
    for _, m in ipairs(markers or {}) do
      if exists(d .. "/" .. m) then
        return d
      end
    end
    local parent = vim.fn.fnamemodify(d, ":h")
    if parent == d then
      break
    end
    d = parent
  end
  return nil
end

--- The server command line from the configuration.
function M.command()
  return M.config.cmd or { M.config.path, "lsp" }
end

--- Starts (or reuses) the server for a buffer's project and attaches the buffer.
--- Returns the client id, or nil when the server cannot be started.
function M.start(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or vim.loop.cwd()
  local root = M.find_root(dir, M.config.root_markers) or dir

  local id = clients[root]
  if id ~= nil and vim.lsp.get_client_by_id(id) == nil then
    id = nil
  end
  if id == nil then
    local cmd = M.command()
    if vim.fn.executable(cmd[1]) ~= 1 then
      if not warned then
        warned = true
        vim.notify(
          string.format("collc: `%s` is not executable; no diagnostics (highlighting still works). "
            .. "Install collc or pass `path` to require('collc').setup().", cmd[1]),
          vim.log.levels.WARN
        )
      end
      return nil
    end
    id = vim.lsp.start_client({
      name = "collc",
      cmd = cmd,
      cmd_env = M.config.cmd_env,
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      capabilities = M.config.capabilities,
      settings = M.config.settings,
      init_options = M.config.init_options,
      handlers = M.config.handlers,
      on_attach = M.config.on_attach,
      on_exit = function()
        if clients[root] == id then
          clients[root] = nil
        end
      end,
    })
    if id == nil then
      return nil
    end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- Stops every collc server started by this module (`force`: kill without the LSP shutdown).
function M.stop(force)
  for root, id in pairs(clients) do
    local client = vim.lsp.get_client_by_id(id)
    if client then
      client.stop(force)
    end
    clients[root] = nil
  end
end

local function coll_buffers()
  local bufs = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == "coll" then
      table.insert(bufs, b)
    end
  end
  return bufs
end

--- Configures the client and starts it for every coll buffer, now and when one is opened.
function M.setup(opts)
  M.config = vim.tbl_extend("force", vim.deepcopy(defaults), opts or {})
  warned = false
  local group = vim.api.nvim_create_augroup("collc_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = "coll",
    callback = function(args)
      M.start(args.buf)
    end,
  })
  vim.api.nvim_create_user_command("CollcRestart", function()
    M.stop()
    vim.defer_fn(function()
      for _, b in ipairs(coll_buffers()) do
        M.start(b)
      end
    end, 200)
  end, { desc = "Restart the collc language server" })
  for _, b in ipairs(coll_buffers()) do
    M.start(b)
  end
end

-- Tree-sitter highlighting without plugins -------------------------------------------------

local function set_query(lang, name, text)
  if vim.treesitter.query.set then
    vim.treesitter.query.set(lang, name, text) -- 0.9+
  else
    vim.treesitter.query.set_query(lang, name, text) -- 0.7, 0.8
  end
end

local function start_highlighter(buf, keep_syntax)
  if vim.treesitter.highlighter.active[buf] then
    return
  end
  vim.treesitter.highlighter.new(vim.treesitter.get_parser(buf, "coll"))
  if not keep_syntax then
    vim.bo[buf].syntax = ""
  end
end

--- Highlights coll buffers with the tree-sitter grammar (editors/tree-sitter-coll) using only
--- Neovim's built-in tree-sitter runtime. Optional: syntax/coll.vim highlights without it.
---   opts.parser       path of the compiled parser (coll.so); default: parser/coll.so on
---                     'runtimepath' (e.g. ~/.local/share/nvim/site/parser/coll.so)
---   opts.keep_syntax  keep the regex syntax on under the tree-sitter highlights (default false)
--- The highlight query is queries/coll/highlights.scm on 'runtimepath' if there is one, else
--- editors/tree-sitter-coll/queries/highlights.scm next to this file in the collc repository.
--- Returns true when the parser loaded.
function M.setup_treesitter(opts)
  opts = opts or {}
  local ok, err = pcall(function()
    if vim.treesitter.language.add then
      vim.treesitter.language.add("coll", opts.parser and { path = opts.parser } or nil)
    else
      vim.treesitter.require_language("coll", opts.parser)
    end
  end)
  if not ok then
    vim.notify("collc: cannot load the tree-sitter parser for coll: " .. tostring(err), vim.log.levels.WARN)
    return false
  end
  if #vim.api.nvim_get_runtime_file("queries/coll/highlights.scm", false) == 0 then
    local here = debug.getinfo(1, "S").source:sub(2)
    local q = vim.fn.fnamemodify(here, ":p:h:h:h") .. "/tree-sitter-coll/queries/highlights.scm"
    if vim.fn.filereadable(q) == 1 then
      set_query("coll", "highlights", table.concat(vim.fn.readfile(q), "\n"))
    end
  end
  local group = vim.api.nvim_create_augroup("collc_treesitter", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = "coll",
    callback = function(args)
      start_highlighter(args.buf, opts.keep_syntax)
    end,
  })
  for _, b in ipairs(coll_buffers()) do
    start_highlighter(b, opts.keep_syntax)
  end
  return true
end

return M
