#!/usr/bin/env bash
# How many hosts one Redis carries: wrk at 32 connections against the host
# with both labels on one redis-server started here (nothing on disk), and
# in the same run Redis's own CPU time per request served (INFO cpu before
# and after), the commands a request sends (INFO commandstats), and the
# host's requests/s. Redis runs commands on one thread, so 1 s divided by
# its CPU time per request is the most requests/s it serves, whatever the
# number of hosts; divided by one host's requests/s, the hosts it carries.
# Then redis-benchmark, alone, for Redis's raw GET and INCR ops/s on this
# machine (the same commands from 32 clients, no pipelining): a cross-check.
#
#   host/benches/redis_capacity.sh                  # 10 s, the server profile
#   DURATION=30s host/benches/redis_capacity.sh
#   HOST_BIN=… COMPONENT=… host/benches/redis_capacity.sh   # a saved build
#
# Every request carries a valid key and is answered 200 (keys rotate over a
# pool, as in load.sh); the run fails if wrk saw any other answer.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
DURATION="${DURATION:-10s}"
CONNECTIONS="${CONNECTIONS:-32}"
THREADS="${THREADS:-2}"
KEYS="${KEYS:-800}"
TARGET_PATH="${TARGET_PATH:-/v1/filters}"
export RUST_BACKTRACE=0

for tool in wrk redis-server redis-cli redis-benchmark; do
  command -v "$tool" >/dev/null || { echo "$tool is needed (apt-get install wrk redis-server)" >&2; exit 1; }
done

cd "$ROOT"
if [ -z "${HOST_BIN:-}" ]; then
  cargo build --quiet -p noise-filter-spin --target wasm32-wasip2 --profile component
  cargo build --quiet --profile server -p noise-filter-host --bin noise-filter
  HOST_BIN="$TARGET/server/noise-filter"
  COMPONENT="$TARGET/wasm32-wasip2/component/noise_filter_spin.wasm"
fi

# shellcheck source=host/benches/lib.sh
. "$ROOT/host/benches/lib.sh"

PORT="$(free_port)"
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
  >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
PIDS+=("$REDIS_PID")
for _ in $(seq 1 100); do redis-cli -p "$PORT" PING >/dev/null 2>&1 && break; sleep 0.05; done
STORE="redis://127.0.0.1:$PORT"
rcli() { redis-cli -p "$PORT" "$@" | tr -d '\r'; }
# Redis's CPU seconds so far (user + system, all its threads).
redis_cpu() { rcli INFO cpu | awk -F: '/^used_cpu_(user|sys):/ { s += $2 } END { printf "%.6f", s }'; }

mkdir -p "$WORK/state"
"$HOST_BIN" --state-dir "$WORK/state" --store "$STORE" keys create --account bench --label bench \
  --count "$KEYS" >"$WORK/keys.txt" 2>/dev/null
start host "$HOST_BIN" --state-dir "$WORK/state" --store "$STORE" serve \
  --listen 127.0.0.1:0 --component "$COMPONENT"
HOST_PID="${PIDS[-1]}"

NF_KEYS="$WORK/keys.txt" NF_PATH="$TARGET_PATH" \
  wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s "$ROOT/host/benches/keys.lua" "$URL" >/dev/null # warm-up
rcli CONFIG RESETSTAT >/dev/null
redis_before="$(redis_cpu)"
host_before="$(cpu_ticks "$HOST_PID")"
NF_KEYS="$WORK/keys.txt" NF_PATH="$TARGET_PATH" \
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$ROOT/host/benches/keys.lua" "$URL" \
  >"$WORK/wrk.txt"
redis_after="$(redis_cpu)"
host_after="$(cpu_ticks "$HOST_PID")"
check_wrk "$WORK/wrk.txt"
rcli INFO commandstats >"$WORK/commandstats.txt"

requests="$(awk '/requests in/ { print $1 }' "$WORK/wrk.txt")"
rps="$(awk '/Requests\/sec/ { print $2 }' "$WORK/wrk.txt")"
p99="$(awk '$1 == "99%" { print $2 }' "$WORK/wrk.txt")"
# The host's commands: this script's own (INFO, CONFIG RESETSTAT) left out.
grep -v -e '^cmdstat_info:' -e '^cmdstat_config' "$WORK/commandstats.txt" >"$WORK/host_commands.txt" || true
commands="$(awk -F'[=,]' '/^cmdstat_/ { s += $2 } END { print s }' "$WORK/host_commands.txt")"
ticks="$(getconf CLK_TCK)"

echo "## commands (INFO commandstats, $requests requests)"
awk -F'[:=,]' -v n="$requests" '/^cmdstat_/ {
  printf "%-10s %10d calls  %.2f a request  %.2f µs a call\n", substr($1, 9), $3, $3 / n, $7 }' \
  "$WORK/host_commands.txt"
echo
echo "| duration | connections | host req/s | p99 | commands a request | Redis CPU a request | host CPU a request | Redis's ceiling (1 s / its CPU a request) | hosts one Redis carries at this host's rate |"
echo "|---|---|---|---|---|---|---|---|---|"
awk -v d="$DURATION" -v c="$CONNECTIONS" -v n="$requests" -v rps="$rps" -v p99="$p99" \
  -v cmds="$commands" -v rb="$redis_before" -v ra="$redis_after" \
  -v hb="$host_before" -v ha="$host_after" -v t="$ticks" 'BEGIN {
    redis_us = (ra - rb) * 1e6 / n
    host_us = (ha - hb) / t * 1e6 / n
    ceiling = 1e6 / redis_us
    printf "| %s | %d | %.0f | %s | %.2f | %.1f µs | %.1f µs | %.0f req/s | %.1f |\n",
      d, c, rps, p99, cmds / n, redis_us, host_us, ceiling, ceiling / rps }'

echo
echo "## redis-benchmark alone (32 clients, no pipelining)"
redis-benchmark -p "$PORT" -c 32 -n 200000 -t get,incr -q 2>/dev/null | tr '\r' '\n' | grep -v '^$' | grep -v 'rps=' || true
