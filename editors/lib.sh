# Shared helpers for the editor test scripts (sourced, not run). Set `script` to the caller's
# name before sourcing; `die` prefixes messages with it.
# apt_install PKG...: installs Debian packages, running `apt-get update` once per script run,
# with sudo when not root.

die() { echo "${script:-editors}: $*" >&2; exit 1; }

sudo_cmd=()
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null; then sudo_cmd=(sudo); fi
apt_updated=0
apt_install() {
    command -v apt-get >/dev/null || die "need $* but apt-get is not available: install it by hand"
    if (( ! apt_updated )); then
        "${sudo_cmd[@]}" apt-get update -qq || die "apt-get update failed"
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "$@" >/dev/null \
        || die "apt-get install $* failed"
}
