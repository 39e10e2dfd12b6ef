// The host (CPU) work Megatron-Core's eager Python path does for each op of a
// layer, counted by kind, so the replay's host thread carries the calls the
// real training step makes rather than one launch per GPU kernel.
//
// Design. calibration/notes/megatron_host_ops.md counts, from the Megatron-LM
// and TransformerEngine source, the host calls per block per micro-batch:
// Transformer Engine module calls, eager torch ops and Python autograd
// Functions, C++ autograd engine nodes, per-parameter AccumulateGrad nodes
// and Megatron DDP grad hooks. LayerOpHostCalls spreads those counts over
// the ops of models::LayerOps (the calls that precede a kernel go with it:
// the dispatcher's preprocessing and device-to-host copies with the forward
// permute, the bias-dropout-add with the projection before it), so a
// block's ops sum to the note's block total. The MoE dispatch pieces are
// counted in op_pricing.cc (AddDispatch), which expands them. Each kind is
// priced by a host.csv quantity (HostSeconds): te_module_us, torch_op_us,
// autograd_node_us, kernel_launch_us. A DDP grad hook is a Python call made
// from the autograd engine, priced as one eager op (torch_op_us).
//
// Per step (StepHostCallsOf, the note's section "Per-step host work"): the
// DDP bucket hooks of the last backward, finalize_model_grads, the
// distributed optimizer's step (grad copies, grad norm, clip, Adam, param
// copies), train_step's stat reductions (which end in a blocking .item()),
// the loss log, zero_grad_buffer and the param all-gather dispatch, as
// functions of the rank's parameter tensors and DDP buckets; the optimizer
// loops' per-tensor .view / slice / .data / .detach() are views
// (autograd_node_us), their casts and copy_s eager ops.
//
// Not counted (no code count behind them): the pipeline schedule's own per
// micro-batch Python, Python-only loops (optimizer.zero_grad's
// grad = None per parameter, the timers); MLA's RoPE split/concat is counted by
// analogy with GQA's (two fused RoPE Functions plus the splits and views around
// them).
#ifndef MOESIM_SIM_HOST_CALLS_H_
#define MOESIM_SIM_HOST_CALLS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/layer_ops.h"

namespace moesim::sim {

struct HostCalls {
  // Transformer Engine module calls (forward) and TE backward Functions
  // (te_module_us each).
  int te = 0;
  // Eager torch ops, Python autograd Functions (forward or backward), TE
  // functional calls (fused router / permute kernels), compiled-region
  // calls, CUDA stream / event API calls (torch_op_us each).
  int torch = 0;
  // C++ autograd engine nodes without Python: view backwards, the engine's
  // gradient-accumulation adds (autograd_node_us each).
  int nodes = 0;
  // Raw launches inside a call counted above: TE GroupedLinear's per-expert
  // cuBLAS loop, TE's input quantize kernels (kernel_launch_us each).
  int kernels = 0;
  // Per-parameter leaf work in backward: AccumulateGrad nodes
  // (autograd_node_us) and Megatron DDP grad hooks (torch_op_us). A
  // TE-scoped CUDA graph keeps them (the graphed callable still hands each
  // parameter's gradient to autograd); a full-iteration graph does not.
  int param_nodes = 0;
  int param_hooks = 0;
  // Tensor metadata calls the per-step Python makes in its per-parameter
  // loops (.view, a slice, .data, .detach()): one C++ op each that builds a
  // view and launches nothing, priced as an autograd engine node
  // (autograd_node_us), not as an eager op with a kernel (torch_op_us).
  int views = 0;

  HostCalls& operator+=(const HostCalls& o) {
    te += o.te;
    torch += o.torch;
    nodes += o.nodes;
    kernels += o.kernels;
    param_nodes += o.param_nodes;
    param_hooks += o.param_hooks;
    views += o.views;
    return *this;
  }
  bool operator==(const HostCalls&) const = default;
};

// Seconds per call of each kind (host.csv, after profile corrections).
struct HostCallCosts {
  double torch_s = 0;   // torch_op_us
  double te_s = 0;      // te_module_us
  double node_s = 0;    // autograd_node_us
  double kernel_s = 0;  // kernel_launch_us
};

// Host seconds of `calls`; `params_only`: the per-parameter leaf work alone.
double HostSeconds(const HostCalls& calls, const HostCallCosts& costs,
                   bool params_only = false);

// What the layer's op list tells about its structure.
struct HostCallContext {
  int64_t local_experts = 1;         // experts / EP
  bool fp8_current_scaling = false;  // per-expert amax + scale + cast
  // TE spec fuses the norm before these linears into a LayerNormLinear:
  // input_norm into qkv (GQA) or in_proj (Gated DeltaNet), pre_mlp_norm
  // into fc1 (dense MLP); MLA fuses q_norm / kv_norm into its up-projections.
  bool input_norm_fused = false;
  bool pre_mlp_norm_fused = false;
  bool mla = false;
  // Megatron's add_bias_linear (GPT-OSS), seen through the experts' fc2
  // bias op that models/layer_ops.cc emits exactly then: every TE linear
  // and every local expert's GroupedLinear GEMM has its own bias Parameter.
  bool linear_bias = false;
};

// The context of one pass's op list (forward, or recompute + backward).
HostCallContext ContextOf(const std::vector<models::LayerOp>& ops,
                          int64_t local_experts, bool fp8_current_scaling);

// Host calls of `op` (its first priced op carries them; a CP ring's further
// steps add one call each in the pricer). kDispatch ops: none here
// (AddDispatch counts its pieces).
HostCalls LayerOpHostCalls(const models::LayerOp& op,
                           const HostCallContext& context);

// Dispatcher pieces (calibration/notes/megatron_host_ops.md sections 2, 3),
// for AddDispatch. `forward`: the forward pass (else backward, where the
// dispatch direction is the combine's backward and vice versa).
struct DispatchCalls {
  HostCalls permute;  // alltoall: preprocess + D2H + fused permute; DeepEP:
                      // multihot + permute after the dispatch; HybridEP:
                      // its permute kernel's launch inside the dispatch call
  HostCalls comm;     // the all-to-all(s) or the fused EP kernel
  HostCalls sort;     // alltoall: the chunk sort
  HostCalls unpermute;
  HostCalls stage;  // HybridEP across NVLink domains: the input's D2D copy
};
DispatchCalls DispatchHostCalls(models::Dispatcher dispatcher, bool combine,
                                bool forward);

// What one rank's per-step host work scales with (one pipeline stage, all
// its virtual chunks).
struct StepHostShape {
  int64_t dense_tensors = 0;  // models::ParamTensors, summed
  int64_t expert_tensors = 0;
  int64_t replicated_tensors = 0;  // norm and router weights
  int dense_buckets = 0;           // DDP buckets of each buffer
  int expert_buckets = 0;
  int dense_dp = 1;   // the distributed optimizer's shard count: DP x CP
  int expert_dp = 1;  // expert DP
  double dense_shard_params = 0;  // elements of this rank's optimizer shard
  double expert_shard_params = 0;
  bool biased = false;  // add_bias_linear: a no-weight-decay expert group
  bool precision_aware = false;      // --use-precision-aware-optimizer
  bool sp_norm_allreduce = false;    // TP > 1 with sequence parallelism
  bool embedding_allreduce = false;  // PP > 1, tied or MTP, first/last stage
  bool last_stage = false;           // reduces the losses
  bool moe = false;                  // logs the MoE aux-loss tracker
  int64_t microbatches = 1;
};

struct StepHostCalls {
  // After the last backward's launches, before the optimizer's kernels:
  // the DDP bucket hooks, finalize_model_grads, optimizer.step() and
  // train_step's stat reductions; ends in a blocking .item().
  HostCalls before_step;
  // After that sync, before the next step's first forward: the loss log,
  // zero_grad_buffer, and the param all-gather dispatch and wait per bucket.
  HostCalls after_sync;
};

// Megatron-Core's per-step host calls for `shape` (bf16 with the
// distributed optimizer, TE's multi-tensor kernels, clip_grad > 0, the
// defaults check_for_nan_in_grad on, log_num_zeros_in_grad off,
// overlap_param_gather on).
StepHostCalls StepHostCallsOf(const StepHostShape& shape);

// Tensors of a `tensors`-tensor, `buckets`-bucket buffer whose shard on one
// of `dp` ranks the distributed optimizer steps: each bucket is split in dp
// contiguous ranges, so a rank's range covers about 1/dp of the bucket's
// tensors plus the one its range starts inside.
int64_t ShardTensors(int64_t tensors, int buckets, int dp);

}  // namespace moesim::sim

#endif  // MOESIM_SIM_HOST_CALLS_H_
