#!/usr/bin/env python3
"""Regenerates calibration/tables/<gpu>/*.csv (and
calibration/validation/moe_layer.csv) from the shared reference files.

Inputs (read only): calibration/reference/{measured_kernels,measured_comm}.csv
(published measurements, each row with its source; the project's
hardware_facts.md notes are quoted below where a figure comes from them), and
the system spec files topology/systems/*.textproto (peaks, HBM bandwidth, host
links).
Schema: calibration/tables/README.md.

Every row carries a source: `published:<citation>` for a row of the reference
CSVs (citation text kept), `derived:<rule>` for a spec x efficiency or a
same-silicon copy, the rule written out. Run:

    python3 calibration/tables/generate.py [--ref calibration/reference] [--check]

--check writes nothing: it prints which files differ from the generated text
and exits 1 if any does, 0 if all match (the CTest
calibration_tables_generate_check runs it). Figures that are not in the
reference files (transcribed by hand from the cited page) are named constants
below, each with its citation.
"""

import argparse
import csv
import io
import os
import re
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GPUS = ["h100", "h200", "b200", "b300", "gb200", "gb300"]

HEADERS = {
    "gemm": "impl,m,n,k,dtype,tflops,source",
    "grouped_gemm": "impl,experts,tokens_per_expert,n,k,dtype,tflops,source",
    "attention": "impl,direction,batch,seq_q,seq_kv,heads_q,heads_kv,head_dim_qk,"
                 "head_dim_v,causal,window,dtype,tflops,source",
    "memory_bound": "kernel,bytes,dtype,gb_s,source",
    "collectives": "collective,algorithm,tier,group_size,bytes,bus_gb_s,latency_us,source",
    "dispatch": "dispatcher,phase,ep_size,tier,tokens,hidden,topk,dtype,gb_s,sms,source",
    "host": "quantity,value,unit,source",
    "host_copy": "link,direction,bytes,gb_s,source",
    "cpu_adam": "cpu,threads,params_per_s,source",
    "sustained": "quantity,value,unit,source",
}
# The value column(s) of each table: everything else is the grid point.
VALUE_COLS = {
    "gemm": ["tflops"], "grouped_gemm": ["tflops"], "attention": ["tflops"],
    "memory_bound": ["gb_s"], "collectives": ["bus_gb_s", "latency_us"],
    "dispatch": ["gb_s"], "host": ["value", "unit"], "host_copy": ["gb_s"],
    "cpu_adam": ["params_per_s"], "sustained": ["value", "unit"],
}

GIB8 = 8589934592  # "large" / "large (peak)" messages


# --------------------------------------------------------------------------
# helpers


def num(x, nd=1):
    """Plain number text: integers without a decimal point, else rounded."""
    if isinstance(x, str):
        return x
    if abs(x - round(x)) < 1e-9:
        return str(int(round(x)))
    s = ("%." + str(nd) + "f") % x
    s = s.rstrip("0").rstrip(".")
    return s


def size_bytes(text):
    """'32KiB' / '16GiB' / '32768 B' / '8MiB' -> bytes."""
    t = text.strip()
    m = re.fullmatch(r"(\d+)\s*B", t)
    if m:
        return int(m.group(1))
    m = re.fullmatch(r"(\d+)\s*(KiB|MiB|GiB)", t)
    if m:
        return int(m.group(1)) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[m.group(2)]
    raise ValueError("size " + text)


def seqlen(text):
    """'512' / '1k' / '16k' -> int (1k = 1024)."""
    m = re.fullmatch(r"(\d+)(k?)", text)
    return int(m.group(1)) * (1024 if m.group(2) else 1)


def cite(r, extra=None, fields=("source",)):
    """published: citation text built from a reference row."""
    parts = [r["source"]]
    if extra:
        parts.append(extra)
    return "published:" + "; ".join(p for p in parts if p)


def read_ref(ref, name):
    with open(os.path.join(ref, name), newline="") as f:
        rows = list(csv.DictReader(f))
    for i, r in enumerate(rows):
        r["_line"] = i + 2  # file line number (header is line 1)
    return rows


def textproto_specs():
    """gpu.calibration -> dict of the gpu{} peaks and host_link of a system file."""
    out = {}
    d = os.path.join(REPO, "topology", "systems")
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".textproto"):
            continue
        txt = open(os.path.join(d, fn)).read()

        def field(block, key):
            m = re.search(block + r"\s*\{(.*?)\n\}", txt, re.S)
            body = m.group(1)
            m2 = re.search(r"\n\s*" + key + r":\s*\"?([^\"\n#]+)\"?", body)
            return m2.group(1).strip() if m2 else None

        cal = field("gpu", "calibration")
        out[cal] = {
            "file": "topology/systems/" + fn,
            "bf16": float(field("gpu", "bf16_dense_tflops")),
            "fp8": float(field("gpu", "fp8_dense_tflops")),
            "fp4": float(field("gpu", "fp4_dense_tflops")),
            "hbm_tbps": float(field("gpu", "hbm_tbps")),
            "host_link": field("host_link", "kind"),
            "host_gb_s": float(field("host_link", "gb_s")),
            "cpu": field("host_link", "cpu"),
            "cpus_per_node": int(field("host_link", "cpus_per_node")),
            "gpus_per_node": int(re.search(r"\ngpus_per_node:\s*(\d+)", txt).group(1)),
        }
    return out


class Table:
    """Rows of one table of one GPU, refusing duplicate grid points.

    Rows are written sorted by the table's SORT key, except rows added with
    order="head" (written first) or order="tail" (written last), each group in
    the order it was added: rows that belong together in the file (the host
    per-call costs, one benchmark's shapes) stay in that order."""

    def __init__(self, name, gpu, log):
        self.name, self.gpu, self.log = name, gpu, log
        self.cols = HEADERS[name].split(",")
        self.rows = OrderedDict()
        self.order = {}  # grid key -> "head" / "tail" / None

    def key(self, row):
        return tuple(str(row[c]) for c in self.cols
                     if c not in VALUE_COLS[self.name] and c != "source")

    def add(self, replace=False, order=None, **row):
        assert order in (None, "head", "tail")
        for c in self.cols:
            row.setdefault(c, "")
        row = {c: num(row[c]) if not isinstance(row[c], str) else row[c] for c in self.cols}
        # Citations keep their text; double quotes become single quotes so a
        # quoted CSV field never needs "" escapes.
        row["source"] = row["source"].replace('"', "'")
        k = self.key(row)
        if k in self.rows:
            if replace:
                self.log.append("%s/%s: replaced %s" % (self.gpu, self.name, k))
                self.rows[k] = row
                self.order[k] = order
            else:
                raise SystemExit("duplicate grid point %s/%s %s\n old: %s\n new: %s" % (
                    self.gpu, self.name, k, self.rows[k]["source"], row["source"]))
            return
        self.rows[k] = row
        self.order[k] = order

    def has(self, **grid):
        row = {c: "" for c in self.cols}
        row.update({c: num(v) if not isinstance(v, str) else v for c, v in grid.items()})
        return self.key(row) in self.rows

    def text(self, sort_key):
        buf = io.StringIO()
        buf.write(HEADERS[self.name] + "\n")
        w = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        head = [r for k, r in self.rows.items() if self.order[k] == "head"]
        body = sorted((r for k, r in self.rows.items() if self.order[k] is None), key=sort_key)
        tail = [r for k, r in self.rows.items() if self.order[k] == "tail"]
        for row in head + body + tail:
            w.writerow([row[c] for c in self.cols])
        return buf.getvalue()


def n_(x):
    try:
        return float(x)
    except ValueError:
        return -1.0


SORT = {
    "gemm": lambda r: (r["impl"], r["dtype"], n_(r["m"]), n_(r["n"]), n_(r["k"])),
    "grouped_gemm": lambda r: (r["impl"], r["dtype"], n_(r["experts"]),
                               n_(r["tokens_per_expert"]), n_(r["n"]), n_(r["k"])),
    "attention": lambda r: (r["impl"], r["direction"], r["dtype"], n_(r["head_dim_qk"]),
                            n_(r["causal"]), n_(r["seq_q"]), n_(r["seq_kv"]), n_(r["batch"])),
    "memory_bound": lambda r: (r["kernel"], r["dtype"], n_(r["bytes"])),
    "collectives": lambda r: (r["collective"], r["algorithm"], r["tier"],
                              n_(r["group_size"]), n_(r["bytes"])),
    "dispatch": lambda r: (r["dispatcher"], r["phase"], r["tier"], n_(r["ep_size"]),
                           n_(r["tokens"]), r["dtype"], n_(r["sms"])),
    "host": lambda r: (r["quantity"],),
    "host_copy": lambda r: (r["link"], r["direction"], n_(r["bytes"])),
    "cpu_adam": lambda r: (r["cpu"], n_(r["threads"])),
    "sustained": lambda r: (r["quantity"],),
}


# --------------------------------------------------------------------------
# GEMM


# ml-engineering MAMF rows: gpu label in measured_kernels.csv -> folder
MAMF_GPU = {"H100 SXM": "h100", "H200 SXM": "h200", "B200 SXM": "b200",
            "B300 SXM": "b300", "GB200": "gb200"}
H800 = "H800 (same GH100 SMs and clocks as H100 SXM)"


def gemm_tables(K, T, spec):
    mamf = {}  # gpu -> dtype -> (m, n, k, tflops)
    h100_sweep = {}  # (dtype, size) -> (tflops text, row)
    b200_sweep = {}  # size -> TFLOPS, B200 cuBLAS BF16 M=N=K (pyptx.dev)
    mamf_src = None  # the MAMF table's citation, repository@commit
    for r in K:
        lab, gpu, kern = r["source"], r["gpu"], r["kernel"]
        if "MAMF" in kern and gpu in MAMF_GPU:
            g = MAMF_GPU[gpu]
            m = re.search(r"(\d+)x(\d+)x(\d+)", r["shape_params"])
            dt = "fp8" if "FP8" in r["dtype"] else "bf16"
            mm, nn, kk = (int(x) for x in m.groups())
            T[g]["gemm"].add(impl="cublas", m=mm, n=nn, k=kk, dtype=dt,
                             tflops=r["measured_tflops_or_gbps"],
                             source=cite(r, "%s %s %s, %s; %s (measured_kernels.csv line %d)" % (
                                 gpu, kern, r["dtype"], r["shape_params"], r["notes"], r["_line"])))
            mamf.setdefault(g, {})[dt] = (mm, nn, kk, float(r["measured_tflops_or_gbps"]))
            mamf_src = lab.split(" ")[0]
        elif kern.startswith("cublasGemmEx"):
            n = int(re.search(r"M=N=K=(\d+)", r["shape_params"]).group(1))
            dt = "tf32" if "TF32" in kern else "fp16"
            T["h100"]["gemm"].add(impl="cublas", m=n, n=n, k=n, dtype=dt,
                                  tflops=r["measured_tflops_or_gbps"],
                                  source=cite(r, "%s %s %s M=N=K=%d (measured_kernels.csv line %d)" % (
                                      gpu, kern, r["dtype"], n, r["_line"])))
            h100_sweep[(dt, n)] = (r["measured_tflops_or_gbps"], r)
        elif kern.startswith("cuBLAS_gemm (torch.matmul") and gpu == "B200":
            m = re.search(r"MxNxK=(\d+)x(\d+)x(\d+)", r["shape_params"])
            mm, nn, kk = (int(x) for x in m.groups())
            if mm == nn == kk:
                b200_sweep[mm] = float(r["measured_tflops_or_gbps"])
            T["b200"]["gemm"].add(impl="cublas", m=mm, n=nn, k=kk, dtype="bf16",
                                  tflops=r["measured_tflops_or_gbps"],
                                  source=cite(r, "%s %s BF16 %s; %s (measured_kernels.csv line %d)" % (
                                      gpu, kern, r["shape_params"], r["notes"], r["_line"])))
        elif kern.startswith("DeepGEMM_fp8_gemm_nt") and gpu == "H800 SXM5":
            m = re.search(r"M=(\d+) N=(\d+) K=(\d+)", r["shape_params"])
            mm, nn, kk = (int(x) for x in m.groups())
            T["h100"]["gemm"].add(impl="deepgemm", m=mm, n=nn, k=kk, dtype="fp8",
                                  tflops=r["measured_tflops_or_gbps"],
                                  source=cite(r, "%s; %s %s; %s (measured_kernels.csv line %d)" % (
                                      H800, kern, r["dtype"], r["notes"], r["_line"])))

    # --- derived ----------------------------------------------------------
    # GB300: GB200 MAMF efficiency x GB300 peak (no GB300 measurement).
    eff = {"bf16": 0.729, "fp8": 0.723}  # hardware_facts.md s1: GB200 72.9% / 72.3%
    for dt in ("bf16", "fp8"):
        mm, nn, kk, _ = mamf["gb200"][dt]
        peak = spec["gb300"][dt]
        v = peak * eff[dt]
        T["gb300"]["gemm"].add(impl="cublas", m=mm, n=nn, k=kk, dtype=dt, tflops=round(v, 1),
                               source="derived:%s TFLOPS (GB300 %s dense peak, %s) x %.3f (GB200 MAMF efficiency %s, "
                                      "hardware_facts.md s1), at the GB200 MAMF best shape %dx%dx%d" % (
                                          num(peak), dt.upper(), spec["gb300"]["file"], eff[dt],
                                          "72.9% = 1822.0/2500" if dt == "bf16" else "72.3% = 3615.6/5000",
                                          mm, nn, kk))
        mamf.setdefault("gb300", {})[dt] = (mm, nn, kk, v)
    # H200 BF16: same GH100 compute as H100 -> copy the H100 MAMF row.
    mm, nn, kk, v = mamf["h100"]["bf16"]
    T["h200"]["gemm"].add(impl="cublas", m=mm, n=nn, k=kk, dtype="bf16", tflops=v,
                          source="derived:h100 row cublas %dx%dx%d bf16 %s TFLOPS (H200 has the same GH100 compute "
                                 "and clocks as H100; hardware_facts.md s1, ml-engineering MAMF table 'H200 same as "
                                 "H100')" % (mm, nn, kk, num(v)))
    mamf["h200"]["bf16"] = (mm, nn, kk, v)
    # H200: copy the other H100 compute rows (fp16/tf32 sweep, DeepGEMM).
    for k, row in list(T["h100"]["gemm"].rows.items()):
        if row["dtype"] == "bf16" or (row["dtype"] == "fp8" and row["impl"] == "cublas"):
            continue  # bf16 MAMF copied above; H200 has its own FP8 MAMF
        T["h200"]["gemm"].add(impl=row["impl"], m=row["m"], n=row["n"], k=row["k"], dtype=row["dtype"],
                              tflops=row["tflops"],
                              source="derived:h100 row %s %sx%sx%s %s %s TFLOPS (H200 has the same GH100 compute "
                                     "and clocks; hardware_facts.md s1)%s" % (
                                         row["impl"], row["m"], row["n"], row["k"], row["dtype"], row["tflops"],
                                         "; H800 DeepGEMM measurement, memory-bound small-M shapes may run faster "
                                         "on H200's 4.8 TB/s HBM3e" if row["impl"] == "deepgemm" else ""))
    # The FP16 cublasGemmEx sweep gives the size-efficiency ratios. (No BF16
    # copies of the FP16 rows: BF16 and FP16 share one peak class in
    # CostModel and the 989 TFLOPS dense tensor-core rate on GH100.)
    ratio = {}
    base = float(h100_sweep[("fp16", 8192)][0])
    for n in (2048, 4096, 8192):
        ratio[n] = float(h100_sweep[("fp16", n)][0]) / base
    rtxt = ", ".join("%d^3 %.4f" % (n, ratio[n]) for n in (2048, 4096, 8192))
    # Size curves where no sweep was measured: a size-efficiency ratio x the
    # GPU's MAMF. Hopper: the H100 FP16 cublasGemmEx sweep over its 8192^3
    # figure. Blackwell: B200's own cuBLAS curve, the pyptx.dev B200 BF16
    # rows over the B200 BF16 MAMF (Blackwell is lower than H100 at mid sizes).
    b200_mamf = mamf["b200"]["bf16"][3]
    bw_ratio = {n: b200_sweep[n] / b200_mamf for n in (2048, 4096, 8192)}
    bw_rtxt = ", ".join("%d^3 %s -> %.4f" % (n, num(b200_sweep[n]), bw_ratio[n]) for n in (2048, 4096, 8192))
    for g in GPUS:
        blackwell = g not in ("h100", "h200")
        for dt in ("bf16", "fp8"):
            if dt == "bf16" and g in ("h100", "h200", "b200"):
                continue  # measured sweep: h100 FP16 (same peak class), b200 pyptx
            mm, nn, kk, v = mamf[g][dt]
            for n in (2048, 4096, 8192):
                if T[g]["gemm"].has(impl="cublas", m=n, n=n, k=n, dtype=dt):
                    continue
                if blackwell:
                    T[g]["gemm"].add(
                        impl="cublas", m=n, n=n, k=n, dtype=dt, tflops="%.1f" % (v * bw_ratio[n]),
                        source="derived:%s %s MAMF %s TFLOPS (%dx%dx%d) x %.4f = B200 cuBLAS size efficiency of "
                               "M=N=K=%d (pyptx.dev published B200 torch.matmul BF16 TFLOPS / the B200 BF16 MAMF %s: "
                               "%s; Blackwell's own curve, lower than H100's at mid sizes)" % (
                                   g.upper(), dt.upper(), num(v, 2), mm, nn, kk, bw_ratio[n], n, num(b200_mamf),
                                   bw_rtxt))
                    continue
                T[g]["gemm"].add(impl="cublas", m=n, n=n, k=n, dtype=dt, tflops=round(v * ratio[n], 1),
                                 source="derived:%s %s MAMF %s TFLOPS (%dx%dx%d) x %.4f = H100 cublasGemmEx size "
                                        "efficiency of M=N=K=%d (TFLOPS / the 8192^3 TFLOPS %s; ratios %s)" % (
                                            g.upper(), dt.upper(), num(v, 2), mm, nn, kk, ratio[n], n,
                                            num(base, 2), rtxt))
    te_gemm_rows(T, mamf, mamf_src, spec)
    return mamf, ratio


# Transformer Engine's published GEMM benchmark on B300 (not in the reference
# files; transcribed by hand from NVIDIA/TransformerEngine@8f2e635
# docs/examples/gemm_profiling/gemm_profiling.rst): BF16 Fprop times of the
# four layer GEMMs at M = 15872 tokens (its autocast table), and the
# published per-pass sums of the pre-quantized (GEMM kernel only) runs per
# precision: Fprop, Dgrad and Wgrad, four GEMMs each.
TE_GEMM_DOC = "NVIDIA/TransformerEngine@8f2e635 docs/examples/gemm_profiling/gemm_profiling.rst"
TE_GEMM_SETUP = ("(benchmarks/gemm/benchmark_gemm.py, model config hidden 4096 intermediate 16384, M = 31 x 512 = "
                 "15872 tokens; NVIDIA B300 SXM6 AC, CUDA events, 10 warmup + 100 timed iterations)")
TE_B300_FPROP = [  # name, M, K, N, BF16 ms
    ("QKV Proj Fprop", 15872, 4096, 12288, "1.071"),
    ("Attn Out Fprop", 15872, 4096, 4096, "0.307"),
    ("MLP Up Fprop", 15872, 4096, 16384, "1.393"),
    ("MLP Down Fprop", 15872, 16384, 4096, "1.426"),
]
# The --pre-quantize table's per-pass sums (ms) over the four GEMMs of the
# pass. TE's generic_gemm swizzles the MXFP8 scales before calling cuBLAS
# (NVIDIA/TransformerEngine@024ef15
# transformer_engine/pytorch/csrc/extensions/gemm.cpp: swizzle_scales_for_gemm
# before nvte_cublas_gemm_v2; the grouped GEMM swizzles per expert before
# nvte_multi_stream_cublas_gemm), so the MXFP8 figures include the swizzle
# kernels; the quantization itself is not timed.
TE_B300_PASS_SUM_MS = {
    "fprop": {"bf16": "4.25", "mxfp8": "2.365", "fp8": "2.158", "nvfp4": "1.254"},
    "dgrad": {"bf16": "4.434", "mxfp8": "2.397", "fp8": "2.329", "nvfp4": "1.305"},
    "wgrad": {"bf16": "4.418", "mxfp8": "2.4", "fp8": "2.325", "nvfp4": "1.205"},
}
TE_PRECISION = {"bf16": "BF16", "mxfp8": "MXFP8", "fp8": "FP8 current scaling", "nvfp4": "NVFP4"}
TE_DTYPES = ("bf16", "mxfp8", "fp8", "nvfp4")
TE_WHAT = {"bf16": "BF16 GEMM measured"}


def te_b300_rows():
    """The B300 rows of the TE benchmark, as ((m, n, k), dtype, TFLOPS,
    published?, text, what): moesim's C[m x n] = A[m x k] B[k x n]
    orientation, with a weight gradient's m the layer's output features, n
    its input features and k the tokens (models/layer_ops.cc Matmul).

    BF16 Fprop: measured per shape. MXFP8 / FP8 Fprop: each shape at the
    pass's published rate (the four shapes' FLOPs over the pass sum). Only
    sums are published for the quantized formats, and the autocast table's
    per-shape times argue against carrying BF16's per-shape profile over: at
    Attn Out, where BF16 is fastest (98% of B300's BF16 MAMF), MXFP8 with its
    quantization is only 1.14x BF16 (0.269 against 0.307 ms). Dgrad: its
    shapes are the Fprop shapes with K and N swapped, so three of them are
    Fprop shapes (Attn Out; MLP Up and Down swapped) and take those rows; the
    QKV dgrad (15872 x 4096 x 12288, new) takes what the published Dgrad sum
    leaves after them (BF16: the per-shape Fprop times sum to 4.197 ms
    against the pre-quantized table's 4.250, so its Dgrad sum is scaled by
    4.197/4.250 first). Wgrad: only sums are published, so each shape runs at
    the pass's rate."""
    rows = []
    fprop_ms = {}  # (dtype, (m, n, k)) -> ms
    flops = {}
    for _, mm, kk, nn, _ in TE_B300_FPROP:
        flops[(mm, nn, kk)] = 2.0 * mm * nn * kk
    total_flops = sum(flops.values())
    sums = TE_B300_PASS_SUM_MS
    for name, mm, kk, nn, ms in TE_B300_FPROP:
        shape = "%s %dx%dx%d (M x K x N)" % (name, mm, kk, nn)
        mnk = (mm, nn, kk)
        for dt in TE_DTYPES:
            if dt == "bf16":
                t = float(ms)
                text = "%s %s; %s BF16 %s ms (BF16 has no quantization step, so this is the GEMM kernel alone)" % (
                    TE_GEMM_DOC, TE_GEMM_SETUP, shape, ms)
            else:
                t = float(sums["fprop"][dt]) * flops[mnk] / total_flops
                text = ("%s %s: %s at the published pre-quantized (GEMM kernel only) %s Fprop-sum rate, %.4g FLOP "
                        "over the four Fprop shapes / %s ms (no per-shape kernel-only times are published)" % (
                            TE_GEMM_DOC, TE_GEMM_SETUP, shape, TE_PRECISION[dt], total_flops, sums["fprop"][dt]))
            fprop_ms[(dt, mnk)] = t
            rows.append((mnk, dt, flops[mnk] / (t * 1e-3) / 1e12, dt == "bf16", text,
                         TE_WHAT[dt] if dt == "bf16" else "%s Fprop (derived there from the published Fprop sum)" %
                         TE_PRECISION[dt]))
    qkv = (15872, 12288, 4096)
    qkv_dgrad = (15872, 4096, 12288)  # dX = dY [15872 x 12288] W^T [12288 x 4096]
    others = [mnk for mnk in flops if mnk != qkv]  # the Fprop shapes the other three dgrads run
    for dt in TE_DTYPES:
        fsum = sum(fprop_ms[(dt, mnk)] for mnk in flops)
        dsum = fsum * float(sums["dgrad"][dt]) / float(sums["fprop"][dt])
        rest = sum(fprop_ms[(dt, mnk)] for mnk in others)
        t = dsum - rest
        text = ("%s %s: QKV Proj Dgrad 15872x12288x4096 (M x K x N): the published pre-quantized %s Dgrad sum "
                "less the three other Dgrad shapes, which are the Fprop rows of the same shape (Attn Out; MLP Up and "
                "Down swapped): %.4f x %s/%s ms - %.4f = %.4f ms (the doc: 'The QKV Proj Dgrad is especially "
                "asymmetric -- 33-51%% slower than Fprop for FP8/FP4')" % (
                    TE_GEMM_DOC, TE_GEMM_SETUP, TE_PRECISION[dt], fsum, sums["dgrad"][dt], sums["fprop"][dt],
                    rest, t))
        rows.append((qkv_dgrad, dt, flops[qkv] / (t * 1e-3) / 1e12, False, text,
                     "%s QKV dgrad (derived there from the published Dgrad sum)" % TE_PRECISION[dt]))
    for name, mm, kk, nn, _ in TE_B300_FPROP:
        wgrad = (nn, kk, mm)  # dW [N x K] = dY^T [N x tokens] X [tokens x K]
        for dt in TE_DTYPES:
            w = sums["wgrad"][dt]
            v = total_flops / (float(w) * 1e-3) / 1e12
            text = ("%s %s: %s Wgrad (dW of %dx%dx%d, M x K x N) at the published pre-quantized %s Wgrad-sum rate: "
                    "%.4g FLOP over the four Wgrad shapes / %s ms (no per-shape Wgrad times are published)" % (
                        TE_GEMM_DOC, TE_GEMM_SETUP, name.replace(" Fprop", ""), mm, kk, nn, TE_PRECISION[dt],
                        total_flops, w))
            rows.append((wgrad, dt, v, False, text,
                         "%s wgrad (derived there from the published Wgrad sum)" % TE_PRECISION[dt]))
    return rows


def te_gemm_rows(T, mamf, mamf_src, spec):
    """B300 rows from the TE benchmark (te_b300_rows), and the same shapes on
    B200, GB200 and GB300 as the B300 row x that GPU's MAMF over B300's, of
    the same precision class (GB300's MAMF is its derived row: GB200's
    efficiency of the equal GB300 peak). FP8 and MXFP8 rows are capped at the
    GPU's FP8 MAMF. Written after the sorted rows, in the benchmark's order."""
    b300 = te_b300_rows()

    def add(g, mnk, dt, v, source):
        cap = mamf[g]["fp8"][3]
        if dt in ("fp8", "mxfp8") and round(v, 1) > cap:
            source += ("; capped at this GPU's FP8 MAMF %.1f (the derivation gave %.1f, above the best-shape "
                       "maximum)" % (cap, v))
            v = cap
        T[g]["gemm"].add(order="tail", impl="cublas", m=mnk[0], n=mnk[1], k=mnk[2], dtype=dt, tflops="%.1f" % v,
                         source=source)

    for mnk, dt, v, published, text, _ in b300:
        add("b300", mnk, dt, v, ("published:" if published else "derived:") + text)
    # B200, GB200, GB300: the B300 row x the MAMF ratio of the same precision
    # class. GB300 is Blackwell Ultra like B300 but at 1400 W against the
    # air-cooled B300 SXM6 AC's 1100 W (gpu_specs.csv; datacrunch.io B300 vs
    # B200) and at the 5000 TFLOPS FP8 dense peak against 4500, so it is not
    # taken as the same GPU.
    for g in ("b200", "gb200", "gb300"):
        for mnk, dt, v, published, text, what in b300:
            if dt == "nvfp4":
                # No FP4 MAMF is published: the B300 row's share of B300's
                # FP4 dense peak, on this GPU's (Blackwell Ultra's FP4 is 1.5x
                # B200's at the same FP8 rate, so the FP8 MAMF ratio would not
                # carry it).
                v = round(v, 1)
                add(g, mnk, dt, v * spec[g]["fp4"] / spec["b300"]["fp4"],
                    "derived:the B300 row of this shape and dtype (%.1f TFLOPS; %s by Transformer Engine's GEMM "
                    "benchmark, %s, NVIDIA B300 SXM6 AC, M = 15872) x the %s / B300 FP4 dense peak ratio %s/%s "
                    "(%s, %s fp4_dense_tflops): the same share of the FP4 peak, no FP4 MAMF being published" % (
                        v, what, TE_GEMM_DOC, g.upper(), num(spec[g]["fp4"], 1), num(spec["b300"]["fp4"], 1),
                        spec[g]["file"], spec["b300"]["file"]))
                continue
            cls = "bf16" if dt == "bf16" else "fp8"
            ratio_txt = "%.1f/%.1f" % (mamf[g][cls][3], mamf["b300"][cls][3])
            v = round(v, 1)  # the B300 row's figure as written (before its FP8 MAMF cap)
            add(g, mnk, dt, v * mamf[g][cls][3] / mamf["b300"][cls][3],
                "derived:the B300 row of this shape and dtype (%.1f TFLOPS; %s by Transformer Engine's GEMM "
                "benchmark, %s, NVIDIA B300 SXM6 AC, M = 15872) x the %s / B300 %s MAMF ratio %s (%s MAMF table%s): "
                "the same Blackwell cuBLAS kernels at a real layer shape, below the best-shape MAMF" % (
                    v, what, TE_GEMM_DOC, g.upper(),
                    cls.upper(), ratio_txt, mamf_src,
                    "; GB300's MAMF derived, GB200's efficiency of the GB300 peak" if g == "gb300" else ""))


# --------------------------------------------------------------------------
# grouped GEMM

GG_IMPL = [("cuBLAS (base, per-expert loop)", "cublas_loop"),
           ("CUTLASS SM80 grouped", "cutlass_sm80"),
           ("cuBLAS SM90 batched", "cublas_grouped"),
           ("CUTLASS SM90 cooperative grouped", "cutlass_sm90_cooperative"),
           ("CUTLASS SM90 pingpong grouped", "cutlass_sm90_pingpong")]


# Megatron-Core's MXFP8 grouped GEMM on GB200 (not in the reference files;
# transcribed from NVIDIA/Megatron-LM@1d9edcf
# docs/discussions/deepseek-v3-gb200-optimization/deepseek-v3-gb200-optimization.md
# s1 item 3): "MXFP8 Grouped GEMM, implemented using multi-stream + cuBLAS
# ... can achieve 2,672 TFLOP/s (flush L2) on the shape K=7,168, N=2,048".
# M is not stated; the doc's baseline layout (EP32, MBS1, seq 4096, 8 of 256
# experts per token, balanced) gives 32 x 4096 x 8 / 256 = 4096 rows for each
# of the 256 / 32 = 8 local experts.
MEGATRON_DSV3_GB200 = ("NVIDIA/Megatron-LM@1d9edcf docs/discussions/deepseek-v3-gb200-optimization/"
                       "deepseek-v3-gb200-optimization.md s1 item 3")
MEGATRON_GROUPED = dict(experts=8, tokens_per_expert=4096, n=2048, k=7168, tflops="2672")


def megatron_grouped_rows(T, mamf):
    """GB200's published MXFP8 row of TE's multi-stream cuBLAS grouped GEMM
    (impl cublas: the per-expert cuBLAS GEMMs GroupedGemm prices), and the
    other Blackwell GPUs' row at the same shape by their FP8 MAMF over
    GB200's (the same kernels, as the dense rows are carried over)."""
    r = MEGATRON_GROUPED
    shape = dict(experts=r["experts"], tokens_per_expert=r["tokens_per_expert"], n=r["n"], k=r["k"])
    what = ("MXFP8 grouped GEMM, TE multi-stream + cuBLAS, %s TFLOPS (flush L2) at K=7168, N=2048 (DeepSeek-V3 "
            "expert shape); M not stated, %d rows per expert taken from the doc's baseline layout (EP32, MBS1, seq "
            "4096, top-8 of 256 experts, balanced: 32 x 4096 x 8 / 256), %d local experts" % (
                r["tflops"], r["tokens_per_expert"], r["experts"]))
    T["gb200"]["grouped_gemm"].add(impl="cublas", dtype="mxfp8", tflops=r["tflops"],
                                   source="published:%s: %s" % (MEGATRON_DSV3_GB200, what), **shape)
    for g in ("b200", "b300", "gb300"):
        ratio = mamf[g]["fp8"][3] / mamf["gb200"]["fp8"][3]
        T[g]["grouped_gemm"].add(
            impl="cublas", dtype="mxfp8", tflops=round(float(r["tflops"]) * ratio, 1),
            source="derived:the GB200 row (%s: %s) x the %s / GB200 FP8 MAMF ratio %s/%s" % (
                MEGATRON_DSV3_GB200, what, g.upper(), num(mamf[g]["fp8"][3], 2), num(mamf["gb200"]["fp8"][3], 2)),
            **shape)


def grouped_tables(K, T, mamf, left_out):
    h100_grouped = None
    for r in K:
        kern = r["kernel"]
        if kern.startswith("grouped_gemm_"):
            impl = [v for k, v in GG_IMPL if k in kern][0]
            m = re.search(r"(\d+) experts K=(\d+) N=(\d+) (\d+) tokens; routing=(.*)$", r["shape_params"])
            e, kk, nn, tok, routing = int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(5)
            if routing != "uniform":
                left_out.append("measured_kernels.csv line %d: %s %s routing=%s (skewed routing; grouped_gemm.csv "
                                "keeps uniform routing only)" % (r["_line"], r["gpu"], kern, routing))
                continue
            T["h100"]["grouped_gemm"].add(
                impl=impl, experts=e, tokens_per_expert=tok // e, n=nn, k=kk, dtype="bf16",
                tflops=r["measured_tflops_or_gbps"],
                source=cite(r, "%s; %s; %d tokens over %d experts = %d per expert (read as the total rows of "
                               "the grouped GEMM); dtype not stated in PR, BF16 assumed (measured_kernels.csv line "
                               "%d)" % (kern, r["shape_params"], tok, e, tok // e, r["_line"])))
            if impl == "cublas_grouped":
                h100_grouped = (e, tok // e, nn, kk, float(r["measured_tflops_or_gbps"]))
        elif kern.startswith("DeepGEMM_m_grouped_fp8_gemm"):
            impl = "deepgemm_contiguous" if "contiguous" in kern else "deepgemm_masked"
            m = re.search(r"groups=(\d+) M_per_group=(\d+) N=(\d+) K=(\d+)", r["shape_params"])
            g, mpg, nn, kk = (int(x) for x in m.groups())
            T["h100"]["grouped_gemm"].add(
                impl=impl, experts=g, tokens_per_expert=mpg, n=nn, k=kk, dtype="fp8",
                tflops=r["measured_tflops_or_gbps"],
                source=cite(r, "%s; %s %s; %s; %s (measured_kernels.csv line %d)" % (
                    H800, kern, r["dtype"], r["shape_params"], r["notes"], r["_line"])))
    # H200: copies of every H100 row (same GH100 compute).
    for row in T["h100"]["grouped_gemm"].rows.values():
        T["h200"]["grouped_gemm"].add(
            impl=row["impl"], experts=row["experts"], tokens_per_expert=row["tokens_per_expert"],
            n=row["n"], k=row["k"], dtype=row["dtype"], tflops=row["tflops"],
            source="derived:h100 row %s %s experts x %s tokens N=%s K=%s %s %s TFLOPS (H200 has the same GH100 "
                   "compute and clocks; hardware_facts.md s1)%s" % (
                       row["impl"], row["experts"], row["tokens_per_expert"], row["n"], row["k"], row["dtype"],
                       row["tflops"], "; H800 measurement" if row["impl"].startswith("deepgemm") else ""))
    megatron_grouped_rows(T, mamf)
    # Blackwell: H100 cuBLAS-grouped / H100 MAMF x the GPU's BF16 MAMF.
    e, tpe, nn, kk, v = h100_grouped
    h100_mamf = mamf["h100"]["bf16"][3]
    ratio = v / h100_mamf
    for g in ("b200", "b300", "gb200", "gb300"):
        gm = mamf[g]["bf16"][3]
        T[g]["grouped_gemm"].add(
            impl="cublas_grouped", experts=e, tokens_per_expert=tpe, n=nn, k=kk, dtype="bf16",
            tflops=round(gm * ratio, 1),
            source="derived:%s BF16 MAMF %s TFLOPS x %.4f (H100 cuBLAS SM90 batched grouped GEMM %s TFLOPS, "
                   "tgale96/grouped_gemm PR #37 uniform routing, / H100 BF16 MAMF %s TFLOPS)" % (
                       g.upper(), num(gm, 2), ratio, num(v), num(h100_mamf)))


# --------------------------------------------------------------------------
# attention

ATT_IMPL = [("FlashAttention-2", "fa2"), ("FlashAttention-3", "fa3"), ("cuDNN", "cudnn"),
            ("Triton", "triton"), ("FlashAttention-4", "fa4")]


def attention_tables(K, T, spec, left_out, dups):
    for r in K:
        kern, src = r["kernel"], r["source"]
        if not kern.startswith("attention_") or r["gpu"] != "H100 SXM5 80GB":
            continue
        if "fwd+bwd" in kern:
            left_out.append("measured_kernels.csv line %d: %s %s %s (combined fwd+bwd attention)" % (
                r["_line"], r["gpu"], kern, r["shape_params"]))
            continue
        if "best shape" in r["shape_params"] or "best case" in r["shape_params"]:
            continue  # listed with the other shapeless rows
        impl = [v for k, v in ATT_IMPL if kern.endswith(k)][0]
        direction = "bwd" if "_bwd_" in kern else "fwd"
        sp = r["shape_params"]
        m = re.search(r"seqlen=(\w+) headdim=(\d+)", sp)
        s, hd = seqlen(m.group(1)), int(m.group(2))
        heads = 2048 // hd
        batch = 16384 // s
        note = ""
        if "flash3_fp16_fwd" in src:
            causal = 1 if "causal=True" in sp else 0
            hm = re.search(r"heads=(\d+)", sp)
            assert int(hm.group(1)) == heads
            dtype = "fp16"
        elif "backward figure" in src:
            causal = 0
            dtype = "fp16"
            note = ("causal not stated in the transcription; taken as causal=0 (the FA3 paper's backward figure is "
                    "non-causal, chart title 'Attention backward speed, head dim %d'); dtype FP16/BF16 in the "
                    "reference, fp16 used as for the forward figure" % hd)
        elif "FP8 forward figure" in src:
            if "likely causal=False" in sp:
                causal = 0
            elif "likely causal=True" in sp:
                causal = 1
            else:
                left_out.append("measured_kernels.csv line %d: %s %s FP8 %s (causal flag unknown)" % (
                    r["_line"], r["gpu"], kern, sp))
                continue
            dtype = "fp8"
            note = "causal as labelled in the reference ('%s')" % sp.split("headdim=%d " % hd)[1]
        else:
            raise SystemExit("unhandled attention row %d" % r["_line"])
        T["h100"]["attention"].add(
            impl=impl, direction=direction, batch=batch, seq_q=s, seq_kv=s, heads_q=heads, heads_kv=heads,
            head_dim_qk=hd, head_dim_v=hd, causal=causal, window=0, dtype=dtype,
            tflops=r["measured_tflops_or_gbps"],
            source=cite(r, "H100 SXM5 80GB; %s %s; %s; %s; batch = 16384/seqlen, heads = 2048/headdim%s "
                           "(measured_kernels.csv line %d)" % (
                               kern, r["dtype"], sp, r["notes"], ("; " + note) if note else "", r["_line"])))
    # tritonbench FA3 rows: same grid points as the FA3 paper figure rows.
    for r in K:
        if r["gpu"] == "H100 (tritonbench run)":
            m = re.search(r"B=(\d+) H=(\d+) S=(\d+) D=(\d+)", r["shape_params"])
            b, h, s, d = (int(x) for x in m.groups())
            if T["h100"]["attention"].has(impl="fa3", direction="fwd", batch=b, seq_q=s, seq_kv=s, heads_q=h,
                                          heads_kv=h, head_dim_qk=d, head_dim_v=d, causal=0, window=0,
                                          dtype="fp16"):
                dups.append("h100/attention: measured_kernels.csv line %d (tritonbench FA3 B=%d H=%d S=%d D=%d, "
                            "%s TFLOPS, causal/direction/dtype not stated) is the grid point of the FA3 paper "
                            "figure row fa3 fwd fp16 causal=0; kept the FA3 paper figure" % (
                                r["_line"], b, h, s, d, r["measured_tflops_or_gbps"]))
            else:
                raise SystemExit("tritonbench row without paper twin")
    # FlashMLA sparse decode on H800 (the one FlashMLA row with a shape).
    for r in K:
        if r["kernel"] == "FlashMLA_sparse_decode" and r["gpu"] == "H800 SXM5":
            for topk, val in ((2048, r["measured_tflops_or_gbps"]), (32768, "460")):
                T["h100"]["attention"].add(
                    impl="flashmla", direction="fwd", batch=128, seq_q=2, seq_kv=topk, heads_q=128, heads_kv=1,
                    head_dim_qk=576, head_dim_v=512, causal=0, window=0, dtype="bf16", tflops=val,
                    source=cite(r, "%s; %s %s; batch=128 heads=128 s_q=2 topk=%d%s; seq_kv = the %d top-k "
                                   "selected tokens; MLA absorbed (MQA) mode: 1 KV head, d_qk=576 d_v=512 "
                                   "(FlashMLA README); FP8 KV cache, BF16 MMA -> dtype bf16; %s "
                                   "(measured_kernels.csv line %d)" % (
                                       H800, r["kernel"], r["dtype"], topk,
                                       "" if topk == 2048 else " (value from the row's notes)", topk,
                                       r["notes"], r["_line"])))
    kinds = blackwell_attention(T, spec)
    fa2605_attention(T, spec)
    derived_attention(T, spec, kinds)


# cuDNN's SDPA training benchmark (not in the reference files; transcribed by
# hand from NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results/,
# cudnn backend rows with deterministic_bwd=False, the kernel TE's fused
# attention runs). Each line: dtype, mask (top_left = causal), seq_q = seq_kv,
# then forward ms and TFLOPS, backward ms and TFLOPS, as printed. The
# benchmark counts forward FLOPs as the tables do (2 b h s^2 (d_qk + d_v),
# halved when causal) and backward FLOPs as 2.5 x forward only when d_qk =
# d_v (cudnn_sdpa_rows converts the others and checks every TFLOPS figure
# against its time). The flash_attention_4 rows of the same files
# are not transcribed (Megatron's TE layers run cuDNN).
CUDNN_FE = "NVIDIA/cudnn-frontend@%s benchmark/sdpa_benchmark_training/results/%s"
CUDNN_SDPA = {
    # file key: (commit, path, GPU as printed, cuDNN backend version, batch, heads_q, heads_kv, d_qk, d_v)
    "gb200_llama": ("e99b0d0", "llama3.1/gb200/llama3.1_20260724_040930.csv", "NVIDIA GB200", "9.26.0",
                    2, 64, 8, 128, 128, """
bf16 top_left 32768 22.428 1569 73.209 1202
bf16 no_mask 32768 45.075 1561 140.760 1250
fp8 top_left 32768 16.482 2135 52.660 1670
fp8 no_mask 32768 32.796 2146 99.115 1775
mxfp8 top_left 32768 16.915 2080 62.926 1398
mxfp8 no_mask 32768 33.976 2071 123.796 1421
bf16 top_left 16384 5.091 1728 16.573 1327
bf16 no_mask 16384 11.093 1586 33.315 1320
fp8 top_left 16384 4.166 2112 13.471 1633
fp8 no_mask 16384 7.943 2215 23.563 1867
mxfp8 top_left 16384 4.265 2063 15.670 1403
mxfp8 no_mask 16384 8.285 2123 28.433 1547
bf16 top_left 8192 1.336 1646 4.090 1344
bf16 no_mask 8192 2.502 1758 7.540 1458
fp8 top_left 8192 1.093 2012 3.802 1446
fp8 no_mask 8192 2.009 2189 6.183 1778
mxfp8 top_left 8192 1.125 1955 4.336 1268
mxfp8 no_mask 8192 2.062 2133 7.400 1486
bf16 top_left 4096 0.391 1407 1.173 1172
bf16 no_mask 4096 0.683 1609 2.012 1366
fp8 top_left 4096 0.309 1781 1.167 1178
fp8 no_mask 4096 0.536 2050 1.731 1588
mxfp8 top_left 4096 0.321 1715 1.333 1032
mxfp8 no_mask 4096 0.554 1985 2.058 1336
bf16 top_left 2048 0.125 1098 0.382 899
bf16 no_mask 2048 0.191 1439 0.604 1138
fp8 top_left 2048 0.096 1427 0.417 825
fp8 no_mask 2048 0.146 1878 0.562 1222
mxfp8 top_left 2048 0.101 1355 0.467 737
mxfp8 no_mask 2048 0.155 1778 0.644 1067
"""),
    "gb300_llama": ("e99b0d0", "llama3.1/gb300/llama3.1_20260724_040919.csv", "NVIDIA GB300", "9.26.0",
                    2, 64, 8, 128, 128, """
bf16 top_left 32768 16.716 2105 62.100 1416
bf16 no_mask 32768 36.196 1944 121.673 1446
fp8 top_left 32768 11.228 3134 41.482 2121
fp8 no_mask 32768 22.871 3077 79.646 2209
mxfp8 top_left 32768 12.087 2911 54.730 1607
mxfp8 no_mask 32768 24.213 2906 104.803 1679
bf16 top_left 16384 4.260 2065 14.507 1516
bf16 no_mask 16384 8.271 2127 28.588 1538
fp8 top_left 16384 2.861 3074 10.794 2037
fp8 no_mask 16384 5.522 3186 19.923 2208
mxfp8 top_left 16384 3.126 2814 14.142 1555
mxfp8 no_mask 16384 5.922 2971 26.191 1679
bf16 top_left 8192 1.105 1991 3.797 1448
bf16 no_mask 8192 2.035 2161 7.098 1549
fp8 top_left 8192 0.760 2893 3.095 1777
fp8 no_mask 8192 1.386 3172 5.189 2119
mxfp8 top_left 8192 0.833 2641 3.920 1403
mxfp8 no_mask 8192 1.497 2937 6.733 1633
bf16 top_left 4096 0.303 1813 1.096 1254
bf16 no_mask 4096 0.536 2050 1.909 1440
fp8 top_left 4096 0.218 2526 0.986 1395
fp8 no_mask 4096 0.369 2981 1.495 1839
mxfp8 top_left 4096 0.238 2311 1.203 1142
mxfp8 no_mask 4096 0.399 2753 1.878 1464
bf16 top_left 2048 0.094 1467 0.354 971
bf16 no_mask 2048 0.145 1895 0.564 1219
fp8 top_left 2048 0.071 1949 0.364 943
fp8 no_mask 2048 0.101 2731 0.494 1390
mxfp8 top_left 2048 0.077 1780 0.424 811
mxfp8 no_mask 2048 0.110 2491 0.593 1158
"""),
    "gb200_dsv3": ("e99b0d0", "dsv3/gb200/dsv3_20260724_041401.csv", "NVIDIA GB200", "9.26.0",
                   2, 128, 128, 192, 128, """
bf16 top_left 32768 51.593 1705 205.631 1112
bf16 no_mask 32768 110.545 1591 412.852 1108
fp8 top_left 32768 34.300 2565 118.667 1927
fp8 no_mask 32768 74.349 2366 234.021 1955
mxfp8 top_left 32768 37.758 2330 140.329 1630
mxfp8 no_mask 32768 76.065 2313 279.622 1636
bf16 top_left 16384 12.147 1810 49.095 1165
bf16 no_mask 16384 24.472 1797 103.677 1103
fp8 top_left 16384 8.449 2603 27.976 2044
fp8 no_mask 16384 16.384 2684 55.174 2073
mxfp8 top_left 16384 8.875 2478 31.796 1798
mxfp8 no_mask 16384 17.396 2528 66.887 1710
bf16 top_left 8192 3.341 1646 11.369 1257
bf16 no_mask 8192 6.055 1816 25.146 1137
fp8 top_left 8192 2.223 2473 7.139 2002
fp8 no_mask 8192 4.116 2672 13.583 2105
mxfp8 top_left 8192 2.360 2329 8.671 1649
mxfp8 no_mask 8192 4.323 2544 15.859 1803
bf16 top_left 4096 0.944 1456 3.262 1096
bf16 no_mask 4096 1.557 1765 5.808 1230
fp8 top_left 4096 0.640 2148 2.079 1719
fp8 no_mask 4096 1.091 2519 3.387 2110
mxfp8 top_left 4096 0.679 2024 2.505 1427
mxfp8 no_mask 4096 1.148 2394 4.060 1760
bf16 top_left 2048 0.311 1106 1.029 869
bf16 no_mask 2048 0.449 1531 1.633 1094
fp8 top_left 2048 0.200 1720 0.670 1335
fp8 no_mask 2048 0.307 2239 0.975 1833
mxfp8 top_left 2048 0.213 1613 0.837 1068
mxfp8 no_mask 2048 0.322 2133 1.159 1541
"""),
    "gb300_dsv3": ("e99b0d0", "dsv3/gb300/dsv3_20260724_041345.csv", "NVIDIA GB300", "9.26.0",
                   2, 128, 128, 192, 128, """
bf16 top_left 32768 43.478 2023 175.452 1304
bf16 no_mask 32768 87.907 2001 357.996 1278
fp8 top_left 32768 25.693 3424 92.440 2474
fp8 no_mask 32768 51.084 3444 184.686 2477
mxfp8 top_left 32768 28.740 3061 115.056 1988
mxfp8 no_mask 32768 57.243 3073 222.990 2051
bf16 top_left 16384 10.682 2059 43.456 1316
bf16 no_mask 16384 20.184 2179 86.498 1322
fp8 top_left 16384 6.452 3409 23.497 2433
fp8 no_mask 16384 12.371 3555 43.490 2629
mxfp8 top_left 16384 7.270 3025 28.564 2002
mxfp8 no_mask 16384 13.838 3178 55.016 2078
bf16 top_left 8192 2.839 1937 11.220 1274
bf16 no_mask 8192 5.122 2147 21.266 1344
fp8 top_left 8192 1.702 3231 6.051 2363
fp8 no_mask 8192 3.126 3517 10.845 2636
mxfp8 top_left 8192 1.915 2871 7.712 1854
mxfp8 no_mask 8192 3.499 3142 13.684 2089
bf16 top_left 4096 0.812 1693 3.090 1157
bf16 no_mask 4096 1.337 2056 5.553 1287
fp8 top_left 4096 0.477 2883 1.770 2019
fp8 no_mask 4096 0.805 3416 2.898 2466
mxfp8 top_left 4096 0.540 2544 2.294 1558
mxfp8 no_mask 4096 0.900 3054 3.640 1964
bf16 top_left 2048 0.253 1359 0.969 923
bf16 no_mask 2048 0.369 1863 1.587 1126
fp8 top_left 2048 0.147 2341 0.584 1530
fp8 no_mask 2048 0.219 3131 0.837 2135
mxfp8 top_left 2048 0.164 2094 0.769 1162
mxfp8 no_mask 2048 0.248 2772 1.059 1687
"""),
    "b300_kimi_k3": ("c044c5e", "kimi_k3/b300/kimi_k3_20260812_175226.csv", "NVIDIA B300 SXM6 AC", "9.24.0",
                     2, 96, 96, 192, 128, """
bf16 top_left 32768 38.795 1701 162.976 1052
bf16 no_mask 32768 80.701 1635 325.734 1053
fp8 top_left 32768 23.906 2760 83.333 2058
fp8 no_mask 32768 47.477 2779 168.552 2035
mxfp8 top_left 32768 24.417 2702 106.552 1610
mxfp8 no_mask 32768 51.318 2571 206.118 1664
bf16 top_left 16384 8.975 1838 37.853 1133
bf16 no_mask 16384 17.097 1929 78.072 1099
fp8 top_left 16384 5.395 3057 20.704 2071
fp8 no_mask 16384 10.656 3095 41.492 2067
mxfp8 top_left 16384 5.916 2788 25.190 1702
mxfp8 no_mask 16384 11.246 2933 51.280 1672
bf16 top_left 8192 2.379 1734 8.949 1198
bf16 no_mask 8192 4.307 1914 18.493 1159
fp8 top_left 8192 1.411 2922 4.981 2152
fp8 no_mask 8192 2.623 3143 9.217 2326
mxfp8 top_left 8192 1.556 2651 6.342 1691
mxfp8 no_mask 8192 2.822 2922 11.314 1895
bf16 top_left 4096 0.654 1576 2.505 1070
bf16 no_mask 4096 1.099 1876 4.486 1195
fp8 top_left 4096 0.389 2653 1.447 1853
fp8 no_mask 4096 0.649 3177 2.404 2230
mxfp8 top_left 4096 0.433 2381 1.877 1428
mxfp8 no_mask 4096 0.709 2909 2.973 1803
bf16 top_left 2048 0.207 1246 0.770 870
bf16 no_mask 2048 0.297 1738 1.254 1068
fp8 top_left 2048 0.123 2104 0.475 1411
fp8 no_mask 2048 0.179 2872 0.682 1965
mxfp8 top_left 2048 0.137 1885 0.631 1063
mxfp8 no_mask 2048 0.198 2598 0.855 1568
"""),
    # H200 (cuDNN 9.19.1, results/h200_919_only_cudnn): Llama 3.1 (batch 1)
    # and GPT-OSS at both passes; DeepSeek-V3 (192/128) was run with
    # deterministic_bwd=True, which changes only the backward kernel, so its
    # forward rows are kept and its backward ones ("-") left out (16.162,
    # 4.424, 1.271 ms = 442, 404, 352 TFLOPS at 8K, 4K, 2K); its 16K and 32K
    # rows ran out of memory and its FP8 rows failed (cuDNN: "hidden_dim
    # shoud be equal to 128"), as did GPT-OSS's FP8 rows.
    "h200_llama": ("df73764", "h200_919_only_cudnn/llama3.1_20260227_034703.csv", "NVIDIA H200", "9.19.1",
                   1, 64, 8, 128, 128, """
bf16 top_left 32768 25.566 688 75.688 581
bf16 no_mask 32768 50.769 693 153.841 572
fp8 top_left 32768 16.884 1042 118.729 370
fp8 no_mask 32768 33.120 1062 130.528 674
bf16 top_left 16384 6.531 673 19.002 579
bf16 no_mask 16384 12.524 702 35.947 612
fp8 top_left 16384 4.357 1010 29.422 374
fp8 no_mask 16384 8.335 1055 33.355 659
bf16 top_left 8192 1.708 644 5.083 541
bf16 no_mask 8192 3.182 691 9.262 594
fp8 top_left 8192 1.141 964 6.392 430
fp8 no_mask 8192 2.149 1023 8.637 636
bf16 top_left 4096 0.465 591 1.450 474
bf16 no_mask 4096 0.819 671 2.453 560
fp8 top_left 4096 0.322 854 1.459 471
fp8 no_mask 4096 0.565 973 2.285 602
bf16 top_left 2048 0.142 484 0.464 370
bf16 no_mask 2048 0.217 633 0.681 504
fp8 top_left 2048 0.098 698 0.437 393
fp8 no_mask 2048 0.158 870 0.647 531
"""),
    "h200_dsv3": ("afa9f7c", "h200_919_only_cudnn/dsv3_20260227_034744.csv", "NVIDIA H200", "9.19.1",
                  1, 128, 128, 192, 128, """
bf16 top_left 8192 4.278 643 - -
bf16 top_left 4096 1.148 599 - -
bf16 top_left 2048 0.330 522 - -
"""),
    # Sliding-window files (CUDNN_SDPA_WINDOW): GPT-OSS's windowed layers.
    "gb200_gpt_oss": ("e99b0d0", "gpt_oss/gb200/gpt_oss_20260724_040709.csv", "NVIDIA GB200", "9.26.0",
                      2, 128, 128, 64, 64, """
bf16 top_left 32768 1.630 168 3.663 187
fp8 top_left 32768 1.474 186 91.418 8
mxfp8 top_left 32768 1.669 164 107.135 6
bf16 top_left 16384 0.818 167 1.820 188
fp8 top_left 16384 0.740 185 23.664 14
mxfp8 top_left 16384 0.835 164 27.750 12
bf16 top_left 8192 0.412 166 0.903 189
fp8 top_left 8192 0.372 183 6.307 27
mxfp8 top_left 8192 0.423 161 7.386 23
bf16 top_left 4096 0.209 162 0.461 184
fp8 top_left 4096 0.189 179 1.772 48
mxfp8 top_left 4096 0.215 157 2.070 41
bf16 top_left 2048 0.108 154 0.234 178
fp8 top_left 2048 0.098 171 0.549 76
mxfp8 top_left 2048 0.111 149 0.642 65
"""),
    "gb300_gpt_oss": ("e99b0d0", "gpt_oss/gb300/gpt_oss_20260724_040706.csv", "NVIDIA GB300", "9.26.0",
                      2, 128, 128, 64, 64, """
bf16 top_left 32768 1.509 182 3.450 199
fp8 top_left 32768 1.292 212 74.901 9
mxfp8 top_left 32768 1.347 204 94.887 7
bf16 top_left 16384 0.758 181 1.719 199
fp8 top_left 16384 0.648 211 19.408 18
mxfp8 top_left 16384 0.678 202 24.482 14
bf16 top_left 8192 0.382 179 0.862 198
fp8 top_left 8192 0.327 209 5.204 33
mxfp8 top_left 8192 0.343 199 6.526 26
bf16 top_left 4096 0.194 174 0.441 192
fp8 top_left 4096 0.166 204 1.486 57
mxfp8 top_left 4096 0.175 194 1.844 46
bf16 top_left 2048 0.100 166 0.228 183
fp8 top_left 2048 0.086 193 0.469 89
mxfp8 top_left 2048 0.092 182 0.575 72
"""),
    "h200_gpt_oss": ("afa9f7c", "h200_919_only_cudnn/gpt_oss_20260227_034819.csv", "NVIDIA H200", "9.19.1",
                     2, 64, 8, 64, 64, """
bf16 top_left 32768 3.021 358 9.045 299
bf16 top_left 16384 1.499 355 4.392 303
bf16 top_left 8192 0.738 349 2.149 300
bf16 top_left 4096 0.358 336 1.042 289
bf16 top_left 2048 0.166 310 0.488 264
"""),
}
# Sliding-window files: the window each was run with (sliding_window_size;
# GPT-OSS's is 128). The benchmark counts s W - W^2/2 key positions per
# head of a causal windowed row (the band under the diagonal); the tables
# count s W (AttentionShape::ForwardFlops, the window clipped to the
# sequence), so cudnn_sdpa_rows checks each figure in the benchmark's count
# and converts it (x s W / (s W - W^2/2), the same time). The H200 file has
# no FP8 rows (its FP8 backward fails validation at head dim 64). The FP8
# and MXFP8 backward rows of the Blackwell files run at 6-89 TFLOPS, falling
# as the sequence grows: a time that grows as s^2 (91.4 ms at 32K against
# 1.77 ms at 4K on GB200), the cost of the full causal square rather than
# of the window's band; they are kept as measured, since they are the
# kernel a windowed layer under --fp8-dot-product-attention calls.
CUDNN_SDPA_WINDOW = {"gb200_gpt_oss": 128, "gb300_gpt_oss": 128, "h200_gpt_oss": 1024}
# Which files a GPU's table takes as its own measurements, and which GPU's
# rows stand in for the shapes it has no measurement of (the same GPU: B200
# and GB200 are Blackwell, B300 and GB300 Blackwell Ultra, the HGX parts at
# lower power and clocks), scaled by the dense-peak ratio of the dtype. B200 has no file of this
# benchmark; the tree's older B200 run (artifacts/sdpa_bf16_benchmark_results_
# NVIDIA_B200.csv, cuDNN 9.13 through PyTorch SDPA, NGC 25.09) is not used:
# it predates the cuDNN 9.26 of every other row by 13 releases, and on GB200
# the release gap alone moves the 4096-token causal forward from 1297 (cuDNN
# 9.18, results/gb200_918_only_cudnn) to 1407 TFLOPS, so the 9.13 figure (856
# TFLOPS at the same b x h = 128) describes older software, not B200.
# The sliding-window (gpt_oss) files are GPU files like the others: their
# rows carry the window, and the cost model keeps windowed rows in their own
# curve (calibration/cost_model.cc: a windowed kernel's efficiency is flat in
# sequence length, GB200 154-168 TFLOPS forward from 2K to 32K tokens, where
# the full-attention curve rises with FLOPs). H100 takes H200's windowed
# rows (derived_attention).
CUDNN_SDPA_GPU = {
    "h200": (["h200_llama", "h200_dsv3", "h200_gpt_oss"], None),
    "gb200": (["gb200_llama", "gb200_dsv3", "gb200_gpt_oss"], None),
    "gb300": (["gb300_llama", "gb300_dsv3", "gb300_gpt_oss"], None),
    "b300": (["b300_kimi_k3"], "gb300"),
    "b200": ([], "gb200"),
}
CUDNN_DTYPE = {"bf16": "bf16", "fp8": "fp8", "mxfp8": "mxfp8"}


def cudnn_sdpa_rows(key):
    """The transcribed rows of one CUDNN_SDPA file as table rows (without
    source), each TFLOPS figure checked against its printed time. The
    benchmark's backward FLOPs are 2 b h s^2 (3 d_qk + 2 d_v) (halved when
    causal: the five backward GEMMs), the tables' 2.5 x forward = 2 b h s^2
    2.5 (d_qk + d_v): equal when d_qk = d_v; otherwise (MLA, 192/128) the
    row's TFLOPS is converted to the tables' count (x 2.5 (d_qk + d_v) /
    (3 d_qk + 2 d_v), the same time). A "-" backward
    was not measured (or not kept)."""
    commit, path, gpu, version, b, hq, hkv, dqk, dv, text = CUDNN_SDPA[key]
    window = CUDNN_SDPA_WINDOW.get(key, 0)
    out = []
    for line in text.strip().splitlines():
        dt, mask, s, fms, ftf, bms, btf = line.split()
        s = int(s)
        causal = 1 if mask == "top_left" else 0
        keys = s * s / (2.0 if causal else 1.0)
        if window:
            if not causal or window >= s:
                raise SystemExit("%s %s: a windowed row must be causal with the window inside the sequence" % (
                    key, line))
            keys = s * window - window * window / 2.0
        fwd = 2.0 * b * hq * keys * (dqk + dv)
        bwd = 2.0 * b * hq * keys * (3 * dqk + 2 * dv)
        for direction, ms, tf, work in (("fwd", fms, ftf, fwd), ("bwd", bms, btf, bwd)):
            if ms == "-":
                continue
            implied = work / (float(ms) * 1e-3) / 1e12
            # The printed time has 3 decimals (ms): allow its rounding, and
            # one TFLOPS for the printed figure's (it comes from the unrounded
            # time).
            slack = float(tf) * 0.0005 / float(ms) + 1.0
            if abs(implied - float(tf)) > slack:
                raise SystemExit("%s %s: %s TFLOPS does not match %s ms (%.1f)" % (key, line, tf, ms, implied))
            note = "%s %s %s b=%d s=%d h_q=%d h_kv=%d d_qk=%d d_v=%d %s%s %s ms %s TFLOPS" % (
                gpu, dt, mask, b, s, hq, hkv, dqk, dv, "sliding_window_size=%d " % window if window else "",
                direction, ms, tf)
            factor = 1.0
            if window:
                factor *= s * window / keys
                note += (" counted as s W - W^2/2 = %d key positions; x s W / (s W - W^2/2) for the tables' "
                         "s W" % keys)
            if direction == "bwd" and dqk != dv:
                factor *= 2.5 * (dqk + dv) / (3 * dqk + 2 * dv)
                note += (" counted as 2 b h s^2 (3 d_qk + 2 d_v); x 2.5 (d_qk + d_v) / (3 d_qk + 2 d_v) = "
                         "%d/%d for the tables' 2.5 x forward" % (2.5 * (dqk + dv), 3 * dqk + 2 * dv))
            value = tf if factor == 1.0 else "%.1f" % (float(tf) * factor)
            out.append(dict(impl="cudnn", direction=direction, batch=b, seq_q=s, seq_kv=s, heads_q=hq,
                            heads_kv=hkv, head_dim_qk=dqk, head_dim_v=dv, causal=causal, window=window,
                            dtype=CUDNN_DTYPE[dt], tflops=value, note=note))
    return out


def cudnn_sdpa_cite(key, note):
    commit, path, gpu, version = CUDNN_SDPA[key][:4]
    det = ("deterministic_bwd=True run, forward rows only" if key in CUDNN_SDPA_DETERMINISTIC
           else "deterministic_bwd=False")
    return ("published:%s (cuDNN %s SDPA training benchmark, cudnn backend, %s); %s" % (
        CUDNN_FE % (commit, path), version, det, note))


# Files run with deterministic_bwd=True (their backward rows are not kept).
CUDNN_SDPA_DETERMINISTIC = {"h200_dsv3"}


def sdpa_kind(r):
    """What a published cuDNN SDPA row measures, for deciding which rows a
    GPU's own file replaces: head dims, dtype, and windowed or not."""
    return (str(r["head_dim_qk"]), str(r["head_dim_v"]), r["dtype"], int(r["window"]) > 0)


def blackwell_attention(T, spec):
    """cuDNN SDPA benchmark rows (H200 and Blackwell): each GPU's own
    published measurements, and for a Blackwell GPU the shapes (head dims,
    dtypes, windowed or not) it has none of from the GPU with the same die,
    scaled by the dense peak of the row's dtype. Returns each GPU's measured
    kinds (sdpa_kind)."""
    kinds = {}  # gpu -> set of sdpa_kind it measured
    for g in ("h200", "gb200", "gb300", "b300", "b200"):
        files, _ = CUDNN_SDPA_GPU[g]
        kinds[g] = set()
        for key in files:
            for r in cudnn_sdpa_rows(key):
                note = r.pop("note")
                kinds[g].add(sdpa_kind(r))
                T[g]["attention"].add(source=cudnn_sdpa_cite(key, note), **r)
    for g in ("b300", "b200"):
        sibling = CUDNN_SDPA_GPU[g][1]
        for key in CUDNN_SDPA_GPU[sibling][0]:
            for r in cudnn_sdpa_rows(key):
                note = r.pop("note")
                if sdpa_kind(r) in kinds[g]:
                    continue  # measured on this GPU
                cls = "bf16" if r["dtype"] == "bf16" else "fp8"
                peak, sib = spec[g][cls], spec[sibling][cls]
                tf = r["tflops"]
                r["tflops"] = "%.1f" % (float(tf) * peak / sib)
                T[g]["attention"].add(source=(
                    "derived:%s row %s TFLOPS (%s) x %s/%s (%s / %s %s dense peak; %s)" % (
                        sibling, tf, cudnn_sdpa_cite(key, note), num(peak), num(sib), g.upper(),
                        sibling.upper(), cls.upper(), SAME_DIE[g])), **r)
    return kinds


SAME_DIE = {
    "b200": "B200 and GB200 are the same Blackwell GPU, B200 at HGX power and clocks; the benchmark has no B200 file",
    "b300": "B300 and GB300 are the same Blackwell Ultra GPU, B300 at HGX power and clocks; B300's own file "
            "measures head dims 192/128 only",
}


# Dao-AILab/flash-attention PR 2605 (Johnsonms, 2026-05-30) benchmarks FA4
# against cuDNN on GB300 (clocks locked at 1965 MHz, torch 2.12.0a0 nv26.4,
# CUDA 13.2) and B200 (torch 2.11.0a0 nv26.02, CUDA 13.1): BF16 forward, MHA,
# batch x seqlen = 32K tokens. The cuDNN column at head dim 64 is the only
# published Blackwell measurement at that head dim (GPT-OSS's); its heads
# are 32 (the benchmark's model dim 2048 / 64; 4 b h s^2 d at the printed
# times gives 32), causal counted as half, as the tables do. GB300 ran the
# table three times (before and after the PR); the cuDNN figures agree to
# 0.5% and the median of the three is taken. Transcribed by hand.
FA2605 = ("github.com/Dao-AILab/flash-attention/pull/2605 (Johnsonms, 2026-05-30: FWD benchmark tables, cuDNN "
          "column, BF16, MHA 32 heads of 64, batch x seqlen = 32K tokens")
FA2605_HD64_FWD = {  # gpu -> (environment, {(causal, seq): TFLOPS})
    "gb300": ("GB300, clocks locked at 1965 MHz, torch 2.12.0a0 nv26.4, CUDA 13.2; median of three runs", {
        (0, 1024): 980, (0, 2048): 1072, (0, 4096): 1118, (0, 8192): 1147, (0, 16384): 1157,
        (1, 1024): 627, (1, 2048): 826, (1, 4096): 977, (1, 8192): 1072, (1, 16384): 1117}),
    "b200": ("B200, torch 2.11.0a0 nv26.02, CUDA 13.1", {
        (0, 1024): 846, (0, 2048): 861, (0, 4096): 890, (0, 8192): 901, (0, 16384): 906,
        (1, 1024): 501, (1, 2048): 657, (1, 4096): 770, (1, 8192): 838, (1, 16384): 872}),
}
FA2605_SIBLING = {"b300": "gb300", "gb200": "b200"}  # the same die (SAME_DIE)


def fa2605_attention(T, spec):
    """Head-dim-64 forward rows: GB300's and B200's published cuDNN figures
    (FA2605), and B300's and GB200's from their same-die sibling scaled by
    the BF16 dense peak, as blackwell_attention carries rows between them."""
    for g in ("gb300", "b200", "b300", "gb200"):
        sib = FA2605_SIBLING.get(g)
        env, rows = FA2605_HD64_FWD[sib or g]
        for (causal, seq), tf in sorted(rows.items()):
            row = dict(impl="cudnn", direction="fwd", batch=32768 // seq, seq_q=seq, seq_kv=seq, heads_q=32,
                       heads_kv=32, head_dim_qk=64, head_dim_v=64, causal=causal, window=0, dtype="bf16")
            if sib is None:
                T[g]["attention"].add(tflops=num(tf), source="published:%s; %s): %s TFLOPS" % (FA2605, env, num(tf)),
                                      **row)
            else:
                peak, sib_peak = spec[g]["bf16"], spec[sib]["bf16"]
                T[g]["attention"].add(tflops="%.1f" % (tf * peak / sib_peak), source=(
                    "derived:%s row %s TFLOPS (%s; %s)) x %s/%s (%s / %s BF16 dense peak; %s)" % (
                        sib, num(tf), FA2605, env, num(peak), num(sib_peak), g.upper(), sib.upper(),
                        SAME_DIE[g if g in SAME_DIE else sib])), **row)


def derived_attention(T, spec, kinds):
    """Rows no measurement covers: H200 copies H100's cuDNN rows (FP16 ones
    in BF16, and the FP8 ones; same GH100 compute and clocks) of the kinds
    (sdpa_kind) its own published rows do not measure; each Blackwell GPU
    gets the H100 cuDNN FP16 rows of the head dims it has no full-attention
    measurement of (64 and 256) in BF16, scaled by the GPU's best BF16 cuDNN
    head-dim-128 row of the direction over H100's best FP16 cuDNN
    head-dim-128 row (FA3 paper figure): the H100 rows' shape dependence at
    the GPU's level."""
    # H100 has no windowed measurement and none at MLA's head dims (192 for
    # q/k, 128 for v: DeepSeek-V3, Kimi-K2, Moonlight): H200's published rows
    # of those kinds (the same GH100 compute and clocks), scaled by the dense
    # peaks (equal). H200's MLA rows are forward only (its backward ran
    # deterministic, CUDNN_SDPA_DETERMINISTIC); no published non-
    # deterministic Hopper MLA backward exists, so H100's MLA backward stays
    # on the head-dim curve of its other rows.
    for row in list(T["h200"]["attention"].rows.values()):
        mla = row["head_dim_qk"] != row["head_dim_v"]
        if (int(row["window"]) == 0 and not mla) or row["source"].startswith("derived:"):
            continue
        cls = "bf16" if row["dtype"] == "bf16" else "fp8"
        peak, h200_peak = spec["h100"][cls], spec["h200"][cls]
        T["h100"]["attention"].add(**dict(row, tflops=num(round(float(row["tflops"]) * peak / h200_peak, 1)),
                                          source=(
            "derived:h200 cudnn row %s TFLOPS x %s/%s (H100 / H200 %s dense peak; the same GH100 compute and "
            "clocks, hardware_facts.md s1): %s" % (row["tflops"], num(peak), num(h200_peak), cls.upper(),
                                                   row["source"]))))
    cud = [row for row in T["h100"]["attention"].rows.values() if row["impl"] == "cudnn"]
    h100_best = {d: max(float(row["tflops"]) for row in cud
                        if row["direction"] == d and row["head_dim_qk"] == "128" and row["dtype"] == "fp16")
                 for d in ("fwd", "bwd")}
    for row in cud:
        if row["dtype"] not in ("fp16", "fp8"):
            continue
        if sdpa_kind(dict(row, dtype="bf16" if row["dtype"] == "fp16" else "fp8")) in kinds["h200"]:
            continue  # H200's own cuDNN SDPA benchmark rows
        peak = spec["h200"]["bf16" if row["dtype"] == "fp16" else "fp8"]
        h100_peak = spec["h100"]["bf16" if row["dtype"] == "fp16" else "fp8"]
        T["h200"]["attention"].add(**dict(row, dtype="bf16" if row["dtype"] == "fp16" else "fp8",
                                          tflops=num(round(float(row["tflops"]) * peak / h100_peak, 1)),
                                          source=(
            "derived:h100 cudnn %s row %s hd%s causal=%s seq %s batch %s (%s TFLOPS, FA3 paper figure) x "
            "(%s/%s) (H200 has the same GH100 compute and clocks; hardware_facts.md s1%s)" % (
                row["dtype"], row["direction"], row["head_dim_qk"], row["causal"], row["seq_q"], row["batch"],
                row["tflops"], num(peak), num(h100_peak),
                "; BF16 = FP16 tensor-core rate" if row["dtype"] == "fp16" else ""))))
    for g in ("b200", "b300", "gb200", "gb300"):
        own = [r for r in T[g]["attention"].rows.values() if r["impl"] == "cudnn" and r["dtype"] == "bf16"]
        # (direction, head dim) pairs with full-attention measurements: the
        # head-dim-64 forward rows of FA2605 leave the backward derived.
        measured = {(r["direction"], r["head_dim_qk"]) for r in own if int(r["window"]) == 0}
        for d in ("fwd", "bwd"):
            best = max((r for r in own if r["direction"] == d and r["head_dim_qk"] == "128"),
                       key=lambda r: float(r["tflops"]))
            for row in cud:
                if row["direction"] != d or row["dtype"] != "fp16" or (d, row["head_dim_qk"]) in measured:
                    continue
                v = float(row["tflops"]) * float(best["tflops"]) / h100_best[d]
                T[g]["attention"].add(**dict(row, dtype="bf16", tflops="%.1f" % v, source=(
                    "derived:h100 cudnn fp16 row %s hd%s causal=%s seq %s batch %s (%s TFLOPS, FA3 paper figure) "
                    "x %s/%s (%s's best BF16 cuDNN hd128 %s row%s, %s causal=%s seq %s, over H100's best FP16 "
                    "cuDNN hd128 %s row of the FA3 paper figure: no %s measurement at hd%s); BF16 = FP16 "
                    "tensor-core rate" % (
                        d, row["head_dim_qk"], row["causal"], row["seq_q"], row["batch"], row["tflops"],
                        best["tflops"], num(h100_best[d]), g.upper(), d,
                        " (itself derived)" if best["source"].startswith("derived:") else "", "heads %s/%s" % (
                            best["heads_q"], best["heads_kv"]), best["causal"], best["seq_q"], d, g.upper(),
                        row["head_dim_qk"]))))


# --------------------------------------------------------------------------
# memory-bound kernels

MEM_KERNELS = [  # kernel, dtype, efficiency, why
    ("copy", "bf16", 0.90,
     "90% of HBM spec: the speed-of-light figure of published memory-bound kernels: FlashMLA dense decode 3000 "
     "GB/s on H800 = 89.6% of 3.35 TB/s (deepseek-ai/FlashMLA@9241ae3 README, measured_kernels.csv) and QuACK "
     "'about 3 TB/s (~90% peak)' on H100 (Dao-AILab/quack media/2025-07-10-membound-sol.md)"),
    ("rmsnorm_fwd", "bf16", 0.80, None),
    ("rmsnorm_bwd", "bf16", 0.80, None),
    ("swiglu_fwd", "bf16", 0.80, None),
    ("swiglu_bwd", "bf16", 0.80, None),
    ("fp8_quantize", "fp8", 0.80, None),
    ("fp4_quantize", "nvfp4", None, None),  # Blackwell only (NVFP4 needs SM 10.x)
    ("adam", "fp32", 0.80, None),
    ("permute", "bf16", 0.70, None),
    ("unpermute", "bf16", 0.70, None),
]
MEM_SIZES = [4096, 65536, 1048576, 4194304, 16777216, 67108864, 268435456, 1073741824]
# Fixed GPU time of one memory-bound kernel besides its bytes: an empty
# kernel runs 0.72 us and the GPU idles 0.55 us before the next kernel of a
# CUDA graph starts (NVIDIA/Megatron-LM PR 6453, 2026-08-11, a per-kernel
# breakdown of a GB200 decode step: "the intra-graph dispatch gap is only
# 0.55 us and an empty kernel is 0.72 us"). A kernel moving b bytes at the
# streaming rate R then achieves b / (t0 + b / R). GB200 figure, assumed for
# every GPU (no per-GPU figure found).
EMPTY_KERNEL_US, KERNEL_GAP_US = 0.72, 0.55
MEGATRON_6453 = "github.com/NVIDIA/Megatron-LM/pull/6453 (GB200 per-kernel breakdown: empty kernel 0.72 us, intra-graph dispatch gap 0.55 us)"


# Blackwell MXFP8 quantize rate, from the TE B300 benchmark (TE_GEMM_DOC):
# autocast mode quantizes each Fprop GEMM's input and weight inside
# te.Linear (rowwise and columnwise, the weight requiring grad), the
# pre-quantized mode does not, and both call the same generic_gemm (scale
# swizzle included), so the MXFP8 Fprop-sum difference 2.847 - 2.365 ms is
# the 8 quantize kernels. Their bytes by models/layer_ops.cc QuantizeBytes
# (MXFP8: read 2 + write 2 x 1 + 2/32 scale bytes per element) over the
# fixed time of 8 kernels give the streaming rate.
TE_B300_AUTOCAST_FPROP_MS = {"mxfp8": "2.847", "nvfp4": "1.932"}
# models/layer_ops.cc QuantizeBytes: MXFP8 reads 2 and writes 2 x 1 + 2/32
# scale bytes per element; NVFP4 reads 2 and writes 2 x 0.5 + 2/16.
QUANTIZE_BYTES_PER_ELEMENT = {"mxfp8": 4 + 2.0 / 32, "nvfp4": 3 + 2.0 / 16}
QUANTIZE_NOTES = {
    "mxfp8": ("below the 80%% assumed before. torchao's B200 MXFP8 cast kernels, one direction each, reach 4.9 "
              "(rowwise) and 4.2 TB/s (columnwise) by their published times and shapes (pytorch/ao@0b1bb11 "
              "torchao/prototype/moe_training/README.md: (131072, 7168) in 580.6 and 670.7 us), and TE's own B200 "
              "MXFP8 cast of both directions 5.2 TB/s (github.com/ROCm/TransformerEngine/pull/598 CAST_ONLY table, "
              "B200 column: BF16 'both' 8192x8192 in 52.34 us)"),
    "nvfp4": ("the doc names what NVFP4's quantization adds over MXFP8's: random Hadamard transforms on the wgrad "
              "inputs, 2D block scaling of weights and an extra pass for the per-tensor amax, so its kernels move "
              "fewer bytes at a lower rate"),
}


def blackwell_quantize_efficiency(hbm_tbps, dt="mxfp8"):
    elements = sum(mm * kk + kk * nn for _, mm, kk, nn, _ in TE_B300_FPROP)
    per = QUANTIZE_BYTES_PER_ELEMENT[dt]
    byts = elements * per
    seconds = (float(TE_B300_AUTOCAST_FPROP_MS[dt]) - float(TE_B300_PASS_SUM_MS["fprop"][dt])) * 1e-3
    seconds -= len(TE_B300_FPROP) * 2 * (EMPTY_KERNEL_US + KERNEL_GAP_US) * 1e-6
    rate = byts / seconds  # bytes/s
    eff = rate / (hbm_tbps * 1e12)
    why = ("%.1f%% of HBM spec, derived from Transformer Engine's B300 GEMM benchmark (%s): %s Fprop sum with "
           "quantization (autocast) %s ms less kernel only (pre-quantized) %s ms = the 8 quantize kernels of the "
           "four Fprop GEMMs' inputs and weights (rowwise and columnwise); %.4g elements x %.4g bytes "
           "(models/layer_ops.cc QuantizeBytes, %s) = %.4g bytes over %.4g us (less 8 x %s us kernel fixed "
           "time) = %.0f GB/s on B300's 8 TB/s; %s" % (
               eff * 100, TE_GEMM_DOC, TE_PRECISION[dt], TE_B300_AUTOCAST_FPROP_MS[dt],
               TE_B300_PASS_SUM_MS["fprop"][dt], elements, per, TE_PRECISION[dt], byts, seconds * 1e6,
               num(EMPTY_KERNEL_US + KERNEL_GAP_US, 2), rate / 1e9, QUANTIZE_NOTES[dt]))
    return eff, why


def memory_tables(T, spec):
    for g in GPUS:
        tb = spec[g]["hbm_tbps"]
        for kern, dt, eff, why in MEM_KERNELS:
            if kern == "fp4_quantize" and g in ("h100", "h200"):
                continue
            if kern in ("fp8_quantize", "fp4_quantize") and g not in ("h100", "h200"):
                eff, why = blackwell_quantize_efficiency(spec["b300"]["hbm_tbps"],
                                                         "nvfp4" if kern == "fp4_quantize" else "mxfp8")
            if why is None:
                why = ("%d%% of HBM spec (no measured figure for this kernel class in the references; below the "
                       "~90%% speed-of-light of QuACK's H100 RMSNorm/softmax, Dao-AILab/quack "
                       "media/2025-07-10-membound-sol.md, which also reports torch.compile softmax at 1.89 of 3.35 "
                       "TB/s = 56%%)%s" % (
                           int(eff * 100),
                           "; gather/scatter by routing index" if kern in ("permute", "unpermute") else ""))
            rate = tb * 1000 * eff  # GB/s once streaming
            t0 = (EMPTY_KERNEL_US + KERNEL_GAP_US) * 1e-6
            for b in MEM_SIZES:
                T[g]["memory_bound"].add(
                    kernel=kern, bytes=b, dtype=dt, gb_s=round(b / (t0 + b / (rate * 1e9)) / 1e9, 1),
                    source="derived:%s TB/s HBM (%s hbm_tbps) x %s, streaming %s GB/s; achieved b / (t0 + b / "
                           "streaming) with t0 = %s + %s us per kernel, %s, the GB200 figure assumed for %s" % (
                               num(tb, 2), spec[g]["file"], why, num(rate, 1), num(EMPTY_KERNEL_US, 2),
                               num(KERNEL_GAP_US, 2), MEGATRON_6453, g.upper()))


# --------------------------------------------------------------------------
# collectives


def coll_add(T, g, log_dups, **row):
    t = T[g]["collectives"]
    if t.has(**{k: v for k, v in row.items() if k not in ("bus_gb_s", "latency_us", "source")}):
        raise SystemExit("dup collective %s %s" % (g, row))
    t.add(**row)


def collective_tables(C, T, left_out, dups):
    for r in C:
        sysn, coll, src, ng = r["system"], r["collective"], r["source"], r["num_gpus"]
        size, bw, lat, notes = r["message_size"], r["bw_GBps"], r["latency_us"], r["notes"]
        base = " | ".join(x for x in (sysn, coll, r["bw_type"], ng + " GPUs", size, bw, notes) if x)
        ln = " (measured_comm.csv line %d)" % r["_line"]
        # ---- H200 all_reduce_bench sweep (NVLS on) ----
        if sysn == "8x H200 (NVLink4, NVLS on)":
            coll_add(T, "h200", dups, collective="all_reduce", algorithm="auto", tier="nvlink", group_size=8,
                     bytes=size_bytes(size), bus_gb_s=bw, latency_us=lat,
                     source=cite(r, base + "; algorithm = NCCL's choice (RING/LL <=1MiB, NVLS/SIMPLE >=2MiB); "
                                           "torch.distributed all_reduce_bench.py, busbw as nccl-tests; latency_us "
                                           "as given (size/algbw)" + ln))
        elif sysn == "AWS P6-B200 (8x B200 NVLink5), 1 node":
            coll_add(T, "b200", dups, collective="all_reduce", algorithm="auto", tier="nvlink", group_size=8,
                     bytes=size_bytes(size), bus_gb_s=bw, latency_us=lat,
                     source=cite(r, base + "; algorithm = NCCL's choice; latency_us as given" + ln))
        elif sysn.startswith("AWS P6-B200, 4 nodes"):
            coll_add(T, "b200", dups, collective="all_reduce", algorithm="auto", tier="net", group_size=32,
                     bytes=size_bytes(size), bus_gb_s=bw, latency_us=lat,
                     source=cite(r, base + "; 4 nodes x 8 B200 over AWS EFA v4 (8 x 400 Gb/s per node, the same "
                                           "50 GB/s per GPU as DGX B200's 8 x CX-7 400G, but EFA not InfiniBand); "
                                           "latency_us as given" + ln))
        elif sysn == "8x H200 node" and "SHARP section (nccl-tests, 8GiB)" in src:
            algo = "nvls" if "NVLS" in coll else "ring"
            n = int(ng)
            coll_add(T, "h200", dups, collective="all_reduce", algorithm=algo, tier="nvlink", group_size=n,
                     bytes=GIB8, bus_gb_s=bw, latency_us="", source=cite(r, base + ln))
            ring = re.search(r"NCCL_NVLS_ENABLE=0 gives ([\d.]+)", notes).group(1)
            if algo == "nvls":
                coll_add(T, "h200", dups, collective="all_reduce", algorithm="ring", tier="nvlink", group_size=n,
                         bytes=GIB8, bus_gb_s=ring, latency_us="",
                         source=cite(r, "%s | all_reduce with NCCL_NVLS_ENABLE=0 (ring) | %s GPUs | 8GiB | %s "
                                        "busbw (value from the row's notes)" % (sysn, ng, ring) + ln))
            elif ring != bw:
                dups.append("h200/collectives all_reduce ring %s GPUs 8GiB: row %d gives %s (NCCL chose Ring) and "
                            "%s with NVLS disabled; kept %s" % (ng, r["_line"], bw, ring, bw))
        elif sysn == "8x B200 (AWS p6-b200.48xlarge)":
            algo = "nvls" if "NVLS" in coll else "ring"
            n = int(ng)
            coll_add(T, "b200", dups, collective="all_reduce", algorithm=algo, tier="nvlink", group_size=n,
                     bytes=GIB8, bus_gb_s=bw, latency_us="", source=cite(r, base + ln))
            ring = re.search(r"NCCL_NVLS_ENABLE=0 gives ([\d.]+)", notes).group(1)
            if algo == "nvls":
                coll_add(T, "b200", dups, collective="all_reduce", algorithm="ring", tier="nvlink", group_size=n,
                         bytes=GIB8, bus_gb_s=ring, latency_us="",
                         source=cite(r, "%s | all_reduce with NCCL_NVLS_ENABLE=0 (ring) | %s GPUs | 8GiB | %s "
                                        "busbw (value from the row's notes)" % (sysn, ng, ring) + ln))
            elif ring != bw:
                dups.append("b200/collectives all_reduce ring %s GPUs 8GiB: measured_comm.csv line %d gives %s "
                            "(NCCL chose Ring with NVLS enabled) and %s with NVLS disabled (same grid point); "
                            "kept %s" % (ng, r["_line"], bw, ring, bw))
        elif sysn == "8x H200 node" and "-b 16G -g 8" in src:
            algo = "nvls" if "NVLS)" in coll else "ring"
            cname = coll.split(" ")[0]
            coll_add(T, "h200", dups, collective=cname, algorithm=algo, tier="nvlink", group_size=8,
                     bytes=16 << 30, bus_gb_s=bw, latency_us="", source=cite(r, base + ln))
        elif sysn == "8x H200 node" and "all_reduce_bench.py" in src:
            dups.append("h200/collectives all_reduce ring 8 GPUs 16GiB: measured_comm.csv line %d "
                        "(all_reduce_bench.py, %s) duplicates line 344 (nccl-tests -b 16G, 367.2); kept the "
                        "nccl-tests row" % (r["_line"], bw))
        elif sysn == "8x H200 (NVLink4/NVSwitch)" and "bidirectional" not in coll:
            coll_add(T, "h200", dups, collective="sendrecv", algorithm="auto", tier="nvlink", group_size=2,
                     bytes=GIB8, bus_gb_s=bw, latency_us="",
                     source=cite(r, base + "; size not given, large-message peak; CUDA copy-engine p2p "
                                           "(nvbandwidth), not NCCL" + ln))
        elif sysn == "8x H100 (NVLink4)" and coll.startswith("p2p_write"):
            coll_add(T, "h100", dups, collective="sendrecv", algorithm="auto", tier="nvlink", group_size=2,
                     bytes=GIB8, bus_gb_s=bw, latency_us="",
                     source=cite(r, base + "; size not given, large-message peak; CUDA p2p write "
                                           "(p2pBandwidthLatencyTest), not NCCL" + ln))
        elif sysn == "GB200 NVL4 node (4 GPUs, NVLink5)":
            coll_add(T, "gb200", dups, collective="sendrecv", algorithm="auto", tier="nvlink", group_size=2,
                     bytes=GIB8, bus_gb_s=bw, latency_us="",
                     source=cite(r, base + "; size not given, large-message peak; CUDA p2p write "
                                           "(p2pBandwidthLatencyTest), not NCCL; GPU pair in a 4-GPU GB200 tray" + ln))
        elif "GTC25" in src and "all-reduce-bw-2025" in src:
            mp = {"NVLink4 (H100)": ("h100", "ring", "nvlink"), "NVLink4 SHARP (H100)": ("h100", "nvls", "nvlink"),
                  "NVL4 + 8x400Gb RDMA (DGX H100)": ("h100", "ring", "net"),
                  "SHARP 8x400Gb RDMA (DGX H100)": ("h100", "nvls", "net"),
                  "NVLink (GB200 NVL72)": ("gb200", "ring", "nvlink"),
                  "NVLink5 SHARP (GB200 NVL72)": ("gb200", "nvls", "nvlink"),
                  "NVLink5 (B200)": ("b200", "ring", "nvlink"), "NVLink5 SHARP (B200)": ("b200", "nvls", "nvlink")}
            if sysn not in mp:
                left_out.append("measured_comm.csv line %d: %s %s (not one of our GPUs)" % (r["_line"], sysn, coll))
                continue
            g, algo, tier = mp[sysn]
            why = ("non-SHARP bar: algorithm not named on the slide, NCCL's non-NVLS all-reduce on one NVLink "
                   "domain is ring" if algo == "ring" and tier == "nvlink" else
                   "non-SHARP bar: algorithm not named on the slide (NVLS off; ring assumed)" if algo == "ring" else
                   "SHARP bar: NVLink SHARP (NVLS)" if tier == "nvlink" else
                   "SHARP bar: NVLS plus InfiniBand SHARP (NVLSTree/CollNet), recorded as nvls")
            if g == "b200":
                dups.append("b200/collectives all_reduce %s 8 GPUs 8GiB: GTC25 slide bar %s (%s, size not given) "
                            "duplicates the ml-engineering nccl-tests 8GiB row (%s); kept the ml-engineering "
                            "measurement at a stated size" % (algo, sysn, bw,
                                                               "682.2 ring" if algo == "ring" else "838.0 NVLS"))
                continue
            extra = ""
            if g == "h100" and tier == "nvlink":
                extra = ("; same value on NVIDIA GTC24 S62129 slide, nccl-tests#212 (sjeaugey), nccl#2140%s" %
                         ("; nccl-tests#309 368.76" if algo == "ring" else ""))
            coll_add(T, g, dups, collective="all_reduce", algorithm=algo, tier=tier, group_size=int(ng),
                     bytes=GIB8, bus_gb_s=bw, latency_us="",
                     source=cite(r, base + "; size not given, large-message peak; " + why + extra + ln))
        elif "GTC25" in src and "all-to-all-bw-2025" in src:
            mp = {"NVLink4 (H100)": ("h100", "nvlink"), "NVLink5 (B200)": ("b200", "nvlink"),
                  "NVLink5 (GB200 NVL72)": ("gb200", "nvlink"), "8x400Gb RDMA (DGX H100)": ("h100", "net")}
            if sysn not in mp:
                left_out.append("measured_comm.csv line %d: %s %s (system not one of our GPUs)" % (
                    r["_line"], sysn, coll))
                continue
            g, tier = mp[sysn]
            coll_add(T, g, dups, collective="alltoall", algorithm="auto", tier=tier, group_size=int(ng),
                     bytes=GIB8, bus_gb_s=bw, latency_us="",
                     source=cite(r, base + "; size not given, large-message peak; algorithm = NCCL's choice" + ln))
        elif "GTC24" in src:
            if sysn in ("NVLink4 (H100)", "NVLink4 SHARP (H100)"):
                dups.append("h100/collectives all_reduce %s 8 GPUs: GTC24 S62129 slide (measured_comm.csv line %d, "
                            "%s) duplicates the GTC25 S72583 bar (same value); kept GTC25 (later)" % (
                                "nvls" if "SHARP" in sysn else "ring", r["_line"], bw))
            elif "DGX H100" in sysn:
                left_out.append("measured_comm.csv line %d: %s all_reduce %s (GPU count not on slide, cannot be a "
                                "grid point)" % (r["_line"], sysn, bw))
            else:
                left_out.append("measured_comm.csv line %d: %s %s (not one of our GPUs / GPU count not given)" % (
                    r["_line"], sysn, coll))
        elif src.startswith("NVIDIA/nccl-tests#212"):
            dups.append("h100/collectives all_reduce %s 8 GPUs large: nccl-tests#212 (measured_comm.csv line %d, "
                        "%s) duplicates the GTC25 slide bar (same value); kept GTC25, cited in its source" % (
                            "nvls" if "NVLS" in coll else "ring", r["_line"], bw))
        elif src.startswith("NVIDIA/nccl#2140") and sysn == "8x H100":
            dups.append("h100/collectives all_reduce nvls/ring 8 GPUs large: nccl#2140 (measured_comm.csv line %d, "
                        "480 / 370) duplicates the GTC25 slide bars (same values); kept GTC25" % r["_line"])
        elif src.startswith("NVIDIA/nccl#2140") and sysn == "8x B300":
            coll_add(T, "b300", dups, collective="all_reduce", algorithm="nvls", tier="nvlink", group_size=8,
                     bytes=GIB8, bus_gb_s=bw, latency_us="",
                     source=cite(r, base + "; size not given, large-message peak; NVLS on" + ln))
            coll_add(T, "b300", dups, collective="all_reduce", algorithm="ring", tier="nvlink", group_size=8,
                     bytes=GIB8, bus_gb_s="695", latency_us="",
                     source=cite(r, "%s | all_reduce NVLS off | 8 GPUs | large | 695 busbw (value from the row's "
                                    "notes: ring 695 -> NVLS 845); size not given, large-message peak" % sysn + ln))
        elif src.startswith("NVIDIA/nccl-tests#272"):
            coll_add(T, "h200", dups, collective="all_reduce", algorithm="nvls", tier="nvlink", group_size=8,
                     bytes=4294967296, bus_gb_s=bw, latency_us="",
                     source=cite(r, base + "; size 'up to 4GB': peak recorded at 4GiB; algorithm NVLS as the row's "
                                           "notes state (busbw above the 450 GB/s wire rate)" + ln))
        elif src.startswith("NVIDIA/nccl#1807"):
            dups.append("b200/collectives all_reduce auto 8 GPUs large: nccl#1807 user report (measured_comm.csv "
                        "line %d, '830+') duplicates the ml-engineering all_reduce_bench 8GiB row (839.07); kept "
                        "the ml-engineering row (stated size)" % r["_line"])
        elif src.startswith("NVIDIA/nccl-tests#309"):
            dups.append("h100/collectives all_reduce ring 8 GPUs large: nccl-tests#309 (measured_comm.csv line %d, "
                        "368.76, NVLS disabled) duplicates the GTC25 bar (370); kept GTC25, cited in its source" %
                        r["_line"])
        elif src.startswith("NVIDIA/nccl#1281"):
            coll_add(T, "h100", dups, collective="reduce_scatter", algorithm="auto", tier="nvlink", group_size=8,
                     bytes=GIB8, bus_gb_s=bw, latency_us="",
                     source=cite(r, base + "; size not given, large-message peak; algorithm not stated" + ln))
            coll_add(T, "h100", dups, collective="all_gather", algorithm="auto", tier="nvlink", group_size=8,
                     bytes=GIB8, bus_gb_s="350", latency_us="",
                     source=cite(r, "%s | all_gather | 8 GPUs | large | 350 busbw (value from the row's notes, same "
                                    "environment); size not given, large-message peak" % sysn + ln))
        elif src.startswith("NVIDIA/nccl#1374"):
            left_out.append("measured_comm.csv line %d: 8x H800 all_reduce 215 GB/s (H800 NVLink is cut to ~200 "
                            "GB/s uni: not H100 NVLink)" % r["_line"])
        elif src.startswith("NVIDIA/nccl-tests#290"):
            left_out.append("measured_comm.csv line %d: H100 CX-7 per-NIC achievable 47 GB/s (not a collective; "
                            "no group size)" % r["_line"])
        elif src.startswith("NVIDIA/nccl-tests#267"):
            coll_add(T, "h100", dups, collective="alltoall", algorithm="auto", tier="net", group_size=48,
                     bytes=GIB8, bus_gb_s=bw, latency_us="",
                     source=cite(r, base + "; size not given, large-message peak; the figure is NVIDIA's stated "
                                           "achievable alltoall bandwidth per NIC (alltoall cannot aggregate NICs), "
                                           "recorded as busbw" + ln))
        elif src.startswith("NVIDIA/nccl#1221"):
            if ng == "16":
                coll_add(T, "h100", dups, collective="all_reduce", algorithm="nvls", tier="net", group_size=16,
                         bytes=GIB8, bus_gb_s=bw, latency_us="",
                         source=cite(r, base + "; size '4-8GB': recorded at 8GiB; NVLS on (NVLSTree across 2 "
                                               "nodes); RoCE 8x400G per node" + ln))
                coll_add(T, "h100", dups, collective="all_reduce", algorithm="auto", tier="net", group_size=16,
                         bytes=GIB8, bus_gb_s="330", latency_us="",
                         source=cite(r, "%s | all_reduce NVLS off | 16 GPUs | 4-8GB | 330 busbw (value from the "
                                        "row's notes); recorded at 8GiB; algorithm NCCL's choice without NVLS" % sysn
                                     + ln))
            else:
                coll_add(T, "h100", dups, collective="all_reduce", algorithm="auto", tier="net", group_size=32,
                         bytes=GIB8, bus_gb_s=bw, latency_us="",
                         source=cite(r, base + "; size '4-8GB': recorded at 8GiB; algorithm not stated; RoCE" + ln))
        elif src.startswith("NVIDIA/nccl#1218"):
            coll_add(T, "h100", dups, collective="all_gather", algorithm="auto", tier="net", group_size=256,
                     bytes=2147483648, bus_gb_s=bw, latency_us="",
                     source=cite(r, base + "; '2GB' read as 2GiB (nccl-tests sizes); algorithm not stated; RoCE" + ln))
            coll_add(T, "h100", dups, collective="all_reduce", algorithm="auto", tier="net", group_size=256,
                     bytes=2147483648, bus_gb_s="340", latency_us="",
                     source=cite(r, "%s | all_reduce same flags | 256 GPUs | 2GB | ~340 busbw (value from the row's "
                                    "notes); '2GB' read as 2GiB" % sysn + ln))
        elif src.startswith("lixueduan.com"):
            left_out.append("measured_comm.csv line %d: GB200 MNNVL 2x4 GPUs 811 GB/s busbw (collective not stated)"
                            % r["_line"])
        elif "Real network throughput" in src and "A100" in sysn:
            continue  # A100: not one of our GPUs (summarised in the report)
        elif coll.startswith("DeepEP") or coll.startswith("HybridEP"):
            continue  # dispatch.csv
        elif "host_to_device" in coll:
            continue  # host_copy.csv
        else:
            left_out.append("measured_comm.csv line %d: %s | %s (not one of our GPUs or not a collective)" % (
                r["_line"], sysn, coll))
    # GB300: same NVL72 NVLink5 fabric as GB200 -> copy the nvlink rows.
    for row in list(T["gb200"]["collectives"].rows.values()):
        if row["tier"] != "nvlink":
            continue
        T["gb300"]["collectives"].add(
            collective=row["collective"], algorithm=row["algorithm"], tier="nvlink", group_size=row["group_size"],
            bytes=row["bytes"], bus_gb_s=row["bus_gb_s"], latency_us=row["latency_us"],
            source="derived:gb200 row %s %s nvlink %s GPUs %s B %s GB/s (GB300 NVL72 has the same 72-GPU NVLink5 "
                   "domain, 18 links x 50 GB/s per GPU, NVSwitch trays; hardware_facts.md s2 'GB300 NVL72')" % (
                       row["collective"], row["algorithm"], row["group_size"], row["bytes"], row["bus_gb_s"]))


# --------------------------------------------------------------------------
# dispatch


def dispatch_tables(C, T, left_out, dups):
    hyb = {}  # (gpu, ep, phase, dtype, sms, tier) -> {"torch": (v, r), "kernel": (v, r)}
    for r in C:
        coll, sysn, src = r["collective"], r["system"], r["source"]
        if not (coll.startswith("DeepEP") or coll.startswith("HybridEP")):
            continue
        ep = int(r["num_gpus"])
        sp = r["message_size"]
        ln = " (measured_comm.csv line %d)" % r["_line"]
        if sysn.startswith("H20 "):
            left_out.append("measured_comm.csv line %d: %s %s EP%d (H20 with NVLink disabled: not one of our "
                            "GPUs)" % (r["_line"], sysn, coll, ep))
            continue
        if coll.startswith("DeepEP_V1"):
            if "superseded" in r["notes"]:
                dups.append("h100/dispatch: measured_comm.csv line %d (DeepEP initial-release %s EP%d %s GB/s) is "
                            "superseded by the legacy.md value for the same grid point; kept legacy.md" % (
                                r["_line"], coll, ep, r["bw_GBps"]))
                continue
            phase = "dispatch" if "dispatch" in coll else "combine"
            ll = "lowlatency" in coll
            tokens = 128 if ll else 4096
            tier = "net" if (ll or ep > 8) else "nvlink"
            dtype = "fp8" if phase == "dispatch" else "bf16"
            extra = ("H800 (~160 GB/s NVLink maximum per DeepEP README; NOT H100 NVLink speed: H100 has 450 GB/s "
                     "uni) with CX7 400Gb/s IB (~50 GB/s), same GH100 SMs as H100")
            if ll:
                extra += "; low-latency kernels, pure RDMA (IBGDA) even at EP8; latency %s us" % r["latency_us"]
            if tier == "nvlink":
                # H800's NVLink (~160 GB/s) is not H100's: its intranode rows
                # describe no shipped GPU. H100's NVLink rows are derived from
                # B200's below.
                left_out.append("measured_comm.csv line %d: %s EP%d intranode on H800 (NVLink ~160 GB/s, not "
                                "H100's 450): h100 NVLink rows are derived from B200's instead" % (
                                    r["_line"], coll, ep))
                continue
            T["h100"]["dispatch"].add(
                dispatcher="deepep", phase=phase, ep_size=ep, tier=tier, tokens=tokens, hidden=7168, topk=8,
                dtype=dtype, gb_s=r["bw_GBps"], sms="",
                source=cite(r, "%s; %s; %s; %s; FP8 dispatch / BF16 combine as stated" % (
                    extra, coll, sp, r["bw_type"]) + ln))
            continue
        if coll.startswith("DeepEP_V2"):
            phase = "dispatch" if "dispatch" in coll else "combine"
            sms = int(re.search(r"#SMs (\d+)", sp).group(1))
            g = "h100" if sysn.startswith("SM90") else "b200"
            tier = "nvlink" if "NIC N/A" in sysn else "net"
            T[g]["dispatch"].add(
                dispatcher="deepep", phase=phase, ep_size=ep, tier=tier, tokens=8192, hidden=7168, topk=8,
                dtype="fp8" if phase == "dispatch" else "bf16", gb_s=r["bw_GBps"], sms=sms,
                source=cite(r, "%s (GPU model not named; %s folder by SM generation); %s; %s; %s; %s; 8K tokens "
                               "read as 8192" % (sysn, g, coll, sp, r["bw_type"], r["notes"]) + ln))
            continue
        # HybridEP doc rows (HybridEP and the DeepEP baseline).
        if sysn == "B200 single node (NVLink)":
            g, tier = "b200", "nvlink"
        elif sysn == "GB200 NVL72 (MNNVL)":
            g, tier = "gb200", "nvlink"
        elif sysn == "H100 multi-node (IB)":
            g, tier = "h100", "net"
        else:
            raise SystemExit("unhandled dispatch row %d" % r["_line"])
        sms = int(re.search(r"SMs (\d+)", sp).group(1))
        parts = coll.split("_")  # HybridEP_kernel_dispatch_fp8 / DeepEP_torch_combine
        lib, api, phase = parts[0], parts[1], parts[2]
        dtype = parts[3] if len(parts) > 3 else "bf16"
        disp = "hybridep" if lib == "HybridEP" else "deepep"
        k = (g, disp, ep, phase, dtype, sms, tier)
        hyb.setdefault(k, {})[api] = (r["bw_GBps"], r)
    for (g, disp, ep, phase, dtype, sms, tier), d in hyb.items():
        if "kernel" in d:
            v, r = d["kernel"]
            extra = "Kernel Only figure (kernel time)"
            if "torch" in d:
                extra += "; the Torch API figure for the same point (incl. framework overhead) is %s GB/s, " \
                         "measured_comm.csv line %d" % (d["torch"][0], d["torch"][1]["_line"])
                dups.append("%s/dispatch %s %s EP%d %s SMs %d: Torch API (%s) and Kernel Only (%s) rows are one "
                            "grid point; kept Kernel Only" % (g, disp, phase, ep, dtype, sms, d["torch"][0], v))
        else:
            v, r = d["torch"]
            extra = "Torch API figure (includes framework overhead; no Kernel Only figure for this point)"
        T[g]["dispatch"].add(
            dispatcher=disp, phase=phase, ep_size=ep, tier=tier, tokens=4096, hidden=7168, topk=8, dtype=dtype,
            gb_s=v, sms=sms,
            source=cite(r, "%s | %s | EP%d | %s | %s; %s%s (measured_comm.csv line %d)" % (
                r["system"], r["collective"], ep, r["message_size"], r["bw_type"], extra,
                ("; " + r["notes"]) if r["notes"] else "", r["_line"])))
    # Derived copies where a sibling fabric was measured.
    def copy(src_g, dst_g, pred, why):
        for row in list(T[src_g]["dispatch"].rows.values()):
            if not pred(row):
                continue
            T[dst_g]["dispatch"].add(
                dispatcher=row["dispatcher"], phase=row["phase"], ep_size=row["ep_size"], tier=row["tier"],
                tokens=row["tokens"], hidden=row["hidden"], topk=row["topk"], dtype=row["dtype"],
                gb_s=row["gb_s"], sms=row["sms"],
                source="derived:%s row %s %s EP%s %s tokens %s %s SMs %s: %s GB/s (%s)" % (
                    src_g, row["dispatcher"], row["phase"], row["ep_size"], row["tier"], row["tokens"], row["dtype"],
                    row["sms"] or "n/a", row["gb_s"], why))
    copy("gb200", "gb300", lambda r: r["tier"] == "nvlink",
         "GB300 NVL72 has the same 72-GPU NVLink5 domain as GB200 NVL72; hardware_facts.md s2")
    copy("b200", "b300", lambda r: r["tier"] == "nvlink",
         "DGX B300 has the same 8-GPU NVLink5 baseboard, 18 links x 50 GB/s per GPU; dgx-b300.textproto")
    # Hopper NVLink rows from Blackwell's: a row's SM-limited rate carries
    # over (same SM count), capped by the best rate B200 reaches for that
    # dispatcher, phase and dtype scaled by the NVLink ratio (NCCL's per-GPU
    # NVLink rate: H100 18 x 20.6 = 370.8 GB/s, B200 18 x 40.1 = 721.8 GB/s;
    # topology/network_model.csv).
    ratio = 370.8 / 721.8
    best = {}
    for row in T["b200"]["dispatch"].rows.values():
        if row["tier"] != "nvlink" or str(row["tokens"]) != "4096":
            continue
        key = (row["dispatcher"], row["phase"], row["dtype"])
        best[key] = max(best.get(key, 0.0), float(row["gb_s"]))
    for g in ("h100", "h200"):
        for row in list(T["b200"]["dispatch"].rows.values()):
            if row["tier"] != "nvlink" or str(row["tokens"]) != "4096":
                continue
            key = (row["dispatcher"], row["phase"], row["dtype"])
            cap = best[key] * ratio
            rate = min(float(row["gb_s"]), cap)
            T[g]["dispatch"].add(
                dispatcher=row["dispatcher"], phase=row["phase"], ep_size=row["ep_size"], tier="nvlink",
                tokens=row["tokens"], hidden=row["hidden"], topk=row["topk"], dtype=row["dtype"],
                gb_s=num(rate, 1), sms=row["sms"],
                source="derived:min(b200 row %s %s EP%s %s %s SMs %s GB/s (SM-limited rate, same SMs), best b200 "
                       "%s %s %s rate %s GB/s x NVLink ratio 370.8/721.8 (NCCL per-GPU NVLink, "
                       "topology/network_model.csv)) = %s GB/s" % (
                           row["dispatcher"], row["phase"], row["ep_size"], row["dtype"], row["sms"] or "n/a",
                           row["gb_s"], row["dispatcher"], row["phase"], row["dtype"], num(best[key], 2),
                           num(rate, 1)))
    copy("h100", "h200", lambda r: r["tier"] == "net",
         "inter-node tier bound by the same ConnectX-7 400G NIC per GPU (hgx-h200.textproto); H800 rows are "
         "H800 measurements")


# --------------------------------------------------------------------------
# host overheads, host copies, CPU Adam

TRITONBENCH = ("github.com/meta-pytorch/tritonbench/pull/1017 (GB200: nop_triton_direct_culaunch, raw "
               "cuLaunchKernel 3.0 us with 0 args / 3.3 us with 19 args)")
OCANNL = ("github.com/ahrefs/ocannl/issues/488 (chain of N no-op kernels stream-captured and replayed: graph "
          "replay ~15 us fixed (incl. one stream sync) + ~0.58 us per node; RTX 5070 Ti Laptop, CUDA 13.3, WSL2)")


# github.com/NVIDIA/TransformerEngine/issues/2053 (2025-08-11): average CPU
# time of one Linear forward (BF16, hidden 2048, 8192 tokens), torch.nn.Linear
# and TE Linear, per host. Transcribed by hand (not in the reference files).
TE2053 = ("github.com/NVIDIA/TransformerEngine/issues/2053 (2025-08-11, average CPU time of one Linear forward, "
          "BF16, hidden 2048, 8192 tokens")
TE2053_US = {  # host -> (torch.nn.Linear us, TE Linear us)
    "H100 DGX": (13.48, None),
    "GB200": (37.08, 99.66),
    "GH200": (33.17, 90.53),
}
# Megatron-LM's functional tests run the same tiny, host-bound training
# configurations on DGX H100 and on GB200 and commit each one's per-step
# iteration time (golden values). The per-case ratios are in
# calibration/notes/megatron_ci_host_ratio.md.
MEGATRON_CI_RATIO = 1.45
MEGATRON_CI = ("NVIDIA/Megatron-LM tests/functional_tests/test_cases/{gpt,moe}/*/golden_values_dev_dgx_{h100,gb200}"
               ".json: the same 24 tiny host-bound training configurations (mostly 12 layers, hidden 512, seq 1024, "
               "MBS 4, GBS 32, 8 GPUs, no CUDA graphs; 13 dense, 11 MoE) take %.2fx as long per step on GB200 as on "
               "the DGX H100 (median of the per-case medians of iteration-time over steps 3-50; interquartile range "
               "1.35-1.51, dense 1.46, MoE 1.44; the one CUDA-graphed case 1.07; cases and commits in "
               "calibration/notes/megatron_ci_host_ratio.md)" % MEGATRON_CI_RATIO)
# github.com/pytorch/pytorch/issues/41383 (ngimel): one op through the C++ API
# about 1 us (x*x from Python about 2 us, half of it Python parsing).
PT41383 = ("github.com/pytorch/pytorch/issues/41383 (ngimel, 2020-07-14: x*x from Python takes about 2 us, about "
           "half of it Python parsing; the same op through the C++ API about 1 us)")
CPP_OP_US = 1.0
# github.com/marin-community/marin/pull/9224: staggered automatic Python GC
# cost 3.83% of elapsed step time (0.675 s of a 17.591 s mean update).
MARIN = ("github.com/marin-community/marin/pull/9224 (2026-09; production diagnosis of a GB200 training run: "
         "staggered automatic Python garbage collection cost 3.83% of elapsed step time, 0.675 s of a 17.591 s "
         "mean update, removed by collecting on every rank at the same steps)")
AUTO_GC_PERCENT = 3.83
# python_call_factor is fitted with the simulator itself (the rule is written
# in the row): the generator writes the fitted figure, it does not re-run the
# fit. Refit when the host model changes and update PYTHON_CALL_FACTOR here
# (the grid and how to rerun it: calibration/notes/megatron_ci_host_ratio.md).
PYTHON_CALL_FACTOR = "5.0"
PYTHON_CALL_FACTOR_RULE = (
    "least squares on the log TFLOPS/GPU error of the 163 high- and medium-confidence rows of calibration/runs/"
    "runs.csv (moesim validate) over factors 4.5-5.75, with every other table as shipped and the Grace per-call "
    "costs at the Megatron CI ratio (1.45x the Xeon's), the per-step loops' metadata calls (.view, slices, .data, "
    ".detach()) priced as views (autograd_node_us): sums of squared log errors 4.21, 3.85, 3.64, 3.56, 3.62, "
    "3.83 at 4.5, 4.75, 5.0, 5.25, 5.5, 5.75; 5.25, the optimum, replays the Megatron-Core MoE paper's partial "
    "CUDA graphs on DeepSeek-V3 GB200 at a 19% gain against its 10% (tests/sim/moe_paper_test.cc asserts "
    "10 +/- 5%), so the factor is the best of the grid that keeps that check: 5.0 (gain 15%); a 4-fold "
    "cross-validation over 4.5-5.0 picks 5.0 in every fold, held-out MAPE 11.6% "
    "(calibration/notes/megatron_ci_host_ratio.md). "
    "No measurement isolates the level: the per-call figures are isolated microbenchmarks (TE issue 2053: one "
    "Linear forward in a tight loop, warm caches, no module hooks) and the in-step calls also run Megatron's "
    "Python around them (module __call__ and hooks, config branches, NVTX ranges, tensor bookkeeping). The two "
    "measured CUDA-graph one-knob pairs (calibration/runs/ab_pairs.csv ab-cg-q30-h100-tp2pp2ep4: x0.777, "
    "ab-cg-gptoss20b-h100: x0.800) barely constrain it: ratio errors -16% and -23% at 4.75-5.25. "
    "Multiplies torch_op_us, te_module_us and autograd_node_us; not kernel_launch_us or the graph costs "
    "(driver calls). One figure for every host")

# How each GPU's host relates to the measured ones (x86: the H100 DGX Xeon
# 8480C figures; Grace: the GB200 figures): (torch_op/te_module note,
# autograd_node note).
HOST_NOTE = {
    "h100": ("", "; assumed for the H100 DGX host (Intel Xeon Platinum 8480C)"),
    "h200": ("; HGX H200 hosts are the same Xeon generation (assumed)", "; assumed for the H200 x86 host"),
    "b200": ("; DGX B200 host Intel Xeon Platinum 8570 assumed equal to the 8480C",
             "; assumed for the DGX B200 host (Intel Xeon Platinum 8570)"),
    "b300": ("; DGX B300 Intel Xeon host assumed equal to the 8480C", "; assumed for the DGX B300 Intel Xeon host"),
    "gb200": ("", ""),
    "gb300": ("; GB300 NVL72 has the same Grace CPU as GB200", ""),
}


def host_tables(C, T, spec):
    x86_torch = TE2053_US["H100 DGX"][0]
    grace_torch, grace_te = TE2053_US["GB200"]
    gh_torch, gh_te = TE2053_US["GH200"]
    te_ratio = (grace_te / grace_torch + gh_te / gh_torch) / 2  # TE module / torch op, two hosts
    # Grace / Xeon for the Python host path of a training step: Megatron's CI
    # steps, not TE issue 2053's tight loop of one Linear forward (2.75x).
    grace_x = MEGATRON_CI_RATIO
    bench_x = grace_torch / x86_torch
    for g in GPUS:
        note, ag_note = HOST_NOTE[g]
        grace = spec[g]["cpu"] == "NVIDIA Grace"
        # Per-call host costs, by host CPU (first in the file, in this order).
        if grace:
            T[g]["host"].add(
                order="head", quantity="torch_op_us", value="%.2f" % (x86_torch * grace_x), unit="us",
                source="derived:the H100 DGX Xeon 8480C figure (%s; torch.nn.Linear %s us) x %.2f, the Grace / Xeon "
                       "ratio of a whole Megatron training step: %s. TE issue 2053's own GB200 figure (%s us, "
                       "%.2fx the Xeon's) times one Linear forward in a tight loop, which the in-step ratio does "
                       "not bear out: one eager PyTorch op from Python to its launch%s" % (
                           TE2053, num(x86_torch, 2), grace_x, MEGATRON_CI, num(grace_torch, 2), bench_x, note))
            T[g]["host"].add(
                order="head", quantity="te_module_us", value="%.1f" % (te_ratio * x86_torch * grace_x), unit="us",
                source="derived:the x86 te_module_us (%.2f x the H100 DGX torch.nn.Linear %s us: TE Linear / "
                       "torch.nn.Linear CPU time, %s), averaged over GB200 %s/%s and GH200 %s/%s) x %.2f, the Grace / "
                       "Xeon ratio of a Megatron training step (see torch_op_us): one Transformer Engine module "
                       "call%s" % (te_ratio, num(x86_torch, 2), TE2053, num(grace_te, 2), num(grace_torch, 2),
                                   num(gh_te, 2), num(gh_torch, 2), grace_x, note))
            T[g]["host"].add(
                order="head", quantity="autograd_node_us", value="%.2f" % (CPP_OP_US * grace_x), unit="us",
                source="derived:%s: one C++ autograd engine node (a view backward, AccumulateGrad, an engine "
                       "gradient-accumulation add) runs its ATen work without Python, taken as one C++-API op, "
                       "%.1f us on an x86 host, x %.2f for Grace: the Grace / Xeon ratio of a Megatron training "
                       "step (see torch_op_us)%s" % (PT41383, CPP_OP_US, grace_x, ag_note))
        else:
            T[g]["host"].add(
                order="head", quantity="torch_op_us", value=num(x86_torch, 2), unit="us",
                source="published:%s; H100 DGX, Intel Xeon Platinum 8480C: torch.nn.Linear %s us): one eager "
                       "PyTorch op from Python to its launch%s" % (TE2053, num(x86_torch, 2), note))
            T[g]["host"].add(
                order="head", quantity="te_module_us", value="%.1f" % (te_ratio * x86_torch), unit="us",
                source="derived:%s): TE Linear / torch.nn.Linear CPU time is %s/%s = %.2f on GB200 and %s/%s = %.2f "
                       "on GH200; %.2f x the H100 DGX torch.nn.Linear %s us = %.1f us: one Transformer Engine module "
                       "call (Python-side quantizers, workspaces and FP8 metadata around its launches)%s" % (
                           TE2053, num(grace_te, 2), num(grace_torch, 2), grace_te / grace_torch, num(gh_te, 2),
                           num(gh_torch, 2), gh_te / gh_torch, te_ratio, num(x86_torch, 2), te_ratio * x86_torch,
                           note))
            T[g]["host"].add(
                order="head", quantity="autograd_node_us", value="%.1f" % CPP_OP_US, unit="us",
                source="derived:%s: one C++ autograd engine node (a view backward, AccumulateGrad, an engine "
                       "gradient-accumulation add) runs its ATen work without Python, taken as one C++-API op, "
                       "%.1f us on an x86 host%s" % (PT41383, CPP_OP_US, ag_note))
        if g == "gb200":
            T[g]["host"].add(quantity="kernel_launch_us", value="3.3", unit="us",
                             source="published:" + TRITONBENCH + "; 19-argument figure used")
        else:
            T[g]["host"].add(quantity="kernel_launch_us", value="3.3", unit="us",
                             source="derived:GB200 Grace-host figure 3.3 us, %s; used for the %s host (%s) as no "
                                    "datacenter figure for it was found" % (
                                        TRITONBENCH, g.upper(), spec[g]["cpu"]))
        T[g]["host"].add(quantity="graph_launch_us", value="15", unit="us",
                         source="derived:%s; fixed cost of one graph launch; consumer GPU and host, no datacenter "
                                "figure found: an upper estimate" % OCANNL)
        T[g]["host"].add(quantity="graph_node_us", value="0.58", unit="us",
                         source="derived:%s; per-node slope; consumer GPU, no datacenter figure found" % OCANNL)
        # Step-level factors (last in the file, in this order).
        T[g]["host"].add(
            order="tail", quantity="auto_gc_stall_fraction", value=num(AUTO_GC_PERCENT / 100, 4), unit="fraction",
            source="derived:%s; a JAX trainer, assumed to carry to Megatron's Python host path without --manual-gc; "
                   "no Megatron figure found" % MARIN)
        T[g]["host"].add(order="tail", quantity="python_call_factor", value=PYTHON_CALL_FACTOR, unit="factor",
                         source="derived:" + PYTHON_CALL_FACTOR_RULE)

    h2d = d2h = None
    for r in C:
        if r["collective"].startswith("host_to_device") and "H200" in r["system"]:
            h2d, d2h = float(r["bw_GBps"]), 55.06
            for d, v, extra in (("h2d", r["bw_GBps"], ""), ("d2h", "55.06", "; D2H value from the row's notes")):
                T["h200"]["host_copy"].add(
                    link="pcie-gen5-x16", direction=d, bytes=GIB8, gb_s=v,
                    source=cite(r, "%s | %s | %s %s GB/s | %s%s; size not given, large-transfer peak "
                                   "(measured_comm.csv line %d)" % (r["system"], r["collective"], r["bw_type"],
                                                                   r["bw_GBps"], r["notes"], extra, r["_line"])))
            h2d_r = r
        if r["collective"].startswith("host_to_device") and "GB300" in r["system"]:
            c2c = {"h2d": float(r["bw_GBps"]), "d2h": 377.15, "bidir": 171.76}
            for d, v, extra in (("h2d", r["bw_GBps"], ""), ("d2h", "377.15", "; D2H value from the row's notes"),
                                ("bidir", "171.76", "; both directions at once: H2D 175.38 / D2H 171.76 per "
                                                    "direction (row's notes), the lower one recorded")):
                T["gb300"]["host_copy"].add(
                    link="nvlink-c2c", direction=d, bytes=GIB8, gb_s=v,
                    source=cite(r, "%s | %s | %s GB/s | %s%s; size not given, large-transfer peak; DGX Station "
                                   "(half a GB300 module), LPDDR5X-limited when bidirectional (measured_comm.csv "
                                   "line %d)" % (r["system"], r["collective"], r["bw_GBps"], r["notes"], extra,
                                                r["_line"])))
    # PCIe hosts: spec x the H200 measured efficiency.
    for g in ("h100", "b200", "b300"):
        link_gb = spec[g]["host_gb_s"]
        for d, v in (("h2d", h2d), ("d2h", d2h)):
            e = v / 63.0
            T[g]["host_copy"].add(
                link="pcie-gen5-x16", direction=d, bytes=GIB8, gb_s=round(link_gb * e, 1),
                source="derived:%s GB/s (PCIe Gen5 x16 per direction, %s host_link) x %.3f (H200 measured %s %s GB/s "
                       "/ 63 GB/s, nvbandwidth, ml-engineering network/README.md PCIe section)" % (
                           num(link_gb), spec[g]["file"], e, d.upper(), num(v, 2)))
    # GB200: C2C spec x the DGX Station GB300 efficiencies.
    link_gb = spec["gb200"]["host_gb_s"]
    for d in ("h2d", "d2h", "bidir"):
        e = c2c[d] / 450.0
        T["gb200"]["host_copy"].add(
            link="nvlink-c2c", direction=d, bytes=GIB8, gb_s=round(link_gb * e, 1),
            source="derived:%s GB/s (NVLink-C2C per direction, %s host_link) x %.3f (DGX Station GB300 measured %s "
                   "%s GB/s / 450 GB/s, nvbandwidth, ml-engineering network/README.md NVLink-C2C section; "
                   "LPDDR5X-bound, same Grace memory)" % (num(link_gb), spec["gb200"]["file"], e, d.upper(),
                                                        num(c2c[d], 2)))


# Megatron-Bridge docs/training/cpu-offloading.md (reference seeds_notes.md s6):
# Qwen3-30B-A3B TP2 PP2 EP4 on 16 x H100, 100% optimizer offload: step
# 996 ms -> 3877 ms with D2H/H2D overlap, 15.3 GB saved per GPU.
MB_ADAM = dict(base_ms=996.0, off_ms=3877.0, saved_gb=15.3, bytes_per_param=8.0)
CPU_BW = {  # per host, GB/s, and cores per host
    "Intel Xeon Platinum 8480C": (2 * 8 * 4.8 * 8, 112,
                                  "2 sockets x 8 channels DDR5-4800 x 8 B = 614.4 GB/s (Sapphire Rapids: 8 DDR5 "
                                  "channels at 4800 MT/s, 307.2 GB/s per socket, wwt.com memory population guide / "
                                  "infowire.cc); 2 x 56 cores"),
    "x86 host (OEM-specific)": (2 * 8 * 4.8 * 8, 112,
                                "taken as the DGX H100 host, 2 x Xeon 8480C: 614.4 GB/s (HGX H200 host CPU is the "
                                "OEM's); 2 x 56 cores"),
    "Intel Xeon Platinum 8570": (2 * 8 * 5.6 * 8, 112,
                                 "2 sockets x 8 channels DDR5-5600 x 8 B = 716.8 GB/s (Emerald Rapids: DDR5-5600 "
                                 "1DPC, 8 channels, wccftech Emerald Rapids spec); 2 x 56 cores"),
    "Intel Xeon 6776P": (2 * 8 * 6.4 * 8, 128,
                         "2 sockets x 8 channels DDR5-6400 x 8 B = 819.2 GB/s (Xeon 6 P-core: DDR5-6400 1DPC; not "
                         "verified on Intel ARK); 2 x 64 cores"),
    "NVIDIA Grace": (2 * 410.0, 144,
                     "2 Grace per 4-GPU tray x 410 GB/s (STREAM TRIAD floor for a 120 GB Grace Hopper/Blackwell "
                     "superchip, docs.nvidia.com/grace-perf-tuning-guide/health-checks.html; larger LPDDR5X "
                     "capacities are faster, so conservative); 2 x 72 cores"),
}


def cpu_adam_tables(T, spec):
    params = MB_ADAM["saved_gb"] * 1e9 / MB_ADAM["bytes_per_param"]
    secs = (MB_ADAM["off_ms"] - MB_ADAM["base_ms"]) / 1000.0
    rate_h100 = params / secs
    bw_h100 = CPU_BW["Intel Xeon Platinum 8480C"][0] / 8  # per GPU share
    eff = rate_h100 * 28 / (bw_h100 * 1e9)
    mb = ("Megatron-Bridge docs/training/cpu-offloading.md (Qwen3-30B-A3B TP2 PP2 EP4, 16 x H100, 100%% optimizer "
          "offload with D2H/H2D overlap: step %d -> %d ms, %.1f GB of Adam m+v (8 B/param) moved per GPU = %.3g "
          "params per GPU; the doc says CPU Adam, not the copies, dominates)" % (
              MB_ADAM["base_ms"], MB_ADAM["off_ms"], MB_ADAM["saved_gb"], params))
    for g in GPUS:
        cpu = spec[g]["cpu"]
        host_bw, cores, bw_src = CPU_BW[cpu]
        share = host_bw / spec[g]["gpus_per_node"]
        threads = cores // spec[g]["gpus_per_node"]
        if g == "h100":
            T[g]["cpu_adam"].add(
                cpu=cpu, threads=threads, params_per_s=int(round(rate_h100)),
                source="derived:%s: %.3g params / %.3f s = %.3g params/s per GPU share; host CPU of that run not "
                       "stated, DGX H100's %s assumed; = %.1f%% of the per-GPU DRAM share %.1f GB/s / 28 B per "
                       "param (Adam reads param, grad, m, v fp32, writes param, m, v); threads = %d cores / %d GPUs"
                       % (mb, params, secs, rate_h100, cpu, 100 * eff, bw_h100, cores, spec[g]["gpus_per_node"]))
        else:
            rate = share * 1e9 * eff / 28
            T[g]["cpu_adam"].add(
                cpu=cpu, threads=threads, params_per_s=int(round(rate)),
                source="derived:per-GPU host DRAM share %.1f GB/s (%s; / %d GPUs per node) x %.3f (CPU-Adam "
                       "efficiency measured on H100: %.3g params/s x 28 B / %.1f GB/s, from %s) / 28 B per param "
                       "(Adam reads param, grad, m, v fp32, writes param, m, v); threads = %d cores / %d GPUs" % (
                           share, bw_src, spec[g]["gpus_per_node"], eff, rate_h100, bw_h100, mb, cores,
                           spec[g]["gpus_per_node"]))


# --------------------------------------------------------------------------
# sustained load: what a short kernel benchmark does not see


# ademeure/QuickRunCUDA@0bb48c3 b300_clean/CUBLAS_REAL_VALIDATION.md, "SHAPE
# SCAN summary" and "FP8 cuBLAS shape scan": cuBLAS GEMMs of random data on
# an NVIDIA B300 SXM6 AC at its default 1100 W limit, 1,000 per run back to
# back in CUDA graphs (the 8192^3 run draws 1090 W, the SM clock falling
# from 2032 to ~1250 MHz). (m, n, k, dtype): sustained TFLOPS, and the
# b300 table's rate at that shape (moesim's cost model, no sustained share;
# tests/calibration/tables_test.cc recomputes it and the median).
B300_SUSTAINED = [
    ((4096, 4096, 4096, "bf16"), 1402, 1553), ((8192, 8192, 8192, "bf16"), 1486, 1632),
    ((16384, 16384, 16384, "bf16"), 1568, 1535), ((16384, 8192, 8192, "bf16"), 1481, 1488),
    ((8192, 16384, 8192, "bf16"), 1488, 1541), ((1024, 8192, 8192, "bf16"), 1365, 1440),
    ((8192, 28672, 8192, "bf16"), 1490, 1526), ((8192, 10240, 8192, "bf16"), 1476, 1606),
    ((4096, 14336, 4096, "bf16"), 1449, 1532), ((8192, 8192, 8192, "fp8"), 2625, 3094),
    ((16384, 16384, 16384, "fp8"), 2637, 2934), ((8192, 28672, 8192, "fp8"), 2630, 2919),
]


def sustained_tables(T):
    """compute_rate: the share of its benchmarked rate a compute-bound
    kernel keeps in a training step, where the GPU runs without the idle
    gaps of a benchmark loop and its power limit pulls the SM clock down.
    Most of the tables' GEMM and attention rows are short benchmarks
    (cuDNN's SDPA benchmark times 10 iterations, MAMF 100 after 50
    warm-up); Transformer Engine's GEMM profile times 100 after 10 warm-up,
    about 0.1 s of back-to-back GEMMs at its B300 shapes, long enough to
    reach the throttled clock. B200 has a published sustained-load
    figure; GB200, the same GPU (SAME_DIE), takes it by the rule the
    attention tables use between the two. B300 has a published
    sustained-load GEMM scan, set against this table's own rate at each
    of its shapes (B300_SUSTAINED). GB300 (1400 W) does not take B300's:
    the scan's GEMMs run B300 at its 1100 W cap, well below GB300's
    limit. The Hoppers have no row (their benchmark rates stand)."""
    b200 = "0.853"
    T["b200"]["sustained"].add(
        quantity="compute_rate", value=b200, unit="fraction",
        source="published:github.com/flashinfer-ai/flashinfer/pull/2899 (2026-03-26, B200, BF16 FlashAttention-4 "
               "b=4 s=8192 h=16 d=128, 100 back-to-back event-timed iterations: 1450 TFLOPS at iterations 10-19, "
               "1237 at 70-79 once fully throttled, SM clock 1965 -> ~1580 MHz at ~1000 W, throttling from about "
               "5 ms of sustained compute): 1237 / 1450 = 0.853 of the short-benchmark rate for compute-bound "
               "kernels; HBM-bound kernels keep theirs (the cap lowers the SM clock)")
    T["gb200"]["sustained"].add(
        quantity="compute_rate", value=b200, unit="fraction",
        source="derived:the B200 row (%s, published: flashinfer-ai/flashinfer PR 2899, fully throttled "
               "FlashAttention-4 over its short-benchmark rate) by the same-die rule of the attention tables: "
               "B200 and GB200 are the same Blackwell GPU, B200 at HGX power and clocks, GB200 at NVL72 ones; "
               "no GB200 sustained-load figure was found" % b200)
    ratios = sorted(sus / table for _, sus, table in B300_SUSTAINED)
    mid = len(ratios) // 2
    b300 = (ratios[mid - 1] + ratios[mid]) / 2 if len(ratios) % 2 == 0 else ratios[mid]
    scan = ", ".join("%s %dx%dx%d %d/%d" % (d.upper(), m, n, k, sus, table)
                     for (m, n, k, d), sus, table in B300_SUSTAINED)
    T["b300"]["sustained"].add(
        quantity="compute_rate", value="%.3f" % b300, unit="fraction",
        source="derived:ademeure/QuickRunCUDA@0bb48c3 b300_clean/CUBLAS_REAL_VALIDATION.md (NVIDIA B300 SXM6 AC at "
               "its default 1100 W limit: 1,000 cuBLAS GEMMs of random data back to back in CUDA graphs, at the "
               "power cap, SM clock ~1250 MHz of 2032) shape scan, its sustained TFLOPS over this table's own rate "
               "at the same shape (moesim's GEMM surface): %s; the median of the %d ratios, %.3f (from %.2f to "
               "%.2f: lowest where the rows are short benchmarks, FP8 and BF16 4096^3 and 8192^3; near 1 at "
               "the layer shapes the Transformer Engine rows cover)" % (scan, len(ratios), b300, ratios[0],
                                                                         ratios[-1]))


# --------------------------------------------------------------------------
# validation: Megatron MoE layer benchmark


def moe_layer(K):
    rows = []
    for r in K:
        if not r["kernel"].startswith("megatron_MoELayer"):
            continue
        direction = "fwd" if "_fwd" in r["kernel"] else "bwd"
        disp = {"a2a": "alltoall", "deepep": "deepep", "hybridep": "hybridep"}[
            re.search(r"dispatcher=(\w+)", r["kernel"]).group(1)]
        prec = "fp8-block" if "FP8" in r["dtype"] else "bf16"
        if r["shape_params"].startswith("DeepSeek"):
            # test_cases.py declares a 2048-wide shared expert, but the
            # benchmark's _build_transformer_config (moe_perf/__main__.py at
            # NVIDIA/Megatron-LM@32f2c9c) never passes
            # moe_shared_expert_intermediate_size: the measured layer has none.
            model, hid, ffn, e, k, sh = "deepseek_proxy", 7168, 2048, 32, 8, 0
        else:
            model, hid, ffn, e, k, sh = "mixtral_proxy", 4096, 14336, 8, 2, 0
        rows.append([model, disp, prec, direction, 4096, hid, ffn, e, k, sh, 8, r["measured_tflops_or_gbps"],
                     ("published:%s; %s; %s; %s; %s; seq 4096 x mbs 1 = 4096 tokens per GPU; %s "
                      "(measured_kernels.csv line %d)" % (r["source"], r["gpu"], r["kernel"], r["dtype"],
                                                          r["shape_params"], r["notes"], r["_line"]) +
                      ("; shared expert not built: moe_perf/__main__.py _build_transformer_config omits "
                       "moe_shared_expert_intermediate_size (NVIDIA/Megatron-LM@32f2c9c)"
                       if model == "deepseek_proxy" else "")).replace('"', "'")])
    rows.sort(key=lambda x: (x[0], x[2], x[1], x[3]))
    buf = io.StringIO()
    buf.write("model,dispatcher,precision,direction,tokens_per_gpu,hidden,moe_ffn_hidden,experts,topk,"
              "shared_expert_hidden,ep,ms,source\n")
    w = csv.writer(buf, lineterminator="\n")
    for x in rows:
        w.writerow(x)
    return buf.getvalue(), len(rows)


# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# measured rows (make calibrate-bench)


def merge_measured(T, root, log):
    """Rows of `make calibrate-bench` (root/<gpu>/<table>.csv, the table
    schema, source `measured:<gpu>:<date>`): each replaces the published or
    derived row at its grid point, or adds a point (logged). Rows measured
    on one GPU do not re-derive the rows of another (H200 copies of H100
    rows stay until H200 is measured). Returns the number of rows merged."""
    merged = 0
    if not os.path.isdir(root):
        return merged
    for g in GPUS:
        for t in HEADERS:
            path = os.path.join(root, g, t + ".csv")
            if not os.path.exists(path):
                continue
            with open(path, newline="") as f:
                reader = csv.DictReader(f)
                if reader.fieldnames != HEADERS[t].split(","):
                    raise SystemExit("%s:1: header must be %s" % (path, HEADERS[t]))
                for line, row in enumerate(reader, start=2):
                    if not row["source"].startswith("measured:"):
                        raise SystemExit("%s:%d: source: a measured row's source starts with 'measured:'" % (
                            path, line))
                    T[g][t].add(replace=True, **row)
                    merged += 1
    return merged


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", default=os.path.join(REPO, "calibration", "reference"))
    ap.add_argument("--check", action="store_true", help="compare with the files on disk, write nothing")
    ap.add_argument("--measured", default=os.path.join(REPO, "calibration", "measured"),
                    help="make calibrate-bench output, <gpu>/<table>.csv; its rows replace the table rows at the "
                         "same grid point (default calibration/measured, absent in a fresh clone)")
    ap.add_argument("--out", default=HERE, help="folder of the <gpu>/<table>.csv tables written or checked")
    args = ap.parse_args()
    K = read_ref(args.ref, "measured_kernels.csv")
    C = read_ref(args.ref, "measured_comm.csv")
    spec = textproto_specs()
    log, left_out, dups = [], [], []
    T = {g: {t: Table(t, g, log) for t in HEADERS} for g in GPUS}

    mamf, ratio = gemm_tables(K, T, spec)
    grouped_tables(K, T, mamf, left_out)
    attention_tables(K, T, spec, left_out, dups)
    memory_tables(T, spec)
    collective_tables(C, T, left_out, dups)
    dispatch_tables(C, T, left_out, dups)
    host_tables(C, T, spec)
    cpu_adam_tables(T, spec)
    sustained_tables(T)
    measured = merge_measured(T, args.measured, log)

    # shapeless / other-GPU kernel rows, for the record
    for r in K:
        if "best shape" in r["shape_params"] or r["shape_params"].startswith("best case") or \
                "(shape not in abstract)" in r["shape_params"]:
            left_out.append("measured_kernels.csv line %d: %s %s %s %s (shape not given)" % (
                r["_line"], r["gpu"], r["kernel"], r["dtype"], r["measured_tflops_or_gbps"]))
        elif r["gpu"] in ("A100 SXM", "GH200 SXM (900W, 141GiB)"):
            left_out.append("measured_kernels.csv line %d: %s %s (not one of our GPUs)" % (
                r["_line"], r["gpu"], r["kernel"]))
        elif r["gpu"].startswith("SM100-class"):
            left_out.append("measured_kernels.csv line %d: DeepGEMM Mega-MoE fused kernel (GPU not named, fused "
                            "dispatch+GEMM+combine: no table)" % r["_line"])
        elif r["kernel"].startswith("FlashMLA") and not (r["kernel"] == "FlashMLA_sparse_decode" and
                                                         r["gpu"] == "H800 SXM5"):
            left_out.append("measured_kernels.csv line %d: %s %s %s %s %s (shape not given)" % (
                r["_line"], r["gpu"], r["kernel"], r["shape_params"], r["measured_tflops_or_gbps"], r["unit"]))

    out = {}
    for g in GPUS:
        for t in HEADERS:
            out[os.path.join(args.out, g, t + ".csv")] = T[g][t].text(SORT[t])
    val, nval = moe_layer(K)
    out[os.path.join(REPO, "calibration", "validation", "moe_layer.csv") if args.out == HERE
        else os.path.join(args.out, "validation", "moe_layer.csv")] = val

    changed = []
    for path, text in out.items():
        old = open(path, newline="").read() if os.path.exists(path) else None
        if old != text:
            changed.append(os.path.relpath(path, REPO))
            if not args.check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
    # summary
    print("%-6s %-13s %9s %8s %8s" % ("gpu", "table", "published", "derived", "measured"))
    for g in GPUS:
        for t in HEADERS:
            rows = T[g][t].rows.values()
            p = sum(1 for r in rows if r["source"].startswith("published:"))
            d = sum(1 for r in rows if r["source"].startswith("derived:"))
            m = sum(1 for r in rows if r["source"].startswith("measured:"))
            print("%-6s %-13s %9d %8d %8d" % (g, t, p, d, m))
    print("measured rows merged from %s: %d" % (args.measured, measured))
    print("validation/moe_layer.csv: %d rows" % nval)
    print("\nLEFT OUT (%d):" % len(left_out))
    for x in left_out:
        print("  " + x)
    print("\nDUPLICATES RESOLVED (%d):" % len(dups))
    for x in dups:
        print("  " + x)
    if args.check:
        print("\n%d file(s) differ from the generated text%s" % (
            len(changed), "".join("\n  " + p for p in changed)))
        return 1 if changed else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
