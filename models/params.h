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

}  // namespace moesim::models

#endif  // MOESIM_MODELS_PARAMS_H_
