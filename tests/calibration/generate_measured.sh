#!/usr/bin/env bash
# make calibrate-bench output enters the tables through generate.py: with
# the checked-in sample output (calibration/cuda/sample/, one file per table)
# as h200's measured folder, every sample row must be in the generated h200
# tables with its measured source and values, once at its grid point (the
# C++ loader's acceptance of the sample rows is
# Tables.CudaBenchmarkSampleOutputLoads).
# Usage: tests/calibration/generate_measured.sh REFERENCE_DIR
# Exit 77 (ctest's skip) when python3 or REFERENCE_DIR is absent.
set -euo pipefail
ref=$1
. "$(dirname "$0")/reference_or_skip.sh" generate_measured "$ref"
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/measured/h200"
cp calibration/cuda/sample/*.csv "$tmp/measured/h200/"
python3 calibration/tables/generate.py --ref "$ref" --measured "$tmp/measured" \
  --out "$tmp/tables" > "$tmp/log.txt" 2>&1 || { tail -n 20 "$tmp/log.txt"; exit 1; }
grep -q "measured rows merged from $tmp/measured: " "$tmp/log.txt"
python3 - "$tmp" <<'PY'
import csv, os, sys
tmp = sys.argv[1]
sample = "calibration/cuda/sample"

def cells(row):
    # Numbers compare as numbers (the generator writes 2.310 as 2.31).
    out = []
    for k, v in row.items():
        if k == "source":
            continue
        try:
            out.append(float(v))
        except ValueError:
            out.append(v)
    return tuple(out)

total = 0
for name in sorted(os.listdir(sample)):
    got = {}
    for r in csv.DictReader(open(os.path.join(tmp, "tables", "h200", name))):
        got.setdefault(cells(r), []).append(r["source"])
    for r in csv.DictReader(open(os.path.join(sample, name))):
        if got.get(cells(r)) != [r["source"]]:
            sys.exit("%s: sample row %s is %s in the generated h200 table" % (
                name, dict(r), got.get(cells(r), "missing")))
        total += 1
print("generate_measured: %d sample rows merged into h200" % total)
PY
