// libFuzzer target: a Megatron argument string applied to a small valid
// scenario (Qwen3-30B-A3B on 8 H100s), then resolved, so the rules see every
// value the importer lets through.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenarios/megatron_args.h"
#include "scenarios/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view args(reinterpret_cast<const char*>(data), size);
  moesim::scenarios::Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(8);
  auto warnings = moesim::scenarios::ApplyMegatronArgs(args, spec);
  if (!warnings) return 0;
  (void)moesim::scenarios::Resolve(spec, "flags");
  return 0;
}
