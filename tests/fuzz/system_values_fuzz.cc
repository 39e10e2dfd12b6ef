// libFuzzer target (issue 44): the DGX H100 system file with numeric fields
// edited by value (value_mutation.h), resolved, sized and replayed
// (value_replay.h, SystemValues).
#include <cstddef>
#include <cstdint>

#include "value_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  moesim::fuzz::SystemValues(data, size);
  return 0;
}
