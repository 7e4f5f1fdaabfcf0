#!/usr/bin/env bash
# Instructions a request costs in the core, an earlier revision against
# this tree: `core/benches/instructions.rs` (this tree's file, copied into
# the earlier one) built for each, each case counted under callgrind for 0
# and for N requests; the difference over N is one request. A count does
# not move with the machine's load as a clock does, so one run each is the
# figure (docs/BENCHMARKS.md, "Core: the admin API's cost, paired").
#
#   core/benches/instructions.sh BASE_REV [N]
#
# Needs valgrind. Builds into $CARGO_TARGET_DIR/instructions-{base,new}.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 BASE_REV [N]" >&2; exit 2; }
BASE="$1"
N="${2:-200}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

mkdir "$WORK/base"
git -C "$ROOT" archive "$BASE" | tar -x -C "$WORK/base"
cp "$ROOT/core/benches/instructions.rs" "$WORK/base/core/benches/instructions.rs"
grep -q 'name = "instructions"' "$WORK/base/core/Cargo.toml" ||
  printf '\n[[bench]]\nname = "instructions"\nharness = false\n' >>"$WORK/base/core/Cargo.toml"

# build DIR TARGET_DIR: prints the path of the bench binary.
build() {
  (cd "$1" && CARGO_TARGET_DIR="$2" cargo bench -p noise-filter-core --bench instructions \
    --no-run --message-format=json 2>/dev/null) |
    grep -o '"executable":"[^"]*instructions[^"]*"' | tail -1 | sed 's/.*:"//; s/"$//'
}
OLD="$(build "$WORK/base" "$TARGET/instructions-base")"
NEW="$(build "$ROOT" "$TARGET/instructions-new")"
[ -x "$OLD" ] && [ -x "$NEW" ] || { echo "a build failed" >&2; exit 1; }

# count BINARY CASE REQUESTS: the instructions of the whole run.
count() {
  valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" "$1" "$2" "$3" >/dev/null 2>&1
  awk '/^summary:/ { print $2 }' "$WORK/cg.out"
}
echo "case old new new/old"
for case in default_request_20_custom default_request_no_custom filtered_request; do
  old=$(( ($(count "$OLD" "$case" "$N") - $(count "$OLD" "$case" 0)) / N ))
  new=$(( ($(count "$NEW" "$case" "$N") - $(count "$NEW" "$case" 0)) / N ))
  awk -v c="$case" -v o="$old" -v n="$new" 'BEGIN { printf "%s %d %d %.4f\n", c, o, n, n / o }'
done
