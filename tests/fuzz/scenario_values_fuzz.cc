// libFuzzer target (issue 44): a Qwen3-30B-A3B scenario with numeric fields
// edited by value (value_mutation.h), resolved, sized and replayed
// (value_replay.h, ScenarioValues).
#include <cstddef>
#include <cstdint>

#include "value_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  moesim::fuzz::ScenarioValues(data, size);
  return 0;
}
