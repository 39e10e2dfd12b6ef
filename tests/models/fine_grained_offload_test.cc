// Fine-grained activation offloading and optimizer-state offloading in the
// memory model (models/memory.cc). Expected bytes are derived in each test
// from the tensors Megatron-Core saves inside each offload group
// (Megatron-LM@d98e8a64dd: transformer/moe/experts.py TEGroupedMLP.forward,
// transformer/attention.py Attention.forward, pipeline_parallel/
// fine_grained_activation_offload.py) at the scenario's shapes.
#include <gtest/gtest.h>

#include <string>

#include "models/memory.h"
#include "models/routing.h"
#include "scenarios/scenario.h"
#include "tests/models/stage_memory.h"
#include "tests/scenarios/resolve_text.h"

namespace moesim::models {
namespace {

using test_support::Resolve;
using test_support::Stage0;

double Saved(const StageMemory& st, const std::string& module) {
  for (const NamedBytes& b : st.offload_saved) {
    if (b.name == module) return b.bytes;
  }
  return -1;
}

// Qwen3-30B-A3B (48 layers, all MoE: hidden 2048, 32 heads of 128, 4 KV
// groups, 128 experts top-8, expert FFN 768) in BF16 on 8 H100s, TP1 PP1
// EP8, seq 4096, one micro-batch per rank (GBS 8 over DP 8), balanced
// routing: each rank's experts receive 4096 x 8 = 32,768 token rows.
const std::string kQwen = R"(model: "qwen3-30b-a3b" system: "dgx-h100"
    num_gpus: 8 seq_length: 4096 precision: "bf16"
    layout { expert_model_parallel_size: 8 global_batch_size: 8 })";

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kRows = 4096.0 * 8;

// expert_fc1 moves linear_fc1's saved input: the 32,768 dispatched rows of
// hidden 2048 in BF16 (set_save_original_input keeps the 16-bit tensor),
// 128 MiB per layer, 48 layers of the one stored micro-batch: 6 GiB. The
// GPU keeps one layer in flight and the last layer (offload margin) back.
TEST(FineGrainedOffload, ExpertFc1MovesEachMoeLayersGroupedGemmInput) {
  const StageMemory base = Stage0(Resolve(kQwen));
  const StageMemory off = Stage0(Resolve(kQwen + R"(
      fine_grained_activation_offloading: true offload_modules: "expert_fc1")"));
  const double layer = kRows * 2048 * 2;
  EXPECT_DOUBLE_EQ(layer, 128 * kMiB);
  EXPECT_DOUBLE_EQ(Saved(off, "expert_fc1"), 48 * layer);
  EXPECT_DOUBLE_EQ(off.activation_host_bytes, 48 * layer);
  EXPECT_DOUBLE_EQ(base.activations_bytes - off.activations_bytes,
                   48 * layer - 2 * layer);
  EXPECT_EQ(base.offload_saved.size(), 0u);
  EXPECT_EQ(base.activation_host_bytes, 0);
}

// moe_act moves the activation's saved input, the fc1 output (32,768 rows
// x 2 x 768 for SwiGLU, BF16): 96 MiB per layer. The routing
// probabilities (32,768 fp32 elements) are under Megatron's default
// min_offloaded_tensor_size of 1,048,576 elements and stay, unless the
// floor is lowered to 0 (then + 128 KiB per layer).
TEST(FineGrainedOffload, MoeActMovesTheFc1OutputAndProbsAboveTheFloor) {
  const std::string moe_act = kQwen + R"(
      fine_grained_activation_offloading: true offload_modules: "moe_act")";
  const double fc1_output = kRows * 2 * 768 * 2;
  EXPECT_DOUBLE_EQ(fc1_output, 96 * kMiB);
  EXPECT_DOUBLE_EQ(Saved(Stage0(Resolve(moe_act)), "moe_act"), 48 * fc1_output);
  EXPECT_DOUBLE_EQ(
      Saved(Stage0(Resolve(moe_act + " min_offloaded_tensor_size: 0")),
            "moe_act"),
      48 * (fc1_output + kRows * 4));
}

// core_attn moves what the fused attention saves: Q (4096 x 32 x 128), K
// and V (4096 x 4 x 128 each), BF16, and the output O (4096 x 32 x 128);
// the softmax statistics (4096 x 32 fp32 = 131,072 elements) are under the
// floor. In BF16 linear_proj saves O itself, so core_attn alone copies O
// but cannot free it; attn_proj's group moves linear_proj's input (O again)
// and frees it.
TEST(FineGrainedOffload, CoreAttnAloneCopiesTheOutputWithoutFreeingIt) {
  const double q = 4096.0 * 32 * 128 * 2, kv = 4096.0 * 4 * 128 * 2;
  const double o = q;
  const StageMemory core = Stage0(Resolve(kQwen + R"(
      fine_grained_activation_offloading: true offload_modules: "core_attn")"));
  EXPECT_DOUBLE_EQ(Saved(core, "core_attn"), 48 * (q + 2 * kv));
  EXPECT_DOUBLE_EQ(core.activation_host_bytes, 48 * (q + 2 * kv + o));
  const StageMemory both = Stage0(Resolve(kQwen + R"(
      fine_grained_activation_offloading: true
      offload_modules: "core_attn" offload_modules: "attn_proj")"));
  EXPECT_DOUBLE_EQ(Saved(both, "core_attn"), 48 * (q + 2 * kv));
  EXPECT_DOUBLE_EQ(Saved(both, "attn_proj"), 48 * o);
  EXPECT_DOUBLE_EQ(both.activation_host_bytes, 48 * (q + 2 * kv + 2 * o));
}

// --activation-offload-fraction 0.5 over 48 eligible expert_fc1 groups:
// int(48 x 0.5) = 24 of the last are kept on the GPU
// (post_warmup_callback), the first 24 move.
TEST(FineGrainedOffload, FractionKeepsTheLaterGroupsOnTheGpu) {
  const StageMemory half = Stage0(Resolve(kQwen + R"(
      fine_grained_activation_offloading: true offload_modules: "expert_fc1"
      activation_offload_fraction: 0.5)"));
  EXPECT_DOUBLE_EQ(Saved(half, "expert_fc1"), 24 * kRows * 2048 * 2);
}

// --offload-optimizer-states: the fp32 master weights and both moments
// (12 bytes per parameter of the shard) live on the host between steps.
// The forward/backward peak drops by all of them; the step's own peak
// holds weights, gradients and the states back, without activations.
TEST(OptimizerStateOffload, MovesMasterWeightsAndMomentsToTheHost) {
  const StageMemory base = Stage0(Resolve(kQwen));
  const StageMemory off =
      Stage0(Resolve(kQwen + " offload_optimizer_states: true"));
  EXPECT_GT(base.optimizer_bytes, 0);
  EXPECT_EQ(off.optimizer_bytes, 0);
  EXPECT_DOUBLE_EQ(off.optimizer_host_bytes, base.optimizer_bytes);
  EXPECT_DOUBLE_EQ(off.optimizer_step_bytes,
                   off.params_bytes + off.fp8_weight_bytes + off.grads_bytes +
                       base.optimizer_bytes);
  EXPECT_DOUBLE_EQ(off.allocated_peak_bytes,
                   std::max(base.allocated_peak_bytes - base.optimizer_bytes,
                            off.optimizer_step_bytes));
}

// Dropless routing as trained (moe_routing_skew 1.2, a Zipf law over the
// 128 experts): the busiest of the 8 EP ranks receives RoutingImbalance x
// the mean rows, and the memory estimate is that rank's, so every
// routed-expert activation (fc1 input and output, probabilities; fc2's
// input) grows by that factor; the rest does not.
TEST(RoutingAsTrained, BusiestRankHoldsItsExpertRows) {
  const scenarios::ResolvedScenario balanced = Resolve(kQwen);
  const scenarios::ResolvedScenario skewed = Resolve(kQwen + R"(
      routing: "dropless_natural" moe_routing_skew: 1.2)");
  const double factor = RoutingImbalance(128, 8, 1.2, {});
  ASSERT_GT(factor, 1.05);
  auto module = [](const StageMemory& st, const std::string& name) {
    for (const NamedBytes& b : st.activations) {
      if (b.name == name) return b.bytes;
    }
    return 0.0;
  };
  const StageMemory a = Stage0(balanced), b = Stage0(skewed);
  EXPECT_NEAR(module(b, "experts") / module(a, "experts"), factor, 1e-12);
  EXPECT_NEAR(module(b, "moe_act") / module(a, "moe_act"), factor, 1e-12);
  EXPECT_DOUBLE_EQ(module(b, "residual"), module(a, "residual"));
}

// Bad input: one line naming the field and the rule.
TEST(FineGrainedOffload, RefusesWhatMegatronRefuses) {
  const struct {
    std::string extra, field, rule;
  } cases[] = {
      {R"(fine_grained_activation_offloading: true offload_modules: "mlp")",
       "offload_modules", "unknown 'mlp'"},
      {R"(fine_grained_activation_offloading: true
          offload_modules: "attn_proj")",
       "offload_modules", "attn_proj needs core_attn"},
      {R"(fine_grained_activation_offloading: true
          offload_modules: "attn_norm")",
       "offload_modules", "fuses its input norm"},
      {R"(offload_modules: "expert_fc1")", "offload_modules",
       "without fine_grained_activation_offloading"},
      {R"(fine_grained_activation_offloading: true
          offload_modules: "expert_fc1" activation_offload_fraction: 1.5)",
       "activation_offload_fraction", "[0, 1]"},
      {R"(fine_grained_activation_offloading: true
          offload_modules: "expert_fc1"
          recompute { granularity: "selective" modules: "moe" })",
       "offload_modules", "moe recompute"},
      {R"(offload_optimizer_states: true optimizer_offload_fraction: 0.5)",
       "offload_optimizer_states", "CPU optimizer"},
  };
  for (const auto& c : cases) {
    const std::string text = kQwen + " " + c.extra;
    auto spec = scenarios::ParseScenario(text, "test");
    ASSERT_TRUE(spec) << spec.error().message;
    auto s = scenarios::Resolve(*spec, "test", text);
    ASSERT_FALSE(s) << c.extra;
    EXPECT_NE(s.error().message.find(c.field), std::string::npos)
        << s.error().message;
    EXPECT_NE(s.error().message.find(c.rule), std::string::npos)
        << s.error().message;
  }
  // expert_fc1 on a dense model.
  const std::string dense = R"(model: "llama3-8b" system: "dgx-h100"
      num_gpus: 8 seq_length: 4096 layout { global_batch_size: 8 }
      fine_grained_activation_offloading: true offload_modules: "expert_fc1")";
  auto spec = scenarios::ParseScenario(dense, "test");
  ASSERT_TRUE(spec);
  auto s = scenarios::Resolve(*spec, "test", dense);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("need MoE layers"), std::string::npos)
      << s.error().message;
}

}  // namespace
}  // namespace moesim::models
