#include "calibration/cuda/cudnn_sdpa.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "calibration/cuda/bench_device.h"

namespace moesim::cuda_bench {
namespace {

using Dims = CudnnGraphBuilder::Dims;
using Tensor = CudnnTensor;

// Strides of a [b, h, s, d] view of BSHD memory.
Dims Bshd(int64_t heads, int64_t seq, int64_t dim) {
  return {seq * heads * dim, dim, heads * dim, 1};
}

// The same tensor seen as [b, h, d, s] (transposed last two axes).
Dims Transposed(const Dims& strides) {
  return {strides[0], strides[1], strides[3], strides[2]};
}

// Top-left causal mask on scores [b, h, s_q, s_kv]: keep row >= column,
// else the lowest float (cudnn_frontend's causal score modifier).
Tensor Causal(CudnnGraphBuilder& g, Tensor scores, const Dims& dims,
              const Dims& strides) {
  Tensor row = g.Virtual(dims, strides, CUDNN_DATA_INT32);
  Tensor col = g.Virtual(dims, strides, CUDNN_DATA_INT32);
  Tensor keep = g.Virtual(dims, strides, CUDNN_DATA_BOOLEAN);
  Tensor masked = g.Virtual(dims, strides, CUDNN_DATA_FLOAT);
  g.Pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, {}, {}, row, CUDNN_DATA_FLOAT,
              2);
  g.Pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, {}, {}, col, CUDNN_DATA_FLOAT,
              3);
  g.Pointwise(CUDNN_POINTWISE_CMP_GE, row, col, {}, keep, CUDNN_DATA_BOOLEAN);
  Tensor lowest = g.Scalar(std::numeric_limits<float>::lowest());
  g.Pointwise(CUDNN_POINTWISE_BINARY_SELECT, scores, lowest, keep, masked);
  return masked;
}

// The composite forward graph (see the header).
void ComposeForward(CudnnGraphBuilder& g, const SdpaShape& s,
                    const SdpaBuffers& t) {
  const int64_t b = s.batch, hq = s.heads_q, hk = s.heads_kv, sq = s.seq_q,
                skv = s.seq_kv, dqk = s.dim_qk, dv = s.dim_v;
  const auto bf16 = CUDNN_DATA_BFLOAT16;
  const auto f32 = CUDNN_DATA_FLOAT;
  Tensor q = g.Device({b, hq, sq, dqk}, Bshd(hq, sq, dqk), bf16, t.q);
  Tensor kt =
      g.Device({b, hk, dqk, skv}, Transposed(Bshd(hk, skv, dqk)), bf16, t.k);
  Tensor v = g.Device({b, hk, skv, dv}, Bshd(hk, skv, dv), bf16, t.v);
  Tensor o = g.Device({b, hq, sq, dv}, Bshd(hq, sq, dv), bf16, t.o);
  const Dims row_dims = {b, hq, sq, 1}, row_strides = {hq * sq, sq, 1, 1};
  Tensor stats = g.Device(row_dims, row_strides, f32, t.stats);
  Tensor scale = g.Scalar(1.0f / std::sqrt(static_cast<float>(dqk)));

  const Dims sd = {b, hq, sq, skv}, ss = {hq * sq * skv, sq * skv, skv, 1};
  Tensor scores = g.Virtual(sd, ss, f32);
  g.Matmul(q, kt, scores);
  Tensor scaled = g.Virtual(sd, ss, f32);
  g.Pointwise(CUDNN_POINTWISE_MUL, scores, scale, {}, scaled);
  Tensor last = s.causal ? Causal(g, scaled, sd, ss) : scaled;
  Tensor max = g.Virtual(row_dims, row_strides, f32);
  g.Reduction(CUDNN_REDUCE_TENSOR_MAX, last, max);
  Tensor shifted = g.Virtual(sd, ss, f32);
  g.Pointwise(CUDNN_POINTWISE_SUB, last, max, {}, shifted);
  Tensor exp = g.Virtual(sd, ss, f32);
  g.Pointwise(CUDNN_POINTWISE_EXP, shifted, {}, {}, exp);
  Tensor sum = g.Virtual(row_dims, row_strides, f32);
  g.Reduction(CUDNN_REDUCE_TENSOR_ADD, exp, sum);
  Tensor log_sum = g.Virtual(row_dims, row_strides, f32);
  g.Pointwise(CUDNN_POINTWISE_LOG, sum, {}, {}, log_sum);
  g.Pointwise(CUDNN_POINTWISE_ADD, max, log_sum, {}, stats);
  // The second matmul's A operand carries the I/O type (a backend rule).
  Tensor probs = g.Virtual(sd, ss, bf16);
  g.Pointwise(CUDNN_POINTWISE_DIV, exp, sum, {}, probs);
  g.Matmul(probs, v, o);
}

// The composite backward graph (see the header).
void ComposeBackward(CudnnGraphBuilder& g, const SdpaShape& s,
                     const SdpaBuffers& t) {
  const int64_t b = s.batch, hq = s.heads_q, hk = s.heads_kv, sq = s.seq_q,
                skv = s.seq_kv, dqk = s.dim_qk, dv = s.dim_v;
  const auto bf16 = CUDNN_DATA_BFLOAT16;
  const auto f32 = CUDNN_DATA_FLOAT;
  const Dims k_strides = Bshd(hk, skv, dqk);
  Tensor q = g.Device({b, hq, sq, dqk}, Bshd(hq, sq, dqk), bf16, t.q);
  Tensor kt = g.Device({b, hk, dqk, skv}, Transposed(k_strides), bf16, t.k);
  Tensor vt =
      g.Device({b, hk, dv, skv}, Transposed(Bshd(hk, skv, dv)), bf16, t.v);
  Tensor o = g.Device({b, hq, sq, dv}, Bshd(hq, sq, dv), bf16, t.o);
  Tensor d_o = g.Device({b, hq, sq, dv}, Bshd(hq, sq, dv), bf16, t.d_o);
  const Dims row_dims = {b, hq, sq, 1}, row_strides = {hq * sq, sq, 1, 1};
  Tensor stats = g.Device(row_dims, row_strides, f32, t.stats);
  Tensor d_q = g.Device({b, hq, sq, dqk}, Bshd(hq, sq, dqk), bf16, t.d_q);
  Tensor d_k = g.Device({b, hk, skv, dqk}, k_strides, bf16, t.d_k);
  Tensor d_v = g.Device({b, hk, skv, dv}, Bshd(hk, skv, dv), bf16, t.d_v);
  Tensor softmax_sum = g.Device(row_dims, row_strides, f32, t.softmax_sum);
  Tensor dq_accum = g.Device(
      {b, hq, sq, dqk}, {hq * sq * dqk, sq * dqk, dqk, 1}, f32, t.dq_accum);
  Tensor scale = g.Scalar(1.0f / std::sqrt(static_cast<float>(dqk)));
  Tensor one = g.Scalar(1.0f);

  // softmax_sum = sum_d(dO * O)
  Tensor d_o_o =
      g.Virtual({b, hq, sq, dv}, {hq * sq * dv, sq * dv, hq * dv, 1}, f32);
  g.Pointwise(CUDNN_POINTWISE_MUL, d_o, o, {}, d_o_o);
  Tensor row_sum = g.Virtual(row_dims, row_strides, f32);
  g.Reduction(CUDNN_REDUCE_TENSOR_ADD, d_o_o, row_sum);
  g.Pointwise(CUDNN_POINTWISE_MUL, row_sum, one, {}, softmax_sum);

  // P = exp(scale * Q K^T - stats), masked.
  const Dims sd = {b, hq, sq, skv}, ss = {hq * sq * skv, sq * skv, skv, 1};
  Tensor scores = g.Virtual(sd, ss, f32);
  g.Matmul(q, kt, scores);
  Tensor scaled = g.Virtual(sd, ss, f32);
  g.Pointwise(CUDNN_POINTWISE_MUL, scores, scale, {}, scaled);
  Tensor centered = g.Virtual(sd, ss, f32);
  g.Pointwise(CUDNN_POINTWISE_SUB, scaled, stats, {}, centered);
  Tensor last = s.causal ? Causal(g, centered, sd, ss) : centered;
  Tensor probs = g.Virtual(sd, ss, f32);
  g.Pointwise(CUDNN_POINTWISE_EXP, last, {}, {}, probs);

  // P^T and dS^T: [b, h_q, s_kv, s_q] views of the score-shaped tensors.
  const Dims td = {b, hq, skv, sq}, ts = {hq * sq * skv, sq * skv, 1, skv};
  auto grad_into = [&](Tensor lhs_t, Tensor rhs, Tensor out, int64_t dim) {
    if (hq == hk) {
      g.Matmul(lhs_t, rhs, out);
      return;
    }
    // Grouped-query: per query head, then summed over each group.
    Tensor full =
        g.Virtual({b, hq, skv, dim}, {hq * skv * dim, skv * dim, dim, 1}, bf16);
    g.Matmul(lhs_t, rhs, full);
    g.Reduction(CUDNN_REDUCE_TENSOR_ADD, full, out);
  };
  Tensor probs_t = g.Virtual(td, ts, bf16);
  g.Reshape(probs, probs_t);
  grad_into(probs_t, d_o, d_v, dv);  // dV = P^T dO

  // dS = P * (dO V^T - softmax_sum) * scale
  Tensor d_p = g.Virtual(sd, ss, f32);
  g.Matmul(d_o, vt, d_p);
  Tensor d_p_centered = g.Virtual(sd, ss, f32);
  g.Pointwise(CUDNN_POINTWISE_SUB, d_p, softmax_sum, {}, d_p_centered);
  Tensor d_s_unscaled = g.Virtual(sd, ss, f32);
  g.Pointwise(CUDNN_POINTWISE_MUL, d_p_centered, probs, {}, d_s_unscaled);
  Tensor d_s = g.Virtual(sd, ss, f32);
  g.Pointwise(CUDNN_POINTWISE_MUL, d_s_unscaled, scale, {}, d_s);

  Tensor d_s_t = g.Virtual(td, ts, bf16);
  g.Reshape(d_s, d_s_t);
  grad_into(d_s_t, q, d_k, dqk);  // dK = dS^T Q

  // dQ = dS K, accumulated in fp32, then converted.
  Tensor k = g.Virtual({b, hk, skv, dqk}, k_strides, f32);
  g.Reshape(kt, k);
  g.Matmul(d_s, k, dq_accum);
  g.Pointwise(CUDNN_POINTWISE_IDENTITY, dq_accum, {}, {}, d_q);
}

// The single-operation SDPA forward graph (non-causal, see the header).
void ComposeUnifiedForward(CudnnGraphBuilder& g, const SdpaShape& s,
                           const SdpaBuffers& t) {
  const int64_t b = s.batch, hq = s.heads_q, hk = s.heads_kv, sq = s.seq_q,
                skv = s.seq_kv, dqk = s.dim_qk, dv = s.dim_v;
  const auto bf16 = CUDNN_DATA_BFLOAT16;
  Tensor q = g.Device({b, hq, sq, dqk}, Bshd(hq, sq, dqk), bf16, t.q);
  Tensor k = g.Device({b, hk, skv, dqk}, Bshd(hk, skv, dqk), bf16, t.k);
  Tensor v = g.Device({b, hk, skv, dv}, Bshd(hk, skv, dv), bf16, t.v);
  Tensor o = g.Device({b, hq, sq, dv}, Bshd(hq, sq, dv), bf16, t.o);
  Tensor stats =
      g.Device({b, hq, sq, 1}, {hq * sq, sq, 1, 1}, CUDNN_DATA_FLOAT, t.stats);
  Tensor scale = g.Scalar(1.0f / std::sqrt(static_cast<float>(dqk)));
  cudnnBackendDescriptor_t op =
      g.Create(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
  g.Link(op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q.desc);
  g.Link(op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k.desc);
  g.Link(op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v.desc);
  g.Link(op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o.desc);
  g.Link(op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, stats.desc);
  g.Link(op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, scale.desc);
  g.AddOp(op, "SDPA forward operation");
}

}  // namespace

// ------------------------------------------------------------ SdpaTensors

SdpaTensors::SdpaTensors(const SdpaShape& s, cudaStream_t stream) {
  const size_t q_elems = s.batch * s.seq_q * s.heads_q * s.dim_qk;
  const size_t k_elems = s.batch * s.seq_kv * s.heads_kv * s.dim_qk;
  const size_t v_elems = s.batch * s.seq_kv * s.heads_kv * s.dim_v;
  const size_t o_elems = s.batch * s.seq_q * s.heads_q * s.dim_v;
  const size_t rows = s.batch * s.heads_q * s.seq_q;
  auto alloc = [&](size_t bytes) -> void* {
    void* p = nullptr;
    if (!ok_ || cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();
      ok_ = false;
      return nullptr;
    }
    allocations_.push_back(p);
    return p;
  };
  SdpaBuffers& b = buffers_;
  b.q = alloc(q_elems * 2);
  b.k = alloc(k_elems * 2);
  b.v = alloc(v_elems * 2);
  b.o = alloc(o_elems * 2);
  b.d_o = alloc(o_elems * 2);
  b.d_q = alloc(q_elems * 2);
  b.d_k = alloc(k_elems * 2);
  b.d_v = alloc(v_elems * 2);
  b.stats = static_cast<float*>(alloc(rows * 4));
  b.softmax_sum = static_cast<float*>(alloc(rows * 4));
  b.dq_accum = static_cast<float*>(alloc(q_elems * 4));
  if (!ok_) return;
  FillBf16(b.q, q_elems, 31, stream);
  FillBf16(b.k, k_elems, 32, stream);
  FillBf16(b.v, v_elems, 33, stream);
  FillBf16(b.o, o_elems, 34, stream);
  FillBf16(b.d_o, o_elems, 35, stream);
  const float lse = std::log(static_cast<float>(s.seq_kv));
  FillFloat(b.stats, rows, 36, lse, lse, stream);
  cudaMemsetAsync(b.dq_accum, 0, q_elems * 4, stream);
  cudaStreamSynchronize(stream);
}

SdpaTensors::~SdpaTensors() {
  for (void* p : allocations_) cudaFree(p);
}

// --------------------------------------------------------- BuildSdpaPlan

std::unique_ptr<CudnnPlan> BuildSdpaPlan(
    cudnnHandle_t handle, cudnnBackendDescriptor_t device_prop,
    const SdpaShape& shape, bool backward, SdpaGraph graph,
    const SdpaBuffers& buffers, CudnnKernelCaches* caches, std::string* why) {
  if (graph == SdpaGraph::kUnified && (backward || shape.causal)) {
    *why =
        "the single-operation graph serves the non-causal forward pass "
        "only";
    return nullptr;
  }
  CudnnGraphBuilder g(handle, device_prop);
  if (caches != nullptr) {
    char key[96];
    std::snprintf(key, sizeof(key), "%d/%d/%d/%lld/%lld/%d",
                  static_cast<int>(graph), backward ? 1 : 0,
                  shape.causal ? 1 : 0, static_cast<long long>(shape.dim_qk),
                  static_cast<long long>(shape.dim_v),
                  shape.heads_q != shape.heads_kv ? 1 : 0);
    g.UseKernelCache(caches, key);
  }
  if (graph == SdpaGraph::kUnified) {
    ComposeUnifiedForward(g, shape, buffers);
  } else if (backward) {
    ComposeBackward(g, shape, buffers);
  } else {
    ComposeForward(g, shape, buffers);
  }
  return g.Finalize(why);
}

}  // namespace moesim::cuda_bench
