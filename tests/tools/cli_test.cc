// End-to-end checks of `moesim memory` through the real binary.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct Output {
  std::string out;
  int status = -1;
};

Output RunMoesim(const std::string& args) {
  Output o;
  const std::string command =
      std::string(MOESIM_BINARY) + " " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return o;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    o.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

const std::string kDefault =
    std::string(MOESIM_SOURCE_DIR) + "/scenarios/default.textproto";

TEST(MemoryCommand, JsonHasTheContractKeys) {
  const Output o = RunMoesim("memory " + kDefault + " --json");
  ASSERT_EQ(o.status, 0);
  for (const char* key :
       {"\"params_total\"", "\"params_active\"", "\"model_flops_per_step\"",
        "\"model_flops_per_token\"", "\"stages\"", "\"params_gib\"",
        "\"grads_gib\"", "\"optimizer_gib\"", "\"activations_gib\"",
        "\"buffers_gib\"", "\"peak_gib\"", "\"peak_memory_gib\"",
        "\"capacity_gib\"", "\"fits\""}) {
    EXPECT_NE(o.out.find(key), std::string::npos) << key;
  }
  // DeepSeek-V3 without MTP: 671,026M params (models.md); the default has PP8.
  EXPECT_NE(o.out.find("\"params_total\": 671026"), std::string::npos);
  size_t stages = 0;
  for (size_t p = o.out.find("\"pp_rank\""); p != std::string::npos;
       p = o.out.find("\"pp_rank\"", p + 1)) {
    ++stages;
  }
  EXPECT_EQ(stages, 8u);
}

TEST(MemoryCommand, SameInputGivesByteIdenticalOutput) {
  const Output a = RunMoesim("memory " + kDefault);
  const Output b = RunMoesim("memory " + kDefault);
  ASSERT_EQ(a.status, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST(MemoryCommand, OutOfMemoryIsAVerdictNotAnError) {
  // Qwen3-235B on 8 H100s with no model parallelism: ~235B params x 18 B
  // cannot fit in 80 GB; a valid layout, so exit 0 and an OOM verdict.
  const Output o = RunMoesim(
      "memory --model qwen3-235b-a22b --system dgx-h100 --gpus 8 --json");
  ASSERT_EQ(o.status, 0);
  EXPECT_NE(o.out.find("\"fits\": false"), std::string::npos);
}

TEST(MemoryCommand, FlagsOverrideTheScenarioFile) {
  const Output base = RunMoesim("memory " + kDefault + " --json");
  const Output more_cp =
      RunMoesim("memory " + kDefault + " --json --gpus 512 --cp 64");
  ASSERT_EQ(more_cp.status, 0);
  EXPECT_NE(base.out, more_cp.out);
}

}  // namespace
