// scenarios::ExtractMegatronArgs: launch scripts and model_config.yaml.
#include "scenarios/launch_file.h"

#include <gtest/gtest.h>

#include <string>

#include "scenarios/megatron_args.h"

namespace moesim::scenarios {
namespace {

// The shape of Megatron-LM's
// examples/mixtral/train_mixtral_8x7b_distributed.sh: arrays of flags, an
// appended array inside a condition, a torchrun line.
constexpr char kScript[] = R"(#!/bin/bash
GPUS_PER_NODE=8
NUM_EXPERTS=${NUM_EXPERTS:-8}
export TOPK="2"
DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
)
MODEL_ARGS=(
    --num-layers 32   # decoder layers
    --hidden-size 4096
)
MOE_ARGS=(
    --num-experts ${NUM_EXPERTS}
    --moe-router-topk "$TOPK"
)
if [ -n "${WANDB_API_KEY}" ]; then
    MODEL_ARGS+=(--wandb-project ${WANDB_PROJECT:-"Mixtral"})
fi
torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    "${MODEL_ARGS[@]}" \
    ${MOE_ARGS[@]} \
    --seq-length 4096
)";

TEST(LaunchFileTest, ScriptArraysAndVariablesExpand) {
  auto args = ExtractMegatronArgs(kScript, "train.sh");
  ASSERT_TRUE(args) << args.error().message;
  Scenario spec;
  auto w = ApplyMegatronArgs(*args, spec);
  ASSERT_TRUE(w) << w.error().message << "\n" << *args;
  EXPECT_EQ(spec.num_layers(), 32);
  EXPECT_EQ(spec.seq_length(), 4096);
  EXPECT_EQ(spec.architecture().hidden_size(), 4096);
  EXPECT_EQ(spec.architecture().num_moe_experts(), 8);
  EXPECT_EQ(spec.architecture().moe_router_topk(), 2);
  // torchrun's own flags are not passed on.
  EXPECT_EQ(args->find("nproc_per_node"), std::string::npos) << *args;
  // --var wins over the file, and over a default.
  auto sixteen =
      ExtractMegatronArgs(kScript, "train.sh", {{"NUM_EXPERTS", "16"}});
  ASSERT_TRUE(sixteen);
  Scenario s16;
  ASSERT_TRUE(ApplyMegatronArgs(*sixteen, s16));
  EXPECT_EQ(s16.architecture().num_moe_experts(), 16);
}

TEST(LaunchFileTest, UnsetVariableInAModelledFlagIsRefused) {
  auto args = ExtractMegatronArgs(
      "MODEL_ARGS=(--num-experts $NUM_EXPERTS --save $CKPT)\n", "model.sh");
  ASSERT_TRUE(args) << args.error().message;
  Scenario spec;
  auto w = ApplyMegatronArgs(*args, spec);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().message,
            "--megatron-args: --num-experts: $NUM_EXPERTS is not set in the "
            "launch input (define it with --var NAME=VALUE, or write the "
            "value)");
}

// The shape of a Megatron-LM functional test's model_config.yaml.
constexpr char kYaml[] = R"(ENV_VARS:
  CUDA_DEVICE_MAX_CONNECTIONS: 1
TEST_TYPE: "release"
MODEL_ARGS:
  # Distributed args
  --tensor-model-parallel-size: 2
  --pipeline-model-parallel-layout: Et*2|(tt|)*5t|tmL
  --sequence-parallel: true
  --num-layers: 14 # original 61 layers
  --moe-layer-freq: ([0]*3+[1]*11)
  --recompute-modules: "[moe_act layernorm]"
  --cuda-graph-modules: [attn mlp moe_router]
  --save: ${CHECKPOINT_SAVE_PATH}
  --auto-detect-ckpt-format:
    true
  --seq-length: ${SEQ}
METRICS:
  - "lm loss"
)";

TEST(LaunchFileTest, YamlModelArgsAsTheTestRunnerPassesThem) {
  auto args =
      ExtractMegatronArgs(kYaml, "model_config.yaml", {{"SEQ", "8192"}});
  ASSERT_TRUE(args) << args.error().message;
  Scenario spec;
  auto w = ApplyMegatronArgs(*args, spec);
  ASSERT_TRUE(w) << w.error().message << "\n" << *args;
  EXPECT_EQ(spec.layout().tensor_model_parallel_size(), 2);
  EXPECT_EQ(spec.layout().pipeline_model_parallel_layout(),
            "Et*2|(tt|)*5t|tmL");
  EXPECT_TRUE(spec.layout().sequence_parallel());
  EXPECT_EQ(spec.num_layers(), 14);
  EXPECT_EQ(spec.seq_length(), 8192);
  EXPECT_EQ(spec.architecture().moe_layer_freq(), "([0]*3+[1]*11)");
  ASSERT_EQ(spec.recompute().modules_size(), 2);
  EXPECT_EQ(spec.recompute().modules(0), "moe_act");
  EXPECT_EQ(args->find("lm loss"), std::string::npos);
}

TEST(LaunchFileTest, BridgeFormsAreRefusedByName) {
  Scenario spec;
  auto overrides = ApplyMegatronArgs(
      "python run_recipe.py --recipe gpt_oss_120b_pretrain_config "
      "model.expert_model_parallel_size=8 train.global_batch_size=512",
      spec);
  ASSERT_FALSE(overrides);
  EXPECT_NE(overrides.error().message.find(
                "Megatron-Bridge's run_recipe.py selects a recipe (--recipe "
                "gpt_oss_120b_pretrain_config)"),
            std::string::npos)
      << overrides.error().message;
  auto dotted = ApplyMegatronArgs("model.tensor_model_parallel_size=4", spec);
  ASSERT_FALSE(dotted);
  EXPECT_NE(dotted.error().message.find(
                "'model.tensor_model_parallel_size=4' is a Megatron-Bridge "
                "recipe override"),
            std::string::npos)
      << dotted.error().message;
  auto perf = ApplyMegatronArgs(
      "python scripts/performance/setup_experiment.py --account a -m deepseek "
      "-mr deepseek_v3 -g gb300 -c fp8_mx",
      spec);
  ASSERT_FALSE(perf);
  EXPECT_NE(perf.error().message.find(
                "setup_experiment.py selects a recipe (-m deepseek -mr "
                "deepseek_v3 -g gb300 -c fp8_mx)"),
            std::string::npos)
      << perf.error().message;
}

TEST(LaunchFileTest, Errors) {
  auto open = ExtractMegatronArgs("ARGS=(\n  --num-layers 2\n", "x.sh");
  ASSERT_FALSE(open);
  EXPECT_EQ(open.error().message, "x.sh:2: array ARGS has no closing ')'");
  auto two = ExtractMegatronArgs(
      "python pretrain_gpt.py --num-layers 2\n"
      "python pretrain_gpt.py --num-layers 4\n",
      "x.sh");
  ASSERT_FALSE(two);
  EXPECT_EQ(two.error().message,
            "x.sh:2: a second training command with other arguments (the "
            "first is on line 1); keep the one to simulate");
  // Doubling an array line by line: bounded, not exponential.
  std::string doubling = "A=(--num-layers 2)\n";
  for (int i = 0; i < 64; ++i) doubling += "A=(${A[@]} ${A[@]})\n";
  auto big = ExtractMegatronArgs(doubling, "d.sh");
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message,
            "d.sh: its variables expand to more than 1 MiB of arguments");
  auto bridge = ExtractMegatronArgs(
      "model:\n  num_layers: 4\ntrain:\n  micro_batch_size: 1\n", "cc.yaml");
  ASSERT_FALSE(bridge);
  EXPECT_EQ(bridge.error().message.substr(0, 52),
            "cc.yaml: a Megatron-Bridge ConfigContainer YAML (mod");
  auto yaml = ExtractMegatronArgs("MODEL_ARGS:\n  no colon here\n", "c.yaml");
  ASSERT_FALSE(yaml);
  EXPECT_EQ(yaml.error().message,
            "c.yaml:2: MODEL_ARGS: expected '--flag: value', got 'no colon "
            "here'");
}

}  // namespace
}  // namespace moesim::scenarios
