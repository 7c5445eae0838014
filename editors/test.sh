#!/usr/bin/env bash
# Runs every editor-support test, installing what is missing (Debian, as root; offline except
# the package registries):
#   tree-sitter  editors/tree-sitter-coll/test.sh  (tree-sitter-cli 0.27.1, built with cargo)
#   neovim       editors/nvim/test/run.sh          (apt `neovim`, 0.7+; also loads the parser)
#   vscode       editors/vscode/test.sh            (`npm ci`; TextMate grammar, vsce package)
#   lsp          editors/lsp-test.sh               (`cargo build`; the real `collc lsp` under
#                                                   headless Neovim and pytest-lsp 1.0.1)
# A second run skips every install that is already done.
#
# Usage: editors/test.sh [--update]
#   --update  regenerates tree-sitter's src/ and rewrites the TextMate snapshots; review the diff.
# Environment: COLLC_EDITORS_CACHE (default ~/.cache/collc-editors) holds tree-sitter-cli.
# Exits non-zero if any suite fails; the last line is "editors: N passed, M failed".
set -uo pipefail
editors="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$editors/.." && pwd)"
update=()
[[ "${1:-}" == "--update" ]] && update=(--update)

TS_VERSION=0.27.1
cache="${COLLC_EDITORS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/collc-editors}"
ts_root="$cache/tree-sitter-cli-$TS_VERSION"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

section() { printf '\n==================== %s\n' "$*"; }
script=editors/test.sh
# shellcheck source=editors/lib.sh
source "$editors/lib.sh"

# ---------------------------------------------------------------- tools
section "tools"
start=$SECONDS

command -v node >/dev/null || die "node is missing (Node 20 or newer is needed for @vscode/vsce 3)"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
(( node_major >= 20 )) || die "node $(node --version) is too old: Node 20 or newer is needed"
command -v npm >/dev/null || die "npm is missing"

if ! command -v cc >/dev/null; then
    echo "installing a C compiler (tree-sitter compiles parsers with it)"
    apt_install gcc libc6-dev
fi

if ! command -v nvim >/dev/null; then
    echo "installing neovim (apt)"
    apt_install neovim
fi
nvim_version="$(nvim --version | head -1)"
[[ "$nvim_version" =~ ^NVIM\ v0\.([0-9]+) && ${BASH_REMATCH[1]} -ge 7 ]] || [[ "$nvim_version" =~ ^NVIM\ v[1-9] ]] \
    || die "$nvim_version is too old: Neovim 0.7 or newer is needed"

ts_ok() { [[ -x "$1" ]] && [[ "$("$1" --version 2>/dev/null)" == "tree-sitter $TS_VERSION"* ]]; }
if ts_ok "$ts_root/bin/tree-sitter"; then
    :
elif ts_ok "$(command -v tree-sitter || true)"; then
    mkdir -p "$ts_root/bin" && ln -sf "$(command -v tree-sitter)" "$ts_root/bin/tree-sitter"
else
    command -v cargo >/dev/null || die "cargo is needed to build tree-sitter-cli $TS_VERSION"
    echo "installing tree-sitter-cli $TS_VERSION into $ts_root (cargo, about a minute)"
    cargo install tree-sitter-cli@"$TS_VERSION" --locked --debug --no-default-features \
        --root "$ts_root" --quiet || die "cargo install tree-sitter-cli@$TS_VERSION failed"
fi
export PATH="$ts_root/bin:$PATH"

vscode="$editors/vscode"
stamp="$vscode/node_modules/.collc-lock-sha256"
lock_sum="$(sha256sum "$vscode/package-lock.json" | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_sum" ]]; then
    echo "npm ci in editors/vscode"
    (cd "$vscode" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) || die "npm ci failed"
    echo "$lock_sum" > "$stamp"
fi

echo "node $(node --version), npm $(npm --version), $nvim_version, $(tree-sitter --version), $(cc --version | head -1)"
echo "tools ready in $((SECONDS - start)) s"

# ---------------------------------------------------------------- suites
passed=0
failed=0
failed_names=()
suite() {
    local name="$1"; shift
    section "$name"
    local t0=$SECONDS
    if "$@"; then
        passed=$((passed + 1))
        echo "$name: ok ($((SECONDS - t0)) s)"
    else
        failed=$((failed + 1))
        failed_names+=("$name")
        echo "$name: FAILED ($((SECONDS - t0)) s)"
    fi
}

export COLL_TS_PARSER="$tmp/coll.so"
suite "tree-sitter" "$editors/tree-sitter-coll/test.sh" "${update[@]}"
suite "neovim" "$editors/nvim/test/run.sh"
suite "vscode" "$vscode/test.sh" "${update[@]}"
suite "lsp" "$editors/lsp-test.sh"

section "summary"
(( failed == 0 )) || echo "failed: ${failed_names[*]}"
echo "editors: $passed passed, $failed failed"
(( failed == 0 ))
