// Which layers each pipeline stage (and virtual stage) holds.
//
// Megatron orders virtual stages rank-major inside each model chunk: virtual
// stage s runs on pipeline rank s % pp as model chunk s / pp. The layout is
// either uniform (num_layers divisible by pp * vpp; embedding on the first
// virtual stage, MTP and loss on the last) or Megatron's
// --pipeline-model-parallel-layout string, e.g. "Et*3|(tt|)*29m|L":
// E = embedding, t = decoder layer, m = MTP layer, L = loss (output layer),
// '|' = stage boundary, X*n repeats a symbol, (..)*n repeats a group.
#ifndef MOESIM_MODELS_PIPELINE_H_
#define MOESIM_MODELS_PIPELINE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace moesim::models {

struct VirtualStage {
  bool embedding = false;
  std::vector<int64_t> layers;  // 0-based decoder layer indices, in order
  int64_t mtp_layers = 0;
  bool loss = false;
};

struct PipelinePlan {
  int pp = 1;
  int vpp = 1;
  std::vector<VirtualStage>
      stages;  // pp * vpp entries, index = chunk * pp + rank

  const VirtualStage& Stage(int rank, int chunk) const {
    return stages[chunk * pp + rank];
  }
};

// Even split. Error (naming pipeline_model_parallel_layout) when num_layers is
// not divisible by pp * vpp.
[[nodiscard]] util::Result<PipelinePlan> UniformPipeline(int64_t num_layers,
                                                         int64_t mtp_layers,
                                                         int pp, int vpp);

// Parses a Megatron layout string. Errors name the rule broken: wrong number
// of stages for pp * vpp, layer count differing from num_layers, MTP count
// differing from mtp_layers, E not first, L not last, unknown symbols.
[[nodiscard]] util::Result<PipelinePlan> ParsePipelineLayout(
    std::string_view layout, int64_t num_layers, int64_t mtp_layers, int pp,
    int vpp);

}  // namespace moesim::models

#endif  // MOESIM_MODELS_PIPELINE_H_
