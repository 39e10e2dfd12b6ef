// Exact parameter counts, grouped the way Megatron-Core shards them.
//
// Counts are exact for the TE layer specs Megatron-Bridge uses: every weight
// and bias, QK-norm, attention sinks, MLA down-projections, Gated DeltaNet
// convolutions, router biases, shared-expert gates, MTP projections. Formulas
// follow MLM megatron/training/theoretical_memory_usage.py
// (compute_weight_and_optimizer_memory) plus the modules it omits, listed in
// ../shared/reference/memory_flops.md a.1 (each derived from the module code).
#ifndef MOESIM_MODELS_PARAMS_H_
#define MOESIM_MODELS_PARAMS_H_

#include <cstdint>

#include "models/model.pb.h"

namespace moesim::models {

// Parameters of one module, by how Megatron shards them across ranks.
struct ParamGroups {
  int64_t tp = 0;              // split over tensor-parallel ranks
  int64_t replicated = 0;      // a full copy on every TP rank: norms, MLA
                               // down-projections, router, shared-expert gate
  int64_t experts = 0;         // routed experts (all E), split over EP x ETP
  int64_t active_experts = 0;  // the top-k experts a token uses

  int64_t total() const { return tp + replicated + experts; }
  int64_t active() const { return tp + replicated + active_experts; }
  ParamGroups& operator+=(const ParamGroups& o) {
    tp += o.tp;
    replicated += o.replicated;
    experts += o.experts;
    active_experts += o.active_experts;
    return *this;
  }
};

// Decoder layer `i` (0-based): mixer (attention / MLA / GDN) + MLP or MoE +
// its norms.
ParamGroups DecoderLayerParams(const Model& model, int64_t i);

// One MTP layer: a layer of the last decoder layer's kind, plus enorm, hnorm
// (2h) and the eh projection (2h x h) (MLM multi_token_prediction.py), plus
// its final norm (h).
ParamGroups MtpLayerParams(const Model& model);

// Word embedding or output layer: vocab x hidden, split over TP by vocabulary.
int64_t EmbeddingParams(const Model& model, int64_t vocab);

struct ParamSummary {
  int64_t total = 0;   // unpadded vocab, untied counted twice, no MTP
  int64_t active = 0;  // per token: top-k routed experts only
  int64_t total_with_mtp = 0;
  int64_t active_with_mtp = 0;
};

ParamSummary CountParams(const Model& model);

// Parameter tensors (nn.Parameter objects) of one module on one rank, as
// Megatron-Core's TE layer specs build them: the optimizer, the DDP buffers
// and the grad-norm loop over tensors, not elements, so their host work
// scales with these counts. A TP shard of a tensor is one tensor on each
// rank; TE GroupedLinear holds one weight per local expert (weight0 ..
// weightN-1, and bias0 .. when biased) for fc1 and for fc2. A norm fused
// into a TE LayerNormLinear is that module's layer_norm_weight, still one
// tensor. The router's expert bias (aux-loss-free balancing) is a buffer,
// not a parameter.
struct ParamTensors {
  int64_t dense = 0;   // reduced over DP x CP
  int64_t expert = 0;  // routed experts' (reduced over expert DP)
  // Of `dense`: norm weights and router weights, the tensors Megatron marks
  // sequence_parallel (replicated across TP); finalize_model_grads
  // all-reduces their gradients over TP with sequence parallelism.
  int64_t replicated = 0;

  ParamTensors& operator+=(const ParamTensors& o) {
    dense += o.dense;
    expert += o.expert;
    replicated += o.replicated;
    return *this;
  }
};

// Tensors of decoder layer `i` (0-based) / one MTP layer on a rank holding
// `local_experts` routed experts (experts / EP).
ParamTensors DecoderLayerTensors(const Model& model, int64_t i,
                                 int64_t local_experts);
ParamTensors MtpLayerTensors(const Model& model, int64_t local_experts);

}  // namespace moesim::models

#endif  // MOESIM_MODELS_PARAMS_H_
