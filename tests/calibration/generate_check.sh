#!/usr/bin/env bash
# calibration/tables/generate.py --check against a reference folder: the
# shipped tables must be exactly what the generator writes from it.
# Usage: tests/calibration/generate_check.sh REFERENCE_DIR
# Exit 77 (ctest's skip) when python3 or REFERENCE_DIR is absent; otherwise
# the generator's status (1 when a file differs, naming it; 0 when all match).
set -uo pipefail
ref=$1
. "$(dirname "$0")/reference_or_skip.sh" generate_check "$ref"
cd "$(dirname "$0")/../.."
# Print the verdict (the files that differ), not the per-table summary; if
# the generator stopped before it (a traceback, a bad reference row), its
# last lines.
out=$(python3 calibration/tables/generate.py --check --ref "$ref" 2>&1)
rc=$?
verdict=$(printf '%s\n' "$out" | sed -n '/file(s) differ from the generated text/,$p')
if [ -n "$verdict" ]; then
  printf '%s\n' "$verdict"
else
  printf '%s\n' "$out" | tail -n 20
fi
exit $rc
