#include "models/memory.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

#include "models/architecture.h"
#include "models/dispatchers.h"
#include "models/params.h"
#include "models/pipeline_schedules.h"
#include "models/routing.h"

namespace moesim::models {
namespace {

// Activation modules of the breakdown, in report order.
enum Module {
  kResidual,   // layer inputs kept for the norms' backward (2 B/elem)
  kLayernorm,  // norm outputs stored by separate norm modules
  kAttention,  // projection inputs, core-attention output and softmax stats
  kQkv,      // Q, K, V held for the attention kernel (MLA: after up-projection)
  kGdn,      // Gated DeltaNet internals
  kMlp,      // dense MLP internals
  kRouter,   // router logits and probabilities (fp32)
  kExperts,  // routed-expert fc1 input/output, probabilities
  kMoeAct,   // routed-expert activation output (fc2 input)
  kSharedExperts,  // shared-expert internals
  kEmbeddingLoss,  // token ids, MTP inputs, output layer input and logits
  kNumModules,
};

constexpr std::array<const char*, kNumModules> kModuleNames = {
    "residual",      "layernorm", "attention", "qkv",     "gdn",
    "mlp",           "router",    "experts",   "moe_act", "shared_experts",
    "embedding_loss"};

using ModuleBytes = std::array<double, kNumModules>;

ModuleBytes& operator+=(ModuleBytes& a, const ModuleBytes& b) {
  for (int i = 0; i < kNumModules; ++i) a[i] += b[i];
  return a;
}

double Sum(const ModuleBytes& a) {
  double s = 0;
  for (double v : a) s += v;
  return s;
}

// Bytes per element of stored activations: bf16 throughout; inputs of
// low-precision GEMMs are kept quantized (MLM moe/README.md "Stores linear
// layer inputs in FP8 instead of BF16"; NVFP4 keeps FP8-sized copies for the
// backward GEMMs, TE's recipe quantizes the backward pass to MXFP8).
constexpr double kAct = 2;
constexpr double kFp32 = 4;

// Allowances outside PyTorch's caching allocator. Each is a stated rule, not a
// measurement; the calibration issue replaces them with measured values.
// CUDA context with cuBLAS/cuDNN handles and TE workspaces: CUDA 12 contexts
// take 0.3-0.6 GiB on Hopper/Blackwell, cuBLAS keeps a 32 MiB workspace per
// stream handle (NVIDIA cuBLAS docs, cublasSetWorkspace), TE several.
constexpr double kCudaContextGiB = 0.75;
// NCCL: NCCL_BUFFSIZE 4 MiB (NCCL docs, env NCCL_BUFFSIZE default) per
// channel and direction, up to 32 channels, for each communicator in use (TP,
// CP, EP, DP, PP): 4 MiB x 2 x 32 = 256 MiB each, two concurrently busy.
constexpr double kNcclGiB = 0.5;
// DeepEP / HybridEP normal-mode NVLink + RDMA buffers, sized by Megatron
// (core/transformer/moe/fused_a2a.py get_buffer) from the hidden size: about
// 1 GB each for DeepSeek-V3's hidden 7168 (derived: rule-of-thumb of the
// DeepEP README's example num_nvl_bytes / num_rdma_bytes).
constexpr double kFlexDispatcherGiB = 2.0;
// TE-scoped CUDA graphs: "a few GB" (NVIDIA/skills@7149a886d5
// nemo-mbridge-perf-cuda-graphs), taken as 2 GiB; full-iteration graphs keep a
// static pool of one more step's activations: "can raise peak 1.5-2x" (same
// source), taken as 0.5x the stored activations.
constexpr double kTeGraphGiB = 2.0;
constexpr double kFullGraphActivationShare = 0.5;

struct Shapes {
  const Model& m;
  const Parallelism& par;
  const TrainingOptions& tr;
  double seq_tokens;  // S: tokens per CP rank per micro-batch (full TP width)
  double sp_tokens;   // T: tokens per rank of sequence-parallel tensors
  double lin;         // bytes per element of a stored GEMM input
  double heads;       // attention heads per TP rank
  double groups;      // KV groups per TP rank
  double expert_tokens;  // token-expert rows entering the grouped GEMM per rank
  double vocab;          // padded vocabulary per TP rank
};

Shapes MakeShapes(const Model& m, const Parallelism& par,
                  const TrainingOptions& tr) {
  const double s =
      static_cast<double>(tr.seq_length) * tr.micro_batch_size / par.cp;
  const double t = par.sequence_parallel ? s / par.tp : s;
  // Balanced dropless (b.3), or token drop's capacity (RoutedExpertRows).
  // Dropless routing as trained holds the busiest EP rank's rows: the peak
  // is that rank's (its grouped GEMMs receive RoutingImbalance x the mean,
  // as the replay prices them).
  double expert_tokens = RoutedExpertRows(t, m.moe_router_topk(),
                                          m.num_moe_experts(), par.etp, tr);
  if (tr.routing == Routing::kDroplessNatural) {
    expert_tokens *= RoutingImbalance(m.num_moe_experts(), par.ep,
                                      tr.routing_skew, tr.routing_histogram);
  }
  return Shapes{m,
                par,
                tr,
                s,
                t,
                IsLowPrecision(tr.precision) ? 1.0 : kAct,
                static_cast<double>(m.num_attention_heads()) / par.tp,
                std::max(1.0, static_cast<double>(QueryGroups(m)) / par.tp),
                expert_tokens,
                static_cast<double>(PaddedVocab(m, par.tp)) / par.tp};
}

// FP8 attention as TE runs it: under the per-tensor recipes only
// (dot_product_attention.py init_fp8_metadata), its Q, K, V in uint8.
bool PerTensorFp8Attention(const TrainingOptions& tr) {
  return tr.fp8_dot_product_attention &&
         (tr.precision == Precision::kFp8CurrentScaling ||
          tr.precision == Precision::kFp8Delayed);
}

// Stored activations of one layer for one micro-batch (memory_flops.md b.3),
// and what its recompute modules free.
struct LayerActivations {
  ModuleBytes stored{};  // after recompute
  double replayed = 0;   // bytes recomputed in backward (the freed share)
  double largest = 0;    // largest single tensor (for the backward working set)
  // Fine-grained activation offloading, per OffloadModule: the GPU bytes its
  // group frees (by module of the breakdown, part of `stored`) and the bytes
  // its copies move to the host (more than it frees where a tensor another
  // module still holds is copied too).
  std::array<ModuleBytes, kNumOffloadModules> offload_freed{};
  std::array<double, kNumOffloadModules> offload_copied{};
};

// One layer's stored activations as LayerBytes adds them up: what stays
// (`Keep`), what recompute frees, and what fine-grained offloading moves.
class LayerAccount {
 public:
  LayerAccount(const Shapes& x, const Recompute& rc, double o_bytes)
      : x_(x), rc_(rc), o_bytes_(o_bytes) {}

  void Keep(Module mod, double bytes, bool recomputed) {
    (recomputed ? freed_ : kept_)[mod] += bytes;
    largest_ = std::max(largest_, bytes);
  }
  // Fine-grained offloading (Megatron-LM@d98e8a64dd
  // pipeline_parallel/fine_grained_activation_offload.py): the tensors
  // autograd saves inside a module's offload context (its
  // FineGrainedActivationOffloadingInterface `with` block) move as one
  // group, each one only when it has min_offloaded_tensor_size elements or
  // more (tensor_need_offloading_checker). `frees`: the GPU copy goes (false
  // where another saved tensor shares its storage).
  void Offload(OffloadModule g, Module mod, double bytes, double element_bytes,
               bool recomputed, bool frees = true) {
    const ActivationOffload& ao = x_.tr.activation_offload;
    if (recomputed || !ao.has(g) || bytes <= 0) return;
    if (bytes / element_bytes < static_cast<double>(ao.min_tensor_elements))
      return;
    const int i = static_cast<int>(g);
    out_.offload_copied[i] += bytes;
    if (frees) out_.offload_freed[i][mod] += bytes;
  }
  // The output O, saved by core attention and (the same tensor in 16 bits,
  // a quantized copy under FP8/FP4) by linear_proj: core_attn's group copies
  // O and frees it only where linear_proj holds its own quantized copy; in
  // 16 bits attn_proj's group copies O again and frees it (attention.py
  // forward: attn_proj's commit releases core_attn_out).
  void OffloadOutput(double o_elements) {
    const double o = o_bytes_ * o_elements;
    Offload(OffloadModule::kCoreAttn, kAttention, o, o_bytes_, false,
            x_.lin < kAct);
    if (x_.lin < kAct) {
      Offload(OffloadModule::kAttnProj, kAttention, x_.lin * o_elements, x_.lin,
              false);
    } else {
      Offload(OffloadModule::kAttnProj, kAttention, o, o_bytes_, false);
    }
  }
  LayerActivations Finish() {
    const double T = x_.sp_tokens, h = x_.m.hidden_size();
    if (rc_.full) {
      // Full recompute keeps only the layer input (checkpointed per group).
      out_.stored = ModuleBytes{};
      out_.stored[kResidual] = kAct * T * h;
      out_.replayed = Sum(kept_) + Sum(freed_);
      out_.offload_freed = {};  // the scenario rules refuse this combination
      out_.offload_copied = {};
    } else {
      out_.stored = kept_;
      out_.replayed = Sum(freed_);
    }
    out_.largest = largest_;
    return out_;
  }

 private:
  const Shapes& x_;
  const Recompute& rc_;
  const double o_bytes_;
  ModuleBytes kept_{};
  ModuleBytes freed_{};
  double largest_ = 0;
  LayerActivations out_;
};

// GQA / MHA attention's stored tensors (LayerBytes).
void AddAttentionMixer(const Shapes& x, const Recompute& rc, double qkv_bytes,
                       double o_bytes, LayerAccount& a) {
  const Model& m = x.m;
  const double h = m.hidden_size(), S = x.seq_tokens, T = x.sp_tokens;
  // TE LayerNormColumnParallelLinear fuses the input norm: it keeps the
  // SP-sharded norm output as the QKV GEMM input; `layernorm` recompute has
  // no separate module to act on here (MCore gpt_layer_specs.py).
  const double d = HeadDim(m);
  const double gate = m.attention_output_gate() ? x.heads * d : 0;
  a.Keep(kAttention, x.lin * T * h, false);
  a.Offload(OffloadModule::kQkvLinear, kAttention, x.lin * T * h, x.lin, false);
  // Q, K, V (and the output gate) saved by the fused attention kernel.
  a.Keep(kQkv,
         qkv_bytes * S * (x.heads * d + 2 * x.groups * d) + kAct * S * gate,
         false);
  a.Offload(OffloadModule::kCoreAttn, kQkv, qkv_bytes * S * x.heads * d,
            qkv_bytes, false);
  for (int kv = 0; kv < 2; ++kv) {
    a.Offload(OffloadModule::kCoreAttn, kQkv, qkv_bytes * S * x.groups * d,
              qkv_bytes, false);
  }
  // Output O (kept by attention and, quantized, by linear_proj), fp32
  // log-sum-exp per head; `core_attn` recompute frees the softmax stats
  // only under TE fused attention.
  a.Keep(
      kAttention,
      o_bytes * S * x.heads * d + (x.lin < kAct ? x.lin * S * x.heads * d : 0),
      false);
  a.OffloadOutput(S * x.heads * d);
  a.Keep(kAttention, kFp32 * S * x.heads, rc.core_attn);
  a.Offload(OffloadModule::kCoreAttn, kAttention, kFp32 * S * x.heads, kFp32,
            rc.core_attn);
}

// Multi-latent attention's stored tensors (LayerBytes).
void AddMlaMixer(const Shapes& x, const Recompute& rc, double qkv_bytes,
                 double o_bytes, LayerAccount& a) {
  const Model& m = x.m;
  const double h = m.hidden_size(), S = x.seq_tokens, T = x.sp_tokens;
  const double dn = m.qk_head_dim(), r = m.qk_pos_emb_head_dim(),
               dv = m.v_head_dim();
  // Separate input_layernorm: its output feeds two down-projections
  // (linear_q_down_proj or linear_q_proj, and linear_kv_down_proj; MLM
  // multi_latent_attention.py _qkv_down_projection). In bf16 both TE
  // Linears save that one tensor; under FP8/FP4 each saves its own
  // quantized copy of it. `layernorm` recompute frees either: MCore sets
  // both to save the original input, which the checkpoint discards
  // (MLASelfAttention.set_for_recompute_input_layernorm).
  a.Keep(kLayernorm, (x.lin < kAct ? 2 * x.lin : kAct) * T * h, rc.layernorm);
  // The down and up projections, their norms and RoPE run inside
  // qkv_linear's group (multi_latent_attention.py forward).
  for (int copy = 0; copy < (x.lin < kAct ? 2 : 1); ++copy) {
    a.Offload(OffloadModule::kQkvLinear, kLayernorm,
              (x.lin < kAct ? x.lin : kAct) * T * h,
              x.lin < kAct ? x.lin : kAct, rc.layernorm);
  }
  // The q/kv norms are fused into the up-projections (TE
  // LayerNormColumnParallelLinear), which save the norm input (also the
  // `mla_up_proj` checkpoint's input, so kept either way) and the norm
  // output as the GEMM input, produced inside the checkpointed
  // qkv_up_proj_and_rope_apply: `mla_up_proj` discards the latter.
  if (m.q_lora_rank() > 0) {
    a.Keep(kAttention, kAct * T * m.q_lora_rank(), false);  // q_norm input
    a.Keep(kAttention, x.lin * T * m.q_lora_rank(),
           rc.mla_up_proj);  // q_up input
    a.Offload(OffloadModule::kQkvLinear, kAttention, kAct * T * m.q_lora_rank(),
              kAct, false);
    a.Offload(OffloadModule::kQkvLinear, kAttention,
              x.lin * T * m.q_lora_rank(), x.lin, rc.mla_up_proj);
  }
  a.Keep(kAttention, kAct * T * (m.kv_lora_rank() + r),
         false);  // kv_norm input, k_pos_emb
  a.Keep(kAttention, x.lin * T * m.kv_lora_rank(),
         rc.mla_up_proj);  // kv_up input
  a.Offload(OffloadModule::kQkvLinear, kAttention,
            kAct * T * (m.kv_lora_rank() + r), kAct, false);
  a.Offload(OffloadModule::kQkvLinear, kAttention, x.lin * T * m.kv_lora_rank(),
            x.lin, rc.mla_up_proj);
  // Q and K (with RoPE) and V per local head, bf16 for the fused attention
  // kernel under every GEMM recipe (FP8 under per-tensor FP8 attention,
  // above): `mla_up_proj` discards them. RoPE (fused
  // or not) saves only cos/sin, so the up-projection outputs are not
  // stored (MLM multi_latent_attention.py qkv_up_proj_and_rope_apply).
  a.Keep(kQkv, qkv_bytes * S * x.heads * (2 * (dn + r) + dv), rc.mla_up_proj);
  for (const double dim : {dn + r, dn + r, dv}) {
    a.Offload(OffloadModule::kCoreAttn, kQkv, qkv_bytes * S * x.heads * dim,
              qkv_bytes, rc.mla_up_proj);
  }
  a.Keep(kAttention,
         o_bytes * S * x.heads * dv +
             (x.lin < kAct ? x.lin * S * x.heads * dv : 0),
         false);
  a.OffloadOutput(S * x.heads * dv);
  a.Keep(kAttention, kFp32 * S * x.heads, rc.core_attn);
  a.Offload(OffloadModule::kCoreAttn, kAttention, kFp32 * S * x.heads, kFp32,
            rc.core_attn);
}

// Gated DeltaNet's stored tensors (LayerBytes).
void AddGdnMixer(const Shapes& x, LayerAccount& a) {
  const Model& m = x.m;
  const double h = m.hidden_size(), S = x.seq_tokens, T = x.sp_tokens;
  const double qk = m.linear_num_key_heads() * m.linear_key_head_dim();
  const double v = m.linear_num_value_heads() * m.linear_value_head_dim();
  const double nv = m.linear_num_value_heads();
  a.Keep(kGdn, x.lin * T * h, false);  // in_proj input
  a.Keep(kGdn, kAct * S / x.par.tp * (2 * qk + 2 * v + 2 * nv),
         false);                                            // in_proj output
  a.Keep(kGdn, kAct * S / x.par.tp * (2 * qk + v), false);  // conv output
  a.Keep(kGdn, kAct * S / x.par.tp * v, false);             // core output
  a.Keep(kGdn, x.lin * S / x.par.tp * v, false);            // out_proj input
}

// The MLP's or MoE layer's stored tensors (LayerBytes).
void AddMlpOrMoe(const Shapes& x, LayerKind kind, const Recompute& rc,
                 LayerAccount& a) {
  const Model& m = x.m;
  const double h = m.hidden_size(), S = x.seq_tokens, T = x.sp_tokens;
  a.Keep(kResidual, kAct * T * h, false);  // pre-MLP norm input
  // A separate pre_mlp_layernorm in MoE layers (mlp_norm's group); dense
  // MLPs fuse it into linear_fc1.
  if (kind.moe)
    a.Offload(OffloadModule::kMlpNorm, kResidual, kAct * T * h, kAct, false);
  const double fc1_factor = IsGated(m) ? 2 : 1;
  if (!kind.moe) {
    // Dense MLP with the norm fused into fc1 (TE spec); `mlp` recompute keeps
    // only the MLP input (already counted as the residual).
    const double f = m.ffn_hidden_size() / static_cast<double>(x.par.tp);
    a.Keep(kMlp, x.lin * T * h, rc.mlp);
    a.Keep(kMlp, kAct * S * fc1_factor * f, rc.mlp);
    a.Keep(kMlp, x.lin * S * f, rc.mlp);
  } else {
    const bool whole = rc.moe;  // `moe` recompute replays the whole MoE layer
    // Separate pre_mlp_layernorm: output feeds router, permute, shared experts.
    // The router's gating GEMM saves it in bf16 (RouterGatingLinearFunction
    // saves its input, casting to moe_router_dtype inside); in bf16 the
    // shared experts' fc1 saves the same tensor, under FP8/FP4 its own
    // quantized copy (counted with the shared experts).
    a.Keep(kLayernorm, kAct * T * h, rc.layernorm || whole);
    // Router: fp32 logits and scores (moe_router_dtype fp32), E per token.
    a.Keep(kRouter, 2 * kFp32 * T * m.num_moe_experts(), whole);
    const double fe = MoeFfnHidden(m) / static_cast<double>(x.par.etp);
    const double n = x.expert_tokens;
    a.Keep(kExperts, x.lin * n * h,
           whole);  // grouped fc1 input (dispatched tokens)
    a.Keep(kExperts, kAct * n * fc1_factor * fe,
           whole);                       // fc1 output (activation input)
    a.Keep(kExperts, kFp32 * n, whole);  // routing probabilities
    // experts.py TEGroupedMLP.forward: expert_fc1's group wraps linear_fc1
    // (its saved input), moe_act's the activation (its input, the fc1
    // output, and the probabilities it weights by); linear_fc2 runs outside
    // both, so its input is not offloaded.
    a.Offload(OffloadModule::kExpertFc1, kExperts, x.lin * n * h, x.lin, whole);
    a.Offload(OffloadModule::kMoeAct, kExperts, kAct * n * fc1_factor * fe,
              kAct, whole);
    a.Offload(OffloadModule::kMoeAct, kExperts, kFp32 * n, kFp32, whole);
    // Activation output = fc2 input, saved by fc2 (TE GroupedLinear) in bf16,
    // or as its quantized copy under FP8/FP4. `moe_act` wraps the activation
    // in CheckpointWithoutOutput (input: the fc1 output, kept above) and
    // discards its output after fc2; under FP8/FP4 MCore makes fc2 save the
    // original input instead of the quantized copy (TEGroupedMLP.__init__
    // set_save_original_input), so the freed bytes are what fc2 would have
    // kept: x.lin per element.
    a.Keep(kMoeAct, x.lin * n * fe, rc.moe_act || whole);
    if (IsClampedQuickGeglu(m)) {
      // GPT-OSS (models/layer_ops.cc AddClampedGluPasses): the eager clamps
      // save their inputs, views of the fc1 output (kept above), and the
      // fused activation saves the clamped torch.cat copy, a second n x 2f
      // tensor. Under `moe_act` recompute the checkpoint keeps only the fc1
      // output and discards both.
      a.Keep(kMoeAct, kAct * n * fc1_factor * fe, rc.moe_act || whole);
      a.Offload(OffloadModule::kMoeAct, kMoeAct, kAct * n * fc1_factor * fe,
                kAct, rc.moe_act || whole);
    }
    if (m.moe_shared_expert_intermediate_size() > 0) {
      const double fs = m.moe_shared_expert_intermediate_size() /
                        static_cast<double>(x.par.tp);
      const bool shared = rc.shared_experts || whole;
      // fc1 input. Under FP8/FP4 fc1's quantized copy of the pre-MLP norm
      // output, which `layernorm` recompute also frees (MCore
      // MoELayer.set_for_recompute_pre_mlp_layernorm makes fc1 save the
      // original input, which the checkpoint discards). In 16 bits fc1 saves
      // the norm output itself, the tensor the router already keeps
      // (RouterGatingLinearFunction saves its uncast input), counted above.
      if (x.lin < kAct) {
        a.Keep(kSharedExperts, x.lin * T * h, shared || rc.layernorm);
      }
      a.Keep(kSharedExperts, kAct * S * fc1_factor * fs, shared);
      a.Keep(kSharedExperts, x.lin * S * fs, shared);
    }
  }
}

LayerActivations LayerBytes(const Shapes& x, LayerKind kind,
                            const Recompute& rc) {
  const double h = x.m.hidden_size(), T = x.sp_tokens;
  // FP8 attention under a per-tensor recipe saves Q, K, V for the backward as
  // FP8 tensors instead of 16-bit ones, and under delayed scaling O too
  // (TE FusedAttnFunc.forward: fp8_tensors = (q_fp8, k_fp8, v_fp8, out_fp8),
  // with NVTE_DPA_FP8CS_O_in_F16=1, the default, keeping O in 16 bits under
  // current scaling). MXFP8 attention is left at 16 bits: the TE code at hand
  // (dot_product_attention.py init_fp8_metadata) runs FP8 attention under
  // per-tensor recipes only, so what MXFP8 attention saves is not known.
  const bool fp8_attention = PerTensorFp8Attention(x.tr);
  const double qkv_bytes = fp8_attention ? 1 : kAct;
  const double o_bytes =
      fp8_attention && x.tr.precision == Precision::kFp8Delayed ? 1 : kAct;
  LayerAccount a(x, rc, o_bytes);
  // Mixer. The input norm's input is the residual stream (kept by the norm).
  // Offloaded with the norm's group: attn_norm where the norm is a separate
  // module (MLA), qkv_linear where TE fuses it into linear_qkv (GQA/MHA).
  a.Keep(kResidual, kAct * T * h, false);
  if (kind.mixer == Mixer::kMla) {
    a.Offload(OffloadModule::kAttnNorm, kResidual, kAct * T * h, kAct, false);
  } else if (kind.mixer == Mixer::kAttention) {
    a.Offload(OffloadModule::kQkvLinear, kResidual, kAct * T * h, kAct, false);
  }
  switch (kind.mixer) {
    case Mixer::kAttention:
      AddAttentionMixer(x, rc, qkv_bytes, o_bytes, a);
      break;
    case Mixer::kMla:
      AddMlaMixer(x, rc, qkv_bytes, o_bytes, a);
      break;
    case Mixer::kGatedDeltaNet:
      AddGdnMixer(x, a);
      break;
  }
  AddMlpOrMoe(x, kind, rc, a);
  return a.Finish();
}

// The forward working set of Transformer Engine's CP exchange in one
// softmax-attention layer (TransformerEngine@d0067d0 context_parallel.py):
//  - p2p (AttnFuncWithCPAndKVP2P.forward): every step's received K/V buffer
//    stays in the p2p_comm_buffers list, and every step's partial output
//    (out_per_step, 16-bit) and softmax statistics (fp32) until the
//    corrections after the loop, so ring x (K/V + output + statistics) of
//    the rank's chunk are held at the loop's end; a2a+p2p holds the same
//    on its outer ring for the inner group's gathered tokens and 1/inner
//    of the heads.
//  - allgather: the gathered K/V of the whole sequence (cp x the local).
//  - a2a: the all-to-all outputs are the local Q, K, V resized (head split
//    for sequence split): no more than the layer already holds.
// K/V move in the attention's input dtype (uint8 with per-tensor FP8
// attention).
double CpExchangeTransient(const Shapes& x, LayerKind kind) {
  const int cp = x.par.cp;
  if (cp <= 1 || kind.mixer == Mixer::kGatedDeltaNet) return 0;
  const Model& m = x.m;
  const bool mla = m.multi_latent_attention();
  const double dqk = mla ? m.qk_head_dim() + m.qk_pos_emb_head_dim()
                         : static_cast<double>(HeadDim(m));
  const double dv = mla ? m.v_head_dim() : static_cast<double>(HeadDim(m));
  const double heads_kv = mla ? x.heads : x.groups;
  const double element = PerTensorFp8Attention(x.tr) ? 1.0 : kAct;
  double tokens = x.seq_tokens, kv_heads = heads_kv, q_heads = x.heads;
  int ring = cp;
  switch (x.tr.cp_comm_type) {
    case CpCommType::kA2a:
      return 0;
    case CpCommType::kAllGather:
      return cp * tokens * heads_kv * (dqk + dv) * element;
    case CpCommType::kA2aP2p: {
      const int inner = x.tr.hierarchical_cp_sizes.empty()
                            ? 1
                            : x.tr.hierarchical_cp_sizes.front();
      tokens *= inner;
      kv_heads = std::max(1.0, kv_heads / inner);
      q_heads = std::max(1.0, q_heads / inner);
      ring = cp / std::max(inner, 1);
      break;
    }
    case CpCommType::kP2p:
      break;
  }
  if (ring <= 1) return 0;
  const double kv = tokens * kv_heads * (dqk + dv) * element;
  const double out = tokens * q_heads * dv * kAct + tokens * q_heads * kFp32;
  return ring * (kv + out);
}

// Activations of one virtual stage for one micro-batch.
struct ChunkActivations {
  ModuleBytes bytes{};
  double transient = 0;  // the largest backward working set of one layer
  std::vector<double> offloaded;  // stored bytes of each offloaded layer
  // Fine-grained offloading, after the fraction rule: GPU bytes each module
  // saves per micro-batch, and per layer position the bytes copied to the
  // host and the GPU bytes freed.
  std::array<double, kNumOffloadModules> offload_saved{};
  std::vector<double> layer_copy_bytes;
  std::vector<double> layer_freed_bytes;
};

// Fine-grained offloading's eligible groups of one chunk, (position,
// module) in forward order, reduced by --activation-offload-fraction as
// PipelineOffloadManager.post_warmup_callback does: the first
// floor-complement of them stay offloaded, int(count x (1 - fraction)) of
// the last ones are kept on the GPU.
void ApplyFineGrainedOffload(const ActivationOffload& ao,
                             const std::vector<LayerActivations>& layers,
                             ChunkActivations& c) {
  const size_t n = layers.size();
  c.layer_copy_bytes.assign(n, 0);
  c.layer_freed_bytes.assign(n, 0);
  if (!ao.any()) return;
  std::vector<std::pair<size_t, int>> eligible;
  for (size_t p = 0; p < n; ++p) {
    for (int g = 0; g < kNumOffloadModules; ++g) {
      if (layers[p].offload_copied[g] > 0) eligible.push_back({p, g});
    }
  }
  const size_t kept = static_cast<size_t>(static_cast<double>(eligible.size()) *
                                          (1 - ao.fraction));
  eligible.resize(eligible.size() - std::min(kept, eligible.size()));
  for (const auto& [p, g] : eligible) {
    const ModuleBytes& freed = layers[p].offload_freed[g];
    for (int i = 0; i < kNumModules; ++i) c.bytes[i] -= freed[i];
    c.offload_saved[g] += Sum(freed);
    c.layer_copy_bytes[p] += layers[p].offload_copied[g];
    c.layer_freed_bytes[p] += Sum(freed);
  }
}

ChunkActivations ChunkBytes(const Shapes& x, const VirtualStage& stage) {
  const Model& m = x.m;
  const Recompute& rc = x.tr.recompute;
  ChunkActivations c;
  // cpu_offloading (TE's activation offload context, which Megatron wraps
  // around its first cpu_offloading_num_layers layers; PP 1 only): an
  // offloaded layer's activations leave the GPU as their copy to the host
  // completes, so the GPU holds the largest one in flight at most (stated
  // rule: one copy at a time on the copy stream), not all of them.
  const int64_t offloaded =
      x.tr.cpu_offloading ? x.tr.cpu_offloading_num_layers : 0;
  ModuleBytes in_flight{};
  std::vector<LayerActivations> layers;  // for fine-grained offloading
  auto add_layer = [&](LayerKind kind, int64_t position) {
    // Full recompute, block method: only the first full_num_layers layers of
    // the chunk are recomputed, the others keep everything.
    const bool block_kept =
        rc.full && rc.full_block && position >= rc.full_num_layers;
    LayerActivations l = LayerBytes(x, kind, block_kept ? Recompute{} : rc);
    // Uniform method: one stored input per group of full_num_layers layers.
    if (rc.full && !rc.full_block && position % rc.full_num_layers != 0)
      l.stored = ModuleBytes{};
    c.transient = std::max(c.transient, l.replayed + 2 * l.largest);
    c.transient = std::max(c.transient, CpExchangeTransient(x, kind));
    layers.push_back(l);
    if (position < offloaded) {
      c.offloaded.push_back(Sum(l.stored));
      if (Sum(l.stored) > Sum(in_flight)) in_flight = l.stored;
      return;
    }
    c.bytes += l.stored;
  };
  int64_t position = 0;
  for (int64_t layer : stage.layers)
    add_layer(DecoderLayer(m, layer), position++);
  const double h = m.hidden_size(), S = x.seq_tokens, T = x.sp_tokens;
  for (int64_t i = 0; i < stage.mtp_layers; ++i) {
    add_layer(MtpLayer(m), position++);
    // MTP: the shifted embedding and hidden state, normed and concatenated
    // (2h) as the eh-projection input.
    c.bytes[kEmbeddingLoss] += 2 * kAct * T * h + x.lin * T * 2 * h;
  }
  c.bytes += in_flight;
  ApplyFineGrainedOffload(x.tr.activation_offload, layers, c);
  if (stage.embedding) c.bytes[kEmbeddingLoss] += 8 * S;  // int64 token ids
  if (stage.loss) {
    // Final norm input, output-layer input and bf16 logits for the fused
    // cross entropy, per output head (main + each MTP depth).
    const double heads = 1 + static_cast<double>(m.mtp_num_layers());
    c.bytes[kEmbeddingLoss] +=
        kAct * T * h + heads * (kAct * T * h + kAct * S * x.vocab);
    // The loss's backward upcasts one head's logits to fp32.
    c.transient = std::max(c.transient, kFp32 * S * x.vocab);
  }
  return c;
}

// Micro-batches of each chunk stored at a stage's peak: `in_flight` past
// their forward and before their backward (or input gradient), `awaiting`
// past their input gradient and before their weight gradient (a schedule
// that splits the backward).
struct PeakCounts {
  std::vector<int64_t> in_flight, awaiting;
};

// Walks pipeline rank `rank`'s schedule (models/pipeline_schedules.h) far
// enough to reach the peak of the summed stored bytes: a forward stores
// `chunk_bytes`, a backward frees them; a split backward's input gradient
// frees all but `weight_bytes`, what its weight gradient still reads, and
// the weight gradient frees those (ZB-H1: (pp - r) stored forwards plus up
// to r micro-batches awaiting their W; Qi et al., ICLR 2024, sec. 3.1). EP
// overlap (merged forward-backward 1F1B) adds one warm-up forward but runs
// each later forward beside a backward that frees layer by layer: the peak
// is the same warmup + 1 stored forwards ("no extra memory",
// Megatron-Bridge moe-optimization.md).
PeakCounts PeakInFlight(int rank, int pp, int vpp, int64_t microbatches,
                        PipelineScheduleKind kind,
                        const std::vector<double>& chunk_bytes,
                        const std::vector<double>& weight_bytes) {
  const std::unique_ptr<PipelineSchedule> schedule =
      MakeSchedule(kind, rank, pp, vpp, microbatches);
  const int64_t group = int64_t{pp} * vpp, warmup = schedule->warmup();
  PeakCounts now{std::vector<int64_t>(vpp, 0), std::vector<int64_t>(vpp, 0)};
  PeakCounts best = now;
  double bytes = 0, best_bytes = -1;
  // Past the warm-up the order repeats with period p * v micro-batches at
  // the latest: the warm-up and its length again plus two periods of
  // micro-batches (two steps each, three where the backward splits) reach
  // the peak.
  const int64_t passes = TraitsOf(kind).splits_backward ? 3 : 2;
  const int64_t total = schedule->size() / passes;
  const int64_t steps =
      warmup + passes * std::min(total - warmup, warmup + 2 * group);
  for (int64_t i = 0; i < steps; ++i) {
    const ScheduleStep step = (*schedule)[i];
    const int c = step.chunk;
    switch (step.kind) {
      case StepKind::kForward:
        ++now.in_flight[c];
        bytes += chunk_bytes[c];
        break;
      case StepKind::kBackward:
        --now.in_flight[c];
        bytes -= chunk_bytes[c];
        break;
      case StepKind::kInputGrad:
        --now.in_flight[c];
        ++now.awaiting[c];
        bytes -= chunk_bytes[c] - weight_bytes[c];
        break;
      case StepKind::kWeightGrad:
        --now.awaiting[c];
        bytes -= weight_bytes[c];
        break;
    }
    if (bytes > best_bytes) {
      best_bytes = bytes;
      best = now;
    }
  }
  return best;
}

double GiB(double gib) { return gib * kGiB; }

// The stage's stored activations at the pipeline schedule's peak (its
// micro-batches in flight per chunk, returned) and its transient.
std::vector<int64_t> AddActivations(int rank, const PipelinePlan& plan,
                                    const TrainingOptions& tr,
                                    const std::vector<ChunkActivations>& chunks,
                                    StageMemory& st) {
  std::vector<double> chunk_bytes, weight_bytes;
  double transient = 0;
  for (const ChunkActivations& c : chunks) {
    chunk_bytes.push_back(Sum(c.bytes));
    // What a split backward's weight gradient still reads: the stored
    // activations but the output layer's and the loss's, whose weight
    // gradient Megatron runs in the backward (not a TE linear); an upper
    // bound, the norms' and attention's own tensors being freed too.
    weight_bytes.push_back(chunk_bytes.back() - c.bytes[kEmbeddingLoss]);
    transient = std::max(transient, c.transient);
  }
  st.chunk_activation_bytes = chunk_bytes;
  if (TraitsOf(tr.pipeline_schedule).splits_backward)
    st.chunk_weight_grad_bytes = weight_bytes;
  const PeakCounts peak =
      PeakInFlight(rank, plan.pp, plan.vpp, tr.num_microbatches(),
                   tr.pipeline_schedule, chunk_bytes, weight_bytes);
  std::vector<int64_t> in_flight(plan.vpp);
  ModuleBytes total{};
  for (int chunk = 0; chunk < plan.vpp; ++chunk) {
    const int64_t awaiting = peak.awaiting[chunk];
    in_flight[chunk] = peak.in_flight[chunk] + awaiting;
    st.peak_in_flight += in_flight[chunk];
    for (int i = 0; i < kNumModules; ++i) {
      total[i] +=
          (i == kEmbeddingLoss ? peak.in_flight[chunk] : in_flight[chunk]) *
          chunks[chunk].bytes[i];
    }
  }
  for (int i = 0; i < kNumModules; ++i) {
    if (total[i] > 0) st.activations.push_back({kModuleNames[i], total[i]});
  }
  st.activations_bytes = Sum(total);
  st.transient_bytes = transient;
  return in_flight;
}

// Fine-grained offloading: the saving per module over the stored
// micro-batches, the host bytes they hold, and what stays on the GPU
// beyond the offloaded share (stated rules): one layer's groups in
// flight (a copy to the host not yet done, or the next layer's reload
// already back), and the last layer's groups of the chunk whose
// backward comes first, which post_warmup_callback keeps on the GPU
// (the offload margin) as should_bulk_offload does for a chunk whose
// backward follows its forward at once.
void AddActivationOffload(const TrainingOptions& tr, int vpp,
                          const std::vector<ChunkActivations>& chunks,
                          const std::vector<int64_t>& in_flight,
                          StageMemory& st) {
  std::array<double, kNumOffloadModules> saved{};
  double in_flight_layer = 0, margin = 0;
  for (int chunk = 0; chunk < vpp; ++chunk) {
    const ChunkActivations& c = chunks[chunk];
    for (int g = 0; g < kNumOffloadModules; ++g)
      saved[g] += in_flight[chunk] * c.offload_saved[g];
    for (size_t p = 0; p < c.layer_copy_bytes.size(); ++p) {
      st.activation_host_bytes += in_flight[chunk] * c.layer_copy_bytes[p];
      in_flight_layer = std::max(in_flight_layer, c.layer_freed_bytes[p]);
    }
    for (size_t p = c.layer_freed_bytes.size(); p-- > 0;) {
      if (c.layer_freed_bytes[p] > 0) {
        margin = std::max(margin, c.layer_freed_bytes[p]);
        break;
      }
    }
    st.offload_layer_copy_bytes.push_back(c.layer_copy_bytes);
  }
  for (int g = 0; g < kNumOffloadModules; ++g) {
    if (tr.activation_offload.modules[g]) {
      st.offload_saved.push_back({kOffloadModuleNames[g], saved[g]});
    }
  }
  if (in_flight_layer + margin > 0) {
    st.activations.push_back({"offload_in_flight", in_flight_layer + margin});
    st.activations_bytes += in_flight_layer + margin;
  }
}

// The stage's buffers (CUDA context, NCCL, the fused dispatcher's, the
// CUDA-graph pool) and its peak.
void AddBuffersAndPeak(const Model& m, const Parallelism& par,
                       const TrainingOptions& tr, StageMemory& st) {
  st.buffers.push_back({"cuda_context", GiB(kCudaContextGiB)});
  st.buffers.push_back({"nccl", GiB(kNcclGiB)});
  if (m.num_moe_experts() > 0 && par.ep > 1 && TraitsOf(tr.dispatcher).fused) {
    st.buffers.push_back({"dispatcher", GiB(kFlexDispatcherGiB)});
  }
  if (tr.cuda_graph.full_iteration) {
    st.buffers.push_back(
        {"cuda_graph_pool", kFullGraphActivationShare * st.activations_bytes});
  } else if (tr.cuda_graph.any()) {
    st.buffers.push_back({"cuda_graph_pool", GiB(kTeGraphGiB)});
  }
  for (const NamedBytes& buffer : st.buffers) st.buffers_bytes += buffer.bytes;

  st.allocated_peak_bytes = st.params_bytes + st.fp8_weight_bytes +
                            st.grads_bytes + st.fsdp_unit_bytes +
                            st.optimizer_bytes + st.activations_bytes +
                            st.transient_bytes;
  if (tr.offload_optimizer_states) {
    // The step's own peak: the states back, the activations gone.
    st.optimizer_step_bytes = st.params_bytes + st.fp8_weight_bytes +
                              st.grads_bytes + st.optimizer_host_bytes;
    st.allocated_peak_bytes =
        std::max(st.allocated_peak_bytes, st.optimizer_step_bytes);
  }
  st.peak_bytes = st.allocated_peak_bytes + st.buffers_bytes;
}

}  // namespace

MemoryEstimate EstimateMemory(const Model& m, const PipelinePlan& plan,
                              const Parallelism& par, const TrainingOptions& tr,
                              double capacity_bytes) {
  const Shapes x = MakeShapes(m, par, tr);
  const int64_t vocab_rows = PaddedVocab(m, par.tp);
  const int64_t embedding = EmbeddingParams(m, vocab_rows) / par.tp;
  const double dense_shard =
      tr.distributed_optimizer ? double(par.dp) * par.cp : 1.0;
  const double expert_shard = tr.distributed_optimizer ? double(par.edp) : 1.0;
  const double optimizer_bytes_per_param =
      tr.main_param_bytes + 2.0 * tr.exp_avg_bytes;

  MemoryEstimate est;
  est.capacity_bytes = capacity_bytes;
  for (int rank = 0; rank < plan.pp; ++rank) {
    StageMemory st;
    st.pp_rank = rank;
    // Parameters of this rank's chunks, as Megatron shards them (a.2).
    ParamGroups layers;
    int64_t vocab_tables = 0;
    std::vector<ChunkActivations> chunks;
    // The largest layer's parameters on this GPU (Megatron-FSDP's unit).
    double unit_params = 0;
    for (int chunk = 0; chunk < plan.vpp; ++chunk) {
      const VirtualStage& stage = plan.Stage(rank, chunk);
      for (int64_t layer : stage.layers) {
        const ParamGroups p = DecoderLayerParams(m, layer);
        layers += p;
        unit_params = std::max(
            unit_params, double(p.tp) / par.tp + double(p.replicated) +
                             double(p.experts) / (double(par.ep) * par.etp));
      }
      for (int64_t i = 0; i < stage.mtp_layers; ++i)
        layers += MtpLayerParams(m);
      if (stage.embedding) ++vocab_tables;
      // An MTP stage without the embedding builds its own (MLM gpt_model.py).
      if (stage.mtp_layers > 0 && !stage.embedding) ++vocab_tables;
      // Output layer: untied, or a tied copy away from the first stage.
      if (stage.loss &&
          (m.untie_embeddings_and_output_weights() || !stage.embedding)) {
        ++vocab_tables;
      }
      chunks.push_back(ChunkBytes(x, stage));
    }
    const double layer_dense =
        double(layers.tp) / par.tp + double(layers.replicated);
    const double experts = double(layers.experts) / (double(par.ep) * par.etp);
    const double dense = layer_dense + double(vocab_tables) * embedding;
    st.params = static_cast<int64_t>(dense + experts);
    const double decoder_weights = layer_dense + experts;

    // Weights: bf16, or FP8 for decoder GEMMs with --fp8-param-gather; FP8/FP4
    // recipes cache the quantized weight and its transpose across
    // micro-batches (TE is_first_microbatch caching; memory_flops.md a.3).
    const bool low = IsLowPrecision(tr.precision);
    const double cached_copy =
        tr.precision == Precision::kNvfp4 ? 0.5 + 1.0 / 16 : 1.0;
    if (low && tr.fp8_param_gather) {
      st.params_bytes = 1.0 * decoder_weights + kAct * (dense - layer_dense);
      st.fp8_weight_bytes =
          cached_copy * decoder_weights;  // the columnwise copy
    } else {
      st.params_bytes = kAct * (dense + experts);
      st.fp8_weight_bytes = low ? 2 * cached_copy * decoder_weights : 0;
    }
    st.grads_bytes = double(tr.main_grad_bytes) * (dense + experts);
    const double optimizer = optimizer_bytes_per_param *
                             (dense / dense_shard + experts / expert_shard);
    st.optimizer_bytes = optimizer * (1 - tr.optimizer_offload_fraction);
    st.optimizer_host_bytes = optimizer * tr.optimizer_offload_fraction;
    if (tr.offload_optimizer_states) {
      // OptimizerStateOffloader (Megatron-Core, optimizer/cpu_offloading/
      // optimizer_state_offloader.py): master weights and both moments
      // leave the GPU after each step (D2H, then their storage resized to
      // 0) and return for the next (H2D, sync_before_step): on the GPU only
      // while the optimizer runs, when no activations are held.
      st.optimizer_host_bytes = optimizer;
      st.optimizer_bytes = 0;
    }
    // Megatron-FSDP shards weights (optim_grads_params) and gradients
    // (optim_grads and up) across the data-parallel group like the optimizer
    // state, and holds two layers whole (the one computing and the one
    // prefetched; stated rule) in the same dtypes. Its FP8 transpose cache is
    // off under FSDP (Megatron-Bridge set_mcore_fsdp_configs:
    // keep_fp8_transpose_cache False), so cached FP8 copies exist for the
    // whole layers only.
    const double shards = dense / dense_shard + experts / expert_shard;
    const double whole = std::min(2 * unit_params, decoder_weights);
    if (tr.shard_params && decoder_weights > 0) {
      const double weight_bytes = st.params_bytes / (dense + experts);
      const double fp8_bytes = st.fp8_weight_bytes / decoder_weights;
      st.params_bytes = weight_bytes * shards;
      st.fp8_weight_bytes = fp8_bytes * whole;
      st.fsdp_unit_bytes += weight_bytes * whole;
    }
    if (tr.shard_grads) {
      st.grads_bytes = double(tr.main_grad_bytes) * shards;
      st.fsdp_unit_bytes += double(tr.main_grad_bytes) * whole;
    }

    // Activations at the pipeline schedule's peak.
    const std::vector<int64_t> in_flight =
        AddActivations(rank, plan, tr, chunks, st);
    if (tr.activation_offload.any()) {
      AddActivationOffload(tr, plan.vpp, chunks, in_flight, st);
    }
    // cpu_offloading needs PP 1 (one chunk) and keeps one micro-batch alive.
    st.offloaded_layer_bytes = chunks[0].offloaded;
    for (double bytes : chunks[0].offloaded) st.activation_host_bytes += bytes;

    AddBuffersAndPeak(m, par, tr, st);
    if (st.peak_bytes > est.peak_bytes) {
      est.peak_bytes = st.peak_bytes;
      est.allocated_peak_bytes = st.allocated_peak_bytes;
      est.busiest_rank = rank;
    }
    est.stages.push_back(std::move(st));
  }
  est.margin_bytes = capacity_bytes - est.peak_bytes;
  est.fits = est.margin_bytes >= 0;
  return est;
}

}  // namespace moesim::models
