#!/usr/bin/env bash
# Headless Neovim tests of editors/nvim (filetype, ftplugin, syntax, indent, lua/collc.lua).
# Needs nvim 0.7+ on PATH. Exits non-zero if any test fails.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
cd "$repo"
# A private XDG home so the user's config, plugins and state play no part.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
timeout 120 nvim --headless -u NONE -i NONE -n -c "luafile $here/harness.lua" </dev/null
