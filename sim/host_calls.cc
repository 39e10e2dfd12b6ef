#include "sim/host_calls.h"

#include <algorithm>
#include <cmath>

namespace moesim::sim {

namespace {

using models::LayerOp;
using models::OpKind;
using models::Pass;

// Counts below are from calibration/notes/megatron_host_ops.md (read from
// NVIDIA/Megatron-LM@d96f0b97 and TransformerEngine grouped_linear.py); the
// section is named on each. jit_fuser regions (bias-dropout-add, SwiGLU) are
// torch.compile calls: a guard check plus CompiledFunction.apply, 2 calls.
constexpr int kBdaCalls = 2;
// §1: mixed_qkv.view, the QKV split, TE _SplitAlongDim, query.reshape.
constexpr int kQkvSplitCalls = 4;
// §1 backward: _SplitAlongDim's backward and its torch.cat.
constexpr int kQkvSplitBackwardCalls = 2;
// §1 backward: UnsafeViewBackward + CloneBackward (the GQA reshape copy) and
// ViewBackward.
constexpr int kQkvSplitBackwardNodes = 3;
// §1: two FusedRoPEFunc calls and the RoPE frequency slice.
constexpr int kRopeCalls = 3;
// MLA (multi_latent_attention.py, by analogy with §1, not line-counted):
// fused RoPE for q and for kv, the q / kv splits and the views around them.
constexpr int kMlaRopeCalls = 6;
constexpr int kRopeBackwardCalls = 2;  // the two fused RoPE backwards
// §8: Megatron's unfused RoPE (YaRN concentration factor != 1) on q and on
// k: per tensor the two slices, cos, sin, their * mscale and .to, t * cos,
// chunk, neg, cat, * sin, the add and the final cat (15), plus the
// frequency slice once. Backward per tensor: 9 autograd nodes (two cats,
// the add, two muls, neg, split, two slices) and the engine's 2 sums of a
// tensor's two gradients, launching 9 kernels (notes §8).
constexpr int kUnfusedRopeCalls = 2 * 15 + 1;
constexpr int kUnfusedRopeBackwardNodes = 2 * (9 + 2);
constexpr int kUnfusedRopeBackwardKernels = 2 * 9;
// §4: SwiGLUFunction (or WeightedSwiGLUFunction, §2) and its 2 views.
constexpr int kActivationCalls = 3;
constexpr int kActivationBackwardNodes = 2;  // the 2 ViewBackwards
// §2 router gating: RouterGatingLinearFunction, te_general_gemm, inp.view,
// output[0], output.view, logits.view.
constexpr int kRouterCalls = 6;
// §2 backward: the Function's backward, 2 te_general_gemm, 3-4 casts/views
// (3), and main_grad.add_ for the router weight (not a fused wgrad).
constexpr int kRouterBackwardCalls = 7;
// §2 routing with moe_router_fusion and fused aux loss: fused top-k, fused
// aux-score, fused aux-loss (3 TE functional calls), routing_map.sum,
// _ReduceFromModelParallelRegion, aux_loss / coeff, the tracker record (3),
// MoEAuxLossAutoScaler.
constexpr int kTopkCalls = 11;
// §2 backward: AuxLossAutoScaler (Fn + ones_like * scale), fused aux-loss,
// ReduceFromTP, aux-score, top-k.
constexpr int kTopkBackwardCalls = 7;
// §2 backward: the logits ViewBackward and the engine adds where the logits
// fan out to top-k and aux-score and the norm output to router and
// dispatcher.
constexpr int kTopkBackwardNodes = 3;
constexpr int kTopkBackwardAdds = 2;  // of those nodes, adds (a kernel each)
// §2 TEGroupedMLP: tokens_per_expert.tolist(), permuted_probs.unsqueeze.
constexpr int kExpertsInputCalls = 2;

using models::OpRole;

// TE LayerNormLinear modules (the norm before them is fused in).
bool IsLayerNormLinear(OpRole r, const HostCallContext& c) {
  switch (r) {
    case OpRole::kQkv:
    case OpRole::kInProjQkvz:
      return c.input_norm_fused;
    case OpRole::kFc1:
      return c.pre_mlp_norm_fused;
    case OpRole::kQUp:
    case OpRole::kKvUp:
      return true;
    default:
      return false;
  }
}
bool IsNormFused(OpRole r, const HostCallContext& c) {
  if (r == OpRole::kInputNorm) return c.input_norm_fused;
  if (r == OpRole::kPreMlpNorm) return c.pre_mlp_norm_fused;
  return r == OpRole::kQNorm || r == OpRole::kKvNorm;
}
// Ops followed by the layer's bias-dropout-add (attention / MLP output).
bool EndsSublayer(OpRole r) {
  return r == OpRole::kProj || r == OpRole::kFc2 || r == OpRole::kOutProj;
}
bool IsActivation(OpRole r) {
  return r == OpRole::kAct || r == OpRole::kExpertAct ||
         r == OpRole::kSharedAct;
}
bool IsQuantize(OpRole r) {
  return r == OpRole::kQuantize || r == OpRole::kExpertQuantize;
}

// Quantize kernels TE runs inside its module call: one per tensor, or per
// local expert (three with FP8 current scaling: amax, scale, cast).
int QuantizeKernels(OpRole r, const HostCallContext& c) {
  if (r != OpRole::kExpertQuantize) return 1;
  return static_cast<int>(c.local_experts) * (c.fp8_current_scaling ? 3 : 1);
}

// _apply_bias (layer_ops.cc AddExpertOutputBias): torch.split of the fc2
// output by expert, then per local expert the bias x probability and the
// add, torch.cat and the cast to bf16: 2 n + 3 eager calls forward, as many
// autograd nodes backward. Backward kernels: per expert the two gradients of
// the product and their broadcast sums (4 n), the cast back and the split's
// cat (2). TE GroupedLinear registers bias0..bias{n-1} as Parameters
// (NVIDIA/TransformerEngine@0069563f transformer_engine/pytorch/module/
// grouped_linear.py GroupedLinear.__init__), so fc1's and fc2's biases each
// add an AccumulateGrad and a DDP hook per local expert too (Backward).
int ExpertBiasForwardCalls(const HostCallContext& c) {
  return 2 * static_cast<int>(c.local_experts) + 3;
}

HostCalls Forward(const LayerOp& op, const HostCallContext& c) {
  HostCalls h;
  const OpRole r = op.role;
  switch (op.kind) {
    case OpKind::kGemm:
      if (r == OpRole::kRouter) {
        h.torch = kRouterCalls;
      } else if (r == OpRole::kOutputLayer) {
        // Megatron's own ColumnParallelLinear (not TE): the autograd
        // Function and its matmul.
        h.torch = 2;
      } else if (r == OpRole::kInProjBa) {
        h.kernels = 1;  // a GEMM of in_proj's LayerNormLinear call
      } else {
        h.te = 1;
        if (r == OpRole::kQkv) h.torch = kQkvSplitCalls;
        if (EndsSublayer(r)) h.torch = kBdaCalls;
        if (r == OpRole::kSharedFc2) h.torch = 1;  // added to the routed output
      }
      break;
    case OpKind::kGroupedGemm:
      if (IsRoutedExpert(r)) {
        // One TE GroupedLinear call; it launches one cuBLAS GEMM per local
        // expert from a C++ loop (§ per-local-expert host loops).
        h.te = 1;
        h.kernels = static_cast<int>(op.groups) - 1;
        if (r == OpRole::kExpertFc1) h.torch = kExpertsInputCalls;
      } else {
        h.torch = 1;  // Gated DeltaNet chunk kernels (FLA, Triton)
      }
      break;
    case OpKind::kAttention:
      h.te = 1;  // TEDotProductAttention
      break;
    case OpKind::kMemoryBound:
      if (IsQuantize(r)) {
        h.kernels = QuantizeKernels(r, c);
      } else if (op.kernel == "rmsnorm_fwd") {
        if (r == OpRole::kGdnNorm) {
          h.torch = 1;
        } else if (r == OpRole::kQkNorm) {
          h.te = 2;  // q_layernorm and k_layernorm (te.RMSNorm each, §1)
        } else if (!IsNormFused(r, c)) {
          h.te = 1;  // TENorm
        }
      } else if (r == OpRole::kRope) {
        h.torch = c.mla ? kMlaRopeCalls : kRopeCalls;
      } else if (r == OpRole::kRopeUnfused) {
        h.torch = kUnfusedRopeCalls;
      } else if (IsActivation(r)) {
        h.torch = kActivationCalls;
      } else if (r == OpRole::kRouterTopk) {
        h.torch = kTopkCalls;
      } else if (r == OpRole::kAttnGate) {
        h.torch = 2;  // sigmoid, mul
      } else if (r == OpRole::kExpertFc2Bias) {
        h.torch = ExpertBiasForwardCalls(c);
      } else {
        h.torch = 1;
      }
      break;
    case OpKind::kCollective:
      h.torch = 1;
      break;
    case OpKind::kDispatch:
      break;
  }
  return h;
}

// Backward of a TE linear: its backward Function and the AccumulateGrad +
// DDP hook of its weight; a LayerNormLinear also of its norm weight, whose
// gradient Megatron adds to main_grad itself (§1, §4).
HostCalls TeLinearBackward(OpRole r, const HostCallContext& c) {
  HostCalls h;
  h.te = 1;
  h.param_nodes = h.param_hooks = 1;
  if (IsLayerNormLinear(r, c)) {
    h.param_nodes = h.param_hooks = 2;
    h.torch = 1;  // main_grad.add_ of the norm weight
  }
  if (c.linear_bias) ++h.param_nodes, ++h.param_hooks;  // its bias
  if (r == OpRole::kQkv) {
    h.torch += kQkvSplitBackwardCalls;
    h.nodes = kQkvSplitBackwardNodes;
  }
  if (EndsSublayer(r)) h.torch += 1;  // the compiled BDA's backward
  return h;
}

HostCalls Backward(const LayerOp& op, const HostCallContext& c) {
  HostCalls h;
  const OpRole r = op.role;
  const bool wgrad = op.pass == Pass::kWgrad;
  switch (op.kind) {
    case OpKind::kGemm:
      if (r == OpRole::kRouter) {
        // Both GEMMs run in RouterGatingLinearFunction's backward.
        if (!wgrad) {
          h.torch = kRouterBackwardCalls;
          h.param_nodes = h.param_hooks = 1;
        }
      } else if (r == OpRole::kOutputLayer) {
        h.torch = 1;
        if (!wgrad) {
          h.torch = 2;
          h.param_nodes = h.param_hooks = 1;
        }
      } else if (wgrad || r == OpRole::kInProjBa) {
        h.kernels = 1;  // inside its module's backward call
      } else {
        h = TeLinearBackward(r, c);
      }
      break;
    case OpKind::kGroupedGemm:
      if (!IsRoutedExpert(r)) {
        h.torch = 1;
      } else if (wgrad) {
        h.kernels = static_cast<int>(op.groups);
      } else {
        // One GroupedLinear backward; one Parameter per expert, so one
        // AccumulateGrad and one DDP hook per local expert (§ per-local-
        // expert host loops).
        h.te = 1;
        h.kernels = static_cast<int>(op.groups) - 1;
        h.param_nodes = h.param_hooks =
            static_cast<int>(op.groups) * (c.linear_bias ? 2 : 1);
        if (r == OpRole::kExpertFc1) h.nodes = 1;  // UnsqueezeBackward
      }
      break;
    case OpKind::kAttention:
      h.te = 1;  // FusedAttnFunc backward
      break;
    case OpKind::kMemoryBound:
      if (IsQuantize(r)) {
        h.kernels = QuantizeKernels(r, c);
      } else if (op.kernel == "rmsnorm_bwd") {
        if (r == OpRole::kGdnNorm) {
          h.torch = 1;
        } else if (!IsNormFused(r, c)) {
          const int norms = r == OpRole::kQkNorm ? 2 : 1;
          h.te = norms;
          h.param_nodes = h.param_hooks = norms;
          h.torch = norms;  // main_grad.add_ (norm weights are not fused)
        }
        if (r == OpRole::kInputNorm || r == OpRole::kPreMlpNorm) {
          // The engine's add where the residual stream fans in.
          h.nodes += 1;
          h.kernels += 1;
        }
      } else if (r == OpRole::kRope) {
        h.torch = kRopeBackwardCalls;
      } else if (r == OpRole::kRopeUnfused) {
        h.nodes = kUnfusedRopeBackwardNodes;
        h.kernels = kUnfusedRopeBackwardKernels;
      } else if (IsActivation(r)) {
        h.torch = 1;
        h.nodes = kActivationBackwardNodes;
      } else if (r == OpRole::kRouterTopk) {
        h.torch = kTopkBackwardCalls;
        h.nodes = kTopkBackwardNodes;
        h.kernels = kTopkBackwardAdds;
      } else if (r == OpRole::kExpertFc2Bias) {
        h.nodes = ExpertBiasForwardCalls(c);
        h.kernels = 4 * static_cast<int>(c.local_experts) + 2;
      } else if (r == OpRole::kEmbedding) {
        // EmbeddingBackward (one kernel) and the weight's leaf work.
        h.nodes = h.kernels = 1;
        h.param_nodes = h.param_hooks = 1;
      } else {
        h.torch = 1;
      }
      break;
    case OpKind::kCollective:
      h.torch = 1;
      break;
    case OpKind::kDispatch:
      break;
  }
  return h;
}

// TE's multi_tensor_apply (transformer_engine/common/multi_tensor/
// multi_tensor_apply.cuh): a launch takes at most depth_to_max_tensors
// tensors per list and 320 blocks of 65,536 elements (the chunk size the
// Python multi_tensor_applier passes); a longer list launches again.
int64_t MultiTensorLaunches(int64_t tensors, double elements, int depth) {
  constexpr int64_t kMaxTensors[] = {110, 64, 48, 36, 30};
  constexpr double kElementsPerLaunch = 320.0 * 65536.0;
  const int64_t max_tensors = kMaxTensors[std::clamp(depth, 1, 5) - 1];
  const int64_t by_tensors = (tensors + max_tensors - 1) / max_tensors;
  const auto by_elements =
      static_cast<int64_t>(std::ceil(elements / kElementsPerLaunch));
  return std::max<int64_t>({1, by_tensors, by_elements});
}

}  // namespace

int64_t ShardTensors(int64_t tensors, int buckets, int dp) {
  if (tensors <= 0) return 0;
  if (dp <= 1) return tensors;
  return std::min<int64_t>(tensors, (tensors + dp - 1) / dp + buckets);
}

// calibration/notes/megatron_host_ops.md, "Per-step host work": each line
// below is one row of its table.
StepHostCalls StepHostCallsOf(const StepHostShape& x) {
  StepHostCalls c;
  HostCalls& a = c.before_step;
  const int buckets = x.dense_buckets + x.expert_buckets;
  // DDP, last backward: per bucket check_grads (norm, isnan, isinf), the
  // gradient scaling (*= 1/DP) and the reduce-scatter; finish_grad_sync's
  // handle wait.
  a.torch += buckets * (3 + 1 + 1 + 1);
  // finalize_model_grads: the TP all-reduce of the sequence-parallel
  // (norm, router) gradients: flatten, all-reduce, unflatten and copy_ per
  // tensor; the word-embedding all-reduce between first and last stage.
  if (x.sp_norm_allreduce && x.replicated_tensors > 0) {
    a.torch += 2 + 2 * static_cast<int>(x.replicated_tensors);
  }
  if (x.embedding_allreduce) a.torch += 2;
  // optimizer.step(): a ChainedOptimizer over a dense and an expert
  // DistributedOptimizer (one without experts), each with its own shard.
  struct Sub {
    int64_t shard;
    double elements;
    int groups;
  };
  std::vector<Sub> subs;
  const int64_t dense_shard =
      ShardTensors(x.dense_tensors, x.dense_buckets, x.dense_dp);
  if (dense_shard > 0) {
    // Weight-decayed matrices and the no-decay norms / biases.
    subs.push_back({dense_shard, x.dense_shard_params, 2});
  }
  const int64_t expert_shard =
      ShardTensors(x.expert_tensors, x.expert_buckets, x.expert_dp);
  if (expert_shard > 0) {
    subs.push_back({expert_shard, x.expert_shard_params, x.biased ? 2 : 1});
  }
  int64_t all_shard = 0;
  double all_elements = 0;
  for (const Sub& s : subs) {
    all_shard += s.shard;
    all_elements += s.elements;
  }
  // prepare_grads (_copy_model_grads_to_main_grads): per shard tensor
  // main_grad.view(-1) and the slice (views), .float() (precision-aware: no
  // cast).
  a.views += static_cast<int>(all_shard * 2);
  if (!x.precision_aware) a.torch += static_cast<int>(all_shard);
  // get_grad_norm_fp32 over every shard gradient: two torch.zeros, the
  // l2norm multi_tensor_applier, ** 2, all-reduce, .pow; the l2norm's
  // further launches and its cleanup kernel.
  a.torch += 6;
  a.kernels +=
      static_cast<int>(MultiTensorLaunches(all_shard, all_elements, 1));
  for (const Sub& s : subs) {
    // clip_grad_by_total_norm_fp32: .detach() per gradient (a view); the
    // clip coefficient (add, div), torch.zeros, clamp_max_,
    // multi_tensor_scale.
    a.views += static_cast<int>(s.shard);
    a.torch += 5;
    a.kernels +=
        static_cast<int>(MultiTensorLaunches(s.shard, s.elements, 2) - 1);
    // TE FusedAdam.step: per tensor p.data, grad.data (precision-aware:
    // and the master param's .data), views; one multi_tensor_adam per
    // group, which launches again for long lists (depth 4; with master
    // params 5).
    a.views += static_cast<int>(s.shard * (x.precision_aware ? 3 : 2));
    a.torch += s.groups;
    const int64_t launches =
        MultiTensorLaunches(s.shard, s.elements, x.precision_aware ? 5 : 4);
    a.kernels += static_cast<int>(std::max<int64_t>(0, launches - s.groups));
    // _copy_main_params_to_model_params: per shard tensor .view(-1), the
    // slice, .data (views) and copy_ (precision-aware: the optimizer writes
    // them).
    if (!x.precision_aware) {
      a.views += static_cast<int>(s.shard * 3);
      a.torch += static_cast<int>(s.shard);
    }
  }
  // train_step: logical_and_across_model_parallel_group (torch.tensor,
  // all-reduce, .item()) and reduce_max_stat_across_model_parallel_group
  // of the grad norm (torch.tensor, all-reduce, two .item()).
  a.torch += 3 + 4;
  // The last stage reduces the loss over DP: a view per micro-batch,
  // vstack, sum, all-reduce, the division.
  if (x.last_stage) a.torch += 4 + static_cast<int>(x.microbatches);

  HostCalls& b = c.after_sync;
  // training_log: the loss accumulation; with MoE, the aux-loss tracker's
  // reduction (all-reduce, scale, zero_).
  b.torch += 1 + (x.moe ? 3 : 0);
  // zero_grad_buffer: grad_data.zero_() per buffer (dense, expert).
  b.torch += (x.dense_tensors > 0 ? 1 : 0) + (x.expert_tensors > 0 ? 1 : 0);
  // overlap_param_gather: each bucket's all-gather dispatched and waited
  // for in the forward pre-hooks.
  b.torch += 2 * buckets;
  return c;
}

double HostSeconds(const HostCalls& h, const HostCallCosts& c,
                   bool params_only) {
  const double params = h.param_nodes * c.node_s + h.param_hooks * c.torch_s;
  if (params_only) return params;
  return h.te * c.te_s + h.torch * c.torch_s + (h.nodes + h.views) * c.node_s +
         h.kernels * c.kernel_s + params;
}

HostCallContext ContextOf(const std::vector<LayerOp>& ops,
                          int64_t local_experts, bool fp8_current_scaling) {
  HostCallContext c;
  c.local_experts = local_experts;
  c.fp8_current_scaling = fp8_current_scaling;
  for (const LayerOp& op : ops) {
    if (op.role == OpRole::kQkv || op.role == OpRole::kInProjQkvz)
      c.input_norm_fused = true;
    if (op.role == OpRole::kFc1) c.pre_mlp_norm_fused = true;
    if (op.role == OpRole::kKvUp) c.mla = true;
    if (op.role == OpRole::kExpertFc2Bias) c.linear_bias = true;
  }
  return c;
}

// A recomputed op is a forward op (Pass::kForward) replayed in the
// backward: it costs its forward's host calls.
HostCalls LayerOpHostCalls(const LayerOp& op, const HostCallContext& context) {
  if (op.pass == Pass::kForward) return Forward(op, context);
  return Backward(op, context);
}

DispatchCalls DispatchHostCalls(models::Dispatcher dispatcher, bool combine,
                                bool forward) {
  DispatchCalls d;
  switch (dispatcher) {
    case models::Dispatcher::kAllToAll:
      if (forward && !combine) {
        // §2: dispatch_preprocess + preprocess (about 15 ops with the
        // counts' all-gather Function), the D2H of the splits (4 copies +
        // 4 record_stream) and 3 stream / event calls, the fused permute.
        d.permute.torch = 15 + 8 + 3 + 1;
        d.comm.torch = 2 * 3;  // 2 _AllToAll (Fn, empty, contiguous)
        d.sort.torch = 2;      // fused chunk sort with probs, ravel
      } else if (forward) {
        d.sort.torch = 3;                   // chunk sort, .T.ravel (2)
        d.comm.torch = 3;                   // 1 _AllToAll
        d.unpermute.torch = 2 + kBdaCalls;  // unpermute, view; mlp BDA
      } else if (combine) {
        // Backward of the dispatch: its chunk sort, 2 all-to-alls, the
        // permute's backward and the view before it.
        d.sort.torch = 1;
        d.comm.torch = 2 * 3;
        d.unpermute.torch = 1;
        d.unpermute.nodes = 1;
      } else {
        // Backward of the combine: BDA and unpermute backwards, the view
        // (permute piece), its all-to-all and chunk sort.
        d.permute.torch = 2;
        d.permute.nodes = 1;
        d.comm.torch = 3;
        d.sort.torch = 1;
      }
      break;
    case models::Dispatcher::kHybridEp:
      // §3 HybridEP: compiled dispatch_preprocess (2), HybridEPDispatch,
      // tokens_per_expert .to + .sum; combine: HybridEPCombine + view and
      // the mlp BDA. Backward: one Function each (cached handle).
      if (forward) {
        d.comm.torch = combine ? 2 + kBdaCalls : 2 + 1 + 2;
      } else {
        d.comm.torch = combine ? 1 : 1 + 1;  // dispatch-side: + BDA bwd
        if (!combine) d.comm.nodes = 1;      // the view
      }
      // Inside the call: the permute (combine: unpermute) kernel after
      // (before) the dispatch (combine) kernel; across NVLink domains the
      // dispatch's staging cudaMemcpyAsync (DeepEP executor.cu).
      (combine ? d.unpermute : d.permute).kernels = 1;
      if (!combine) d.stage.kernels = 1;
      break;
    case models::Dispatcher::kDeepEp:
      // §3 DeepEP: compiled preprocess (2) + topk, FusedDispatch,
      // torch.tensor of the counts; then fused multihot + permute.
      // Combine: unpermute, FusedCombine + view, the mlp BDA.
      if (forward && !combine) {
        d.comm.torch = 2 + 1 + 1 + 1;
        d.permute.torch = 2;
      } else if (forward) {
        d.unpermute.torch = 1;
        d.comm.torch = 2 + kBdaCalls;
      } else if (combine) {
        d.unpermute.torch = 2;  // permute and multihot backwards
        d.comm.torch = 1;
      } else {
        d.comm.torch = 1 + 1;  // FusedCombine backward, BDA backward
        d.comm.nodes = 1;
        d.permute.torch = 1;  // unpermute backward
      }
      break;
  }
  return d;
}

}  // namespace moesim::sim
