#!/usr/bin/env bash
# Before/after check for changes that must not move a prediction (issue 45:
# speed work keeps results bit-identical, or within a stated tolerance where
# a documented shortcut applies).
#
#   tests/bench/compare_outputs.sh snapshot BINARY DIR
#       Writes into DIR what BINARY predicts for every shipped scenario
#       (scenarios/default.textproto and scenarios/seeds/*: `run --json`),
#       a seed replayed on every rank (--full) and on the flow network,
#       the default scenario's Perfetto trace (every op's start and finish),
#       `validate --json` over every row of calibration/runs/, and
#       `validate-kernels` (every kernel row predicted with it left out).
#   tests/bench/compare_outputs.sh diff A B [TOLERANCE]
#       Compares two snapshots file by file. Without TOLERANCE the bytes
#       must match. With it (a relative tolerance, 0.001 for 0.1%), lines
#       must have the same text around their numbers and each number must
#       agree within TOLERANCE relative to the larger magnitude (exactly when
#       both are below 1e-12 in magnitude). Exits 1 on the first file that
#       differs, naming it and the first line.
#
# Run from the repository root. Example, around a change:
#   tests/bench/compare_outputs.sh snapshot build/moesim /tmp/before
#   (change, rebuild)
#   tests/bench/compare_outputs.sh snapshot build/moesim /tmp/after
#   tests/bench/compare_outputs.sh diff /tmp/before /tmp/after
set -euo pipefail

usage() {
  sed -n '6,19p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

snapshot() {
  local bin=$1 dir=$2
  [ -x "$bin" ] || { echo "compare_outputs: $bin: not an executable" >&2; exit 2; }
  mkdir -p "$dir"
  local f name
  for f in scenarios/default.textproto scenarios/seeds/*.textproto; do
    name=$(basename "$f" .textproto)
    "$bin" run "$f" --json > "$dir/run-$name.json"
  done
  local seed=scenarios/seeds/qwen3-next-8k-gb200.textproto
  "$bin" run "$seed" --full --json > "$dir/run-full.json"
  "$bin" run "$seed" --full --network flow --json > "$dir/run-full-flow.json"
  "$bin" run scenarios/default.textproto --trace "$dir/trace-default.json" \
    > /dev/null
  "$bin" validate --json > "$dir/validate.json"
  "$bin" validate-kernels > "$dir/validate-kernels.txt"
}

# Lines of $1 and $2 agree within relative tolerance $3.
near() {
  awk -v tol="$3" -v a="$1" -v b="$2" '
    function split_numbers(line, nums, rest,    n, re) {
      re = "-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?"
      n = 0
      rest[0] = ""
      while (match(line, re)) {
        rest[0] = rest[0] substr(line, 1, RSTART - 1) "#"
        nums[++n] = substr(line, RSTART, RLENGTH) + 0
        line = substr(line, RSTART + RLENGTH)
      }
      rest[0] = rest[0] line
      return n
    }
    function abs(x) { return x < 0 ? -x : x }
    BEGIN {
      line = 0
      while (1) {
        ra = (getline la < a); rb = (getline lb < b); ++line
        if (ra <= 0 || rb <= 0) break
        if (la == lb) continue
        na = split_numbers(la, xa, sa); nb = split_numbers(lb, xb, sb)
        if (na != nb || sa[0] != sb[0]) { print "line " line ": text differs"; exit 1 }
        for (i = 1; i <= na; ++i) {
          m = abs(xa[i]) > abs(xb[i]) ? abs(xa[i]) : abs(xb[i])
          if (m < 1e-12) continue
          if (abs(xa[i] - xb[i]) > tol * m) {
            print "line " line ": " xa[i] " vs " xb[i]; exit 1
          }
        }
      }
      if (ra != rb) { print "line " line ": one file is longer"; exit 1 }
    }'
}

compare() {
  local a=$1 b=$2 tol=${3:-} f name why
  [ -d "$a" ] && [ -d "$b" ] || { echo "compare_outputs: $a or $b: not a directory" >&2; exit 2; }
  local count=0
  for f in "$a"/*; do
    name=$(basename "$f")
    [ -f "$b/$name" ] || { echo "$name: missing from $b"; exit 1; }
    if ! cmp -s "$f" "$b/$name"; then
      if [ -z "$tol" ]; then
        echo "$name: differs (first: $(cmp "$f" "$b/$name" | head -1))"
        exit 1
      fi
      if ! why=$(near "$f" "$b/$name" "$tol"); then
        echo "$name: beyond $tol: $why"
        exit 1
      fi
    fi
    count=$((count + 1))
  done
  echo "compare_outputs: $count files agree${tol:+ within $tol}"
}

case "${1:-}" in
  snapshot) [ $# -eq 3 ] || usage; snapshot "$2" "$3" ;;
  diff) [ $# -eq 3 ] || [ $# -eq 4 ] || usage; compare "$2" "$3" "${4:-}" ;;
  *) usage ;;
esac
