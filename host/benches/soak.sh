#!/usr/bin/env bash
# Soak test: the host under steady load for a long time, to see what a short
# benchmark cannot: memory that grows, a WAL that grows, throughput or
# latency that drift, errors that appear after minutes.
#
#   host/benches/soak.sh                                  # 10 min at 64 connections
#   DURATION=30m CONNECTIONS=128 host/benches/soak.sh
#   HOST_ARGS="--rate-store sqlite" host/benches/soak.sh  # counters in the SQLite file
#   HOST_BIN=/tmp/b/host COMPONENT=/tmp/b/c.wasm host/benches/soak.sh   # a saved build
#
# Every request carries a valid key: the keys rotate over a pool large enough
# that none reaches its 1000 requests per minute, so every answer should be
# 200. Prints, as a Markdown table: requests/s, p50/p99/max latency, non-2xx
# answers and socket errors (wrk's), the server's resident memory at the
# start (after a warm-up), its peak and at the end, and the largest size the
# SQLite WAL reached. Fails if any answer was not 2xx or the server died.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
DURATION="${DURATION:-10m}"
CONNECTIONS="${CONNECTIONS:-64}"
THREADS="${THREADS:-2}"
KEYS="${KEYS:-2000}"
TARGET_PATH="${TARGET_PATH:-/v1/filters}"
HOST_ARGS="${HOST_ARGS:-}"
SAMPLE_EVERY="${SAMPLE_EVERY:-5}"
export RUST_BACKTRACE=0

command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }

cd "$ROOT"
# A saved build (HOST_BIN and COMPONENT, as load.sh's BUILDS) is soaked as
# it is; otherwise this tree's is built.
if [ -n "${HOST_BIN:-}" ]; then
  HOST="$HOST_BIN"
  COMPONENT="${COMPONENT:?COMPONENT is needed with HOST_BIN}"
else
  cargo build --quiet -p noise-filter-spin --target wasm32-wasip2 --profile component
  cargo build --quiet --profile server -p noise-filter-host --bin noise-filter
  HOST="$TARGET/server/noise-filter"
  COMPONENT="$TARGET/wasm32-wasip2/component/noise_filter_spin.wasm"
fi

WORK="$(mktemp -d)"
PID=""
SAMPLER=""
cleanup() {
  [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null || true
  [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

"$HOST" --state-dir "$WORK" keys create --account soak --label soak --count "$KEYS" \
  >"$WORK/keys.txt" 2>/dev/null


# shellcheck disable=SC2086
"$HOST" --state-dir "$WORK" serve --listen 127.0.0.1:0 --component "$COMPONENT" $HOST_ARGS \
  >"$WORK/host.out" 2>"$WORK/host.err" &
PID=$!
for _ in $(seq 1 200); do [ -s "$WORK/host.out" ] && break; sleep 0.05; done
URL="$(head -1 "$WORK/host.out" | sed 's/^listening on //')"
[ -n "$URL" ] || { echo "server did not start: $(cat "$WORK/host.err")" >&2; exit 1; }

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
wal_bytes() { stat -c %s "$WORK/sqlite_key_value.db-wal" 2>/dev/null || echo 0; }

run_wrk() { # duration, output file
  NF_KEYS="$WORK/keys.txt" NF_PATH="$TARGET_PATH" \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$1" --timeout 10s --latency -s "$ROOT/host/benches/keys.lua" "$URL" >"$2"
}

run_wrk 10s "$WORK/warmup.txt"
RSS_START="$(rss_kib "$PID")"

# One sample line every SAMPLE_EVERY seconds: seconds, RSS KiB, WAL bytes.
(
  t=0
  while kill -0 "$PID" 2>/dev/null; do
    echo "$t $(rss_kib "$PID") $(wal_bytes)"
    sleep "$SAMPLE_EVERY"
    t=$((t + SAMPLE_EVERY))
  done
) >"$WORK/samples.txt" &
SAMPLER=$!

run_wrk "$DURATION" "$WORK/wrk.txt"
kill -0 "$PID" 2>/dev/null || { echo "the server died: $(tail "$WORK/host.err")" >&2; exit 1; }
RSS_END="$(rss_kib "$PID")"
kill "$SAMPLER" 2>/dev/null || true
SAMPLER=""

read -r RSS_PEAK WAL_PEAK <<<"$(awk 'BEGIN { r = 0; w = 0 } { if ($2 > r) r = $2; if ($3 > w) w = $3 } END { print r, w }' "$WORK/samples.txt")"
[ "$RSS_END" -gt "$RSS_PEAK" ] && RSS_PEAK="$RSS_END"

awk -v dur="$DURATION" -v conns="$CONNECTIONS" -v args="${HOST_ARGS:-(defaults)}" \
    -v rs="$RSS_START" -v rp="$RSS_PEAK" -v re="$RSS_END" -v wal="$WAL_PEAK" '
  function ms(v) {
    if (v ~ /us$/) return substr(v, 1, length(v) - 2) / 1000
    if (v ~ /ms$/) return substr(v, 1, length(v) - 2) + 0
    if (v ~ /s$/)  return substr(v, 1, length(v) - 1) * 1000
    return v
  }
  /requests in/ { total = $1 }
  /Requests\/sec/ { rps = $2 }
  $1 == "Latency" && max == "" { max = ms($4) }
  $1 == "50%" { p50 = ms($2) }
  $1 == "99%" { p99 = ms($2) }
  /Non-2xx/ { non2xx = $NF }
  /Socket errors/ { errors = $0; sub(/.*Socket errors: /, "", errors) }
  END {
    print "| duration | connections | serve options | requests | req/s | p50 | p99 | max | non-2xx | socket errors | RSS start | RSS peak | RSS end | WAL peak |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf "| %s | %s | %s | %s | %s | %.2f ms | %.2f ms | %.0f ms | %d | %s | %.1f MiB | %.1f MiB | %.1f MiB | %.1f MiB |\n",
      dur, conns, args, total, rps, p50, p99, max, non2xx + 0, (errors == "" ? "none" : errors),
      rs / 1024, rp / 1024, re / 1024, wal / 1048576
  }' "$WORK/wrk.txt"

if grep -q "Non-2xx" "$WORK/wrk.txt"; then
  echo "non-2xx answers:" >&2
  cat "$WORK/wrk.txt" >&2
  exit 1
fi
