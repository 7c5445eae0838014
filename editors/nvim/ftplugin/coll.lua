-- Buffer settings for .coll files: `//` comments, 4-space indentation (as `collc fmt` writes).
if vim.b.did_ftplugin then
  return
end
vim.b.did_ftplugin = 1

local bo = vim.bo
bo.commentstring = "// %s"
bo.comments = "://"
bo.expandtab = true
bo.shiftwidth = 4
bo.softtabstop = 4
bo.tabstop = 4
-- Continue `//` comments on Enter and `o`; wrap comments at textwidth; join comment lines cleanly.
bo.formatoptions = bo.formatoptions:gsub("[t]", "") .. "croqj"
-- `gf` on a module name (`import ring;`) finds ring.coll along 'path'.
bo.suffixesadd = ".coll"
bo.matchpairs = "(:),{:},[:]"

vim.b.undo_ftplugin = "setlocal commentstring< comments< expandtab< shiftwidth< softtabstop< tabstop<"
  .. " formatoptions< suffixesadd< matchpairs<"
