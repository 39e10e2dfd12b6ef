// libFuzzer target: an HF config.json through ParseHfConfig and
// ValidateModel (what `--model PATH/config.json` does before resolution).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "models/hf_config.h"
#include "models/zoo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  auto model = moesim::models::ParseHfConfig(json, "fuzz/config.json", "fuzz");
  if (!model) return 0;
  (void)moesim::models::ValidateModel(*model, "fuzz/config.json");
  return 0;
}
