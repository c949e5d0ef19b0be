#!/usr/bin/env bash
# Stops the code-server started by scripts/start-code-server.sh <run-dir>: its whole process group (the wrapper,
# the server, extension hosts, language servers). A TERM to the wrapper alone leaves the tree running.
# Usage: stop-code-server.sh <run-dir>
RUN=${1:?usage: stop-code-server.sh <run-dir>}
[ -f "$RUN/cs.pid" ] || exit 0
PID=$(cat "$RUN/cs.pid")
if [ -n "$PID" ]; then
  kill -TERM -- "-$PID" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 -- "-$PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$PID" 2>/dev/null || true
fi
rm -f "$RUN/cs.pid"
exit 0
