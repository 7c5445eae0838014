-- Files ending in .coll are collc sources (filetype `coll`).
-- Sourced by `:filetype on` from every runtimepath entry's ftdetect/; works in Neovim 0.7+.
vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
  pattern = "*.coll",
  command = "setfiletype coll",
})
