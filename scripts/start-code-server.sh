#!/usr/bin/env bash
# Starts the test VS Code (code-server, installed by scripts/setup-vscode.sh) on a free loopback port, in its own
# process group, with every bit of its state inside <run-dir>. Prints the server's URL (one line) on stdout and
# writes <run-dir>/cs.pid, <run-dir>/cs.port, <run-dir>/cs.log. Stop it with scripts/stop-code-server.sh <run-dir>.
#
# Usage: start-code-server.sh <run-dir> [code-server args...]
#   e.g. start-code-server.sh "$RUN" --vscode-option enable-smoke-test-driver
# env:   CS_PORT  a fixed port instead of a free one
set -euo pipefail
RUN=${1:?usage: start-code-server.sh <run-dir> [code-server args...]}
shift
source "$(dirname "$0")/vscode-env.sh"
ENTRY="$CODE_SERVER/out/node/entry.js"
if [ ! -f "$ENTRY" ] || [ ! -x "$NODE24_BIN/node" ]; then
  echo "start-code-server: code-server is not installed in $VSCODE_ENV_DIR (missing $ENTRY or $NODE24_BIN/node); run scripts/setup-vscode.sh" >&2
  exit 1
fi
mkdir -p "$RUN/ud/User" "$RUN/ud/Machine" "$RUN/exts"
RUN="$(cd "$RUN" && pwd)"

# A quiet workbench: no welcome page, no chat/agent host (it would start a copilot-runtime process), no gallery
# or update checks (they fail offline anyway). Written only if the caller has not seeded its own.
[ -f "$RUN/ud/User/settings.json" ] || cat > "$RUN/ud/User/settings.json" <<'JSON'
{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "workbench.enableExperiments": false,
  "chat.disableAIFeatures": true,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "security.workspace.trust.enabled": false,
  "git.enabled": false
}
JSON

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{process.stdout.write(String(s.address().port));s.close()})'
}

for attempt in 1 2 3; do
  PORT="${CS_PORT:-$(free_port)}"
  echo "bind-addr: 127.0.0.1:$PORT" > "$RUN/config.yaml"
  # XDG_*: code-server otherwise writes config (with a random password), logs and a heartbeat under ~/.config and
  # ~/.local/share, and the extension its remembered jobs under ~/.local/state/comfy-cloud (shared with the CLI: a
  # run would list the jobs of every run before it). --reconnection-grace-time: a closed tab's extension host
  # otherwise lingers for 3 hours.
  PATH="$NODE24_BIN:$PATH" XDG_DATA_HOME="$RUN/xdg-data" XDG_CONFIG_HOME="$RUN/xdg-config" XDG_CACHE_HOME="$RUN/xdg-cache" \
    XDG_STATE_HOME="$RUN/xdg-state" \
    setsid node "$ENTRY" \
    --config "$RUN/config.yaml" --bind-addr "127.0.0.1:$PORT" --auth none \
    --user-data-dir "$RUN/ud" --extensions-dir "$RUN/exts" \
    --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    --reconnection-grace-time 10 \
    "$@" > "$RUN/cs.log" 2>&1 < /dev/null &
  PID=$!
  echo "$PID" > "$RUN/cs.pid"
  echo "$PORT" > "$RUN/cs.port"
  for _ in $(seq 1 150); do
    if curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz"; then
      echo "http://127.0.0.1:$PORT"
      exit 0
    fi
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.2
  done
  # Did not come up: the port may have been taken between choosing and binding it -- try another one.
  "$(dirname "$0")/stop-code-server.sh" "$RUN"
  if [ -n "${CS_PORT:-}" ] || ! grep -q EADDRINUSE "$RUN/cs.log"; then break; fi
done
echo "start-code-server: code-server did not come up on 127.0.0.1:$PORT; its log ($RUN/cs.log):" >&2
tail -40 "$RUN/cs.log" >&2
exit 1
