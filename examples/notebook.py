# %% [markdown]
# # CP against TP for Qwen3-235B-A22B at 128K tokens on a GB200 NVL72 rack
#
# A plain Python script with `# %%` cells (VS Code, Jupytext, Spyder run
# them as a notebook). From the repository root, after `make build`:
#
#     PYTHONPATH=build/python python3 examples/notebook.py
#
# The sweep is scenarios/sweeps/qwen3-235b-gb200-nvl72-cp-vs-tp.textproto:
# TP 1-4 x CP 1-16 x EP x PP x VPP x recompute around the shipped seed
# (scenarios/seeds/qwen3-235b-128k-gb200.textproto), 810 candidates.

# %%
import os

import moesim

SPEC = "scenarios/sweeps/qwen3-235b-gb200-nvl72-cp-vs-tp.textproto"
candidates = moesim.sweep(SPEC, threads=os.cpu_count() or 1)
print(f"{len(candidates)} candidates: {candidates.summary.counts}")

# %% [markdown]
# The best tokens/s/GPU for each (TP, CP) among the layouts that fit; a
# cell with none that fits stays empty.

# %%
tps = sorted({c.tp for c in candidates})
cps = sorted({c.cp for c in candidates})
best = {}
for c in candidates:
    if c.verdict != "ok":
        continue
    key = (c.tp, c.cp)
    if key not in best or c.tokens_per_sec_per_gpu > best[key].tokens_per_sec_per_gpu:
        best[key] = c

print("tokens/s/GPU, best layout per cell (- : nothing fits)")
print("TP \\ CP " + "".join(f"{cp:>9}" for cp in cps))
for tp in tps:
    row = "".join(f"{best[(tp, cp)].tokens_per_sec_per_gpu:9.0f}"
                  if (tp, cp) in best else f"{'-':>9}" for cp in cps)
    print(f"{tp:>7} {row}")

winner = max(best.values(), key=lambda c: c.tokens_per_sec_per_gpu)
print(f"\nbest: TP{winner.tp} CP{winner.cp} EP{winner.ep} PP{winner.pp} "
      f"VPP{winner.vpp}, recompute {winner.recompute}: "
      f"{winner.tokens_per_sec_per_gpu:.0f} tokens/s/GPU, "
      f"{winner.peak_memory_gib:.1f} GiB")

# %% [markdown]
# The same as a heatmap, when matplotlib is installed (Debian:
# python3-matplotlib); written to cp_tp_heatmap.png.

# %%
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed: no heatmap")

if plt is not None:
    grid = [[best[(tp, cp)].tokens_per_sec_per_gpu if (tp, cp) in best
             else float("nan") for cp in cps] for tp in tps]
    fig, ax = plt.subplots(figsize=(6, 3))
    image = ax.imshow(grid, cmap="viridis", origin="lower")
    ax.set_xticks(range(len(cps)), [str(cp) for cp in cps])
    ax.set_yticks(range(len(tps)), [str(tp) for tp in tps])
    ax.set_xlabel("context parallel (CP)")
    ax.set_ylabel("tensor parallel (TP)")
    ax.set_title("Qwen3-235B-A22B, 128K, GB200 NVL72: tokens/s/GPU")
    fig.colorbar(image, ax=ax)
    fig.tight_layout()
    fig.savefig("cp_tp_heatmap.png", dpi=120)
    print("wrote cp_tp_heatmap.png")
