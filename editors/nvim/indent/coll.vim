" Indentation for .coll files: one shiftwidth per open {, [ or ( at the end of the previous
" line; a line that starts with }, ] or ) goes back one. Comments and strings are ignored when
" looking for brackets. Matches what `collc fmt` produces.
if exists("b:did_indent")
  finish
endif
let b:did_indent = 1

setlocal indentexpr=CollIndent(v:lnum)
setlocal indentkeys=0{,0},0),0],!^F,o,O
setlocal autoindent nosmartindent nocindent
let b:undo_indent = "setlocal indentexpr< indentkeys< autoindent< smartindent< cindent<"

if exists("*CollIndent")
  finish
endif

" The line without its // comment and with string contents blanked.
function! s:Code(line) abort
  let l = substitute(a:line, '"\%([^"\\]\|\\.\)*"', '""', 'g')
  return substitute(l, '//.*$', '', '')
endfunction

function! CollIndent(lnum) abort
  let prev = prevnonblank(a:lnum - 1)
  " Skip comment-only lines when looking for the structure, but keep their indent as a fallback.
  while prev > 0 && getline(prev) =~# '^\s*//'
    let prev = prevnonblank(prev - 1)
  endwhile
  if prev == 0
    return 0
  endif
  let ind = indent(prev)
  let code = s:Code(getline(prev))
  " Net opening brackets on the previous line (leading closers were already dedented).
  let opens = len(substitute(code, '[^{[(]', '', 'g'))
  let closes = len(substitute(substitute(code, '^\s*[}\])]\+', '', ''), '[^}\])]', '', 'g'))
  if opens > closes
    let ind += shiftwidth()
  elseif opens < closes
    let ind -= shiftwidth() * (closes - opens)
  endif
  if s:Code(getline(a:lnum)) =~# '^\s*[}\])]'
    let ind -= shiftwidth()
  endif
  return ind < 0 ? 0 : ind
endfunction
