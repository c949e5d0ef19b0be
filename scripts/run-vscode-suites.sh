#!/usr/bin/env bash
# The real-VS-Code suites: installs code-server + chromium if needed (scripts/setup-vscode.sh), packages the .vsix,
# then
#   (a) the mocha suite inside code-server's Node extension host (test/e2e/exthost.mjs; the server runs with the
#       smoke-test driver so the workbench honours extensionDevelopmentPath/extensionTestsPath);
#   (b) the Playwright UI suite against a plain code-server with the .vsix installed (test/e2e/ui.mjs).
# Prints `exthost: N passed, N failed` and `ui: N passed, N failed`; a suite that cannot run counts as 1 failed.
# Screenshots and server logs go to test-results/ (RESULTS overrides). Exit status 0 only if both suites passed.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
RESULTS="${RESULTS:-$ROOT/test-results}"
mkdir -p "$RESULTS"
export RESULTS
T0=$(date +%s)
lap() { echo "=== [vscode +$(( $(date +%s) - T0 ))s] $*"; }

RUN="$(mktemp -d -t comfy-vscode-XXXXXX)"
cleanup() {
  for d in "$RUN/exthost" "$RUN/ui"; do
    [ -d "$d" ] || continue
    "$ROOT/scripts/stop-code-server.sh" "$d"
    [ -f "$d/cs.log" ] && cp "$d/cs.log" "$RESULTS/code-server-$(basename "$d").log"
    # The extension's own log (its "Comfy Cloud" output channel), for a failure's story.
    find "$d" -name '*Comfy Cloud.log' -print0 2>/dev/null | while IFS= read -r -d '' f; do
      cp "$f" "$RESULTS/comfy-cloud-$(basename "$d")-$(basename "$(dirname "$(dirname "$f")")").log"
    done
  done
  rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

declare -A DONE=()
fail_suite() { # <suite> <why>: the suite could not run -- say why, count it as failed
  echo "$1: could not run: $2"
  echo "$1: 0 passed, 1 failed"
  DONE[$1]=1
}
fail_rest() {
  for s in exthost ui; do [ -n "${DONE[$s]:-}" ] || fail_suite "$s" "$1"; done
  exit 1
}

lap "setup: chromium, libkrb5-dev, code-server (scripts/setup-vscode.sh)"
bash scripts/setup-vscode.sh || fail_rest "the real VS Code could not be set up (scripts/setup-vscode.sh failed; its message is above)"
source scripts/vscode-env.sh
[ -x /usr/bin/chromium ] || [ -n "${CHROMIUM:-}" ] || fail_rest "Chromium is not installed: apt-get install -y chromium"

lap "package the .vsix (npm run package)"
rm -f .artifacts/comfy-cloud.vsix
mkdir -p .artifacts   # vsce -o does not create the folder (absent in a clean clone)
npm run --silent package || fail_rest "npm run package failed"
[ -f .artifacts/comfy-cloud.vsix ] || fail_rest "npm run package made no .artifacts/comfy-cloud.vsix"

rc=0

# (a) -- mocha inside the Node extension host ---------------------------------------------------------------------
# SUITES="ui" (or "exthost") runs only that suite, for quick iteration; the default runs both.
SUITES="${SUITES:-exthost ui}"
if [[ " $SUITES " != *" exthost "* ]]; then
  lap "extension-host suite skipped (SUITES=$SUITES)"
elif lap "start code-server with the smoke-test driver (extension-host suite)"; mkdir -p "$RUN/exthost"; CS_URL="$(scripts/start-code-server.sh "$RUN/exthost" --vscode-option enable-smoke-test-driver)"; then
  lap "extension-host suite at $CS_URL"
  cp -r test/fixtures/workspace "$RUN/ws-exthost"
  CS_URL="$CS_URL" WS_DIR="$RUN/ws-exthost" node test/e2e/exthost.mjs || rc=1
  DONE[exthost]=1
  scripts/stop-code-server.sh "$RUN/exthost"
else
  fail_suite exthost "code-server did not start (log above)"; rc=1
fi

# (b) -- the UI, as a user sees it, with the packaged .vsix installed ---------------------------------------------
if [[ " $SUITES " != *" ui "* ]]; then lap "UI suite skipped (SUITES=$SUITES)"; exit $rc; fi
lap "install the .vsix into a fresh code-server profile"
mkdir -p "$RUN/ui/ud" "$RUN/ui/exts"
if ! PATH="$NODE24_BIN:$PATH" XDG_DATA_HOME="$RUN/ui/xdg-data" XDG_CONFIG_HOME="$RUN/ui/xdg-config" \
    node "$CODE_SERVER/out/node/entry.js" --config /dev/null \
    --user-data-dir "$RUN/ui/ud" --extensions-dir "$RUN/ui/exts" --install-extension .artifacts/comfy-cloud.vsix; then
  fail_suite ui "code-server --install-extension .artifacts/comfy-cloud.vsix failed"; exit 1
fi
if ! PATH="$NODE24_BIN:$PATH" XDG_DATA_HOME="$RUN/ui/xdg-data" XDG_CONFIG_HOME="$RUN/ui/xdg-config" \
    node "$CODE_SERVER/out/node/entry.js" --config /dev/null \
    --user-data-dir "$RUN/ui/ud" --extensions-dir "$RUN/ui/exts" --list-extensions | grep -qx comfy-cloud.comfy-cloud; then
  fail_suite ui "after --install-extension, code-server does not list comfy-cloud.comfy-cloud"; exit 1
fi

lap "start plain code-server (UI suite)"
if CS_URL="$(scripts/start-code-server.sh "$RUN/ui")"; then
  lap "UI suite at $CS_URL"
  cp -r test/fixtures/workspace "$RUN/ws-ui"
  CS_URL="$CS_URL" CS_USER_DATA="$RUN/ui/ud" WS_DIR="$RUN/ws-ui" node test/e2e/ui.mjs || rc=1
  DONE[ui]=1
else
  fail_suite ui "code-server did not start (log above)"; rc=1
fi
lap "done (exit $rc)"
exit $rc
