// The binding walls the seeds name (../shared/reference/seeds_notes.md, the
// Three Walls workflow) emerge from the replay: DiagnoseWall on the seed
// layouts.
#include <gtest/gtest.h>

#include <string>

#include "models/memory.h"
#include "sim/replay.h"
#include "sim/step_stats.h"
#include "tests/sim/simulate.h"

namespace moesim::sim {
namespace {

struct Judged {
  Wall wall;
  double tokens_per_sec_per_gpu = 0;
  bool fits = false;
};

Judged Judge(const std::string& text) {
  const scenarios::ResolvedScenario s = test_support::Resolve(text);
  const StepResult step = test_support::Simulate(s);
  const models::MemoryEstimate m =
      models::EstimateMemory(s.model, s.pipeline, s.parallel, s.training,
                             s.system.gpu().memory_gib() * models::kGiB);
  return {DiagnoseWall(step, m.peak_bytes, m.capacity_bytes),
          step.tokens_per_sec_per_gpu, m.fits};
}

// DeepSeek-V3 on 1,024 H100s, the Megatron-Bridge recipe (runs.csv
// ps2509-deepseek-v3-h100-1024g-fp8-cs: TP2 PP8 VPP4 EP64, DeepEP, EP
// overlap, FP8): the seeds call H100 communication-bound (the EP all-to-all
// crosses InfiniBand at EP 64).
TEST(SeedWalls, DeepSeekV3H100RecipeIsCommunicationBound) {
  const Judged j = Judge(R"(model: "deepseek-v3" system: "dgx-h100"
      num_gpus: 1024 seq_length: 4096 precision: "fp8-cs"
      dispatcher: "deepep" overlap_moe_expert_parallel_comm: true
      layout { tensor_model_parallel_size: 2 expert_model_parallel_size: 64
               pipeline_model_parallel_size: 8
               virtual_pipeline_model_parallel_size: 4
               pipeline_model_parallel_layout: "Et|(tt|)*30mL"
               micro_batch_size: 1 global_batch_size: 8192 }
      recompute { granularity: "selective" modules: ["mla_up_proj", "mlp"] })");
  EXPECT_TRUE(j.fits);
  EXPECT_EQ(j.wall.name, "communication") << j.wall.evidence;
}

// Qwen3-Next-80B at 64K on 32 GB200s: "64K can be done, but throughput drops
// noticeably and memory gets very tight" (seeds). The skill publishes no
// layout, so search CP x EP x PP (MBS 1, GBS 32, moe_act + layernorm
// recompute, HybridEP, as the shipped Qwen3-Next seeds): every layout with
// less CP than 4 is out of memory, the fastest that fits has CP 4, and the
// fastest CP-4 layout at EP 16 (the EP of the shipped seeds) is on the
// memory wall. Which EP wins at CP 4 is not the seeds' claim: EP 16 and 32
// were within 0.2% before the per-step host work was counted; EP 16's twice
// as many expert buckets (more bucket hooks and param gathers on the host)
// now leave EP 32 ahead.
TEST(SeedWalls, QwenNext64kOn32Gb200Cp4FitsAndEp16IsMemoryBound) {
  Judged best, best_ep16;
  int best_cp = 0;
  for (const int cp : {2, 4, 8, 16}) {
    for (const int ep : {16, 32}) {
      for (const int pp : {1, 2}) {
        if (ep * pp > 32 || cp * pp > 32) continue;
        const Judged j = Judge(
            R"(model: "qwen3-next-80b-a3b" system: "gb200-nvl72"
            num_gpus: 32 seq_length: 65536 precision: "bf16"
            dispatcher: "hybridep"
            layout { context_parallel_size: )" +
            std::to_string(cp) +
            " expert_model_parallel_size: " + std::to_string(ep) +
            " pipeline_model_parallel_size: " + std::to_string(pp) +
            (pp > 1 ? " virtual_pipeline_model_parallel_size: 4" : "") +
            R"( micro_batch_size: 1 global_batch_size: 32 }
            recompute { granularity: "selective"
                        modules: ["moe_act", "layernorm"] })");
        if (cp < 4) {
          EXPECT_FALSE(j.fits) << "CP" << cp;
        }
        if (j.fits && j.tokens_per_sec_per_gpu > best.tokens_per_sec_per_gpu) {
          best = j;
          best_cp = cp;
        }
        if (j.fits && cp == 4 && ep == 16 &&
            j.tokens_per_sec_per_gpu > best_ep16.tokens_per_sec_per_gpu) {
          best_ep16 = j;
        }
      }
    }
  }
  EXPECT_EQ(best_cp, 4);
  EXPECT_EQ(best_ep16.wall.name, "memory") << best_ep16.wall.evidence;
}

}  // namespace
}  // namespace moesim::sim
