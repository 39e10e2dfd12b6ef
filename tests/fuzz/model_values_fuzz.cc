// libFuzzer target (issue 44): DeepSeek-V3's model file with numeric fields
// edited by value (value_mutation.h), resolved, sized and replayed
// (value_replay.h, ModelValues).
#include <cstddef>
#include <cstdint>

#include "value_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  moesim::fuzz::ModelValues(data, size);
  return 0;
}
