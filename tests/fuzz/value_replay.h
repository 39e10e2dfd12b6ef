// The end of every value-mutating target (value_mutation.h): a scenario
// through Resolve, the memory report and, where it is small enough to
// replay in milliseconds, one step. Nothing may abort: every bad value is
// a Result error from a loader or a rule.
#ifndef MOESIM_TESTS_FUZZ_VALUE_REPLAY_H_
#define MOESIM_TESTS_FUZZ_VALUE_REPLAY_H_

#include <google/protobuf/text_format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "models/zoo.h"
#include "scenarios/scenario.h"
#include "sim/replay.h"
#include "tools/memory_report.h"
#include "topology/system.h"
#include "value_mutation.h"

namespace moesim::fuzz {

// A file of this process's own folder under the temporary directory.
inline std::string WriteTemp(const std::string& name,
                             const google::protobuf::Message& message) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("moesim_value_fuzz_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string text;
  google::protobuf::TextFormat::PrintToString(message, &text);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

inline void ResolveAndReplay(const scenarios::Scenario& spec) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(spec, &text);
  auto r = scenarios::Resolve(spec, "fuzz.textproto", text);
  if (!r) return;
  const studies::MemoryReport report = studies::BuildMemoryReport(*r);
  (void)tools::FormatMemoryJson(*r, report);
  const int64_t per_step =
      int64_t{r->training.micro_batch_size} * r->parallel.dp;
  if (r->spec.num_gpus() > 64 || r->training.seq_length > 32768 ||
      per_step <= 0 || r->training.global_batch_size / per_step > 16)
    return;
  auto platform = sim::BuildPlatform(*r);
  if (!platform) return;
  (void)sim::Replay(*r, *platform, {});
}

// The three value-mutating targets' bodies, shared with the seeded gtest
// that runs them in `make test` (tests/robustness/value_mutation_test.cc).

// DeepSeek-V3's model file edited, loaded as a model file by a scenario
// trimmed to 4 layers on 8 H100s.
inline void ModelValues(const uint8_t* data, size_t size) {
  static const models::Model base = *models::LoadModel("deepseek-v3");
  models::Model model = base;
  MutateValues(data, size, model);
  scenarios::Scenario spec;
  spec.set_model(WriteTemp("m.textproto", model));
  spec.set_system("dgx-h100");
  spec.set_num_gpus(8);
  spec.set_seq_length(1024);
  spec.set_num_layers(4);
  spec.mutable_layout()->set_expert_model_parallel_size(8);
  spec.mutable_layout()->set_global_batch_size(8);
  ResolveAndReplay(spec);
}

// The DGX H100 system file edited, the system of Qwen3-30B-A3B trimmed to
// 2 layers on 16 GPUs (two nodes, so the NICs count) in FP8.
inline void SystemValues(const uint8_t* data, size_t size) {
  static const topology::System base = *topology::LoadSystem("dgx-h100");
  topology::System system = base;
  MutateValues(data, size, system);
  scenarios::Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system(WriteTemp("s.textproto", system));
  spec.set_num_gpus(16);
  spec.set_seq_length(1024);
  spec.set_num_layers(2);
  spec.set_precision("fp8-cs");
  spec.mutable_layout()->set_expert_model_parallel_size(16);
  spec.mutable_layout()->set_global_batch_size(16);
  ResolveAndReplay(spec);
}

// A scenario (Qwen3-30B-A3B trimmed to 2 layers on 8 H100s) edited: layout
// sizes, batch, sequence, offload, routing skew and histogram, recompute
// depth, architecture overrides.
inline void ScenarioValues(const uint8_t* data, size_t size) {
  scenarios::Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(8);
  spec.set_seq_length(2048);
  spec.set_num_layers(2);
  spec.mutable_layout()->set_expert_model_parallel_size(8);
  spec.mutable_layout()->set_global_batch_size(8);
  MutateValues(data, size, spec);
  ResolveAndReplay(spec);
}

}  // namespace moesim::fuzz

#endif  // MOESIM_TESTS_FUZZ_VALUE_REPLAY_H_
