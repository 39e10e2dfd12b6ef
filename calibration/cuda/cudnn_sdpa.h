// cuDNN scaled-dot-product attention (flash attention), forward and
// backward, built directly on the cuDNN 9 backend graph API
// (cudnnBackendCreateDescriptor ...): no cudnn_frontend.
//
// Two graph forms:
//  - kComposite: the operation graph cudnn_frontend's composite SDPA nodes
//    lower to for cuDNN < 9.21 (what Transformer Engine's fused attention
//    runs): matmul Q K^T, scale, optional causal mask (GEN_INDEX row >= col,
//    BINARY_SELECT with the lowest float), softmax as max / sub / exp / sum
//    (+ log-sum-exp stats), matmul with V; backward: sum(dO * O), the
//    recomputed probabilities exp(S - stats), dV = P^T dO, dP = dO V^T,
//    dS = P (dP - sum) scale, dK = dS^T Q, dQ = dS K through an fp32
//    accumulator. GQA sums the per-query-head dK / dV over each group.
//  - kUnified: the single CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR
//    operation (cuDNN >= 9.13), a fallback for the non-causal forward pass
//    only: masks need the score-modifier subgraph of cuDNN 9.21, and the
//    backward operation (9.17) was refused by cuDNN 9.19 device-less
//    (BAD_PARAM building its graph), so it is not offered.
// The runtime-compiled engines take these graphs (cuDNN 9.19: checked
// device-less for H200 and B200 by sdpa_graph_check, every shape of the
// grid); each plan compiles its kernel with NVRTC (~0.5 s).
//
// Layout: Q, K, V, O, dO, dQ, dK, dV are bf16 BSHD (batch, seq, heads, dim)
// memory, described to cuDNN as [b, h, s, d] with strides; stats fp32
// [b, h_q, s_q, 1]. Scale 1 / sqrt(head_dim_qk). No dropout, no padding.
#ifndef MOESIM_CALIBRATION_CUDA_CUDNN_SDPA_H_
#define MOESIM_CALIBRATION_CUDA_CUDNN_SDPA_H_

#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "calibration/cuda/cudnn_graph.h"

namespace moesim::cuda_bench {

struct SdpaShape {
  int64_t batch, heads_q, heads_kv, seq_q, seq_kv, dim_qk, dim_v;
  bool causal;
};

// Device addresses of one SDPA problem's tensors.
struct SdpaBuffers {
  void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr;
  void *d_o = nullptr, *d_q = nullptr, *d_k = nullptr, *d_v = nullptr;
  float* stats = nullptr;
  float* softmax_sum = nullptr;  // backward scratch, fp32 [b, h_q, s_q]
  float* dq_accum = nullptr;     // backward scratch, fp32 [b, h_q, s_q, d_qk]
};

// Owns the device tensors of one SDPA problem, shared by its forward and
// backward plans (the backward reads the forward's O and stats).
class SdpaTensors {
 public:
  // Allocates and fills with random bf16 in [-1, 1) (stats: log(seq_kv),
  // the log-sum-exp of near-uniform scores). ok() is false when the device
  // memory is short.
  SdpaTensors(const SdpaShape& shape, cudaStream_t stream);
  ~SdpaTensors();
  SdpaTensors(const SdpaTensors&) = delete;
  SdpaTensors& operator=(const SdpaTensors&) = delete;

  bool ok() const { return ok_; }
  const SdpaBuffers& buffers() const { return buffers_; }

 private:
  SdpaBuffers buffers_;
  std::vector<void*> allocations_;
  bool ok_ = true;
};

enum class SdpaGraph { kComposite, kUnified };

// Builds the plan of the forward (or backward) pass of `shape` over
// `buffers` (which must outlive the plan). Returns null and sets `why`
// (cudnn_graph.h) when no engine accepts the graph.
//
// `handle`, or with `handle` null a device-property descriptor
// `device_prop`: device-less compilation (cudnn_graph.h; sdpa_graph_check).
// `caches` (may be null): share compiled kernels across shapes of one
// structure (direction, causality, head dims, grouped or not). cuDNN 9.19's
// SM90 backward engine refuses dynamic shapes (sdpa_graph_check shows it),
// so callers pass caches for forward plans only.
std::unique_ptr<CudnnPlan> BuildSdpaPlan(
    cudnnHandle_t handle, cudnnBackendDescriptor_t device_prop,
    const SdpaShape& shape, bool backward, SdpaGraph graph,
    const SdpaBuffers& buffers, CudnnKernelCaches* caches, std::string* why);

}  // namespace moesim::cuda_bench

#endif  // MOESIM_CALIBRATION_CUDA_CUDNN_SDPA_H_
