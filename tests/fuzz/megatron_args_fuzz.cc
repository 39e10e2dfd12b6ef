// libFuzzer target: a Megatron argument string applied to a small valid
// scenario (Qwen3-30B-A3B on 8 H100s), then resolved, so the rules see every
// value the importer lets through; and the same bytes read as a launch file
// (scenarios/launch_file.h) whose arguments define the model.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenarios/launch_file.h"
#include "scenarios/megatron_args.h"
#include "scenarios/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view args(reinterpret_cast<const char*>(data), size);
  moesim::scenarios::Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(8);
  if (moesim::scenarios::ApplyMegatronArgs(args, spec))
    (void)moesim::scenarios::Resolve(spec, "flags");
  auto extracted = moesim::scenarios::ExtractMegatronArgs(args, "fuzz");
  if (!extracted) return 0;
  moesim::scenarios::Scenario launch;
  launch.set_system("dgx-h100");
  launch.set_num_gpus(8);
  launch.set_defaults("megatron-lm");
  if (moesim::scenarios::ApplyMegatronArgs(*extracted, launch))
    (void)moesim::scenarios::Resolve(launch, "flags");
  return 0;
}
