// `moesim sweep` with the space as flags (tools/sweep_flags.h): the same
// bytes as the equivalent spec file, and one-line errors (exit 2) naming the
// flag for bad values. Drives the built binary.
#include <gtest/gtest.h>

#include <string>

#include "tests/tools/run_moesim.h"

namespace moesim::tools {
namespace {

using moesim::testing::Output;
using moesim::testing::RunMoesim;

const std::string kSpec =
    std::string(MOESIM_SOURCE_DIR) + "/tests/data/sweeps/small.textproto";

// tests/data/sweeps/small.textproto written as flags: the base fields as
// single values, the axes as lists; 1:8 is 1, 2, 4, 8.
const std::string kFlags =
    "--model qwen3-30b-a3b --system dgx-h100 --gpus 8 --seq 4096 "
    "--num-layers 4 --gbs 8 --tp 1:8 --ep 1,2 --ep 8,16 --pp 1,2 "
    "--recompute none --recompute moe_act,layernorm";

TEST(SweepFlags, SameBytesAsTheSpecFile) {
  const Output file = RunMoesim("sweep " + kSpec + " --json --no-timing -j 2");
  const Output flags =
      RunMoesim("sweep " + kFlags + " --json --no-timing -j 2");
  ASSERT_EQ(file.status, 0);
  ASSERT_EQ(flags.status, 0);
  // 64 candidates (4 TP x 4 EP x 2 PP x 2 recompute).
  EXPECT_NE(file.out.find("\"evaluated\": 64"), std::string::npos)
      << file.out.substr(0, 300);
  EXPECT_EQ(flags.out, file.out);
  const Output text = RunMoesim("sweep " + kFlags + " --no-timing -j 2");
  EXPECT_EQ(text.out, RunMoesim("sweep " + kSpec + " --no-timing -j 2").out);
}

TEST(SweepFlags, BadValuesExitTwoWithOneLineNamingTheFlag) {
  const std::string base =
      "sweep --model qwen3-30b-a3b --system dgx-h100 --gpus 8 "
      "--num-layers 4 ";
  const std::pair<std::string, std::string> cases[] = {
      {base + "--tp 1,x", "flags: --tp: 'x' is not an integer or a range"},
      {base + "--tp 1:4,2:8", "flags: --tp: at most one range"},
      {base + "--tp 0,2", "flags: --tp: values must be >= 1, got 0"},
      {base + "--tp 8:1", "flags: --tp: a range needs 1 <= from <= to"},
      {base + "--tp 1:8:0", "flags: --tp: a range needs exactly one of"},
      {base + "--tp 0", "flags: --tp: must be >= 1, got 0"},
      {base + "--precision bf16,fp6", "flags: --precision: unknown 'fp6'"},
      {base + "--precision fp6", "flags: --precision: unknown 'fp6'"},
      {base + "--recompute attn", "flags: --recompute: unknown module 'attn'"},
      {base + "--recompute none --recompute full,mlp",
       "flags: --recompute: 'full' cannot be combined with modules"},
      {base + "--cuda-graph te:router --cuda-graph none",
       "flags: --cuda-graph: unknown TE scope 'router'"},
      {base + "--cpu-offload 0,1.5", "flags: --cpu-offload: must be in [0, 1]"},
      {base + "--cpu-offload half", "flags: --cpu-offload: 'half' is not a"},
      {base + "--ep-overlap 0,2", "flags: --ep-overlap: must be 0 or 1"},
      {base + "--dispatcher ''", "flags: --dispatcher: empty"},
      {base + "--tp 1,2 --constraint 'tp*x <= 8'",
       "flags: --constraint: 'tp*x <= 8': unknown term 'x'"},
      {"sweep --system dgx-h100 --gpus 8 --tp 1,2", "flags: --model: required"},
      {"sweep " + kSpec + " --tp 1,2", "flags: --tp: the space comes from"},
      {"sweep " + kSpec + " --model llama3-8b",
       "flags: --model: the space comes from"},
  };
  for (const auto& [args, expected] : cases) {
    const Output o = moesim::testing::RunMoesimStderr(args);
    EXPECT_EQ(o.status, 2) << args;
    EXPECT_EQ(o.out.find("moesim: " + expected), 0u) << args << "\n" << o.out;
    EXPECT_EQ(o.out.find('\n'), o.out.size() - 1) << "one line: " << o.out;
  }
}

}  // namespace
}  // namespace moesim::tools
