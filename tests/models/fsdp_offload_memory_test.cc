// Megatron-FSDP sharding and CPU activation offloading in the memory model
// (models/memory.cc), checked against the same scenario without them.
#include <gtest/gtest.h>

#include <string>

#include "models/memory.h"
#include "models/params.h"
#include "scenarios/scenario.h"
#include "tests/models/stage_memory.h"
#include "tests/scenarios/resolve_text.h"

namespace moesim::models {
namespace {

using test_support::Resolve;
using test_support::Stage0;

// Llama3-8B in BF16 on 8 H100s (TP1 PP1, DP 8). ZeRO-3
// (optim_grads_params) keeps 1/8 of the bf16 weights and fp32 gradients
// that DDP with the distributed optimizer keeps, the same optimizer shard,
// and two whole layers (the one computing and the one prefetched) of
// weights and gradients: 2 x layer parameters x (2 + 4) bytes.
TEST(MegatronFsdp, ShardsWeightsAndGradientsAndKeepsTwoLayersWhole) {
  const std::string base = R"(model: "llama3-8b" system: "dgx-h100"
      num_gpus: 8 seq_length: 4096 precision: "bf16"
      layout { global_batch_size: 8 })";
  const scenarios::ResolvedScenario ddp = Resolve(base);
  const scenarios::ResolvedScenario fsdp =
      Resolve(base + R"( use_megatron_fsdp: true
      data_parallel_sharding_strategy: "optim_grads_params")");
  const StageMemory a = Stage0(ddp), b = Stage0(fsdp);
  EXPECT_DOUBLE_EQ(b.params_bytes, a.params_bytes / 8);
  EXPECT_DOUBLE_EQ(b.grads_bytes, a.grads_bytes / 8);
  EXPECT_DOUBLE_EQ(b.optimizer_bytes, a.optimizer_bytes);
  EXPECT_EQ(a.fsdp_unit_bytes, 0);
  const double layer = DecoderLayerParams(fsdp.model, 0).total();
  EXPECT_DOUBLE_EQ(b.fsdp_unit_bytes, 2 * layer * (2 + 4));
  EXPECT_DOUBLE_EQ(b.activations_bytes, a.activations_bytes);

  // ZeRO-2 (optim_grads) shards only the gradients.
  const StageMemory c = Stage0(Resolve(base + R"( use_megatron_fsdp: true
      data_parallel_sharding_strategy: "optim_grads")"));
  EXPECT_DOUBLE_EQ(c.params_bytes, a.params_bytes);
  EXPECT_DOUBLE_EQ(c.grads_bytes, a.grads_bytes / 8);
  EXPECT_DOUBLE_EQ(c.fsdp_unit_bytes, 2 * layer * 4);
}

// cpu_offloading with 16 of Llama3-8B's 32 identical layers: the host holds
// those 16 layers' stored activations; the GPU keeps the other 16 and one
// offloaded layer in flight, so it stores 15 layers' worth less.
TEST(CpuOffloading, MovesTheOffloadedLayersActivationsToTheHost) {
  const std::string base = R"(model: "llama3-8b" system: "dgx-h100"
      num_gpus: 8 seq_length: 4096 precision: "bf16" cpu_offloading: true
      layout { global_batch_size: 8 })";
  const StageMemory none = Stage0(Resolve(base));
  const StageMemory half =
      Stage0(Resolve(base + " cpu_offloading_num_layers: 16"));
  EXPECT_EQ(none.activation_host_bytes, 0);
  ASSERT_EQ(half.offloaded_layer_bytes.size(), 16u);
  const double layer = half.offloaded_layer_bytes[0];
  EXPECT_GT(layer, 0);
  EXPECT_DOUBLE_EQ(half.activation_host_bytes, 16 * layer);
  EXPECT_NEAR(none.activations_bytes - half.activations_bytes, 15 * layer,
              1e-6 * layer);
}

// Megatron's rules: 0 <= cpu_offloading_num_layers < num_layers, only with
// cpu_offloading; a sharding strategy needs Megatron-FSDP; unknown names.
TEST(CpuOffloading, RefusesWhatMegatronRefuses) {
  const std::string base = R"(model: "llama3-8b" system: "dgx-h100"
      num_gpus: 8 seq_length: 4096 precision: "bf16"
      layout { global_batch_size: 8 })";
  for (const auto& [extra, field] :
       std::vector<std::pair<std::string, std::string>>{
           {"cpu_offloading: true cpu_offloading_num_layers: 32",
            "cpu_offloading_num_layers"},
           {"cpu_offloading_num_layers: 4", "cpu_offloading_num_layers"},
           {"data_parallel_sharding_strategy: \"optim_grads\"",
            "data_parallel_sharding_strategy"},
           {"use_megatron_fsdp: true data_parallel_sharding_strategy: "
            "\"zero3\"",
            "data_parallel_sharding_strategy"}}) {
    auto spec = scenarios::ParseScenario(base + " " + extra, "test");
    ASSERT_TRUE(spec) << spec.error().message;
    auto s = scenarios::Resolve(*spec, "test", base + " " + extra);
    ASSERT_FALSE(s) << extra;
    EXPECT_NE(s.error().message.find(field), std::string::npos)
        << s.error().message;
  }
}

}  // namespace
}  // namespace moesim::models
