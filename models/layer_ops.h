// models::LayerOps: what one layer computes and communicates for one
// micro-batch on one GPU, op by op, in Megatron-Core's execution order. It
// knows nothing of time: shapes, FLOPs, bytes and the parallel group of each
// collective. sim:: prices each op (calibration::CostModel, the network
// model) and places it on a stream.
//
// Conventions (one GPU of the layout; T = seq x mbs / cp local tokens):
//  - Linear layers are GEMMs C[m x n] = A[m x k] B[k x n] with m = tokens
//    (T for column/row-parallel layers under sequence parallel, since TP
//    all-gathers the sequence before them), n, k per TP shard. Backward has a
//    dgrad (m x k x n) and a wgrad (n x k x m, i.e. m = out features,
//    k = tokens), in that order per layer, as TE runs them.
//  - Core attention is one op whose `attention` holds the local query block
//    against the full key/value length (seq_q = seq/cp x mbs folded into
//    batch, seq_kv = seq): the replay splits it into the 2 x cp load-balanced
//    ring blocks when cp > 1. Heads are per TP rank.
//  - Memory-bound kernels name a calibration/tables/<gpu>/memory_bound.csv
//    kernel and the bytes they read plus write.
//  - Collectives use the nccl-tests byte convention of topology/collectives.h
//    (all-gather / reduce-scatter: the full output / input buffer; all-to-all:
//    what one rank sends in total).
//  - MoE dispatch and combine are one kDispatch op each (tokens, top-k,
//    hidden, bytes per element): the replay expands them per dispatcher
//    (permute + NCCL all-to-all + chunk sort for alltoall).
//  - Ops carry the recompute module they belong to (MCore names): the
//    replay replays a layer's recomputed forward ops before its backward.
#ifndef MOESIM_MODELS_LAYER_OPS_H_
#define MOESIM_MODELS_LAYER_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "models/architecture.h"
#include "models/model.pb.h"
#include "models/training.h"

namespace moesim::models {

enum class OpKind {
  kGemm,         // m x n x k
  kGroupedGemm,  // groups GEMMs of m x n x k each (local experts, balanced)
  kAttention,    // softmax core attention (flash), `attention`
  kMemoryBound,  // `kernel`, `bytes`
  kCollective,   // `collective` over `group`, `bytes`
  kDispatch,     // MoE dispatch / combine over EP, `dispatch`
};

enum class Pass { kForward, kDgrad, kWgrad };

// The parallel group a collective runs over.
enum class Group { kTp, kCp, kEp, kEtp, kDp, kEdp, kPp };

enum class CollectiveKind { kAllGather, kReduceScatter, kAllReduce, kAllToAll };

// GEMM input precision: 16-bit (router, attention projections kept in bf16 by
// the recipe, embedding/output layer) or the scenario's low precision (FP8 /
// MXFP8 / NVFP4 linear layers; 16-bit when the scenario is BF16).
enum class GemmPrecision { k16Bit, kTraining };

// The CUDA-graph scope (Megatron --cuda-graph-scope; TE graphs a module's
// forward and its backward) an op belongs to; kNone: never graphed except by
// a full-iteration graph.
enum class GraphScope {
  kNone,           // embedding, output layer, loss
  kAttn,           // the mixer block: norms, projections, core attention
  kMlp,            // dense MLP block
  kMoeRouter,      // pre-MLP norm, router GEMM and top-k
  kMoePreprocess,  // the dispatcher's preprocessing before the all-to-all
  kMoe,            // the rest of the MoE block (dispatch on, experts)
};

// What an op is in Megatron-Core's layer, whatever its display name: the
// host model (sim/host_calls.cc), pricing (sim/op_pricing.cc) and the MoE
// block's bounds (sim/moe_layer.cc) key on it, so renaming an op changes
// no prediction. The builder (layer_ops.cc) sets every op's role; an op's
// dgrad, wgrad and backward copies keep their forward's role.
enum class OpRole : uint8_t {
  kOther,  // never built here: hand-made ops in tests
  // RMSNorms: the layer's input norm (fused into linear_qkv / in_proj when
  // those are LayerNormLinear, TENorm before MLA), the pre-MLP norm (fused
  // into a dense MLP's fc1, TENorm before MoE), MLA's q / kv latent norms
  // (fused into the up-projections), QK-norm (two te.RMSNorm), a standalone
  // TENorm (final norm, MTP enorm / hnorm) and Gated DeltaNet's gated norm.
  kInputNorm,
  kPreMlpNorm,
  kQNorm,
  kKvNorm,
  kQkNorm,
  kNorm,
  kGdnNorm,
  // Linear layers (TE modules unless said).
  kQkv,
  kProj,  // attention output projection (row parallel)
  kQDown,
  kKvDown,
  kQProj,  // MLA without q_lora_rank
  kQUp,
  kKvUp,
  kInProjQkvz,
  kInProjBa,  // a second GEMM of in_proj's module call
  kOutProj,   // Gated DeltaNet output projection
  kFc1,
  kFc2,
  kSharedFc1,
  kSharedFc2,
  kMtpEhProj,
  kRouter,       // Megatron's RouterGatingLinearFunction, not TE
  kOutputLayer,  // Megatron's ColumnParallelLinear (main or MTP head)
  kExpertFc1,    // TE GroupedLinear
  kExpertFc2,
  kGdnScan,  // FLA chunked gated-delta-rule kernels (Triton)
  kCoreAttn,
  // Memory-bound kernels.
  kQuantize,        // a GEMM operand's quantize (forward or its gradient's)
  kExpertQuantize,  // the same for a GroupedLinear: one per local expert
  kRope,
  kRopeUnfused,
  kAttnGate,
  kAct,
  kSharedAct,
  kExpertAct,
  kExpertActClamp,
  kExpertFc2Bias,
  kRouterTopk,
  kConv1d,
  kEmbedding,  // the lookup (main or MTP)
  kCrossEntropy,
  // Communication.
  kCollective,
  kDispatch,  // MoE dispatch or combine (DispatchWork::combine)
};

// Ops of the routed experts, whose work scales with the busiest EP rank's
// load (the grouped GEMMs, their quantizes and the eager passes on their
// rows).
constexpr bool IsRoutedExpert(OpRole r) {
  return r == OpRole::kExpertFc1 || r == OpRole::kExpertFc2 ||
         r == OpRole::kExpertQuantize || r == OpRole::kExpertAct ||
         r == OpRole::kExpertActClamp || r == OpRole::kExpertFc2Bias;
}

// The selective-recompute module (Megatron-Core --recompute-modules) whose
// recompute replays a forward op. kMoeAct and kSharedExperts ops sit inside
// the MoE layer: kMoe replays them too (LayerOps::recompute applies this).
enum class RecomputeModule : uint8_t {
  kNone,
  kCoreAttn,
  kMlaUpProj,
  kLayernorm,
  kMoeAct,
  kMlp,
  kMoe,
  kSharedExperts,
};

struct AttentionWork {
  int64_t batch = 1;
  int64_t seq_q = 0;   // local query tokens (seq / cp)
  int64_t seq_kv = 0;  // key/value tokens attended over (seq)
  int64_t heads_q = 0, heads_kv = 0;
  int64_t head_dim_qk = 0, head_dim_v = 0;
  bool causal = true;
  int64_t window = 0;  // sliding window (tokens); 0 = full
  // Learnable softmax offset per head (attention sinks, GPT-OSS): one more
  // logit per row in the softmax, no extra GEMM work.
  bool softmax_offset = false;
  friend bool operator==(const AttentionWork&, const AttentionWork&) = default;
};

struct DispatchWork {
  bool combine = false;  // false: dispatch
  int64_t tokens = 0;    // local tokens entering the MoE layer (after SP)
  int64_t topk = 0;
  int64_t hidden = 0;
  int64_t experts = 0;  // all experts (the replay divides by EP)
  int64_t router_groups = 0, router_group_topk = 0;
  int bytes_per_element = 2;  // 1 where Megatron dispatches FP8
  friend bool operator==(const DispatchWork&, const DispatchWork&) = default;
};

struct LayerOp {
  std::string name;  // for traces and errors, e.g. "qkv", "fc1.dgrad"
  OpKind kind = OpKind::kGemm;
  OpRole role = OpRole::kOther;
  Pass pass = Pass::kForward;
  // kGemm / kGroupedGemm.
  int64_t m = 0, n = 0, k = 0, groups = 1;
  GemmPrecision precision = GemmPrecision::kTraining;
  AttentionWork attention;   // kAttention
  std::string kernel;        // kMemoryBound
  double bytes = 0;          // kMemoryBound, kCollective
  Group group = Group::kTp;  // kCollective
  CollectiveKind collective = CollectiveKind::kAllGather;
  DispatchWork dispatch;  // kDispatch
  RecomputeModule module = RecomputeModule::kNone;
  GraphScope scope = GraphScope::kNone;  // backward ops: their forward's
  // Megatron's code blocks the host once this op is issued, until the GPU
  // has run everything queued before it (a blocking host-to-device copy);
  // forward ops only, so a recompute replays it. The replay drops it
  // where the op's scope is captured in a CUDA graph.
  bool host_sync = false;
  // FLOPs of this op (2 per multiply-add): 2 x m x n x k x groups for GEMMs,
  // causal-averaged context for attention (Bridge's rule), the convolution of
  // Gated DeltaNet; 0 for the other memory-bound kernels and collectives.
  double flops = 0;
  friend bool operator==(const LayerOp&, const LayerOp&) = default;
};

struct LayerOps {
  std::vector<LayerOp> forward;
  // Forward ops replayed at the start of this layer's backward (selective
  // modules, or the whole forward under full recompute), in forward order.
  std::vector<LayerOp> recompute;
  std::vector<LayerOp> backward;  // dgrad and wgrad ops, execution order
  // Parameters of this layer held by one GPU: dense ones (gradients reduced
  // over DP x CP) and expert ones (over expert DP).
  int64_t dense_params = 0;
  int64_t expert_params = 0;
  // Parameter tensors of this layer on one GPU (models::ParamTensors):
  // dense, routed-expert, and the replicated norm / router weights among
  // the dense ones.
  int64_t dense_tensors = 0;
  int64_t expert_tensors = 0;
  int64_t replicated_tensors = 0;
  // Equal ops price equally: the replay prices each distinct layer once.
  friend bool operator==(const LayerOps&, const LayerOps&) = default;
};

// Decoder layer `layer` (0-based), or an MTP layer when `mtp` (the kind of
// the last decoder layer plus enorm/hnorm and the eh projection).
// `full_recompute`: this layer is recomputed whole (--recompute-granularity
// full, the replay decides which layers).
// REQUIRES: `parallel` and `training` passed scenarios::Resolve for `model`.
LayerOps BuildLayerOps(const Model& model, int64_t layer, bool mtp,
                       const Parallelism& parallel,
                       const TrainingOptions& training, bool full_recompute);

// Word embedding lookup (first virtual stage): forward gather, backward
// scatter-add, TP reduce-scatter / all-reduce of the embedding output.
LayerOps BuildEmbeddingOps(const Model& model, const Parallelism& parallel,
                           const TrainingOptions& training);

// Final norm, output layer (vocab-parallel GEMM) and cross-entropy loss, for
// the main head and each MTP head (`heads` = 1 + MTP layers on this stage).
LayerOps BuildOutputOps(const Model& model, const Parallelism& parallel,
                        const TrainingOptions& training, int64_t heads);

}  // namespace moesim::models

#endif  // MOESIM_MODELS_LAYER_OPS_H_
