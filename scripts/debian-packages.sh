# Sourced by the scripts that need Debian packages. `install_missing WHAT RERUN PKG...`: installs the packages PKG
# (those found missing) when run as root; otherwise says what WHAT needs and how to install it, then fails so the
# caller can stop. Nothing to do when no package is given.
install_missing() {
  local what="$1" rerun="$2"
  shift 2
  [ $# -gt 0 ] || return 0
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
  else
    echo "$what need Debian packages that are not installed: $*" >&2
    echo "Install them with:  sudo apt-get install -y $*   (then run $rerun again)" >&2
    return 1
  fi
}
