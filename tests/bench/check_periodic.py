#!/usr/bin/env python3
"""The periodic shortcut (sim/periodic.h) against replaying every micro-batch.

    tests/bench/check_periodic.py BINARY [MULTIPLE]

Takes the `moesim run` command of every row of calibration/runs/runs.csv
(`BINARY validate --commands`), multiplies its global batch by MULTIPLE
(default 4, so that most rows have enough micro-batches for the shortcut),
and runs it twice: as is and with --every-microbatch. Prints each row's
relative step-time difference and whether the shortcut was taken, then a
summary; exits 1 when a row that took it differs. Two rows run at a time
(12 s for the 214 rows on two cores). Run from the repository root.
"""
import concurrent.futures
import json
import shlex
import subprocess
import sys


def compare(binary, multiple, row_id, command):
    args = shlex.split(command)[2:]  # drop "moesim run"
    if "--gbs" not in args:
        return row_id, "no --gbs", None
    i = args.index("--gbs")
    args[i + 1] = str(int(args[i + 1]) * multiple)
    out = {}
    for mode, extra in (("periodic", []), ("every", ["--every-microbatch"])):
        p = subprocess.run([binary, "run", *args, "--json", *extra],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return row_id, "error: " + p.stderr.strip()[:120], None
        out[mode] = json.loads(p.stdout)
    a, b = out["periodic"]["step_time_s"], out["every"]["step_time_s"]
    taken = "periodic_microbatches" in out["periodic"]
    return row_id, "taken" if taken else "not taken", abs(a - b) / b


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    multiple = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    listing = subprocess.run([binary, "validate", "--commands"],
                             capture_output=True, text=True, check=True)
    rows = [line.split("\t", 1) for line in listing.stdout.splitlines()
            if "\tmoesim run " in line]
    taken, differ = 0, []
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for row_id, what, rel in pool.map(
                lambda r: compare(binary, multiple, *r), rows):
            print(f"{row_id}\t{what}\t{'' if rel is None else f'{rel:.3g}'}")
            if what == "taken":
                taken += 1
                if rel:
                    differ.append(row_id)
    print(f"{len(rows)} rows at {multiple}x GBS: {taken} took the shortcut, "
          f"{len(differ)} of them differ from every micro-batch replayed")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
