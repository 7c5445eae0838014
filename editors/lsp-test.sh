#!/usr/bin/env bash
# Tests the real `collc lsp` binary with real clients (editors/lsp/):
#   neovim     headless Neovim 0.7+ (apt `neovim`) with its built-in client: nvim_test.lua
#   pytest-lsp pytest-lsp 1.0.1 (PyPI, in a venv) as VS Code 1.65, Neovim 0.7 and the latest
#              recorded Neovim: test_session.py
# Builds collc first (`cargo build`, target/debug/collc, or under CARGO_TARGET_DIR when that is
# set) unless COLLC_BIN names a binary.
# Installs what is missing (apt-get update once, then install; pip into the venv); a second
# run installs nothing.
#
# Environment: COLLC_BIN (the binary to test), COLLC_EDITORS_CACHE (default
# ~/.cache/collc-editors; holds the pytest-lsp venv).
# The last line is "lsp: N passed, M failed"; exits non-zero if a suite fails.
set -uo pipefail
editors="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$editors/.." && pwd)"
cache="${COLLC_EDITORS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/collc-editors}"
venv="$cache/pytest-lsp-venv"
PYTEST_LSP_VERSION=1.0.1

script=editors/lsp-test.sh
# shellcheck source=editors/lib.sh
source "$editors/lib.sh"

# ---------------------------------------------------------------- tools
if [[ -z "${COLLC_BIN:-}" ]]; then
    (cd "$repo" && cargo build --quiet) || die "cargo build failed"
    target="${CARGO_TARGET_DIR:-$repo/target}"
    [[ "$target" = /* ]] || target="$repo/$target"
    COLLC_BIN="$target/debug/collc"
fi
[[ -x "$COLLC_BIN" ]] || die "$COLLC_BIN is not an executable"
export COLLC_BIN

if ! command -v nvim >/dev/null; then
    echo "installing neovim (apt)"
    apt_install neovim
fi

if ! command -v python3 >/dev/null || ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "installing python3 and venv (apt)"
    apt_install python3 python3-venv
fi
if [[ ! -x "$venv/bin/python" ]] \
    || ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('pytest-lsp') != '$PYTEST_LSP_VERSION')" 2>/dev/null; then
    echo "installing pytest-lsp $PYTEST_LSP_VERSION into $venv (pip)"
    rm -rf "$venv"
    mkdir -p "$cache"
    python3 -m venv "$venv" || die "python3 -m venv failed"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "pytest-lsp==$PYTEST_LSP_VERSION" \
        || die "pip install pytest-lsp==$PYTEST_LSP_VERSION failed"
fi

# ---------------------------------------------------------------- suites
passed=0
failed=0
run() {
    local name="$1"; shift
    echo "---- $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "$name: FAILED"
    fi
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# A private XDG home: the user's Neovim configuration plays no part, and the server writes its
# standard library copies under this cache.
nvim_session() {
    XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" \
        XDG_CACHE_HOME="$tmp/cache" \
        timeout 120 nvim --headless -u NONE -i NONE -n -c "luafile $editors/lsp/nvim_test.lua" </dev/null
}
run "neovim $(nvim --version | head -1)" nvim_session

pytest_session() {
    (cd "$editors/lsp" && PYTHONDONTWRITEBYTECODE=1 XDG_CACHE_HOME="$tmp/cache" timeout 300 "$venv/bin/python" -m pytest -q \
        -p no:cacheprovider test_session.py)
}
run "pytest-lsp $PYTEST_LSP_VERSION" pytest_session

echo "lsp: $passed passed, $failed failed"
(( failed == 0 ))
