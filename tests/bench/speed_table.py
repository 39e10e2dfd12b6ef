#!/usr/bin/env python3
"""The speed goals (issue 45) measured by the Google Benchmarks, as a table.

    tests/bench/speed_table.py measure BUILD_DIR OUT.json
        Runs each goal's benchmark three times (the table shows the
        median) in a process of its own (so peak_rss_mib is its own), pinned to one core with taskset where it exists (two
        cores for the -j 2 sweep), and writes their Google Benchmark JSON,
        with the commit and the machine, to OUT.json.
    tests/bench/speed_table.py render RESULTS.json
        Prints the Markdown table the README carries between its
        "speed-table" markers.
    tests/bench/speed_table.py check RESULTS.json README.md
        Exits 1 when the README's table is not what render prints: the
        table is generated from measured results, never edited by hand.
    tests/bench/speed_table.py update RESULTS.json README.md
        Replaces the README's table with what render prints.

Typical use, from the repository root after `make build`:
    tests/bench/speed_table.py measure build docs/speed.json
    tests/bench/speed_table.py update docs/speed.json README.md
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

BEGIN = "<!-- speed-table begin: tests/bench/speed_table.py update -->"
END = "<!-- speed-table end -->"

# (binary, benchmark name as Google Benchmark reports it, cores).
BENCHMARKS = [
    ("replay_bench", "BM_Process/default_textproto/real_time", 1),
    ("replay_bench", "BM_ReplayFile/default_textproto", 1),
    ("replay_bench", "BM_Process/default_gbs4096/real_time", 1),
    ("replay_bench", "BM_Process/dsv3_1m_cp256_p2p/real_time", 1),
    ("replay_bench", "BM_Replay/full_deepseek_v3_1024_h100/iterations:1", 1),
    ("replay_bench", "BM_Replay/deepseek_v3_1024_h100", 1),
    ("sweep_bench", "BM_Sweep/qwen3_235b_cp_vs_tp_j2/iterations:1/real_time", 2),
]

# (what, benchmark, quantity, goal, "<=" or ">=").  Quantities: "s" (the
# benchmark's time in seconds), "MiB" (its peak_rss_mib counter), "x" (its
# peak_rss_mib over the next benchmark's), "/s" (its layouts/s counter).
GOALS = [
    ("default scenario, whole `moesim run`",
     "BM_Process/default_textproto/real_time", "s", 0.1, "<="),
    ("default scenario, its replay", "BM_ReplayFile/default_textproto", "s",
     0.05, "<="),
    ("default at GBS 4096 (4,096 micro-batches)",
     "BM_Process/default_gbs4096/real_time", "s", 1.0, "<="),
    ("default at GBS 4096, peak memory over GBS 128's",
     ("BM_Process/default_gbs4096/real_time",
      "BM_Process/default_textproto/real_time"), "x", 1.2, "<="),
    ("DeepSeek-V3 at 1M tokens (CP256 p2p, 2,048 H100), whole run",
     "BM_Process/dsv3_1m_cp256_p2p/real_time", "s", 1.0, "<="),
    ("DeepSeek-V3 at 1M tokens, peak memory",
     "BM_Process/dsv3_1m_cp256_p2p/real_time", "MiB", 200, "<="),
    ("`--full` DeepSeek-V3 on 1,024 H100 (every rank replayed)",
     "BM_Replay/full_deepseek_v3_1024_h100/iterations:1", "s", 2.0, "<="),
    ("DeepSeek-V3 on 1,024 H100 (TP2 PP8 VPP4 EP64, GBS 16384), replay",
     "BM_Replay/deepseek_v3_1024_h100", "s", 0.5, "<="),
    ("NVL72 CP-vs-TP sweep (810 candidates), `-j 2`",
     "BM_Sweep/qwen3_235b_cp_vs_tp_j2/iterations:1/real_time", "/s", 200, ">="),
]

UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def fail(message):
    print("speed_table.py: " + message, file=sys.stderr)
    sys.exit(2)


def measure(build, out):
    results = {"benchmarks": []}
    taskset = shutil.which("taskset")
    for binary, name, cores in BENCHMARKS:
        path = os.path.join(build, binary)
        if not os.path.exists(path):
            fail(path + ": no such benchmark binary (make build first)")
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            command = [path, "--benchmark_filter=^" + name + "$",
                       "--benchmark_repetitions=3",
                       "--benchmark_report_aggregates_only=true",
                       "--benchmark_out=" + f.name,
                       "--benchmark_out_format=json"]
            if taskset:
                command = [taskset, "-c", ",".join(map(str, range(cores)))
                           ] + command
            run = subprocess.run(command, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            if run.returncode != 0:
                fail(" ".join(command) + ": " + run.stderr.strip())
            report = json.load(open(f.name))
        # The median of three runs, under the benchmark's own name.
        found = [b for b in report["benchmarks"]
                 if b["name"] == name + "_median"]
        if len(found) != 1:
            fail("%s: no benchmark named %s" % (binary, name))
        found[0]["name"] = name
        results["context"] = report["context"]
        results["benchmarks"].append(found[0])
    results["commit"] = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True,
        text=True).stdout.strip()
    with open(out, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
        f.write("\n")


def render(results_path):
    results = json.load(open(results_path))
    by_name = {b["name"]: b for b in results["benchmarks"]}

    def get(name):
        if name not in by_name:
            fail("%s: no result for %s" % (results_path, name))
        return by_name[name]

    def seconds(name):
        b = get(name)
        return b["real_time"] * UNIT_SECONDS[b["time_unit"]]

    lines = [
        "| goal | measured | met | benchmark |",
        "|---|---|---|---|",
    ]
    for what, name, quantity, goal, sense in GOALS:
        if quantity == "s":
            value = seconds(name)
            text = ("%.0f ms" % (value * 1e3) if value < 1 else
                    "%.2f s" % value)
            goal_text = ("%.0f ms" % (goal * 1e3) if goal < 1 else
                         "%g s" % goal)
        elif quantity == "MiB":
            value = get(name)["peak_rss_mib"]
            text, goal_text = "%.0f MiB" % value, "%g MiB" % goal
        elif quantity == "x":
            big, small = (get(n)["peak_rss_mib"] for n in name)
            value = big / small
            text = "%.1fx (%.0f / %.0f MiB)" % (value, big, small)
            goal_text = "%gx" % goal
            name = name[0]
        else:
            value = get(name)["layouts/s"]
            text, goal_text = "%.0f /s" % value, "%g /s" % goal
        met = value <= goal if sense == "<=" else value >= goal
        lines.append("| %s, %s %s | %s | %s | `%s` |" %
                     (what, sense.replace("<=", "≤").replace(">=", "≥"),
                      goal_text, text, "yes" if met else "no", name))
    context = results["context"]
    lines.append("")
    lines.append(
        "Measured at %s on %s (%d CPUs at %d MHz), %s; one core pinned "
        "except the `-j 2` sweep."
        % (results["commit"], context["host_name"], context["num_cpus"],
           context["mhz_per_cpu"], context["date"][:10]))
    return "\n".join(lines) + "\n"


def readme_with_table(readme, table):
    text = open(readme).read()
    if BEGIN not in text or END not in text:
        fail(readme + ": no speed-table markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return text, head + BEGIN + "\n" + table + END + tail


def main(argv):
    if len(argv) == 4 and argv[1] == "measure":
        measure(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "render":
        sys.stdout.write(render(argv[2]))
    elif len(argv) == 4 and argv[1] in ("check", "update"):
        old, new = readme_with_table(argv[3], render(argv[2]))
        if argv[1] == "update":
            open(argv[3], "w").write(new)
        elif old != new:
            print("%s: the speed table is not what `speed_table.py render "
                  "%s` prints; run `speed_table.py update`" %
                  (argv[3], argv[2]), file=sys.stderr)
            return 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
