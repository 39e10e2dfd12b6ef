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
// Not counted (no code count behind them): the optimizer step, grad-norm
// and DDP bucket finish per step, the pipeline schedule's own per
// micro-batch Python; MLA's RoPE split/concat is counted by analogy with
// GQA's (two fused RoPE Functions plus the splits and views around them).
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

  HostCalls& operator+=(const HostCalls& o) {
    te += o.te;
    torch += o.torch;
    nodes += o.nodes;
    kernels += o.kernels;
    param_nodes += o.param_nodes;
    param_hooks += o.param_hooks;
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
                      // multihot + permute after the dispatch
  HostCalls comm;     // the all-to-all(s) or the fused EP kernel
  HostCalls sort;     // alltoall: the chunk sort
  HostCalls unpermute;
};
DispatchCalls DispatchHostCalls(models::Dispatcher dispatcher, bool combine,
                                bool forward);

}  // namespace moesim::sim

#endif  // MOESIM_SIM_HOST_CALLS_H_
