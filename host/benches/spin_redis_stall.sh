#!/usr/bin/env bash
# What a client of `spin up` sees when the Redis behind both labels stalls
# (SIGSTOP), comes back, dies (SIGKILL) and restarts: each request's status
# and time, and after the restart the seconds until the first 200.
# docs/SERVING.md, "What an operator sees under Spin", quotes its output.
#
#   host/benches/spin_redis_stall.sh COMPONENT.wasm [SPIN]
#
# SPIN defaults to ../shared/tools/spin/install's Spin 4.0.2. Needs
# redis-server and curl; takes about 8 minutes (each hanging request is
# given up on after 120 s).
set -uo pipefail

[ $# -ge 1 ] || { echo "usage: $0 COMPONENT.wasm [SPIN]" >&2; exit 2; }
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
COMPONENT="$(realpath "$1")"
SPIN="${2:-$("$ROOT/../shared/tools/spin/install")}"
WORK="$(mktemp -d)"
PORT=$((20000 + RANDOM % 20000))
LISTEN="127.0.0.1:$((PORT + 1))"
TOKEN="$(openssl rand -hex 32)"
SPIN_PID=""
cleanup() {
  [ -n "$SPIN_PID" ] && kill -- "-$SPIN_PID" 2>/dev/null
  [ -f "$WORK/redis.pid" ] && kill -CONT "$(cat "$WORK/redis.pid")" 2>/dev/null &&
    kill "$(cat "$WORK/redis.pid")" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

redis() {
  redis-server --port "$PORT" --appendonly yes --appendfsync always --dir "$WORK" \
    --daemonize yes --pidfile "$WORK/redis.pid" >/dev/null
}
redis
sleep 1
sed "s#^source = .*#source = \"$COMPONENT\"#" "$ROOT/spin-app/spin.toml" >"$WORK/spin.toml"
printf '[key_value_store.default]\ntype = "redis"\nurl = "redis://127.0.0.1:%s"\n\n[key_value_store.rate]\ntype = "redis"\nurl = "redis://127.0.0.1:%s"\n' \
  "$PORT" "$PORT" >"$WORK/runtime-config.toml"
(cd "$WORK" && SPIN_VARIABLE_ADMIN_TOKEN="$TOKEN" setsid "$SPIN" up \
  --runtime-config-file runtime-config.toml --listen "$LISTEN" >spin.out 2>&1) &
SPIN_PID=$!
for _ in $(seq 1 120); do grep -q "Serving http://" "$WORK/spin.out" 2>/dev/null && break; sleep 0.5; done
KEY="$(curl -s -H "Authorization: Bearer $TOKEN" -d '{"account":"stall"}' "http://$LISTEN/admin/v1/keys" |
  sed 's/.*"key":"\([^"]*\)".*/\1/')"
ask() {
  curl -s -m 120 -o /dev/null -w '%{http_code} in %{time_total} s' \
    -H "Authorization: Bearer $KEY" "http://$LISTEN/v1/filters"
}
RPID="$(cat "$WORK/redis.pid")"
echo "Redis answers:      $(ask)"
kill -STOP "$RPID"
echo "Redis hangs:        $(ask)"
echo "Redis hangs:        $(ask)"
kill -CONT "$RPID"
sleep 1
echo "Redis answers again: $(ask)"
kill -9 "$RPID"
sleep 1
echo "Redis is gone:      $(ask)"
redis
START="$(date +%s.%N)"
while true; do
  ANSWER="$(ask)"
  SINCE="$(echo "$(date +%s.%N) - $START" | bc)"
  echo "Redis restarted, ${SINCE%.*} s ago: $ANSWER"
  case "$ANSWER" in 200*) break ;; esac
  [ "${SINCE%.*}" -gt 300 ] && { echo "no 200 within 300 s"; break; }
  sleep 1
done
