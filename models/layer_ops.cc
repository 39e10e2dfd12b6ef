#include "models/layer_ops.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "models/params.h"

// Rules this file fixes where Megatron-Core leaves a choice or the op graph
// simplifies it (each is repeated where it applies):
//  - Linear layers of the recipe (QKV, projections, MLA down/up, Gated
//    DeltaNet in/out, MLP, experts, shared experts, MTP eh_proj) run at the
//    training precision; the router, the Gated DeltaNet scan and the output
//    layer stay 16-bit. Low precision adds one quantize (fp8_quantize, or
//    fp4_quantize for NVFP4) per GEMM input
//    activation (forward) and one per output gradient (backward), 3 bytes per
//    element (read 16-bit, write 8-bit) as sim/moe_layer.cc.
//  - Norms fused into the following TE linear (LayerNormColumnParallelLinear:
//    softmax attention and Gated DeltaNet input norms, dense-MLP norm) belong
//    to that linear's module; only the separate TENorm modules (MLA input
//    norm, MoE pre-MLP norm) are `layernorm` (as models/memory.cc).
//  - Memory-bound bytes: rmsnorm forward reads and writes the tensor (2 x),
//    backward reads input and gradient and writes the gradient (3 x);
//    activations and quantizes as sim/moe_layer.cc; `copy` kernels move the
//    same bytes in both passes.
//  - Residual adds, dropout, biases, the router's score function, the
//    shared-expert gate and the Gated DeltaNet gating/l2norm elementwise
//    kernels are not listed (small next to what is), except GPT-OSS's eager
//    expert passes (AddClampedGluPasses, AddExpertOutputBias), which move
//    several times the largest MoE tensor.

namespace moesim::models {
namespace {

constexpr double kBf16 = 2;  // bytes per 16-bit element
constexpr double kFp32 = 4;
// HBM bytes per element to quantize a 16-bit GEMM input for the recipe.
// Transformer Engine quantizes activations for both GEMMs that read them
// (rowwise for fprop/dgrad, columnwise for wgrad), so the write is two FP8
// copies: read 2 + write 2. Per-tensor current scaling first reads the
// tensor for its amax (+2). Block-scaled recipes add their scales: one fp32
// per 128 elements (blockwise FP8, +2 x 4/128) or one E8M0 byte per 32
// (MXFP8, +2/32). NVFP4 writes two 4-bit copies with an E4M3 scale per 16
// (read 2 + 2 x 0.5 + 2/16).
double QuantizeBytes(Precision p) {
  switch (p) {
    case Precision::kFp8CurrentScaling:
      return 6;
    case Precision::kFp8Delayed:
      return 4;
    case Precision::kFp8Blockwise:
      return 4 + 2 * 4.0 / 128;
    case Precision::kMxfp8:
      return 4 + 2.0 / 32;
    case Precision::kNvfp4:
      return 3 + 2.0 / 16;
    case Precision::kBf16:
      return 0;
  }
  return 0;
}
// The memory-bound kernel that quantizes a GEMM operand for the recipe:
// NVFP4's (two 4-bit copies, E4M3 scales per 16, the random Hadamard
// transform of the wgrad operands) has its own rate in the Blackwell tables;
// every 8-bit recipe's is fp8_quantize.
const char* QuantizeKernel(Precision p) {
  return p == Precision::kNvfp4 ? "fp4_quantize" : "fp8_quantize";
}
// Chunk length of FLA's chunked gated delta rule (chunk_gated_delta_rule,
// BT = 64), the kernel Megatron's GatedDeltaNet calls.
constexpr int64_t kGdnChunk = 64;

// Sizes shared by every op of one layer on one GPU.
struct Shapes {
  const Model& m;
  const Parallelism& par;
  const TrainingOptions& tr;
  int64_t tp = 1;
  int64_t h = 0;          // hidden size
  int64_t tokens = 0;     // T = seq x mbs / cp: tokens a linear layer sees
  int64_t sp_tokens = 0;  // sequence-parallel shard: T / tp under SP, else T
  bool sp = false;        // sequence parallel with tp > 1
  bool low = false;       // FP8 / FP4 linear layers
};

Shapes MakeShapes(const Model& m, const Parallelism& par,
                  const TrainingOptions& tr) {
  Shapes x{m, par, tr};
  x.tp = par.tp;
  x.h = m.hidden_size();
  x.tokens = tr.seq_length * tr.micro_batch_size / par.cp;
  x.sp = par.sequence_parallel && par.tp > 1;
  x.sp_tokens = x.sp ? x.tokens / par.tp : x.tokens;
  x.low = IsLowPrecision(tr.precision);
  return x;
}

LayerOp MakeOp(std::string name, OpKind kind, OpRole role,
               RecomputeModule module) {
  LayerOp op;
  op.name = std::move(name);
  op.kind = kind;
  op.role = role;
  op.module = module;
  return op;
}

LayerOp MemoryOp(std::string name, OpRole role, const char* kernel,
                 double bytes, RecomputeModule module,
                 Pass pass = Pass::kForward) {
  LayerOp op = MakeOp(std::move(name), OpKind::kMemoryBound, role, module);
  op.kernel = kernel;
  op.bytes = bytes;
  op.pass = pass;
  return op;
}

LayerOp CollectiveOp(std::string name, CollectiveKind kind, Group group,
                     double bytes, RecomputeModule module,
                     Pass pass = Pass::kForward) {
  LayerOp op =
      MakeOp(std::move(name), OpKind::kCollective, OpRole::kCollective, module);
  op.collective = kind;
  op.group = group;
  op.bytes = bytes;
  op.pass = pass;
  return op;
}

// One GEMM (or `groups` of them): C[m x n] = A[m x k] B[k x n].
struct MatmulSpec {
  std::string name;
  OpRole role = OpRole::kOther;
  int64_t m = 0, n = 0, k = 0;
  OpKind kind = OpKind::kGemm;
  int64_t groups = 1;
  double rows = 0;  // real rows over all groups; 0: m x groups
  GemmPrecision precision = GemmPrecision::kTraining;
  RecomputeModule module = RecomputeModule::kNone;
  bool quantize_input = true;  // false: input already quantized (shared)
};

// Collects forward ops with the backward ops that undo each one; backward is
// the reverse order of these segments.
class Builder {
 public:
  explicit Builder(const Shapes& x) : x_(x) {}

  // The CUDA-graph scope of the ops added from now on (forward and backward).
  void SetScope(GraphScope scope) { scope_ = scope; }

  void Add(LayerOp fwd, std::vector<LayerOp> bwd) {
    fwd.scope = scope_;
    for (LayerOp& op : bwd) op.scope = scope_;
    forward_.push_back(std::move(fwd));
    segments_.push_back(std::move(bwd));
  }
  void AddBackwardOnly(LayerOp bwd) {
    bwd.scope = scope_;
    segments_.push_back({std::move(bwd)});
  }

  // An all-gather or reduce-scatter of `bytes` over `group`; its backward is
  // the other one.
  void GatherOrScatter(const std::string& name, CollectiveKind kind,
                       Group group, double bytes, RecomputeModule module) {
    const CollectiveKind back = kind == CollectiveKind::kAllGather
                                    ? CollectiveKind::kReduceScatter
                                    : CollectiveKind::kAllGather;
    Add(CollectiveOp(name, kind, group, bytes, module),
        {CollectiveOp(name + ".bwd", back, group, bytes, module,
                      Pass::kDgrad)});
  }

  // Forward GEMM; backward dgrad (m x k x n) then wgrad (n x k x m), each with
  // the forward FLOPs.
  void Matmul(const MatmulSpec& s) {
    const double rows = s.rows > 0 ? s.rows : double(s.m) * s.groups;
    const bool quantize = x_.low && s.precision == GemmPrecision::kTraining;
    const OpRole quantize_role =
        IsRoutedExpert(s.role) ? OpRole::kExpertQuantize : OpRole::kQuantize;
    if (quantize && s.quantize_input) {
      Add(MemoryOp(s.name + ".quantize", quantize_role,
                   QuantizeKernel(x_.tr.precision),
                   QuantizeBytes(x_.tr.precision) * rows * s.k, s.module),
          {});
    }
    LayerOp op = MakeOp(s.name, s.kind, s.role, s.module);
    op.m = s.m;
    op.n = s.n;
    op.k = s.k;
    op.groups = s.groups;
    op.precision = s.precision;
    op.flops = 2 * rows * s.n * s.k;
    std::vector<LayerOp> bwd;
    if (quantize) {
      bwd.push_back(MemoryOp(s.name + ".grad_quantize", quantize_role,
                             QuantizeKernel(x_.tr.precision),
                             QuantizeBytes(x_.tr.precision) * rows * s.n,
                             s.module, Pass::kDgrad));
    }
    LayerOp dgrad = op;
    dgrad.name = s.name + ".dgrad";
    dgrad.pass = Pass::kDgrad;
    dgrad.n = s.k;
    dgrad.k = s.n;
    LayerOp wgrad = op;
    wgrad.name = s.name + ".wgrad";
    wgrad.pass = Pass::kWgrad;
    wgrad.m = s.n;
    wgrad.n = s.k;
    wgrad.k = s.m;
    bwd.push_back(std::move(dgrad));
    bwd.push_back(std::move(wgrad));
    Add(std::move(op), std::move(bwd));
  }

  // RMSNorm over tokens x width.
  void Norm(const std::string& name, OpRole role, double tokens, double width,
            RecomputeModule module) {
    const double bytes = tokens * width * kBf16;
    Add(MemoryOp(name, role, "rmsnorm_fwd", 2 * bytes, module),
        {MemoryOp(name + ".bwd", role, "rmsnorm_bwd", 3 * bytes, module,
                  Pass::kDgrad)});
  }

  // A `copy`-class kernel moving `bytes` in both passes; `flops` (forward)
  // only for work Bridge counts (the Gated DeltaNet convolution).
  void Copy(const std::string& name, OpRole role, double bytes,
            RecomputeModule module, double flops = 0) {
    LayerOp fwd = MemoryOp(name, role, "copy", bytes, module);
    fwd.flops = flops;
    LayerOp bwd =
        MemoryOp(name + ".bwd", role, "copy", bytes, module, Pass::kDgrad);
    bwd.flops = 2 * flops;
    Add(std::move(fwd), {std::move(bwd)});
  }

  // MLP activation on `rows` rows of fc1 output (2f gated, else f) -> f.
  void Activation(const std::string& name, OpRole role, double rows, double f,
                  RecomputeModule module) {
    const bool gated = IsGated(x_.m);
    const double fc1 = gated ? 2 * f : f;
    Add(MemoryOp(name, role, gated ? "swiglu_fwd" : "copy",
                 (fc1 + f) * rows * kBf16, module),
        {MemoryOp(name + ".bwd", role, gated ? "swiglu_bwd" : "copy",
                  (f + 2 * fc1) * rows * kBf16, module, Pass::kDgrad)});
  }

  // Input of a column-parallel linear over tokens x width: SP all-gathers the
  // sequence (backward reduce-scatters); without SP the input is replicated
  // and only the backward all-reduces its gradient.
  void ColumnInput(const std::string& name, double width,
                   RecomputeModule module) {
    if (x_.tp == 1) return;
    const double bytes = double(x_.tokens) * width * kBf16;
    if (x_.sp) {
      GatherOrScatter(name + ".ag", CollectiveKind::kAllGather, Group::kTp,
                      bytes, module);
    } else {
      AddBackwardOnly(CollectiveOp(name + ".ar.bwd", CollectiveKind::kAllReduce,
                                   Group::kTp, bytes, module, Pass::kDgrad));
    }
  }

  // Output of a row-parallel linear (T x hidden partial sums): SP
  // reduce-scatters (backward all-gathers), else all-reduces.
  void RowOutput(const std::string& name, RecomputeModule module) {
    if (x_.tp == 1) return;
    const double bytes = double(x_.tokens) * x_.h * kBf16;
    if (x_.sp) {
      GatherOrScatter(name + ".rs", CollectiveKind::kReduceScatter, Group::kTp,
                      bytes, module);
    } else {
      Add(CollectiveOp(name + ".ar", CollectiveKind::kAllReduce, Group::kTp,
                       bytes, module),
          {});
    }
  }

  // Core attention with average attended context `context` (Bridge's FLOPs
  // rule); one backward op at twice the forward FLOPs.
  void Attention(const AttentionWork& w, double context,
                 RecomputeModule module) {
    LayerOp op =
        MakeOp("core_attn", OpKind::kAttention, OpRole::kCoreAttn, module);
    op.attention = w;
    op.flops = 2.0 * w.batch * w.seq_q * context * w.heads_q *
               (w.head_dim_qk + w.head_dim_v);
    LayerOp bwd = op;
    bwd.name = "core_attn.bwd";
    bwd.pass = Pass::kDgrad;
    bwd.flops = 2 * op.flops;
    Add(std::move(op), {std::move(bwd)});
  }

  // MoE dispatch or combine; its backward is the other one.
  void Dispatch(const DispatchWork& w, RecomputeModule module) {
    LayerOp op = MakeOp(w.combine ? "combine" : "dispatch", OpKind::kDispatch,
                        OpRole::kDispatch, module);
    op.dispatch = w;
    LayerOp bwd = op;
    bwd.name = op.name + ".bwd";
    bwd.pass = Pass::kDgrad;
    bwd.dispatch.combine = !w.combine;
    Add(std::move(op), {std::move(bwd)});
  }

  LayerOps Finish(const Recompute& rc, bool full) && {
    LayerOps out;
    for (const LayerOp& op : forward_) {
      if (full || Recomputed(op.module, rc)) out.recompute.push_back(op);
    }
    for (auto it = segments_.rbegin(); it != segments_.rend(); ++it) {
      for (LayerOp& op : *it) out.backward.push_back(std::move(op));
    }
    out.forward = std::move(forward_);
    return out;
  }

 private:
  static bool Recomputed(RecomputeModule module, const Recompute& rc) {
    switch (module) {
      case RecomputeModule::kNone:
        return false;
      case RecomputeModule::kCoreAttn:
        return rc.core_attn;
      case RecomputeModule::kMlaUpProj:
        return rc.mla_up_proj;
      case RecomputeModule::kLayernorm:
        return rc.layernorm;
      case RecomputeModule::kMlp:
        return rc.mlp;
      case RecomputeModule::kMoe:
        return rc.moe;
      // Inside the MoE layer: its own flag or the whole layer's.
      case RecomputeModule::kMoeAct:
        return rc.moe_act || rc.moe;
      case RecomputeModule::kSharedExperts:
        return rc.shared_experts || rc.moe;
    }
    return false;
  }

  const Shapes& x_;
  GraphScope scope_ = GraphScope::kNone;
  std::vector<LayerOp> forward_;
  std::vector<std::vector<LayerOp>> segments_;
};

// Average attended keys per query under Bridge's rule: s/2 for full causal,
// W - W(W-1)/(2s) for a sliding window W < s.
double CausalContext(double s, int64_t window) {
  const double w = static_cast<double>(window);
  return window > 0 && w < s ? w - w * (w - 1) / (2 * s) : s / 2;
}

AttentionWork BaseAttention(const Shapes& x) {
  AttentionWork w;
  w.batch = x.tr.micro_batch_size;
  w.seq_q = x.tr.seq_length / x.par.cp;
  w.seq_kv = x.tr.seq_length;
  w.heads_q = x.m.num_attention_heads() / x.tp;
  w.causal = true;
  return w;
}

// RoPE with a YaRN concentration factor other than 1 (GPT-OSS: 1.347):
// Megatron-Core's apply_rotary_pos_emb refuses TE's fused kernel for
// mscale != 1 ("not supported by TE's fused RoPE. Using unfused
// implementation", NVIDIA/Megatron-LM rope_utils.py) and runs
// _apply_rotary_pos_emb_bshd on Q and on K. Per tensor t, in units of its
// bytes: forward t * cos (read 1, write 1), rotate_half's neg of one half
// (0.5 + 0.5) and cat (1 + 1), * sin (1 + 1), the add (2 + 1) and the final
// cat with the empty pass-through part (1 + 1): 12. Backward, autograd's
// kernels for those: the two products' gradients (2 + 2), the neg (1), the
// chunk's cat of the half gradients (2), the two uses of t summed (3), the
// slice t[..., :d]'s zero-filled copy (1 + 2) and the empty slice's zeros
// (1) summed in (3): 17. cos and sin of the frequencies (s x d fp32) are
// small. The host calls are sim/host_calls.cc's (calibration/notes/
// megatron_host_ops.md section 8).
void AddUnfusedRope(Builder& b, double qk_bytes) {
  b.Add(MemoryOp("rope_unfused", OpRole::kRopeUnfused, "copy", 12 * qk_bytes,
                 RecomputeModule::kNone),
        {MemoryOp("rope_unfused.bwd", OpRole::kRopeUnfused, "copy",
                  17 * qk_bytes, RecomputeModule::kNone, Pass::kDgrad)});
}

// Softmax attention (MHA / GQA, sliding window, sinks, QK-norm, Qwen3-Next's
// output gate): TE spec with the input norm fused into linear_qkv.
void AddAttention(Builder& b, const Shapes& x, const LayerKind& kind) {
  const Model& m = x.m;
  const int64_t T = x.tokens, d = HeadDim(m);
  AttentionWork w = BaseAttention(x);
  w.heads_kv = std::max<int64_t>(1, QueryGroups(m) / x.tp);
  w.head_dim_qk = w.head_dim_v = d;
  w.window = kind.sliding_window ? m.window_size() : 0;
  w.softmax_offset = m.learnable_softmax_offset();
  const int64_t gate = m.attention_output_gate() ? w.heads_q * d : 0;
  b.Norm("input_norm", OpRole::kInputNorm, x.sp_tokens, x.h,
         RecomputeModule::kNone);
  b.ColumnInput("qkv", x.h, RecomputeModule::kNone);
  b.Matmul({.name = "qkv",
            .role = OpRole::kQkv,
            .m = T,
            .n = w.heads_q * d + 2 * w.heads_kv * d + gate,
            .k = x.h});
  const double qk_bytes = double(T) * (w.heads_q + w.heads_kv) * d * kBf16;
  if (m.qk_layernorm()) {
    b.Norm("qk_norm", OpRole::kQkNorm, T, (w.heads_q + w.heads_kv) * d,
           RecomputeModule::kNone);
  }
  if (RotaryConcentrationFactor(m) == 1) {
    b.Copy("rope", OpRole::kRope, 2 * qk_bytes,
           RecomputeModule::kNone);  // read, write Q and K
  } else {
    AddUnfusedRope(b, qk_bytes);
  }
  b.Attention(w, CausalContext(double(x.tr.seq_length), w.window),
              RecomputeModule::kCoreAttn);
  if (gate > 0) {
    // sigmoid(gate) * O: read O and the gate, write O.
    b.Copy("attn_gate", OpRole::kAttnGate, 3.0 * T * gate * kBf16,
           RecomputeModule::kNone);
  }
  b.Matmul({.name = "proj",
            .role = OpRole::kProj,
            .m = T,
            .n = x.h,
            .k = w.heads_q * d});
  b.RowOutput("proj", RecomputeModule::kNone);
}

// Multi-latent attention (MCore multi_latent_attention.py, TE spec). The
// down-projections are duplicated over TP and run on the sequence-parallel
// shard (T/tp tokens under SP, the full T otherwise); the up-projections are
// LayerNormColumnParallelLinear: q_norm / kv_norm fused in, the compressed
// latents all-gathered over TP inside them (bytes T x rank), so the norms and
// gathers belong to `mla_up_proj` with the up-projections and RoPE
// (qkv_up_proj_and_rope_apply). The RoPE part of K (T x r) is gathered
// outside. Without q_lora_rank, linear_q_proj is an ordinary column-parallel
// linear on the gathered hidden states.
void AddMla(Builder& b, const Shapes& x) {
  const Model& m = x.m;
  const int64_t T = x.tokens, Ts = x.sp_tokens, h = x.h;
  const int64_t dn = m.qk_head_dim(), r = m.qk_pos_emb_head_dim(),
                dv = m.v_head_dim();
  const int64_t q_rank = m.q_lora_rank(), kv_rank = m.kv_lora_rank();
  AttentionWork w = BaseAttention(x);
  w.heads_kv = w.heads_q;  // K and V materialised per head
  w.head_dim_qk = dn + r;
  w.head_dim_v = dv;
  const RecomputeModule up = RecomputeModule::kMlaUpProj;
  b.Norm("input_norm", OpRole::kInputNorm, Ts, h, RecomputeModule::kLayernorm);
  if (q_rank > 0) {
    b.Matmul({.name = "q_down",
              .role = OpRole::kQDown,
              .m = Ts,
              .n = q_rank,
              .k = h});
  } else {
    b.ColumnInput("q_proj", h, RecomputeModule::kNone);
    b.Matmul({.name = "q_proj",
              .role = OpRole::kQProj,
              .m = T,
              .n = w.heads_q * (dn + r),
              .k = h});
  }
  b.Matmul({.name = "kv_down",
            .role = OpRole::kKvDown,
            .m = Ts,
            .n = kv_rank + r,
            .k = h,
            .quantize_input = q_rank == 0});  // shares q_down's input
  if (x.sp) {
    const double bytes = double(T) * r * kBf16;
    b.GatherOrScatter("k_pos_emb.ag", CollectiveKind::kAllGather, Group::kTp,
                      bytes, RecomputeModule::kNone);
  }
  if (q_rank > 0) {
    b.Norm("q_norm", OpRole::kQNorm, Ts, q_rank, up);
    b.ColumnInput("q_up", q_rank, up);
    b.Matmul({.name = "q_up",
              .role = OpRole::kQUp,
              .m = T,
              .n = w.heads_q * (dn + r),
              .k = q_rank,
              .module = up});
  }
  b.Norm("kv_norm", OpRole::kKvNorm, Ts, kv_rank, up);
  b.ColumnInput("kv_up", kv_rank, up);
  b.Matmul({.name = "kv_up",
            .role = OpRole::kKvUp,
            .m = T,
            .n = w.heads_q * (dn + dv),
            .k = kv_rank,
            .module = up});
  // RoPE and the no-RoPE/RoPE concatenation: read and write Q and K.
  b.Copy("rope", OpRole::kRope, 2.0 * T * w.heads_q * 2 * (dn + r) * kBf16, up);
  b.Attention(w, x.tr.seq_length / 2.0, RecomputeModule::kCoreAttn);
  b.Matmul({.name = "proj",
            .role = OpRole::kProj,
            .m = T,
            .n = h,
            .k = w.heads_q * dv});
  b.RowOutput("proj", RecomputeModule::kNone);
}

// Gated DeltaNet (MCore gated_delta_net.py; HF modeling_qwen3_next.py), the
// input norm fused into in_proj (split here into the qkvz and ba GEMMs, which
// share one quantized input). The chunked gated delta rule (FLA
// chunk_gated_delta_rule, chunk C = 64) per value head with key dim dk and
// value dim dv is listed as grouped GEMMs over the local value heads (16-bit):
//   chunk_qk_kk  Q K^T and K K^T within each chunk     T x 2C x dk
//   chunk_wu     W = A (K beta), U = A (V beta)        T x (dk+dv) x C
//   state_out    W S and Q S against the chunk state   2T x dv x dk
//   state_update S += K^T V_new per chunk              dk x dv x T
//   intra_out    (Q K^T masked) V_new                  T x dv x C
// = 3 C dk + 2 C dv + 3 dk dv multiply-adds per token and head (the
// triangular solve for A, about C^2/3, is left out). Bridge counts 4 dv^2
// (recurrent form): with dk = dv = 128 this lists 90112 against 65536, a gap
// the FLOPs test states exactly.
void AddGatedDeltaNet(Builder& b, const Shapes& x) {
  const Model& m = x.m;
  const int64_t T = x.tokens, h = x.h, tp = x.tp;
  const int64_t dk = m.linear_key_head_dim(), dv = m.linear_value_head_dim();
  const int64_t nv = m.linear_num_value_heads() / tp;
  const int64_t qk = m.linear_num_key_heads() / tp * dk, v = nv * dv;
  const int64_t C = kGdnChunk;
  b.Norm("input_norm", OpRole::kInputNorm, x.sp_tokens, h,
         RecomputeModule::kNone);
  b.ColumnInput("in_proj", h, RecomputeModule::kNone);
  b.Matmul({.name = "in_proj_qkvz",
            .role = OpRole::kInProjQkvz,
            .m = T,
            .n = 2 * qk + 2 * v,
            .k = h});
  b.Matmul({.name = "in_proj_ba",
            .role = OpRole::kInProjBa,
            .m = T,
            .n = 2 * nv,
            .k = h,
            .quantize_input = false});
  // With CP, Megatron trades the sequence split for a head split before the
  // convolution and the scan, and back after the gated norm
  // (NVIDIA/Megatron-LM@d98e8a64 megatron/core/ssm/gated_delta_net/gdn.py:
  // a2a_cp_to_hp of the projections' q, k, v, z, b, a; a2a_hp_to_cp of the
  // norm's output before out_proj): each CP rank then runs the whole
  // sequence for 1/cp of the heads. Backward runs the same all-to-alls on
  // the gradients. (Rules: CpExchangeRule, heads divisible by CP.)
  const int64_t cp = x.par.cp;
  if (cp > 1) {
    const double projections = double(T) * (2 * qk + 2 * v + 2 * nv) * kBf16;
    b.Add(CollectiveOp("gdn.a2a_cp2hp", CollectiveKind::kAllToAll, Group::kCp,
                       projections, RecomputeModule::kNone),
          {CollectiveOp("gdn.a2a_cp2hp.bwd", CollectiveKind::kAllToAll,
                        Group::kCp, projections, RecomputeModule::kNone,
                        Pass::kDgrad)});
  }
  const int64_t heads = nv / cp, seq = T * cp;
  // Depthwise causal conv1d over q, k, v channels: read and write them.
  const double channels = 2.0 * qk + v;
  b.Copy("conv1d", OpRole::kConv1d, 2 * T * channels * kBf16,
         RecomputeModule::kNone,
         2.0 * T * channels * m.linear_conv_kernel_dim());
  auto scan = [&](const char* name, int64_t mm, int64_t n, int64_t k) {
    b.Matmul({.name = name,
              .role = OpRole::kGdnScan,
              .m = mm,
              .n = n,
              .k = k,
              .kind = OpKind::kGroupedGemm,
              .groups = heads,
              .precision = GemmPrecision::k16Bit});
  };
  scan("gdn.chunk_qk_kk", seq, 2 * C, dk);
  scan("gdn.chunk_wu", seq, dk + dv, C);
  scan("gdn.state_out", 2 * seq, dv, dk);
  scan("gdn.state_update", dk, dv, seq);
  scan("gdn.intra_out", seq, dv, C);
  // Gated RMSNorm: read the output and z, write the output.
  LayerOp norm = MemoryOp("gdn.norm", OpRole::kGdnNorm, "rmsnorm_fwd",
                          3.0 * T * v * kBf16, RecomputeModule::kNone);
  // Backward reads dy, the output and z, writes both gradients.
  b.Add(norm,
        {MemoryOp("gdn.norm.bwd", OpRole::kGdnNorm, "rmsnorm_bwd",
                  5.0 * T * v * kBf16, RecomputeModule::kNone, Pass::kDgrad)});
  if (cp > 1) {
    const double out = double(T) * v * kBf16;
    b.Add(
        CollectiveOp("gdn.a2a_hp2cp", CollectiveKind::kAllToAll, Group::kCp,
                     out, RecomputeModule::kNone),
        {CollectiveOp("gdn.a2a_hp2cp.bwd", CollectiveKind::kAllToAll,
                      Group::kCp, out, RecomputeModule::kNone, Pass::kDgrad)});
  }
  b.Matmul(
      {.name = "out_proj", .role = OpRole::kOutProj, .m = T, .n = h, .k = v});
  b.RowOutput("out_proj", RecomputeModule::kNone);
}

// Dense MLP, TE spec: pre-MLP norm fused into fc1, all of it `mlp`.
void AddMlp(Builder& b, const Shapes& x) {
  const int64_t T = x.tokens, f = x.m.ffn_hidden_size() / x.tp;
  const RecomputeModule mod = RecomputeModule::kMlp;
  b.Norm("pre_mlp_norm", OpRole::kPreMlpNorm, x.sp_tokens, x.h, mod);
  b.ColumnInput("fc1", x.h, mod);
  b.Matmul({.name = "fc1",
            .role = OpRole::kFc1,
            .m = T,
            .n = (IsGated(x.m) ? 2 : 1) * f,
            .k = x.h,
            .module = mod});
  b.Activation("act", OpRole::kAct, T, f, mod);
  b.Matmul({.name = "fc2",
            .role = OpRole::kFc2,
            .m = T,
            .n = x.h,
            .k = f,
            .module = mod});
  b.RowOutput("fc2", mod);
}

// GPT-OSS expert block, eager PyTorch work Megatron-Core runs around the
// grouped GEMMs (NVIDIA/Megatron-LM megatron/core/transformer/moe/experts.py
// TEGroupedMLP.forward / bias_act_func / _apply_bias, and
// megatron/core/fusions/fused_bias_geglu.py weighted_bias_quick_geglu_impl).
// Megatron-Bridge's GPTOSSProvider (models/gpt_oss/gpt_oss_provider.py) sets
// activation_func quick_gelu, gated, glu_linear_offset 1,
// activation_func_clamp_value 7, bias_activation_fusion True and
// add_bias_linear True: every GPT-OSS recipe takes these paths.
//
// Clamp: weighted_bias_quick_geglu_impl, given a clamp value, chunks the fc1
// output into its two halves, clamps each with an eager torch.clamp and
// torch.cat's them back before the fused (jit) activation. On the fc1 output
// of X = rows x 2f x 2 bytes: forward the clamps read and write X, the cat
// reads and writes X (4 X); backward the two clamp_backward kernels read the
// gradient and the saved input and write the gradient (3 X), and the chunk's
// backward cats the two halves (2 X): 5 X. These belong to bias_act_func, so
// `moe_act` recompute replays them.
//
// Host sync: after the clamps and the cat, weighted_bias_quick_geglu_impl
// runs `linear_offset = torch.tensor(linear_offset, dtype=input.dtype,
// device=input.device)` (NVIDIA/Megatron-LM@1fb2a0ca
// megatron/core/fusions/fused_bias_geglu.py; the earlier version with the
// clamp hard-coded to 7.0, @034fd2d3, has the same line). A tensor built
// from a Python scalar on a CUDA device is copied there with
// non_blocking=False, and PyTorch's CPU->GPU copy then calls
// at::cuda::memcpy_and_sync (pytorch/pytorch@007aa8ae
// aten/src/ATen/native/cuda/Copy.cu copy_kernel_cuda): the host waits for
// the compute stream to drain, i.e. for the experts' fc1 and these
// clamps, once per MoE layer forward (and again in a `moe_act` recompute;
// the backward reuses the saved tensor). No Megatron-LM version read has
// it otherwise (a 2026 Bridge-based training script patches it as
// PATCH_GEGLU_GRAPH_SAFE with input.new_full; a third-party host_syncs
// patch caches the tensor, calling it "a blocking host-to-device copy").
// Inside a CUDA graph the copy would fail capture, so graphed MoE scopes
// never take this path; the replay drops the sync there.
void AddClampedGluPasses(Builder& b, double rows, double f) {
  const double x = rows * 2 * f * kBf16;
  LayerOp clamp = MemoryOp("experts_act_clamp", OpRole::kExpertActClamp, "copy",
                           4 * x, RecomputeModule::kMoeAct);
  clamp.host_sync = true;
  b.Add(std::move(clamp),
        {MemoryOp("experts_act_clamp.bwd", OpRole::kExpertActClamp, "copy",
                  5 * x, RecomputeModule::kMoeAct, Pass::kDgrad)});
}

// Expert fc2 bias: TE GroupedLinear returns it unapplied (skip_bias_add) and
// _apply_bias adds bias x routing probability per local expert in eager
// PyTorch, on Y = rows x h elements. The probabilities are fp32, so the
// products are fp32: forward b * p writes 4 bytes per element, t + b p reads
// 2 + 4 and writes 4, torch.cat reads and writes 4, .to(bf16) reads 4 and
// writes 2: 28 Y bytes. Backward: the cast back to fp32 (2 + 4), the add's
// gradient to the bf16 fc2 output cast down (4 + 2), the mul's two gradients
// (bias: grad x p then a sum over rows, 4 + 4 + 4; probability: grad x b then
// a sum over h, 4 + 4 + 4), and the split's backward cat of the bf16
// gradients (2 + 2): 40 Y bytes. Outside the activation checkpoint: `moe`.
void AddExpertOutputBias(Builder& b, double rows, int64_t h) {
  const double y = rows * static_cast<double>(h);
  b.Add(MemoryOp("experts_fc2_bias", OpRole::kExpertFc2Bias, "copy", 28 * y,
                 RecomputeModule::kMoe),
        {MemoryOp("experts_fc2_bias.bwd", OpRole::kExpertFc2Bias, "copy",
                  40 * y, RecomputeModule::kMoe, Pass::kDgrad)});
}

// MoE layer (MCore moe_layer.py with the alltoall/flex dispatchers). The
// layer works on the tokens it receives, T/tp under SP (no TP gather at its
// entry; without SP every TP rank routes all T, which MCore refuses in
// training); the dispatcher all-gathers the received rows over ETP when etp > 1
// and reduce-scatters them after fc2. Balanced routing: each GPU gets
// tokens x topk routed rows (x etp after the gather) over its experts/ep local
// experts; token drop caps every expert at its capacity ceil(tokens x topk x
// CF / E) from each EP rank, padded to it with
// moe_pad_expert_input_to_capacity (RoutedExpertRows, as models/memory.cc).
void AddMoe(Builder& b, const Shapes& x) {
  const Model& m = x.m;
  const int64_t h = x.h, tokens = x.sp_tokens, e = m.num_moe_experts();
  const int64_t topk = m.moe_router_topk(), etp = x.par.etp;
  const int64_t groups = e / x.par.ep, f = MoeFfnHidden(m) / etp;
  const int64_t fc1 = (IsGated(m) ? 2 : 1) * f;
  const double rows = RoutedExpertRows(double(tokens), topk, e, etp, x.tr);
  const int64_t per_expert = static_cast<int64_t>(std::ceil(rows / groups));
  const RecomputeModule mod = RecomputeModule::kMoe;
  b.SetScope(GraphScope::kMoeRouter);
  b.Norm("pre_mlp_norm", OpRole::kPreMlpNorm, tokens, h,
         RecomputeModule::kLayernorm);
  b.Matmul({.name = "router",
            .role = OpRole::kRouter,
            .m = tokens,
            .n = e,
            .k = h,
            .precision = GemmPrecision::k16Bit,
            .module = mod});
  b.Copy("router_topk", OpRole::kRouterTopk, 3.0 * tokens * e * kFp32, mod);
  DispatchWork w;
  w.tokens = tokens;
  w.topk = topk;
  w.hidden = h;
  w.experts = e;
  // 16-bit here; whether a dispatcher sends FP8 (DeepEP / HybridEP under FP8
  // recipes) is the replay's call.
  w.bytes_per_element = 2;
  // The dispatch op starts with the dispatcher's preprocessing; the pricer
  // keeps kMoePreprocess for that part only.
  b.SetScope(GraphScope::kMoePreprocess);
  b.Dispatch(w, mod);
  b.SetScope(GraphScope::kMoe);
  const double row_bytes = rows * h * kBf16;
  if (etp > 1) {
    b.GatherOrScatter("experts.ag", CollectiveKind::kAllGather, Group::kEtp,
                      row_bytes, mod);
  }
  b.Matmul({.name = "experts_fc1",
            .role = OpRole::kExpertFc1,
            .m = per_expert,
            .n = fc1,
            .k = h,
            .kind = OpKind::kGroupedGemm,
            .groups = groups,
            .rows = rows,
            .module = mod});
  if (IsClampedQuickGeglu(m)) AddClampedGluPasses(b, rows, f);
  b.Activation("experts_act", OpRole::kExpertAct, rows, f,
               RecomputeModule::kMoeAct);
  b.Matmul({.name = "experts_fc2",
            .role = OpRole::kExpertFc2,
            .m = per_expert,
            .n = h,
            .k = f,
            .kind = OpKind::kGroupedGemm,
            .groups = groups,
            .rows = rows,
            .module = mod});
  if (m.add_bias_linear()) AddExpertOutputBias(b, rows, h);
  if (etp > 1) {
    b.GatherOrScatter("experts.rs", CollectiveKind::kReduceScatter, Group::kEtp,
                      row_bytes, mod);
  }
  w.combine = true;
  b.Dispatch(w, mod);
  // Shared experts: a TP-sharded dense MLP on the layer's tokens (Megatron
  // runs it beside the routed path; listed after it).
  if (m.moe_shared_expert_intermediate_size() > 0) {
    const int64_t T = x.tokens;
    const int64_t fs = m.moe_shared_expert_intermediate_size() / x.tp;
    const RecomputeModule sh = RecomputeModule::kSharedExperts;
    b.ColumnInput("shared_fc1", h, sh);
    b.Matmul({.name = "shared_fc1",
              .role = OpRole::kSharedFc1,
              .m = T,
              .n = (IsGated(m) ? 2 : 1) * fs,
              .k = h,
              .module = sh});
    b.Activation("shared_act", OpRole::kSharedAct, T, fs, sh);
    b.Matmul({.name = "shared_fc2",
              .role = OpRole::kSharedFc2,
              .m = T,
              .n = h,
              .k = fs,
              .module = sh});
    b.RowOutput("shared_fc2", sh);
  }
}

// Vocab-parallel embedding lookup: gather (read and write T x h rows;
// backward scatter-adds the same bytes) and the TP sum of the partial rows.
void AddEmbedding(Builder& b, const Shapes& x, const std::string& prefix) {
  b.Copy(prefix + "embedding", OpRole::kEmbedding, 2.0 * x.tokens * x.h * kBf16,
         RecomputeModule::kNone);
  b.RowOutput(prefix + "embedding", RecomputeModule::kNone);
}

// MTP head input (MCore multi_token_prediction.py): embedding of the shifted
// tokens, enorm and hnorm, eh_proj (column parallel, 2h -> h) whose output is
// gathered over TP (gather_from_tensor_model_parallel_region) and, under SP,
// scattered back to the sequence shard: the backward of that pair is an
// all-gather under SP and a local split otherwise.
void AddMtpInput(Builder& b, const Shapes& x) {
  AddEmbedding(b, x, "mtp.");
  b.Norm("mtp.enorm", OpRole::kNorm, x.sp_tokens, x.h, RecomputeModule::kNone);
  b.Norm("mtp.hnorm", OpRole::kNorm, x.sp_tokens, x.h, RecomputeModule::kNone);
  b.ColumnInput("mtp.eh_proj", 2 * x.h, RecomputeModule::kNone);
  b.Matmul({.name = "mtp.eh_proj",
            .role = OpRole::kMtpEhProj,
            .m = x.tokens,
            .n = x.h / x.tp,
            .k = 2 * x.h});
  if (x.tp > 1) {
    const double bytes = double(x.tokens) * x.h * kBf16;
    std::vector<LayerOp> bwd;
    if (x.sp) {
      bwd.push_back(CollectiveOp("mtp.eh_proj.gather.bwd",
                                 CollectiveKind::kAllGather, Group::kTp, bytes,
                                 RecomputeModule::kNone, Pass::kDgrad));
    }
    b.Add(CollectiveOp("mtp.eh_proj.gather", CollectiveKind::kAllGather,
                       Group::kTp, bytes, RecomputeModule::kNone),
          std::move(bwd));
  }
}

}  // namespace

LayerOps BuildLayerOps(const Model& model, int64_t layer, bool mtp,
                       const Parallelism& parallel,
                       const TrainingOptions& training, bool full_recompute) {
  const Shapes x = MakeShapes(model, parallel, training);
  Builder b(x);
  const LayerKind kind = mtp ? MtpLayer(model) : DecoderLayer(model, layer);
  if (mtp) AddMtpInput(b, x);
  b.SetScope(GraphScope::kAttn);
  switch (kind.mixer) {
    case Mixer::kAttention:
      AddAttention(b, x, kind);
      break;
    case Mixer::kMla:
      AddMla(b, x);
      break;
    case Mixer::kGatedDeltaNet:
      AddGatedDeltaNet(b, x);
      break;
  }
  if (kind.moe) {
    AddMoe(b, x);
  } else {
    b.SetScope(GraphScope::kMlp);
    AddMlp(b, x);
  }
  LayerOps ops = std::move(b).Finish(training.recompute, full_recompute);
  const ParamGroups p =
      mtp ? MtpLayerParams(model) : DecoderLayerParams(model, layer);
  ops.dense_params = p.tp / parallel.tp + p.replicated;
  ops.expert_params = p.experts / (int64_t{parallel.ep} * parallel.etp);
  const int64_t local_experts =
      model.num_moe_experts() > 0 ? model.num_moe_experts() / parallel.ep : 0;
  const ParamTensors t = mtp ? MtpLayerTensors(model, local_experts)
                             : DecoderLayerTensors(model, layer, local_experts);
  ops.dense_tensors = t.dense;
  ops.expert_tensors = t.expert;
  ops.replicated_tensors = t.replicated;
  return ops;
}

LayerOps BuildEmbeddingOps(const Model& model, const Parallelism& parallel,
                           const TrainingOptions& training) {
  const Shapes x = MakeShapes(model, parallel, training);
  Builder b(x);
  AddEmbedding(b, x, "");
  LayerOps ops = std::move(b).Finish(Recompute{}, false);
  ops.dense_params =
      EmbeddingParams(model, PaddedVocab(model, parallel.tp)) / parallel.tp;
  ops.dense_tensors = 1;  // word_embeddings.weight (RoPE: no position table)
  return ops;
}

// Per head: final norm, the vocab-parallel output GEMM (16-bit) on the
// gathered sequence, Megatron's vocab-parallel cross entropy (logits read and
// written in fp32, 3 all-reduces of one fp32 value per token: max, sum of
// exponentials, target logit; its backward needs no communication).
LayerOps BuildOutputOps(const Model& model, const Parallelism& parallel,
                        const TrainingOptions& training, int64_t heads) {
  const Shapes x = MakeShapes(model, parallel, training);
  Builder b(x);
  const int64_t vocab = PaddedVocab(model, parallel.tp) / parallel.tp;
  const double T = static_cast<double>(x.tokens);
  for (int64_t i = 0; i < heads; ++i) {
    const std::string prefix = i == 0 ? "" : "mtp" + std::to_string(i) + ".";
    b.Norm(prefix + "final_norm", OpRole::kNorm, x.sp_tokens, x.h,
           RecomputeModule::kNone);
    b.ColumnInput(prefix + "output", x.h, RecomputeModule::kNone);
    b.Matmul({.name = prefix + "output",
              .role = OpRole::kOutputLayer,
              .m = x.tokens,
              .n = vocab,
              .k = x.h,
              .precision = GemmPrecision::k16Bit});
    b.Copy(prefix + "cross_entropy", OpRole::kCrossEntropy,
           T * vocab * kFp32 * 2, RecomputeModule::kNone);
    if (x.tp > 1) {
      b.Add(
          CollectiveOp(prefix + "cross_entropy.ar", CollectiveKind::kAllReduce,
                       Group::kTp, T * kFp32 * 3, RecomputeModule::kNone),
          {});
    }
  }
  LayerOps ops = std::move(b).Finish(Recompute{}, false);
  // The output weight, unless tied to an embedding on this same (only)
  // pipeline stage; the final norm. MTP heads' norms are MTP layer params.
  const bool own_weight =
      model.untie_embeddings_and_output_weights() || parallel.pp > 1;
  ops.dense_params =
      (own_weight ? EmbeddingParams(model, PaddedVocab(model, parallel.tp)) /
                        parallel.tp
                  : 0) +
      model.hidden_size();
  ops.dense_tensors = (own_weight ? 1 : 0) + 1;  // output_layer, final norm
  ops.replicated_tensors = 1;
  return ops;
}

}  // namespace moesim::models
