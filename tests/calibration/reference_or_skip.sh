# Sourced by the generate.py ctests: exits 77 (ctest's skip) when python3 or
# the reference folder (their first argument) is absent, naming the test.
# Usage: . reference_or_skip.sh NAME REFERENCE_DIR
if ! command -v python3 >/dev/null 2>&1; then
  echo "$1: python3 not found; skipped"
  exit 77
fi
if [ ! -d "$2" ]; then
  echo "$1: reference folder $2 absent; skipped"
  exit 77
fi
