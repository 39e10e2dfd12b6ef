#!/usr/bin/env python3
"""attention_bench.py: the attention.csv table through PyTorch.

The fallback of attention_bench (C++, cuDNN backend graph API): when that
program builds no cuDNN plan on a machine, run_all.sh runs this instead if
PyTorch is installed. Same grid (attention_grid.h), same columns and FLOP
convention (tables/README.md), impl = cudnn: every call is forced onto
PyTorch's cuDNN SDPA backend (torch.nn.attention.sdpa_kernel), the same
cuDNN fused flash attention Transformer Engine uses, plus PyTorch's small
per-call overhead. Shapes that backend refuses (PyTorch versions differ:
grouped-query heads, d_qk != d_v) are skipped with a note on stderr.

usage: attention_bench.py --out attention.csv [--append] [--quick]
                          [--budget-s S] [--device N] [--max-seq 131072]
"""

import argparse
import datetime
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HEADER = ("impl,direction,batch,seq_q,seq_kv,heads_q,heads_kv,head_dim_qk,"
          "head_dim_v,causal,window,dtype,tflops,source")

# (heads_q, heads_kv, head_dim_qk, head_dim_v), as in attention_grid.h.
HEADS = [(16, 16, 64, 64), (16, 16, 128, 128), (32, 32, 64, 64),
         (32, 32, 128, 128), (64, 64, 64, 64), (64, 64, 128, 128),
         (16, 2, 128, 128), (32, 4, 128, 128), (64, 8, 128, 128),
         (128, 128, 192, 128)]


def grid(quick, max_seq):
    """(batch, seq, heads) in attention_grid.h's order."""
    if quick:
        return [(4, 4096, HEADS[i]) for i in (3, 8, 9)]
    def short(seqs):
        return [(16384 // s, s, h) for s in seqs for h in HEADS]

    def long_context(s):
        return [(1, s, HEADS[3]), (1, s, HEADS[8])] + (
            [(1, s, HEADS[9])] if s == 32768 else [])

    points = (short((4096, 8192, 2048, 16384)) + long_context(32768) +
              short((1024, 512)) + long_context(65536) +
              long_context(131072))
    return [p for p in points if p[1] <= max_seq]


def time_median(fn, min_samples=20, max_s=0.05):
    """Median seconds of fn() on the current stream (CUDA events)."""
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(True), torch.cuda.Event(True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    estimate = max(start.elapsed_time(stop) * 1e-3, 1e-7)
    for _ in range(min(10, max(1, int(0.05 / estimate)))):
        fn()
    samples, total = [], 0.0
    while len(samples) < min_samples and not (total >= max_s and
                                              len(samples) >= 2):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        samples.append(start.elapsed_time(stop) * 1e-3)
        total += samples[-1]
    return statistics.median(samples)


def fmt(value):
    """4 significant digits, no exponent (as bench_common.h)."""
    digits = max(0, min(9, 3 - int(f"{value:e}".split("e")[1])))
    return f"{value:.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--append", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--budget-s", type=float, default=0)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--max-seq", type=int, default=131072)
    args = parser.parse_args()

    torch.cuda.set_device(args.device)
    name = torch.cuda.get_device_name(args.device)
    slug = re.sub(r"[^a-z0-9._-]", "-", name.lower())
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    source = f"measured:{slug}:{today}"
    print(f"# env: tool=attention_bench.py gpu=\"{name}\" torch={torch.__version__}"
          f" cuda={torch.version.cuda} cudnn={torch.backends.cudnn.version()}"
          f" date={today}", file=sys.stderr)

    started = time.monotonic()
    rows = 0
    with open(args.out, "a" if args.append else "w") as out:
        if not args.append:
            out.write(HEADER + "\n")
        for batch, seq, (hq, hkv, dqk, dv) in grid(args.quick, args.max_seq):
            if args.budget_s > 0 and time.monotonic() - started > args.budget_s:
                print("attention_bench.py: budget spent; stopping",
                      file=sys.stderr)
                break
            # BSHD memory seen as [b, h, s, d], as the C++ benchmark.
            def tensor(heads, dim):
                return torch.randn(batch, seq, heads, dim, device="cuda",
                                   dtype=torch.bfloat16).transpose(1, 2)
            try:
                q = tensor(hq, dqk).requires_grad_()
                k = tensor(hkv, dqk).requires_grad_()
                v = tensor(hkv, dv).requires_grad_()
            except torch.cuda.OutOfMemoryError:
                print(f"attention_bench.py: skip b={batch} s={seq}: out of "
                      "memory", file=sys.stderr)
                continue
            for causal in (False, True):
                flops = 2.0 * batch * hq * seq * seq * (dqk + dv)
                flops /= 2 if causal else 1
                kwargs = {"is_causal": causal}
                if hq != hkv:
                    kwargs["enable_gqa"] = True
                for direction in ("fwd", "bwd"):
                    label = (f"{direction} b={batch} s={seq} hq={hq} hkv={hkv}"
                             f" d={dqk}/{dv} causal={int(causal)}")
                    try:
                        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                            o = F.scaled_dot_product_attention(q, k, v,
                                                               **kwargs)
                            if direction == "fwd":
                                def step():
                                    F.scaled_dot_product_attention(q, k, v,
                                                                   **kwargs)
                            else:
                                grad = torch.randn_like(o)

                                def step():
                                    torch.autograd.grad(o, (q, k, v), grad,
                                                        retain_graph=True)
                            seconds = time_median(step)
                    except (RuntimeError, TypeError) as error:
                        print(f"attention_bench.py: skip {label}: "
                              f"{str(error).splitlines()[0]}", file=sys.stderr)
                        continue
                    factor = 2.5 if direction == "bwd" else 1.0
                    tflops = flops * factor / seconds / 1e12
                    out.write(f"cudnn,{direction},{batch},{seq},{seq},{hq},"
                              f"{hkv},{dqk},{dv},{int(causal)},0,bf16,"
                              f"{fmt(tflops)},{source}\n")
                    out.flush()
                    rows += 1
                    print(f"attention_bench.py: {label} {tflops:.1f} TFLOPS",
                          file=sys.stderr)
            del q, k, v
            torch.cuda.empty_cache()
    print(f"attention_bench.py: {rows} rows in "
          f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0 if rows else 3


if __name__ == "__main__":
    sys.exit(main())
