// Test support: the memory model's first pipeline stage of a resolved
// scenario, on an 80 GiB GPU.
#ifndef MOESIM_TESTS_MODELS_STAGE_MEMORY_H_
#define MOESIM_TESTS_MODELS_STAGE_MEMORY_H_

#include "models/memory.h"
#include "scenarios/scenario.h"

namespace moesim::test_support {

inline models::StageMemory Stage0(const scenarios::ResolvedScenario& s) {
  return models::EstimateMemory(s.model, s.pipeline, s.parallel, s.training,
                                80 * models::kGiB)
      .stages[0];
}

}  // namespace moesim::test_support

#endif  // MOESIM_TESTS_MODELS_STAGE_MEMORY_H_
