#!/usr/bin/env bash
# `npm run bench`: builds, then runs every benchmark (bench/run.ts), each against its reference side by side.
# The references are Debian's `b3sum` (hashing) and `curl` (transfers); GNU `time` measures peak RSS. As root this
# installs what is missing; otherwise it says what to install. Arguments pass through: `npm run bench -- hash`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/debian-packages.sh
missing=()
command -v b3sum >/dev/null 2>&1 || missing+=(b3sum)
command -v curl >/dev/null 2>&1 || missing+=(curl)
[ -x /usr/bin/time ] || missing+=(time)
install_missing "The benchmarks" "npm run bench" "${missing[@]}"
node esbuild.mjs
node_modules/.bin/tsc -p .
exec node out/bench/run.js "$@"
