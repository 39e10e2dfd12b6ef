#!/usr/bin/env python3
"""A p2p CP ring's merged steady steps against every step replayed.

    tests/bench/check_ring_merge.py BINARY

Runs each case below twice, `BINARY run ... --json` as is and with
--every-ring-step, and compares every figure. The step time and every
figure of a whole stream (compute, idle, the CP exchange) must be the same
to the last digit printed; the host's time within 1e-9 (a merged op's host
seconds are a product, not a sum of steps); beside an exposed ring the
exposure of the other streams may differ (docs/replay.md says why), and
`ops` is what the merge cuts. Prints one line per case (merged steps,
hop / tile, the figures that differ and by how much) and exits 1 when a
figure that must agree does not. Run from the repository root.
"""
import json
import subprocess
import sys

SEEDS = "scenarios/seeds/"
# (scenario, extra flags): hidden and exposed rings, an a2a+p2p outer ring,
# FP8 attention (per-tensor recipe), every rank replayed, and two cases
# that must not merge (EP overlap; a ring of 4).
CASES = [
    ("scenarios/default.textproto", ["--cp-comm-type", "p2p"]),
    ("scenarios/default.textproto",
     ["--cp-comm-type", "a2a+p2p", "--hierarchical-cp-sizes", "4,8"]),
    ("scenarios/default.textproto",
     ["--cp-comm-type", "a2a+p2p", "--hierarchical-cp-sizes", "2,16"]),
    ("scenarios/default.textproto",
     ["--cp-comm-type", "p2p", "--precision", "fp8-cs",
      "--megatron-args", "--fp8-dot-product-attention"]),
    ("scenarios/default.textproto", ["--cp-comm-type", "p2p", "--gbs", "512"]),
    ("scenarios/default.textproto",
     ["--cp-comm-type", "p2p", "--ep-overlap", "1", "--recompute",
      "mla_up_proj"]),
    (SEEDS + "dsv3-256k-h100.textproto", ["--cp-comm-type", "p2p"]),
    (SEEDS + "qwen3-next-64k-gb200.textproto", []),
    (SEEDS + "qwen3-next-64k-gb200.textproto", ["--full"]),
    (SEEDS + "qwen3-next-64k-gb200.textproto",
     ["--recompute", "core_attn", "--cp-comm-type", "p2p"]),
    (SEEDS + "qwen3-235b-128k-gb200.textproto", []),
    ("tests/bench/scenarios/dsv3_1m_cp256_p2p.textproto", []),
]

# Figures that may differ, and why.
HOST = ("host_busy_s", "host_idle_s")  # host seconds summed in another order
EXPOSURE = ("exposed_comm_s", "hidden_fraction", "exposed_s",
            "exposed_comm_share", "critical_path_s")


def flatten(value, path, out):
    if isinstance(value, dict):
        for k, v in value.items():
            flatten(v, path + (k,), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            flatten(v, path + (str(i),), out)
    else:
        out[path] = value


def allowed(path, a, b, exposed):
    if path[-1] in ("ops", "merged_steps"):
        return True
    rel = abs(a - b) / max(abs(a), abs(b))
    if any(p in HOST for p in path) or path[-1] in HOST:
        return rel < 1e-9
    if "critical_path_s" in path:
        return rel < 1e-9
    if exposed and any(p in EXPOSURE for p in path) and "cp" not in path:
        return True
    return False


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary, failed = sys.argv[1], 0
    for scenario, extra in CASES:
        runs = []
        for more in ([], ["--every-ring-step"]):
            p = subprocess.run([binary, "run", scenario, *extra, "--json",
                                *more], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"{scenario} {' '.join(extra)}: {p.stderr.strip()}")
                return 1
            runs.append(json.loads(p.stdout))
        ring = runs[0].get("cp_ring") or {}
        exposed = ring.get("hop_s", 0) > ring.get("tile_s", 0)
        a, b = {}, {}
        flatten(runs[0], (), a)
        flatten(runs[1], (), b)
        differ, bad = [], []
        for path in sorted(set(a) | set(b)):
            x, y = a.get(path), b.get(path)
            if x == y:
                continue
            name = ".".join(path)
            if not (isinstance(x, (int, float)) and isinstance(y, (int, float))):
                bad.append(f"{name} {x!r} vs {y!r}")
                continue
            rel = abs(x - y) / max(abs(x), abs(y))
            (differ if allowed(path, x, y, exposed) else bad).append(
                f"{name} {rel:.2g}")
        failed += bool(bad)
        print(f"{scenario} {' '.join(extra)}: merged {ring.get('merged_steps')}"
              f" of {ring.get('ranks')} steps, "
              f"{'exposed' if exposed else 'hidden'}; "
              f"ops {runs[1]['ops']} -> {runs[0]['ops']}"
              + (f"; may differ: {', '.join(differ)}" if differ else "")
              + (f"; MUST AGREE: {', '.join(bad)}" if bad else ""))
    print(f"{len(CASES)} cases, {failed} with a figure that must agree and "
          "does not")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
