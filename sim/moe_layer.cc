#include "sim/moe_layer.h"

#include <cmath>
#include <cstdio>

namespace moesim::sim {

namespace {

using calibration::Dtype;
using calibration::Estimate;

constexpr double kBf16Bytes = 2;

// C(n, k) for real n >= k >= 0, via lgamma.
double Choose(double n, double k) {
  if (k < 0 || k > n) return 0;
  return std::exp(std::lgamma(n + 1) - std::lgamma(k + 1) -
                  std::lgamma(n - k + 1));
}

std::string Describe(const Estimate& e) {
  std::string s = e.method;
  if (!e.sources.empty()) s += ": " + e.sources.front();
  return s;
}

class OpList {
 public:
  explicit OpList(MoeLayerTime& out) : out_(out) {}
  void Add(std::string name, bool backward, double seconds,
           std::string detail) {
    out_.ops.push_back({std::move(name), backward, seconds, std::move(detail)});
    (backward ? out_.backward_s : out_.forward_s) += seconds;
  }
  void Add(std::string name, bool backward, const Estimate& e) {
    Add(std::move(name), backward, e.seconds, Describe(e));
  }

 private:
  MoeLayerTime& out_;
};

}  // namespace

double DistinctRanksPerToken(const MoeLayerSpec& s) {
  const double p = s.ep, e = s.experts, k = s.topk, local = e / p;
  if (s.router_groups > 0 && s.router_group_topk > 0) {
    const double g = s.router_groups, tg = s.router_group_topk;
    if (s.router_groups >= s.ep && s.router_groups % s.ep == 0) {
      // Whole groups per rank: a rank is reached when one of its g/p groups
      // is among the token's tg groups (each chosen group gets an expert).
      const double per_rank = g / p;
      return p * (1 - Choose(g - per_rank, tg) / Choose(g, tg));
    }
    // A group spans p/g ranks: the token's k experts fall among tg groups'
    // experts, on tg * p/g ranks.
    const double ranks = tg * p / g, pool = tg * e / g;
    return ranks * (1 - Choose(pool - local, k) / Choose(pool, k));
  }
  return p * (1 - Choose(e - local, k) / Choose(e, k));
}

util::Result<MoeLayerTime> EstimateMoeLayer(
    const MoeLayerSpec& s, const calibration::CostModel& costs,
    const topology::NetworkParams& network,
    const topology::GroupShape& ep_group) {
  if (s.ep <= 0 || s.experts % s.ep != 0) {
    return util::Fail("moe layer: experts " + std::to_string(s.experts) +
                      " must be a multiple of ep " + std::to_string(s.ep));
  }
  if (s.dispatcher != "alltoall" && s.dispatcher != "deepep" &&
      s.dispatcher != "hybridep") {
    return util::Fail(
        "moe layer: dispatcher must be alltoall, deepep or "
        "hybridep, got '" +
        s.dispatcher + "'");
  }
  MoeLayerTime out;
  OpList ops(out);
  const int64_t t = s.tokens_per_gpu, h = s.hidden, f = s.moe_ffn_hidden;
  const int64_t local = s.experts / s.ep;
  const int64_t rows = t * s.topk;          // routed rows per GPU
  const int64_t per_expert = rows / local;  // balanced routing
  const int64_t fc1 = s.gated ? 2 * f : f;
  const bool fp8 = s.dtype != Dtype::kBf16;
  const double row_bytes = h * kBf16Bytes;
  const std::string tier = ep_group.domains > 1 ? "net" : "nvlink";

  for (bool bwd : {false, true}) {
    // Router: logits GEMM (16-bit), then score/top-k kernels.
    if (!bwd) {
      ops.Add("router gemm", bwd, costs.Gemm(t, s.experts, h, Dtype::kBf16));
    } else {
      ops.Add("router dgrad", bwd, costs.Gemm(t, h, s.experts, Dtype::kBf16));
      ops.Add("router wgrad", bwd, costs.Gemm(s.experts, h, t, Dtype::kBf16));
    }
    ops.Add("router topk", bwd,
            costs.MemoryBound("copy", 3.0 * t * s.experts * 4));

    // Dispatch and combine: the same traffic in both passes (backward sends
    // gradients the other way).
    for (const char* phase : {"dispatch", "combine"}) {
      const std::string name = std::string(phase) + (bwd ? " (bwd)" : "");
      const bool dispatch = std::string(phase) == "dispatch";
      const char* kernel = dispatch ? "permute" : "unpermute";
      if (s.dispatcher == "alltoall") {
        // Permute tokens to rows per expert (reads each token once, writes
        // each routed row), NCCL all-to-all of every routed row, sort the
        // received chunks by local expert; combine runs it backwards.
        ops.Add(name + " permute", bwd,
                costs.MemoryBound(kernel, (t + rows) * row_bytes));
        const topology::CollectiveEstimate a2a = topology::EstimateCollective(
            network, topology::Collective::kAllToAll, ep_group,
            rows * row_bytes);
        char detail[128];
        std::snprintf(detail, sizeof detail,
                      "NCCL all-to-all %.0f MB per rank, %.0f GB/s bus",
                      rows * row_bytes / 1e6, a2a.bus_gb_s);
        ops.Add(name + " all-to-all", bwd, a2a.seconds, detail);
        ops.Add(name + " sort chunks", bwd,
                costs.MemoryBound("permute", 2.0 * rows * row_bytes));
        continue;
      }
      // DeepEP / HybridEP send each token once per destination rank; the
      // library's bottleneck bandwidth is per GPU over the tier's link.
      const int sms = s.dispatcher_sms > 0       ? s.dispatcher_sms
                      : s.dispatcher == "deepep" ? 20
                                                 : 16;
      // Megatron dispatches 16-bit activations (FP8 quantization happens in
      // the expert GEMMs).
      auto rate =
          costs.Dispatch(s.dispatcher, phase, tier, s.ep, t, Dtype::kBf16, sms);
      if (!rate) {
        return util::Fail("calibration/tables/" + costs.tables().gpu +
                          "/dispatch.csv: no " + s.dispatcher + " " + phase +
                          " row for tier " + tier);
      }
      const double remote = DistinctRanksPerToken(s) * (s.ep - 1.0) / s.ep;
      const double bytes = remote * t * row_bytes;
      char detail[256];
      std::snprintf(detail, sizeof detail,
                    "%.2f remote ranks per token, %.0f MB at %.0f GB/s (%s)",
                    remote, bytes / 1e6, rate->gb_s, rate->source.c_str());
      ops.Add(name + " " + s.dispatcher, bwd, bytes / (rate->gb_s * 1e9),
              detail);
      // DeepEP hands over one row per (token, rank): Megatron's flex
      // dispatcher permutes them into rows per local expert; HybridEP
      // permutes inside its kernels.
      if (s.dispatcher == "deepep") {
        const double received = t * DistinctRanksPerToken(s);
        ops.Add(name + " permute", bwd,
                costs.MemoryBound(kernel, (received + rows) * row_bytes));
      }
    }

    // Experts: fc1, activation, fc2 as grouped GEMMs over the local experts.
    if (fp8) {
      // Blockwise FP8: quantize each GEMM input (read 16-bit, write 8-bit).
      ops.Add("fc1 input quantize", bwd,
              costs.MemoryBound("fp8_quantize", 3.0 * rows * h));
      ops.Add("fc2 input quantize", bwd,
              costs.MemoryBound("fp8_quantize", 3.0 * rows * f));
    }
    if (!bwd) {
      ops.Add("fc1 grouped gemm", bwd,
              costs.GroupedGemm(local, per_expert, fc1, h, s.dtype));
      ops.Add("activation", bwd,
              costs.MemoryBound(s.gated ? "swiglu_fwd" : "copy",
                                (fc1 + f) * rows * kBf16Bytes));
      ops.Add("fc2 grouped gemm", bwd,
              costs.GroupedGemm(local, per_expert, h, f, s.dtype));
    } else {
      ops.Add("fc2 dgrad", bwd,
              costs.GroupedGemm(local, per_expert, f, h, s.dtype));
      ops.Add("fc2 wgrad", bwd,
              costs.GroupedGemm(local, h, f, per_expert, s.dtype));
      ops.Add("activation bwd", bwd,
              costs.MemoryBound(s.gated ? "swiglu_bwd" : "copy",
                                (f + 2 * fc1) * rows * kBf16Bytes));
      ops.Add("fc1 dgrad", bwd,
              costs.GroupedGemm(local, per_expert, h, fc1, s.dtype));
      ops.Add("fc1 wgrad", bwd,
              costs.GroupedGemm(local, fc1, h, per_expert, s.dtype));
    }

    // Shared expert: a dense MLP on every local token.
    if (s.shared_expert_hidden > 0) {
      const int64_t fs = s.shared_expert_hidden, fs1 = s.gated ? 2 * fs : fs;
      if (!bwd) {
        ops.Add("shared fc1", bwd, costs.Gemm(t, fs1, h, s.dtype));
        ops.Add("shared activation", bwd,
                costs.MemoryBound(s.gated ? "swiglu_fwd" : "copy",
                                  (fs1 + fs) * t * kBf16Bytes));
        ops.Add("shared fc2", bwd, costs.Gemm(t, h, fs, s.dtype));
      } else {
        ops.Add("shared fc2 dgrad", bwd, costs.Gemm(t, fs, h, s.dtype));
        ops.Add("shared fc2 wgrad", bwd, costs.Gemm(h, fs, t, s.dtype));
        ops.Add("shared activation bwd", bwd,
                costs.MemoryBound(s.gated ? "swiglu_bwd" : "copy",
                                  (fs + 2 * fs1) * t * kBf16Bytes));
        ops.Add("shared fc1 dgrad", bwd, costs.Gemm(t, h, fs1, s.dtype));
        ops.Add("shared fc1 wgrad", bwd, costs.Gemm(fs1, h, t, s.dtype));
      }
    }
  }
  return out;
}

}  // namespace moesim::sim
