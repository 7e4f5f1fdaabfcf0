#!/usr/bin/env bash
# Paired core benchmark: the `respond` bench (core/benches/respond.rs, this
# tree's file) built against an earlier revision of the core and against
# this tree, run in alternating rounds in one run: the same requests, old
# core and new. Prints each round's time per request for each build (the
# median of criterion's estimate), the ratio new / old per round, and the
# median ratio per bench.
#
#   core/benches/paired.sh BASE_REV [BENCH_FILTER]
#   ROUNDS=8 core/benches/paired.sh 8b93bf2 default_request
#
# Why: a machine shared with other builds drifts by more than a change to
# the core moves a request; rounds that alternate the two builds within
# minutes share that drift, and the median of their ratios is the figure
# to quote (docs/BENCHMARKS.md, "Core: the admin API's cost, paired").
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 BASE_REV [BENCH_FILTER]" >&2; exit 2; }
BASE="$1"
FILTER="${2:-respond/}"
# ROUNDS pairs per bench; MEASURE seconds of criterion measurement each.
ROUNDS="${ROUNDS:-6}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# The base revision's files (an archive: no worktree, nothing of the
# repository's own state touched), with this tree's bench file.
mkdir "$WORK/base"
git -C "$ROOT" archive "$BASE" | tar -x -C "$WORK/base"
cp "$ROOT/core/benches/respond.rs" "$WORK/base/core/benches/respond.rs"

# build DIR TARGET_DIR: prints the path of the `respond` bench binary.
build() {
  (cd "$1" && CARGO_TARGET_DIR="$2" cargo bench -p noise-filter-core --bench respond \
    --no-run --message-format=json 2>/dev/null) |
    grep -o '"executable":"[^"]*respond[^"]*"' | tail -1 | sed 's/.*:"//; s/"$//'
}
OLD="$(build "$WORK/base" "$TARGET/paired-base")"
NEW="$(build "$ROOT" "$TARGET")"
[ -x "$OLD" ] && [ -x "$NEW" ] || { echo "a build failed" >&2; exit 1; }

# run BINARY BENCH: "name nanoseconds" for one bench (criterion's median
# estimate, the middle of its three figures).
run() {
  "$1" --bench --exact "$2" --warm-up-time 1 --measurement-time "${MEASURE:-3}" --noplot 2>/dev/null |
    awk '
      /^[a-z_]+\/[a-z_0-9]+/ { name = $1 }
      /time:/ {
        for (i = 1; i <= NF; i++) if ($i == "time:") break
        v = $(i + 3); u = $(i + 4)
        if (u == "ns") f = 1; else if (u == "µs" || u == "us") f = 1e3; else if (u == "ms") f = 1e6; else f = 1e9
        printf "%s %.1f\n", name, v * f
      }'
}

# The benches both builds have, matching the filter.
BENCHES="$("$NEW" --bench --list 2>/dev/null | sed -n 's/: benchmark$//p' | grep -- "$FILTER" || true)"
[ -n "$BENCHES" ] || { echo "no bench matches $FILTER" >&2; exit 1; }

# Each bench, old and new one right after the other (which goes first
# alternates), so a pair is seconds apart whatever the machine does
# meanwhile.
echo "round bench old_ns new_ns new/old"
for round in $(seq 1 "$ROUNDS"); do
  for bench in $BENCHES; do
    if [ $((round % 2)) -eq 1 ]; then
      old="$(run "$OLD" "$bench")"; new="$(run "$NEW" "$bench")"
    else
      new="$(run "$NEW" "$bench")"; old="$(run "$OLD" "$bench")"
    fi
    echo "$old $new" | awk -v r="$round" '{ printf "%d %s %.1f %.1f %.4f\n", r, $1, $2, $4, $4 / $2 }' |
      tee -a "$WORK/rounds"
  done
done
echo "median new/old per bench:"
sort -k2,2 -k5,5n "$WORK/rounds" |
  awk '{ v[$2] = v[$2] " " $5 } END {
    for (b in v) { n = split(v[b], a, " "); printf "%s %s (of %d rounds)\n", b, a[int((n + 1) / 2)], n }
  }'
