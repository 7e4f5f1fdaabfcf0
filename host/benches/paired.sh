#!/usr/bin/env bash
# Paired load benchmark: two saved host builds served at the same time, each
# driven by its own wrk (one thread, half of load.sh's connections), in
# windows of the same seconds. Prints each window's requests/s and the
# ratio second / first, then the median ratio and how many windows the
# second build won.
#
#   host/benches/paired.sh base=/tmp/b/host,/tmp/b/c.wasm new=/tmp/n/host,/tmp/n/c.wasm
#   WINDOWS=20 WINDOW=15s host/benches/paired.sh ...
#
# Why: on a shared machine the speed drifts by more than a change to the
# host moves it, and load.sh's rounds run one server after the other, so
# each round's ratio carries that drift (a round's host / floor ratio moved
# by 6 to 8 points of the floor here). Served at once, both builds share
# every burst of other work, and the one that needs less CPU per request
# answers more in the same window: the ratio of a build against itself
# stays within a few per cent. Run both orders (A B, then B A) to cancel
# any advantage of the first port or the first wrk.
#
# Each build gets a state folder and a pool of keys made by its own binary;
# every request is a 200 (the keys rotate, none reaches its limit).
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 name=host,component name=host,component" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WINDOWS="${WINDOWS:-10}"
WINDOW="${WINDOW:-15s}"
CONNECTIONS="${CONNECTIONS:-16}"
TARGET_PATH="${TARGET_PATH:-/v1/filters}"
export RUST_BACKTRACE=0

# shellcheck source=host/benches/lib.sh
. "$ROOT/host/benches/lib.sh"

URLS=()
NAMES=()
for i in 0 1; do
  build="${*:$((i + 1)):1}"
  NAMES+=("${build%%=*}")
  paths="${build#*=}"
  make_keys "$WORK/$i" "${paths%%,*}" 800
  start "$i" "${paths%%,*}" --state-dir "$WORK/$i" serve --listen 127.0.0.1:0 \
    --component "${paths#*,}"
  URLS+=("$URL")
done

# wrk against build $1 for $2; prints its requests/s (fails on a non-2xx).
drive() {
  local out="$WORK/$1/wrk.txt"
  NF_KEYS="$WORK/$1/keys.txt" NF_PATH="$TARGET_PATH" \
    wrk -t1 -c"$CONNECTIONS" -d"$2" -s "$ROOT/host/benches/keys.lua" "${URLS[$1]}" >"$out"
  check_wrk "$out" || { echo "(against ${NAMES[$1]})" >&2; return 1; }
  awk '/Requests\/sec/ { print $2 }' "$out"
}

# Both at once: the first in the background, waited for by its pid (the
# servers are children too).
both() {
  drive 0 "$1" >"$WORK/0/rps" &
  local first=$!
  drive 1 "$1" >"$WORK/1/rps"
  wait "$first"
}

both 2s # warm-up
echo "| window | ${NAMES[0]} req/s | ${NAMES[1]} req/s | ${NAMES[1]} / ${NAMES[0]} |"
echo "|---:|---:|---:|---:|"
ratios=""
for window in $(seq 1 "$WINDOWS"); do
  both "$WINDOW"
  a="$(cat "$WORK/0/rps")"
  b="$(cat "$WORK/1/rps")"
  ratio="$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')"
  ratios+="$ratio"$'\n'
  echo "| $window | $a | $b | $ratio |"
done
printf '%s' "$ratios" | sort -n | awk -v n="${NAMES[1]}" -v f="${NAMES[0]}" '
  { r[NR] = $1; if ($1 > 1) won++ }
  END {
    median = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
    printf "%s / %s, median of %d windows: %.3f; %s answered more in %d of them\n",
      n, f, NR, median, n, won
  }'
