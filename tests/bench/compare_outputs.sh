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
#   tests/bench/compare_outputs.sh diff A B [TOLERANCE] [--ignore KEYS]
#       Compares two snapshots file by file. Without TOLERANCE the bytes
#       must match. With it (a relative tolerance, 0.001 for 0.1%), lines
#       must have the same text around their numbers and each number must
#       agree within TOLERANCE relative to the larger magnitude (exactly when
#       both are below 1e-12 in magnitude). --ignore KEYS (comma-separated
#       JSON keys, e.g. ops,merged_steps) drops those keys and their scalar
#       values from both sides first: what a change means to report
#       differently. Exits 1 on the first file that differs, naming it and
#       the first line.
#
# Run from the repository root. Example, around a change:
#   tests/bench/compare_outputs.sh snapshot build/moesim /tmp/before
#   (change, rebuild)
#   tests/bench/compare_outputs.sh snapshot build/moesim /tmp/after
#   tests/bench/compare_outputs.sh diff /tmp/before /tmp/after
set -euo pipefail

usage() {
  sed -n '6,22p' "$0" | sed 's/^# \{0,1\}//' >&2
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

# $1 without the JSON keys in the comma-separated list $2 (and their
# scalar values), written to $3.
strip_keys() {
  python3 - "$1" "$2" "$3" <<'PY'
import re, sys
src, keys, dst = sys.argv[1:]
text = open(src, encoding="utf-8", errors="surrogateescape").read()
for key in filter(None, keys.split(",")):
    value = r'(-?[0-9][0-9.eE+-]*|true|false|null|"[^"]*"|\[[^\]\[]*\])'
    text = re.sub(r',\s*"' + re.escape(key) + r'":\s*' + value, "", text)
    text = re.sub(r'"' + re.escape(key) + r'":\s*' + value + r',?\s*', "", text)
open(dst, "w", encoding="utf-8", errors="surrogateescape").write(text)
PY
}

compare() {
  local a=$1 b=$2 tol=${3:-} ignore=${4:-} f name why
  [ -d "$a" ] && [ -d "$b" ] || { echo "compare_outputs: $a or $b: not a directory" >&2; exit 2; }
  local count=0
  if [ -n "$ignore" ]; then
    stripped=$(mktemp -d)
    trap 'rm -rf "$stripped"' EXIT
    mkdir -p "$stripped/a" "$stripped/b"
    for f in "$a"/*; do strip_keys "$f" "$ignore" "$stripped/a/$(basename "$f")"; done
    for f in "$b"/*; do strip_keys "$f" "$ignore" "$stripped/b/$(basename "$f")"; done
    a=$stripped/a
    b=$stripped/b
  fi
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
  diff)
    [ $# -ge 3 ] || usage
    a=$2 b=$3 tol="" ignore=""
    shift 3
    while [ $# -gt 0 ]; do
      case "$1" in
        --ignore) [ $# -ge 2 ] || usage; ignore=$2; shift 2 ;;
        *) [ -z "$tol" ] || usage; tol=$1; shift ;;
      esac
    done
    compare "$a" "$b" "$tol" "$ignore" ;;
  *) usage ;;
esac
