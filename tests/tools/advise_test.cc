// `moesim advise`: the optimization workflow as a greedy search
// (tools/advise.h), end to end through the binary, and the Megatron argument
// formatter it prints the final layout with.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "scenarios/megatron_args.h"
#include "scenarios/scenario.h"
#include "tests/tools/run_moesim.h"

namespace {

using moesim::testing::Output;
using moesim::testing::RunMoesim;

// Every value of `key` in the flat JSON `json`, in order ("steps" entries
// and then "final" carry the same keys).
std::vector<std::string> Values(const std::string& json,
                                const std::string& key) {
  std::vector<std::string> out;
  const std::string needle = "\"" + key + "\": ";
  for (size_t at = json.find(needle); at != std::string::npos;
       at = json.find(needle, at + 1)) {
    const size_t begin = at + needle.size();
    const size_t end = json.find_first_of(",}", begin);
    out.push_back(json.substr(begin, end - begin));
  }
  return out;
}

// POOR_START is filled in below.
// Qwen3-30B-A3B trimmed to 4 layers on 8 H100s at 64K context with EP8, no
// recompute: `moesim memory` puts pp0 at 93.1 GiB of 79.7 GiB (out of
// memory by 13.5 GiB; the 64K-token activations dominate), and one replay
// takes ~0.1 s, so the whole search stays within a few seconds.
const std::string kPoorStart =
    "advise --model qwen3-30b-a3b --system dgx-h100 --gpus 8 --seq 65536 "
    "--num-layers 4 --ep 8";

TEST(AdviseCommand, PoorStartEndsFittingAndFirstStepAddressesMemory) {
  const Output o = RunMoesim(kPoorStart + " --json");
  ASSERT_EQ(o.status, 0) << o.out;
  // "start" first, then one entry per kept step, then "final".
  const std::vector<std::string> walls = Values(o.out, "wall");
  const std::vector<std::string> fits = Values(o.out, "fits");
  ASSERT_GE(fits.size(), 3u) << "start, at least one step, final";
  EXPECT_EQ(fits.front(), "false") << "the start is out of memory";
  EXPECT_EQ(walls.front(), "\"memory\"");
  // The first kept step was made on the memory wall and makes it fit.
  EXPECT_EQ(walls[1], "\"memory\"");
  EXPECT_EQ(fits[1], "true");
  EXPECT_EQ(fits.back(), "true") << "the final layout fits";
  const std::vector<std::string> changes = Values(o.out, "change");
  ASSERT_GE(changes.size(), 2u);
  // Memory fixes: a recompute module, CP, PP or offload.
  const std::string& first = changes[1];
  EXPECT_TRUE(first.starts_with("\"recompute") || first.starts_with("\"cp ") ||
              first.starts_with("\"pp ") || first.starts_with("\"cpu-offload"))
      << first;
}

TEST(AdviseCommand, EveryKeptStepGainsOrFixesTheFit) {
  const Output o = RunMoesim(kPoorStart + " --json");
  ASSERT_EQ(o.status, 0);
  const std::vector<std::string> fits = Values(o.out, "fits");
  const std::vector<std::string> gains = Values(o.out, "gain_pct");
  // Entries: start, steps..., and "final" has no gain_pct (gain_pct_total).
  ASSERT_EQ(gains.size() + 1, fits.size());
  const std::vector<std::string> walls = Values(o.out, "wall");
  for (size_t i = 1; i < gains.size(); ++i) {
    // A step made on the memory wall may trade speed for fitting (or for
    // leaving the wall); every other step must gain.
    if (walls[i] == "\"memory\"" && fits[i] == "true") continue;
    EXPECT_EQ(fits[i], "true") << "step " << i;
    // The rule: keep a change only above 0.5% tokens/s/GPU.
    EXPECT_GT(std::stod(gains[i]), 0.5) << "step " << i;
  }
}

TEST(AdviseCommand, SameInputSameBytes) {
  const Output a = RunMoesim(kPoorStart + " --max-steps 3");
  const Output b = RunMoesim(kPoorStart + " --max-steps 3");
  ASSERT_EQ(a.status, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("moesim flags:"), std::string::npos);
  EXPECT_NE(a.out.find("megatron args:"), std::string::npos);
}

// The final "flags" are what `moesim run` takes: replaying them gives the
// final figure again (both printed with JsonNumber's 6 digits).
TEST(AdviseCommand, FinalFlagsReplayToTheFinalFigure) {
  const Output o = RunMoesim(kPoorStart + " --json");
  ASSERT_EQ(o.status, 0);
  // The JSON string, unescaped: the flags quote --cuda-graph "none".
  const std::string key = "\"flags\": \"";
  const size_t begin = o.out.find(key);
  ASSERT_NE(begin, std::string::npos);
  std::string command;
  for (size_t i = begin + key.size(); i < o.out.size() && o.out[i] != '"';
       ++i) {
    if (o.out[i] == '\\') ++i;
    command += o.out[i];
  }
  const Output run = RunMoesim("run " + command + " --json");
  ASSERT_EQ(run.status, 0) << command;
  const std::vector<std::string> tps = Values(o.out, "tokens_per_sec_per_gpu");
  EXPECT_EQ(Values(run.out, "tokens_per_sec_per_gpu").at(0), tps.back());
}

// Regression: DeepSeek-V3 trimmed to 5 layers on 16 H100s (EP16, 4K, fp32
// main gradients and Adam moments rather than the recipe's bf16) sits at
// 77.8 of 79.7 GiB, the memory wall; leaving it costs speed, and the
// search once alternated "recompute +mlp" / "recompute -mlp" up to
// --max-steps. Now it never revisits a layout, stops two steps after its
// best, and reports the fastest fitting layout (step 2: hybridep, 12132.5
// tokens/s/GPU, with mla_up_proj recompute).
TEST(AdviseCommand, MemoryWallDoesNotCycle) {
  const Output o = RunMoesim(
      "advise --model deepseek-v3 --system dgx-h100 --gpus 16 --num-layers 5 "
      "--seq 4096 --ep 16 --json --megatron-args '--exp-avg-dtype fp32 "
      "--main-grads-dtype fp32'");
  ASSERT_EQ(o.status, 0);
  const std::vector<std::string> changes = Values(o.out, "change");
  EXPECT_LT(changes.size(), 1u + 8u) << "stopped before --max-steps 8";
  const std::vector<std::string> tps = Values(o.out, "tokens_per_sec_per_gpu");
  const std::vector<std::string> fits = Values(o.out, "fits");
  // The final figure is the best fitting one of the trail.
  double best = 0;
  for (size_t i = 0; i + 1 < tps.size(); ++i) {
    if (fits[i] == "true") best = std::max(best, std::stod(tps[i]));
  }
  EXPECT_EQ(std::stod(tps.back()), best);
  EXPECT_EQ(Values(o.out, "step").at(0), "2");
}

TEST(AdviseCommand, MaxStepsZeroKeepsTheStart) {
  const Output o = RunMoesim(kPoorStart + " --json --max-steps 0");
  ASSERT_EQ(o.status, 0);
  EXPECT_NE(o.out.find("\"steps\": []"), std::string::npos) << o.out;
}

TEST(AdviseCommand, BadInputExitsTwo) {
  EXPECT_EQ(RunMoesim(kPoorStart + " --tp 0").status, 2);
  EXPECT_EQ(RunMoesim(kPoorStart + " --max-steps -1").status, 2);
  EXPECT_EQ(RunMoesim(kPoorStart + " --no-such-flag").status, 2);
  EXPECT_EQ(RunMoesim("advise --model no-such-model --gpus 8").status, 2);
}

// The final layout's Megatron string maps back (ApplyMegatronArgs) onto the
// same layout fields: the seed layout round-trips.
TEST(FormatMegatronArgs, SeedLayoutRoundTrips) {
  const std::string file =
      std::string(MOESIM_SOURCE_DIR) + "/scenarios/default.textproto";
  auto spec = moesim::scenarios::LoadScenario(file);
  ASSERT_TRUE(spec) << spec.error().message;
  auto seed = moesim::scenarios::Resolve(*spec, file);
  ASSERT_TRUE(seed) << seed.error().message;
  const std::string args = moesim::scenarios::FormatMegatronArgs(seed->spec);
  EXPECT_NE(args.find("--context-parallel-size 32"), std::string::npos);
  EXPECT_NE(args.find("--pipeline-model-parallel-layout \"Et|(tt|)*30mL\""),
            std::string::npos)
      << args;

  moesim::scenarios::Scenario back;
  back.set_model(seed->spec.model());
  back.set_system(seed->spec.system());
  back.set_num_gpus(seed->spec.num_gpus());
  auto applied = moesim::scenarios::ApplyMegatronArgs(args, back);
  ASSERT_TRUE(applied) << applied.error().message;
  auto again = moesim::scenarios::Resolve(back, "round trip");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->spec.layout().SerializeAsString(),
            seed->spec.layout().SerializeAsString());
  EXPECT_EQ(again->spec.recompute().SerializeAsString(),
            seed->spec.recompute().SerializeAsString());
  EXPECT_EQ(again->spec.precision(), "fp8-block");
  EXPECT_EQ(again->spec.dispatcher(), "deepep");
  EXPECT_EQ(again->spec.optimizer_offload_fraction(), 1.0);
  EXPECT_EQ(again->spec.seq_length(), 131072);
}

// For every seed, the final layout's printed Megatron arguments, pasted
// back without --model (so as a Megatron-LM launch, with its defaults),
// resolve to the same scenario: every spec field but the model's name and
// the import's bookkeeping, and a model of the same shape.
TEST(FormatMegatronArgs, EverySeedRoundTripsWithoutModel) {
  const std::string dir = std::string(MOESIM_SOURCE_DIR) + "/scenarios/";
  const char* seeds[] = {"default.textproto",
                         "seeds/dsv3-256k-h100.textproto",
                         "seeds/qwen3-235b-128k-gb200.textproto",
                         "seeds/qwen3-next-32k-gb200.textproto",
                         "seeds/qwen3-next-64k-gb200.textproto",
                         "seeds/qwen3-next-8k-gb200.textproto"};
  for (const char* seed : seeds) {
    const std::string file = dir + seed;
    auto spec = moesim::scenarios::LoadScenario(file);
    ASSERT_TRUE(spec) << spec.error().message;
    auto start = moesim::scenarios::Resolve(*spec, file);
    ASSERT_TRUE(start) << seed << ": " << start.error().message;
    const std::string args =
        moesim::scenarios::FormatArchitectureArgs(start->model) + " " +
        moesim::scenarios::FormatMegatronArgs(start->spec);

    moesim::scenarios::Scenario back;
    back.set_system(start->spec.system());
    back.set_num_gpus(start->spec.num_gpus());
    back.set_defaults("megatron-lm");  // as the CLI sets it without --model
    auto applied = moesim::scenarios::ApplyMegatronArgs(args, back);
    ASSERT_TRUE(applied) << seed << ": " << applied.error().message;
    auto again = moesim::scenarios::Resolve(back, "round trip");
    ASSERT_TRUE(again) << seed << ": " << again.error().message << "\n" << args;

    moesim::scenarios::Scenario a = start->spec, b = again->spec;
    for (moesim::scenarios::Scenario* s : {&a, &b}) {
      s->clear_model();
      s->clear_architecture();
      s->clear_defaults();
    }
    EXPECT_EQ(a.DebugString(), b.DebugString()) << seed << "\n" << args;

    moesim::models::Model ma = start->model, mb = again->model;
    for (moesim::models::Model* m : {&ma, &mb}) {
      m->clear_name();
      m->clear_source();
      m->clear_hf_model_type();
      m->clear_recipe();
      // model.proto: 0 is Megatron's default padding multiple, 128.
      if (m->make_vocab_size_divisible_by() == 0)
        m->set_make_vocab_size_divisible_by(128);
    }
    EXPECT_EQ(ma.DebugString(), mb.DebugString()) << seed << "\n" << args;
  }
}

}  // namespace
