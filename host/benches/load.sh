#!/usr/bin/env bash
# Load benchmark: wrk at 32 connections against the host serving the Spin
# component (SQLite `default`, in-memory `rate`), and in the same run against
# the floor: bare hyper answering the same precomputed response bytes
# (`bench floor`, the host's example `examples/bench`). Prints requests/s, p50/p99 latency and
# the ratio as a Markdown table.
#
#   host/benches/load.sh                   # 10 s per server
#   DURATION=30s host/benches/load.sh
#   HOST_ARGS="--max-instance-reuse-count 1" host/benches/load.sh   # a fresh instance per request
#   TARGET_PATH=/api/v1/filters host/benches/load.sh
#   ACCEPT_ENCODING=gzip host/benches/load.sh          # compressed answers, both sides
#   SPIN_BIN=$(path to spin) host/benches/load.sh      # and the component under `spin up`
#
# ACCEPT_ENCODING is sent with every request (wrk counts the bytes, it does
# not decode them); the floor then serves the core's answer for that header,
# and before measuring each server is asked once to check that it answers in
# the coding expected (ENCODING; by default br when ACCEPT_ENCODING names
# it, else gzip when it names that).
# With SPIN_BIN, each round also runs the first build's component under real
# Spin (`spin up`, the repository's spin.toml and runtime-config.toml: keys
# on Spin's SQLite, counters in memory, keys made by the build's binary in
# the app's `.spin` folder), and the summary gives host / Spin.
#
# Comparing trees: save each tree's host binary and component first (so no
# build runs during the campaign), then give them as BUILDS, space-separated
# `name=host-binary,component` entries. Each round then runs every build in
# turn, each against the floor right after it, and the summary gives each
# build's median of its rounds' ratios; the floor is this tree's unless
# FLOOR names a saved one.
#
#   BUILDS="base=/tmp/b/host,/tmp/b/c.wasm new=/tmp/n/host,/tmp/n/c.wasm" \
#     ROUNDS=12 host/benches/load.sh
#
# Every request carries a valid key and is answered 200: the keys rotate over
# a pool large enough that none reaches its 1000 requests per minute. The run
# fails if wrk saw any non-2xx answer.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
DURATION="${DURATION:-10s}"
CONNECTIONS="${CONNECTIONS:-32}"
THREADS="${THREADS:-2}"
KEYS="${KEYS:-800}"
TARGET_PATH="${TARGET_PATH:-/v1/filters}"
# Extra `serve` options for the host (word-split on purpose).
HOST_ARGS="${HOST_ARGS:-}"
ACCEPT_ENCODING="${ACCEPT_ENCODING:-}"
# The coding the core picks for it (brotli over gzip when both are
# acceptable, for the usual answer); set ENCODING for any other request.
case "$ACCEPT_ENCODING" in
  *br*) ENCODING="${ENCODING:-br}" ;;
  *gzip*) ENCODING="${ENCODING:-gzip}" ;;
  *) ENCODING="${ENCODING:-}" ;;
esac
SPIN_BIN="${SPIN_BIN:-}"

# Some shells here export RUST_BACKTRACE=1; then every internal error value
# (the runtime makes some in normal operation) captures a
# backtrace. Production does not run with it; neither server pays for it here.
export RUST_BACKTRACE=0

command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }

cd "$ROOT"
if [ -z "${BUILDS:-}" ]; then
  cargo build --quiet -p noise-filter-spin --target wasm32-wasip2 --profile component
  cargo build --quiet --profile server -p noise-filter-host --bin noise-filter --example bench
  BUILDS="host=$TARGET/server/noise-filter,$TARGET/wasm32-wasip2/component/noise_filter_spin.wasm"
fi
if [ -z "${FLOOR:-}" ]; then
  [ -x "$TARGET/server/examples/bench" ] ||
    cargo build --quiet --profile server -p noise-filter-host --example bench
  FLOOR="$TARGET/server/examples/bench"
fi
# shellcheck disable=SC2206
BUILD_LIST=($BUILDS)

# shellcheck source=host/benches/lib.sh
. "$ROOT/host/benches/lib.sh"

# Each build gets a state folder and a pool of keys made by its own binary.
for build in "${BUILD_LIST[@]}"; do
  paths="${build#*=}"
  make_keys "$WORK/${build%%=*}" "${paths%%,*}" "$KEYS"
done

# Real Spin: the app folder as a Spin user has it, serving the first build's
# component; its keys are made by that build's binary in Spin's own store.
if [ -n "$SPIN_BIN" ]; then
  first="${BUILD_LIST[0]#*=}"
  mkdir -p "$WORK/spin"
  sed "s|^source = .*|source = \"${first#*,}\"|" "$ROOT/spin-app/spin.toml" >"$WORK/spin/spin.toml"
  cp "$ROOT/spin-app/runtime-config.toml" "$WORK/spin/"
  make_keys "$WORK/spin/.spin" "${first%%,*}" "$KEYS"
  cp "$WORK/spin/.spin/keys.txt" "$WORK/spin/keys.txt"
fi

# start_spin: `spin up` in $WORK/spin on a free port; sets URL, adds the pid.
start_spin() {
  local port
  : >"$WORK/spin.out" # not the last round's "Serving" line
  port="$(free_port)"
  (cd "$WORK/spin" && SPIN_DISABLE_TELEMETRY=1 exec "$SPIN_BIN" up --runtime-config-file runtime-config.toml \
    --listen "127.0.0.1:$port" >"$WORK/spin.out" 2>"$WORK/spin.err") &
  PIDS+=("$!")
  for _ in $(seq 1 600); do
    if grep -q "Serving http://" "$WORK/spin.out" 2>/dev/null; then URL="http://127.0.0.1:$port"; return; fi
    sleep 0.1
  done
  echo "spin up did not start: $(cat "$WORK/spin.err")" >&2
  exit 1
}

# check_coding URL KEYS: the server answers an authorized GET in the coding
# expected (none when no ACCEPT_ENCODING), so no figure is taken on the
# wrong bytes.
check_coding() {
  local got
  got="$(curl -s -o /dev/null -D - -H "Authorization: Bearer $(head -1 "$2")" \
    ${ACCEPT_ENCODING:+-H "Accept-Encoding: $ACCEPT_ENCODING"} "$1$TARGET_PATH" |
    tr -d '\r' | awk -F': ' 'tolower($1) == "content-encoding" { print $2 }')"
  [ "$got" = "$ENCODING" ] || { echo "$1 answered in '${got}', not '${ENCODING}'" >&2; exit 1; }
}

# Runs wrk against the server with pid $2; prints "rps p50 p99 cpu" (latencies
# in ms; cpu: the server's own CPU time per request, in µs).
measure() {
  local url="$1" pid="$2" keys="$3" out="$WORK/wrk.txt" before after
  check_coding "$url" "$keys"
  export NF_ACCEPT="$ACCEPT_ENCODING"
  NF_KEYS="$keys" NF_PATH="$TARGET_PATH" \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d2s -s "$ROOT/host/benches/keys.lua" "$url" >/dev/null # warm-up
  before="$(cpu_ticks "$pid")"
  NF_KEYS="$keys" NF_PATH="$TARGET_PATH" \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$ROOT/host/benches/keys.lua" "$url" >"$out"
  after="$(cpu_ticks "$pid")"
  check_wrk "$out" || { echo "(against $url)" >&2; exit 1; }
  awk -v ticks="$((after - before))" -v hz="$(getconf CLK_TCK)" '
    function ms(v) {
      if (v ~ /us$/) return substr(v, 1, length(v) - 2) / 1000
      if (v ~ /ms$/) return substr(v, 1, length(v) - 2) + 0
      if (v ~ /s$/)  return substr(v, 1, length(v) - 1) * 1000
      return v
    }
    /requests in/ { total = $1 }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    END { printf "%s %.3f %.3f %.0f\n", rps, p50, p99, 1e6 * ticks / hz / total }
  ' "$out"
}

# Rounds alternate host and floor, so a burst of other work on the machine
# hits both. The summary gives each side's median round and the median of
# the rounds' own ratios (host against the floor run right after it): the
# machine's speed drifts over minutes, and a ratio taken within one round
# is the least touched by that drift. With several builds, a round runs
# each of them in turn, each followed by the floor.
ROUNDS="${ROUNDS:-3}"
rows=""
declare -A host_all ratios
floor_all=""
spin_all=""
for round in $(seq 1 "$ROUNDS"); do
  for build in "${BUILD_LIST[@]}"; do
    name="${build%%=*}"
    paths="${build#*=}"
    # shellcheck disable=SC2086
    start host "${paths%%,*}" --state-dir "$WORK/$name" serve --listen 127.0.0.1:0 \
      --component "${paths#*,}" $HOST_ARGS
    read -r rps p50 p99 cpu <<<"$(measure "$URL" "${PIDS[-1]}" "$WORK/$name/keys.txt")"
    [ -n "$rps" ] || exit 1
    host_rps_round="$rps"
    kill "${PIDS[-1]}"
    rows+="| $round | $name (wasmtime + component + SQLite) | $rps | ${p50} ms | ${p99} ms | $cpu µs |"$'\n'
    host_all[$name]+="$rps $p50 $p99 $cpu"$'\n'

    start floor "$FLOOR" floor --listen 127.0.0.1:0 --target "$TARGET_PATH" \
      ${ACCEPT_ENCODING:+--accept-encoding "$ACCEPT_ENCODING"}
    read -r rps p50 p99 cpu <<<"$(measure "$URL" "${PIDS[-1]}" "$WORK/$name/keys.txt")"
    [ -n "$rps" ] || exit 1
    kill "${PIDS[-1]}"
    rows+="| $round | floor (bare hyper, same bytes) | $rps | ${p50} ms | ${p99} ms | $cpu µs |"$'\n'
    floor_all+="$rps $p50 $p99 $cpu"$'\n'
    ratios[$name]+="$(awk -v h="$host_rps_round" -v f="$rps" 'BEGIN { printf "%.1f", 100 * h / f }')"$'\n'
  done
  if [ -n "$SPIN_BIN" ]; then
    start_spin
    read -r rps p50 p99 cpu <<<"$(measure "$URL" "${PIDS[-1]}" "$WORK/spin/keys.txt")"
    [ -n "$rps" ] || exit 1
    kill "${PIDS[-1]}"
    wait "${PIDS[-1]}" 2>/dev/null || true
    rows+="| $round | spin up (Spin $("$SPIN_BIN" --version | awk '{ print $2 }'), same component) | $rps | ${p50} ms | ${p99} ms | $cpu µs |"$'\n'
    spin_all+="$rps $p50 $p99 $cpu"$'\n'
  fi
done

median() { printf '%s' "$1" | sort -n -k1,1 | awk '{ line[NR] = $0 } END { print line[int((NR + 1) / 2)] }'; }
read -r floor_rps floor_p50 floor_p99 floor_cpu <<<"$(median "$floor_all")"
cat <<TABLE
wrk -t$THREADS -c$CONNECTIONS -d$DURATION, GET $TARGET_PATH with a valid key (200, $(nproc) cores), Accept-Encoding: ${ACCEPT_ENCODING:-(none)}, $ROUNDS rounds, host options: ${HOST_ARGS:-(defaults)}

| round | server | requests/s | p50 | p99 | server CPU per request |
|---|---|---:|---:|---:|---:|
${rows}
floor, median round: $floor_rps req/s (p50 $floor_p50 ms, p99 $floor_p99 ms, $floor_cpu µs CPU)
TABLE
for build in "${BUILD_LIST[@]}"; do
  name="${build%%=*}"
  read -r host_rps host_p50 host_p99 host_cpu <<<"$(median "${host_all[$name]}")"
  ratio="$(awk -v h="$host_rps" -v f="$floor_rps" 'BEGIN { printf "%.1f", 100 * h / f }')"
  each_round="$(printf '%s' "${ratios[$name]}" | paste -sd ' ' | sed 's/ /, /g')"
  cat <<TABLE
$name, median round: $host_rps req/s (p50 $host_p50 ms, p99 $host_p99 ms, $host_cpu µs CPU)
$name / floor throughput, median rounds: ${ratio} %
$name / floor throughput per round: ${each_round} %; median $(median "${ratios[$name]}") %
TABLE
done
if [ -n "$SPIN_BIN" ]; then
  read -r spin_rps spin_p50 spin_p99 spin_cpu <<<"$(median "$spin_all")"
  first="${BUILD_LIST[0]%%=*}"
  read -r host_rps _ <<<"$(median "${host_all[$first]}")"
  cat <<TABLE
spin up, median round: $spin_rps req/s (p50 $spin_p50 ms, p99 $spin_p99 ms, $spin_cpu µs CPU)
$first / spin up throughput, median rounds: $(awk -v h="$host_rps" -v s="$spin_rps" 'BEGIN { printf "%.1f", h / s }')×
TABLE
fi
