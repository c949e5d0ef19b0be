#!/usr/bin/env bash
# `npm test`: every test of the project, ending with ONE line `N passed, N failed` summing all suites.
#   1. type check (tsc -p . → out/) and the unit/contract mocha suite (.mocharc.json: out/test/unit/**/*.test.js);
#   2. the real-VS-Code suites (scripts/run-vscode-suites.sh): mocha inside code-server's Node extension host, and
#      the Playwright UI suite in Debian's chromium. They install what they need (as root) or say what is missing;
#      a suite that cannot run counts as failed, never as skipped;
#   3. every benchmark once on tiny sizes (scripts/bench.sh in its quick mode): it counts as failed only if one no
#      longer runs, never for its figures.
# Exit status 0 only if nothing failed. Logs and screenshots: test-results/.
# `npm test` builds first (pretest: node esbuild.mjs --production, the build `npm run package` ships, which the unit
# suite's dist tests run); run directly, this script builds itself.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
RESULTS="$ROOT/test-results"
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
export RESULTS
T0=$(date +%s)
lap() { echo "=== [+$(( $(date +%s) - T0 ))s] $*"; }
BIN="$ROOT/node_modules/.bin"
if [ ! -x "$BIN/mocha" ] || [ ! -x "$BIN/tsc" ]; then
  echo "The project's dev dependencies are not installed (no node_modules/.bin/mocha or tsc): run npm ci first."
  echo "0 passed, 1 failed"
  exit 1
fi
trap 'exit 130' INT
trap 'exit 143' TERM

SUITES=()
declare -A PASSED=() FAILED=()
record() { # <suite> <passed> <failed>
  SUITES+=("$1"); PASSED[$1]=$2; FAILED[$1]=$3
}
# The counts of `<suite>: N passed, N failed` in a log (the last such line); none → the suite did not report.
counts_from() { # <suite> <log>
  grep -E "^$1: [0-9]+ passed, [0-9]+ failed$" "$2" | tail -1 | sed -E 's/^[^:]+: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/'
}

if [ "${npm_lifecycle_event:-}" != test ]; then
  lap "build (node esbuild.mjs --production)"
  node esbuild.mjs --production || { record build 0 1; }
fi

# 1. Type check + unit tests -----------------------------------------------------------------------------------------
lap "type check (tsc -p .)"
"$BIN/tsc" -p . 2>&1 | tee "$RESULTS/tsc.log"
if [ "${PIPESTATUS[0]}" -ne 0 ]; then
  echo "typecheck: tsc -p . failed (errors above)"
  record typecheck 0 1
fi
# The monitor webview's script has its own tsconfig (DOM types, kept out of the Node code).
lap "type check (tsc -p tsconfig.webview.json)"
"$BIN/tsc" -p tsconfig.webview.json 2>&1 | tee "$RESULTS/tsc-webview.log"
if [ "${PIPESTATUS[0]}" -ne 0 ]; then
  echo "typecheck: tsc -p tsconfig.webview.json failed (errors above)"
  record typecheck-webview 0 1
fi

lap "unit tests (mocha)"
"$BIN/mocha" --reporter spec 2>&1 | tee "$RESULTS/unit.log"
unit_rc=${PIPESTATUS[0]}
# The spec reporter's closing lines: "  12 passing (3s)", "  1 pending", "  2 failing".
u_pass=$(grep -E '^ +[0-9]+ passing \(' "$RESULTS/unit.log" | tail -1 | grep -oE '[0-9]+' | head -1)
u_fail=$(grep -E '^ +[0-9]+ failing$' "$RESULTS/unit.log" | tail -1 | grep -oE '[0-9]+')
u_pend=$(grep -E '^ +[0-9]+ pending$' "$RESULTS/unit.log" | tail -1 | grep -oE '[0-9]+')
u_pass=${u_pass:-0}; u_fail=${u_fail:-0}; u_pend=${u_pend:-0}
if [ "$u_pend" -gt 0 ]; then
  echo "unit: $u_pend pending (skipped) test(s) counted as failed"
  u_fail=$(( u_fail + u_pend ))
fi
if [ "$unit_rc" -ne 0 ] && [ "$u_fail" -eq 0 ]; then
  echo "unit: mocha exited $unit_rc without a failing test to show for it (did not run?); counted as 1 failed"
  u_fail=1
fi
if [ "$u_pass" -eq 0 ] && [ "$u_fail" -eq 0 ]; then
  echo "unit: no tests ran; counted as 1 failed"
  u_fail=1
fi
echo "unit: $u_pass passed, $u_fail failed"
record unit "$u_pass" "$u_fail"

# 2. Real VS Code: extension host + UI ---------------------------------------------------------------------------------
lap "real VS Code suites (scripts/run-vscode-suites.sh)"
bash scripts/run-vscode-suites.sh 2>&1 | tee "$RESULTS/vscode.log"
for suite in exthost ui; do
  read -r p f <<< "$(counts_from "$suite" "$RESULTS/vscode.log")"
  if [ -z "${p:-}" ]; then
    echo "$suite: reported no result; counted as 1 failed"
    p=0; f=1
  fi
  record "$suite" "$p" "$f"
done

# 3. Every benchmark once, on tiny sizes (never judged on its figures: a benchmark that no longer runs fails) -----------
lap "benchmarks, quick (BENCH_QUICK=1 BENCH_SIZES_MIB=1 scripts/bench.sh)"
BENCH_TMP="$(mktemp -d -t comfy-bench-XXXXXX)"
if BENCH_QUICK=1 BENCH_SIZES_MIB=1 BENCH_DIR="$BENCH_TMP" bash scripts/bench.sh 2>&1 | tee "$RESULTS/bench.log"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
  record bench 1 0
else
  echo "bench: a benchmark did not run to its end (its message is above; log in test-results/bench.log)"
  record bench 0 1
fi
rm -rf "$BENCH_TMP"

# Summary: one line per suite, then the total as the LAST line. ----------------------------------------------------
lap "summary (screenshots and logs in test-results/)"
total_p=0; total_f=0
for s in "${SUITES[@]}"; do
  printf '  %-10s %4d passed, %d failed\n' "$s" "${PASSED[$s]}" "${FAILED[$s]}"
  total_p=$(( total_p + PASSED[$s] )); total_f=$(( total_f + FAILED[$s] ))
done
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ] && [ "$total_p" -gt 0 ]
