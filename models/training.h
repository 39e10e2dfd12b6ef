// How a model is trained: the parallel layout and the options that change
// parameters, FLOPs and memory. Plain values, validated by scenarios::Resolve
// before they reach models/ (models/ trusts them).
#ifndef MOESIM_MODELS_TRAINING_H_
#define MOESIM_MODELS_TRAINING_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace moesim::models {

// Megatron-Core parallel sizes. Attention mesh TP x CP x DP x PP and MoE mesh
// ETP x EP x EDP x PP cover the same GPUs (parallel folding).
struct Parallelism {
  int tp = 1;
  int cp = 1;
  int dp = 1;
  int pp = 1;
  int vpp = 1;  // model chunks per pipeline rank (1 = not interleaved)
  int ep = 1;
  int etp = 1;
  int edp = 1;
  bool sequence_parallel = false;
  int num_gpus() const { return tp * cp * dp * pp; }
};

enum class Precision {
  kBf16,
  kFp8CurrentScaling,  // fp8-cs: per-tensor current scaling
  kFp8Delayed,         // fp8-delayed: per-tensor delayed scaling
  kFp8Blockwise,       // fp8-block: 128x128 weight / 1x128 activation blocks
  kMxfp8,              // mxfp8: 1x32 blocks, E8M0 scales (Blackwell)
  kNvfp4,              // nvfp4: 1x16 blocks, two-level scales (Blackwell)
};

// True for every FP8 / FP4 recipe (linear layers run in low precision).
inline bool IsLowPrecision(Precision p) { return p != Precision::kBf16; }

// Megatron-Core selective-recompute modules and full recompute.
struct Recompute {
  bool core_attn = false;
  bool mla_up_proj = false;
  bool layernorm = false;
  bool moe_act = false;
  bool mlp = false;
  bool moe = false;
  bool shared_experts = false;
  // --recompute-granularity full with --recompute-method uniform|block and
  // --recompute-num-layers.
  bool full = false;
  bool full_block = false;  // method "block" (else "uniform")
  int full_num_layers = 1;
};

enum class Dispatcher { kAllToAll, kDeepEp, kHybridEp };

// The pipeline schedule each stage runs (models/pipeline_schedules.h).
enum class PipelineScheduleKind { kOneFOneB, kZeroBubbleH1 };

enum class Routing { kForceBalanced, kDroplessNatural, kTokenDrop };

// Megatron --cp-comm-type (TE context parallel): p2p ring (default), a2a
// (heads scattered, Ulysses-style), allgather (K/V all-gathered), and
// a2a+p2p (a2a inside hierarchical_context_parallel_sizes[0], p2p ring
// across the rest).
enum class CpCommType { kP2p, kA2a, kAllGather, kA2aP2p };

// CUDA-graph scope: none, TE-scoped per-module graphs, or the whole iteration.
struct CudaGraph {
  bool full_iteration = false;
  bool local_transformer_layer = false;  // local:transformer_layer
  bool attn = false;
  bool mlp = false;
  bool moe = false;
  bool moe_router = false;
  bool moe_preprocess = false;
  bool any() const {
    return full_iteration || local_transformer_layer || attn || mlp || moe ||
           moe_router || moe_preprocess;
  }
};

// Megatron-Core fine-grained activation offloading
// (--fine-grained-activation-offloading --offload-modules ...): the tensors
// that autograd saves inside each listed module's forward go to pinned host
// memory on a side stream and come back before its backward
// (Megatron-LM@d98e8a64dd megatron/core/pipeline_parallel/
// fine_grained_activation_offload.py). The modules, in a layer's forward
// order.
enum class OffloadModule {
  kAttnNorm,   // the separate input norm (none where TE fuses it into QKV)
  kQkvLinear,  // the QKV projection (MLA: down and up projections, norms)
  kCoreAttn,   // core attention: Q, K, V, output, softmax statistics
  kAttnProj,   // the output projection's input
  kMlpNorm,    // the separate pre-MLP norm (MoE layers)
  kExpertFc1,  // the routed experts' fc1 input
  kMoeAct,     // the routed experts' activation input (fc1 output, probs)
};
inline constexpr int kNumOffloadModules = 7;
// Megatron's names, in enum order.
inline constexpr const char* kOffloadModuleNames[kNumOffloadModules] = {
    "attn_norm", "qkv_linear", "core_attn", "attn_proj",
    "mlp_norm",  "expert_fc1", "moe_act"};

// The OffloadModule of a Megatron name, or -1.
inline int OffloadModuleIndex(std::string_view name) {
  for (int i = 0; i < kNumOffloadModules; ++i) {
    if (name == kOffloadModuleNames[i]) return i;
  }
  return -1;
}

// "attn_norm, qkv_linear, ..." for messages.
inline std::string OffloadModuleList() {
  std::string out;
  for (const char* name : kOffloadModuleNames) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

struct ActivationOffload {
  bool modules[kNumOffloadModules] = {};
  // --activation-offload-fraction: the first fraction of a chunk's eligible
  // groups (forward order) are offloaded, the later ones stay on the GPU.
  double fraction = 1;
  // --min-offloaded-tensor-size (elements): smaller saved tensors stay.
  int64_t min_tensor_elements = int64_t{1} << 20;
  bool any() const {
    for (bool m : modules) {
      if (m) return true;
    }
    return false;
  }
  bool has(OffloadModule m) const { return modules[static_cast<int>(m)]; }
};

struct TrainingOptions {
  int64_t seq_length = 4096;
  int64_t micro_batch_size = 1;
  int64_t global_batch_size = 1;
  // Micro-batches per step per pipeline: global / (micro * dp).
  int64_t num_microbatches() const {
    return global_batch_size / micro_batch_size / dp_for_gbs;
  }
  int64_t dp_for_gbs = 1;  // data-parallel size that divides the global batch
  Precision precision = Precision::kBf16;
  Recompute recompute;
  Dispatcher dispatcher = Dispatcher::kAllToAll;
  PipelineScheduleKind pipeline_schedule = PipelineScheduleKind::kOneFOneB;
  Routing routing = Routing::kForceBalanced;
  double moe_expert_capacity_factor = 0;  // token drop; 0 = dropless
  // --moe-pad-expert-input-to-capacity (token drop): experts padded to
  // their capacity, static split sizes.
  bool moe_pad_expert_input_to_capacity = false;
  double routing_skew = 0;  // dropless_natural: Zipf exponent (0 uniform)
  // dropless_natural: tokens per expert, in expert order (empty: the skew).
  std::vector<double> routing_histogram;
  CudaGraph cuda_graph;
  bool ep_overlap = false;  // --overlap-moe-expert-parallel-comm
  // --moe-shared-expert-overlap: the shared experts run beside the
  // dispatcher's token exchange.
  bool shared_expert_overlap = false;
  // --delay-wgrad-compute (EP overlap only): TE linears' weight gradients
  // run after the exchange that follows them (sim/op_pricing.h
  // DeferWeightGradients).
  bool delay_wgrad_compute = false;
  CpCommType cp_comm_type = CpCommType::kP2p;
  // --hierarchical-context-parallel-sizes, inner first (a2a+p2p only).
  std::vector<int> hierarchical_cp_sizes;
  // Optimizer.
  bool distributed_optimizer = true;
  int main_grad_bytes = 4;   // fp32 main grads (bf16 with precision-aware: 2)
  int exp_avg_bytes = 4;     // Adam moments, each
  int main_param_bytes = 4;  // fp32 master weights
  // --use-precision-aware-optimizer: the optimizer steps the 16-bit model
  // shards with its own master weights (no main-grad and main-param copies).
  bool precision_aware_optimizer = false;
  bool fp8_param_gather = false;
  // --fp8-dot-product-attention: core attention in FP8 (the recipe's
  // format: per-tensor FP8 or MXFP8). Resolve admits it with fp8-cs,
  // fp8-delayed or mxfp8 only.
  bool fp8_dot_product_attention = false;
  double optimizer_offload_fraction =
      0;                              // share of optimizer state on the host
  bool offload_overlap = false;       // --overlap-cpu-optimizer-d2h-h2d
  bool cpu_offloading = false;        // activation offload (--cpu-offloading)
  int cpu_offloading_num_layers = 0;  // --cpu-offloading-num-layers
  ActivationOffload activation_offload;  // fine-grained (none when empty)
  // --offload-optimizer-states: the distributed optimizer's master weights
  // and Adam moments live in pinned host memory between optimizer steps and
  // come back to the GPU for the step (OptimizerStateOffloader). Distinct
  // from optimizer_offload_fraction, which runs Adam on the CPU.
  bool offload_optimizer_states = false;
  // Megatron-FSDP sharding across the data-parallel group (optimizer state is
  // sharded by the distributed optimizer or any FSDP strategy but no_shard).
  bool shard_grads = false;   // optim_grads, optim_grads_params
  bool shard_params = false;  // optim_grads_params
  // Host.
  bool manual_gc = true;  // --manual-gc: no staggered automatic GC pauses
  // Megatron's batch_p2p_sync: a device synchronize after each batched
  // pipeline exchange (non-interleaved PP only; scenario.proto).
  bool batch_p2p_sync = true;
};

// Token-expert rows one EP rank's experts receive per micro-batch, from
// `tokens` routed tokens per rank (balanced routing: every expert gets
// tokens x topk / experts from each rank), x etp after the ETP gather.
// Token drop caps each expert at its capacity ceil(tokens x topk x CF /
// experts) per sending rank (Megatron moe_utils.py get_capacity); padded
// to it with moe_pad_expert_input_to_capacity, else the routed rows that fit.
inline double RoutedExpertRows(double tokens, int64_t topk, int64_t experts,
                               int etp, const TrainingOptions& tr) {
  const double routed = tokens * static_cast<double>(topk) * etp;
  if (tr.routing != Routing::kTokenDrop ||
      !(tr.moe_expert_capacity_factor > 0) || experts <= 0)
    return routed;
  const double e = static_cast<double>(experts);
  const double padded = std::ceil(tokens * static_cast<double>(topk) *
                                  tr.moe_expert_capacity_factor / e) *
                        e * etp;
  return tr.moe_pad_expert_input_to_capacity ? padded
                                             : std::min(routed, padded);
}

}  // namespace moesim::models

#endif  // MOESIM_MODELS_TRAINING_H_
