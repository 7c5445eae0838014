#!/usr/bin/env bash
# Tests of the VS Code extension, offline once `npm ci` has run:
#   1. type-check the extension (tsc); unit-test folding and collc.path; start the bundled
#      extension against a stand-in `vscode` module and a fake `collc lsp` (node --test);
#   2. the TextMate grammar's hand-written scope assertions (tests/unit/*.coll);
#   3. every file of examples/ and stdlib/ (and the coll blocks of docs/language.md): no invalid
#      token, keywords and quantities scoped (tests/tokens.js); a snapshot of every token's
#      scopes in examples/ and stdlib/ (tests/snap/*/*.coll.snap);
#   4. `vsce package` builds the .vsix, and it holds what the extension needs.
# Usage: editors/vscode/test.sh [--update]   (--update rewrites the snapshots)
# Exits non-zero on the first failure. Needs node_modules (editors/test.sh runs `npm ci`).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"
update=0
[[ "${1:-}" == "--update" ]] && update=1
bin="$here/node_modules/.bin"
step() { printf '\n--- vscode: %s\n' "$*"; }

step "typecheck (tsc --noEmit)"
"$bin/tsc" --noEmit -p .

step "build the extension (esbuild) and unit-test it (node --test)"
rm -rf out out-test
npm run --silent build
"$bin/esbuild" tests/folding.test.ts --bundle --platform=node --outdir=out-test --log-level=warning
node --test out-test/folding.test.js tests/activate.test.js

step "TextMate grammar: scope assertions (vscode-tmgrammar-test tests/unit/*.coll)"
"$bin/vscode-tmgrammar-test" 'tests/unit/*.coll'

step "TextMate grammar: every example and stdlib file, and docs/language.md's coll blocks (tests/tokens.js)"
docs="$(mktemp -d)"
trap 'rm -rf "$docs"' EXIT
awk -v dir="$docs" '
    /^```coll$/ { n++; file = sprintf("%s/language-%02d.coll", dir, n); inblock = 1; next }
    /^```/ { inblock = 0; next }
    inblock { print > file }
' "$repo/docs/language.md"
shopt -s nullglob
node tests/tokens.js "$repo"/examples/*.coll "$repo"/stdlib/*.coll "$docs"/*.coll
shopt -u nullglob

step "TextMate grammar: snapshots of examples/ and stdlib/ (vscode-tmgrammar-snap)"
for dir in examples stdlib; do
    mkdir -p "tests/snap/$dir"
    rm -f "tests/snap/$dir"/*.coll
    cp "$repo/$dir"/*.coll "tests/snap/$dir/"
    for snap in "tests/snap/$dir"/*.coll.snap; do
        [[ -e "$snap" ]] || continue
        if [[ ! -e "${snap%.snap}" ]]; then
            if (( update )); then rm "$snap"; else
                echo "stale snapshot $snap: $dir/$(basename "${snap%.snap}") no longer exists (run editors/test.sh --update)"; exit 1
            fi
        fi
    done
    for src in "tests/snap/$dir"/*.coll; do
        if [[ ! -e "$src.snap" ]] && (( ! update )); then
            echo "missing snapshot $src.snap for $dir/$(basename "$src") (run editors/test.sh --update and review it)"; exit 1
        fi
    done
done
if (( update )); then
    "$bin/vscode-tmgrammar-snap" --updateSnapshot 'tests/snap/*/*.coll'
else
    "$bin/vscode-tmgrammar-snap" 'tests/snap/*/*.coll'
fi

step "package the extension (vsce package)"
rm -rf out ./*.vsix
"$bin/vsce" package --no-dependencies --allow-missing-repository --skip-license
vsix="$(ls ./*.vsix)"
listing="$("$bin/vsce" ls --no-dependencies)"
for f in package.json language-configuration.json syntaxes/coll.tmLanguage.json out/extension.js README.md; do
    grep -qx "$f" <<<"$listing" || { echo "$vsix lacks $f"; exit 1; }
done
if grep -q node_modules <<<"$listing"; then echo "$vsix contains node_modules"; exit 1; fi
echo "built $vsix ($(wc -c <"$vsix") bytes)"
