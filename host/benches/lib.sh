# Shared by load.sh, paired.sh and redis_capacity.sh (sourced, not run): a work folder removed
# on exit with every server started in it, keys made by a build's own
# binary, wrk's output checked, and a server's start.

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# make_keys DIR HOST COUNT: a state folder DIR holding COUNT keys of one
# account, made by the host binary HOST, and the keys in DIR/keys.txt.
make_keys() {
  mkdir -p "$1"
  "$2" --state-dir "$1" keys create --account bench --label bench --count "$3" \
    >"$1/keys.txt" 2>/dev/null
}

# check_wrk FILE: fails, showing wrk's output FILE, when wrk measured
# nothing or saw an answer that was not 2xx.
check_wrk() {
  if grep -q "Non-2xx" "$1" || ! grep -q "Requests/sec" "$1"; then
    echo "wrk failed or saw non-2xx answers:" >&2
    cat "$1" >&2
    return 1
  fi
}

# start NAME COMMAND...: starts a server, its output in $WORK/NAME.out(.err);
# sets URL to its base URL (the first line it prints) and adds its pid to PIDS.
start() {
  local log="$WORK/$1.out"
  shift
  # Emptied first: a server of the same name from an earlier round left
  # its address there, and the new one may not have opened the file yet.
  : >"$log"
  "$@" >"$log" 2>"$log.err" &
  PIDS+=("$!")
  for _ in $(seq 1 200); do
    if [ -s "$log" ]; then URL="$(head -1 "$log" | sed 's/^listening on //')"; return; fi
    sleep 0.05
  done
  echo "server did not start: $(cat "$log.err")" >&2
  exit 1
}

# free_port: a TCP port on 127.0.0.1 free at the moment of asking.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# cpu_ticks PID: the CPU time the process has used, in clock ticks (user +
# system), with its children's (`spin up` serves from a child process).
cpu_ticks() {
  local ticks child
  ticks="$(awk '{ print $14 + $15 }' "/proc/$1/stat")"
  for child in $(pgrep -P "$1"); do ticks=$((ticks + $(cpu_ticks "$child"))); done
  echo "$ticks"
}
