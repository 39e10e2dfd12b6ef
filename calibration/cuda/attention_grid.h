// The attention grid measured by attention_bench and checked by
// sdpa_graph_check (bf16, s_q = s_kv, no window):
//   seq 512 .. 16384 with batch = 16384 / seq (16k tokens), for heads
//     MHA h in {16, 32, 64} x d in {64, 128}; GQA h_q in {16, 32, 64},
//     h_kv = h_q / 8, d = 128; MLA h = 128, d_qk = 192, d_v = 128;
//   seq 32768, 65536, 131072 with batch 1 for MHA 32 x 128 and GQA
//     64 / 8 x 128, plus MLA at 32768 (each run takes up to seconds);
//   causal 0 and 1, non-causal first (the two share operands).
#ifndef MOESIM_CALIBRATION_CUDA_ATTENTION_GRID_H_
#define MOESIM_CALIBRATION_CUDA_ATTENTION_GRID_H_

#include <cstdio>
#include <string>
#include <vector>

#include "calibration/cuda/cudnn_sdpa.h"

namespace moesim::cuda_bench {

struct AttentionHeads {
  int64_t q, kv, dim_qk, dim_v;
};

inline const std::vector<AttentionHeads>& AttentionHeadConfigs() {
  static const std::vector<AttentionHeads> heads = {
      {16, 16, 64, 64},    {16, 16, 128, 128}, {32, 32, 64, 64},
      {32, 32, 128, 128},  {64, 64, 64, 64},   {64, 64, 128, 128},
      {16, 2, 128, 128},   {32, 4, 128, 128},  {64, 8, 128, 128},
      {128, 128, 192, 128}};
  return heads;
}

// The grid above; `quick`: three head configurations at seq 4096.
inline std::vector<SdpaShape> AttentionGrid(bool quick, int64_t max_seq) {
  const auto& all = AttentionHeadConfigs();
  constexpr int64_t kTokens = 16384;
  std::vector<SdpaShape> grid;
  auto add = [&](int64_t batch, int64_t seq, const AttentionHeads& h) {
    if (seq > max_seq) return;
    for (bool causal : {false, true})
      grid.push_back({batch, h.q, h.kv, seq, seq, h.dim_qk, h.dim_v, causal});
  };
  if (quick) {
    for (const AttentionHeads& h : {all[3], all[8], all[9]}) add(4, 4096, h);
    return grid;
  }
  // Most used first, so that a time budget cuts the least used points:
  // seq 4096, 8192, 2048, 16384, the 32k points, 1024, 512, 64k, 128k.
  auto long_context = [&](int64_t seq) {
    add(1, seq, all[3]);
    add(1, seq, all[8]);
    if (seq == 32768) add(1, seq, all[9]);
  };
  for (int64_t seq : {4096, 8192, 2048, 16384})
    for (const AttentionHeads& h : all) add(kTokens / seq, seq, h);
  long_context(32768);
  for (int64_t seq : {1024, 512})
    for (const AttentionHeads& h : all) add(kTokens / seq, seq, h);
  long_context(65536);
  long_context(131072);
  return grid;
}

// One shape per head configuration and causality (seq 4096, batch 4): the
// graph structure varies with these, not with the sequence length.
inline std::vector<SdpaShape> AttentionCheckShapes() {
  std::vector<SdpaShape> shapes;
  for (const AttentionHeads& h : AttentionHeadConfigs())
    for (bool causal : {false, true})
      shapes.push_back({4, h.q, h.kv, 4096, 4096, h.dim_qk, h.dim_v, causal});
  return shapes;
}

// FLOPs of the forward pass by the FlashAttention convention of
// tables/README.md; the backward is 2.5 times this.
inline double AttentionForwardFlops(const SdpaShape& s) {
  const double flops =
      2.0 * s.batch * s.heads_q * s.seq_q * s.seq_kv * (s.dim_qk + s.dim_v);
  return s.causal ? flops / 2 : flops;
}

inline std::string DescribeShape(const SdpaShape& s, bool backward) {
  char buf[160];
  std::snprintf(
      buf, sizeof(buf),
      "%s b=%lld s=%lld hq=%lld hkv=%lld d=%lld/%lld causal=%d",
      backward ? "bwd" : "fwd", static_cast<long long>(s.batch),
      static_cast<long long>(s.seq_q), static_cast<long long>(s.heads_q),
      static_cast<long long>(s.heads_kv), static_cast<long long>(s.dim_qk),
      static_cast<long long>(s.dim_v), s.causal ? 1 : 0);
  return buf;
}

}  // namespace moesim::cuda_bench

#endif  // MOESIM_CALIBRATION_CUDA_ATTENTION_GRID_H_
