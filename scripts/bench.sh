#!/usr/bin/env bash
# `npm run bench`: builds, then runs every benchmark (bench/run.ts), each against its reference side by side.
# The references are Debian's `b3sum` (hashing) and `curl` (transfers); GNU `time` measures peak RSS. As root this
# installs what is missing; otherwise it says what to install. Arguments pass through: `npm run bench -- hash`.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v b3sum >/dev/null 2>&1 || missing+=(b3sum)
command -v curl >/dev/null 2>&1 || missing+=(curl)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  else
    echo "The benchmarks need Debian packages that are not installed: ${missing[*]}" >&2
    echo "Install them with:  sudo apt-get install -y ${missing[*]}   (then run npm run bench again)" >&2
    exit 1
  fi
fi
node esbuild.mjs
node_modules/.bin/tsc -p .
exec node out/bench/run.js "$@"
