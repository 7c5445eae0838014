#!/usr/bin/env bash
# Tests of the tree-sitter grammar (needs tree-sitter 0.27.1, node and a C compiler):
#   1. `tree-sitter generate --abi 14` reproduces the committed src/ byte for byte;
#   2. `tree-sitter test`: the corpus (test/corpus/*.txt) and highlight tests (test/highlight/);
#   3. every file in examples/ and stdlib/, and every ```coll block of docs/language.md, parses
#      with no ERROR or MISSING node;
#   4. the highlight captures use standard names (`tree-sitter highlight --check`);
#   5. with COLL_TS_PARSER=PATH, builds the parser there as a shared library (for the Neovim test).
# Usage: editors/tree-sitter-coll/test.sh [--update]  (--update regenerates src/ in place)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"
step() { printf '\n--- tree-sitter: %s\n' "$*"; }

# A private tree-sitter config: no user parser directories or theme play a part.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/config/none"
printf '{"parser-directories": ["%s"]}\n' "$tmp/config/none" > "$tmp/config/config.json"
export TREE_SITTER_DIR="$tmp/config"
export TREE_SITTER_LIBDIR="${TREE_SITTER_LIBDIR:-$tmp/lib}"

if [[ "${1:-}" == "--update" ]]; then
    step "regenerate src/ (tree-sitter generate --abi 14)"
    tree-sitter generate --abi 14 grammar.js
fi

step "generate is byte-stable (regenerate into a temporary directory and diff with src/)"
tree-sitter generate --abi 14 -o "$tmp/src" grammar.js
if ! diff -r "$tmp/src" src; then
    echo "src/ is not what grammar.js generates: run editors/tree-sitter-coll/test.sh --update and commit src/"
    exit 1
fi
echo "src/ matches grammar.js"

step "corpus and highlight tests (tree-sitter test)"
tree-sitter test

step "examples/, stdlib/ and docs/language.md's coll blocks parse without ERROR or MISSING nodes"
mkdir -p "$tmp/docs"
awk -v dir="$tmp/docs" '
    /^```coll$/ { n++; file = sprintf("%s/language-%02d.coll", dir, n); inblock = 1; next }
    /^```/ { inblock = 0; next }
    inblock { print > file }
' "$repo/docs/language.md"
files=("$repo"/examples/*.coll "$repo"/stdlib/*.coll)
shopt -s nullglob
files+=("$tmp"/docs/*.coll)
shopt -u nullglob
bad=0
for f in "${files[@]}"; do
    out="$(tree-sitter parse --no-ranges "$f" 2>&1 || true)"
    if grep -qE 'ERROR|MISSING' <<<"$out"; then
        echo "error nodes in $f:"; grep -nE 'ERROR|MISSING' <<<"$out" | head -5; bad=1
    fi
done
(( bad == 0 )) || exit 1
echo "${#files[@]} files parse cleanly"

step "highlight captures use standard names (tree-sitter highlight --check)"
tree-sitter highlight --check "$repo/examples/quickstart.coll" >/dev/null
echo "ok"

if [[ -n "${COLL_TS_PARSER:-}" ]]; then
    step "build the parser as a shared library: $COLL_TS_PARSER"
    mkdir -p "$(dirname "$COLL_TS_PARSER")"
    tree-sitter build -o "$COLL_TS_PARSER" .
fi
