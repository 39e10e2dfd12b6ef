// scenarios::ApplyMegatronArgs: Megatron-LM / Megatron-Bridge argument strings.
#include "scenarios/megatron_args.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenarios/scenario.h"

namespace moesim::scenarios {
namespace {

// The seed layout (scenarios/default.textproto) as a Megatron-Bridge launch
// would spell it, with a few flags moesim does not model.
constexpr char kDsv3LongContext[] = R"(python pretrain_gpt.py \
  --tensor-model-parallel-size 1 --context-parallel-size 32 \
  --expert-model-parallel-size 32 --expert-tensor-parallel-size 1 \
  --pipeline-model-parallel-size 8 --virtual-pipeline-model-parallel-size 4 \
  --pipeline-model-parallel-layout "Et|(tt|)*30mL" \
  --micro-batch-size 1 --global-batch-size=128 --seq-length 131072 \
  --mtp-num-layers 1 --bf16 --fp8-format e4m3 --fp8-recipe blockwise \
  --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep \
  --recompute-granularity selective --recompute-modules mla_up_proj layernorm moe mlp \
  --optimizer-cpu-offload --optimizer-offload-fraction 1.0 --use-distributed-optimizer \
  --lr 3e-4 --manual-gc --manual-gc-interval 10 --moe-router-force-load-balancing \
  --tp-comm-overlap --lr 1e-4)";

TEST(MegatronArgsTest, BridgeDeepSeekV3LongContextMapsOntoTheScenario) {
  Scenario spec;
  auto warnings = ApplyMegatronArgs(kDsv3LongContext, spec);
  ASSERT_TRUE(warnings) << warnings.error().message;
  const Layout& l = spec.layout();
  EXPECT_EQ(l.tensor_model_parallel_size(), 1);
  EXPECT_EQ(l.context_parallel_size(), 32);
  EXPECT_EQ(l.expert_model_parallel_size(), 32);
  EXPECT_EQ(l.expert_tensor_parallel_size(), 1);
  EXPECT_EQ(l.pipeline_model_parallel_size(), 8);
  EXPECT_EQ(l.virtual_pipeline_model_parallel_size(), 4);
  EXPECT_EQ(l.pipeline_model_parallel_layout(), "Et|(tt|)*30mL");
  EXPECT_EQ(l.micro_batch_size(), 1);
  EXPECT_EQ(l.global_batch_size(), 128);
  EXPECT_FALSE(l.has_sequence_parallel());  // absent: Bridge default at Resolve
  EXPECT_EQ(spec.seq_length(), 131072);
  ASSERT_TRUE(spec.has_mtp_num_layers());
  EXPECT_EQ(spec.mtp_num_layers(), 1);
  EXPECT_EQ(spec.precision(), "fp8-block");  // FP8 recipe wins over --bf16
  EXPECT_EQ(spec.dispatcher(), "deepep");
  EXPECT_EQ(spec.recompute().granularity(), "selective");
  ASSERT_EQ(spec.recompute().modules_size(), 4);
  EXPECT_EQ(spec.recompute().modules(0), "mla_up_proj");
  EXPECT_EQ(spec.recompute().modules(3), "mlp");
  EXPECT_DOUBLE_EQ(spec.optimizer_offload_fraction(), 1.0);
  EXPECT_TRUE(spec.use_distributed_optimizer());
  EXPECT_EQ(spec.routing(), "force_balanced");
  EXPECT_TRUE(spec.manual_gc());

  // Unknown flags are reported once each, in order, never dropped silently.
  // --lr and --manual-gc-interval change no step's work: counted; the
  // others may change speed or memory: named one per line.
  ASSERT_EQ(warnings->size(), 3u);
  EXPECT_EQ((*warnings)[0],
            "--megatron-args: 2 flags without effect on a step's time or "
            "memory (logging, data, checkpoints, learning rate, "
            "initialisation) ignored");
  EXPECT_EQ((*warnings)[1],
            "--megatron-args: not modelled (may change speed or memory): "
            "--tp-comm-overlap");
  EXPECT_EQ((*warnings)[2],
            "--megatron-args: ignored words before the first flag: python "
            "pretrain_gpt.py");

  // With a model and system it resolves to the seed layout.
  spec.set_model("deepseek-v3");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(256);
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->parallel.dp, 1);
  EXPECT_EQ(r->parallel.edp, 1);
  EXPECT_EQ(r->training.precision, models::Precision::kFp8Blockwise);
  EXPECT_EQ(r->pipeline.stages.size(), 32u);
}

// A launch script's comments: a word that begins with '#' runs to the end
// of its line (POSIX sh), while a '#' inside a word or quotes is kept.
TEST(MegatronArgsTest, ShellCommentsAreDropped) {
  Scenario spec;
  auto warnings = ApplyMegatronArgs(
      "--tensor-model-parallel-size 2  # two per node\n"
      "# --pipeline-model-parallel-size 4\n"
      "--pipeline-model-parallel-layout 'Et|#tL' --context-parallel-size 2#x",
      spec);
  ASSERT_FALSE(warnings);  // "2#x" is one word, not an integer
  EXPECT_NE(warnings.error().message.find("'2#x' is not an integer"),
            std::string::npos)
      << warnings.error().message;
  Scenario ok;
  auto applied = ApplyMegatronArgs(
      "--tensor-model-parallel-size 2  # two per node\n"
      "# --pipeline-model-parallel-size 4\n"
      "--context-parallel-size 2",
      ok);
  ASSERT_TRUE(applied) << applied.error().message;
  EXPECT_EQ(ok.layout().tensor_model_parallel_size(), 2);
  EXPECT_EQ(ok.layout().pipeline_model_parallel_size(), 0);  // commented out
  EXPECT_EQ(ok.layout().context_parallel_size(), 2);
}

TEST(MegatronArgsTest, PrecisionRecipes) {
  struct Case {
    const char* args;
    const char* precision;
  };
  const Case cases[] = {
      {"--bf16", "bf16"},
      {"--fp8-format hybrid",
       "fp8-delayed"},  // Megatron's default recipe is delayed
      {"--fp8-format e4m3 --fp8-recipe delayed", "fp8-delayed"},
      {"--fp8-format hybrid --fp8-recipe tensorwise", "fp8-cs"},
      {"--fp8-format e4m3 --fp8-recipe blockwise", "fp8-block"},
      {"--fp8-format=e4m3 --fp8-recipe=mxfp8", "mxfp8"},
      {"--bf16 --fp4-format e2m1 --fp4-recipe nvfp4", "nvfp4"},
  };
  for (const Case& c : cases) {
    Scenario spec;
    auto w = ApplyMegatronArgs(c.args, spec);
    ASSERT_TRUE(w) << c.args << ": " << w.error().message;
    EXPECT_EQ(spec.precision(), c.precision) << c.args;
  }
}

TEST(MegatronArgsTest, Dispatchers) {
  struct Case {
    const char* args;
    const char* dispatcher;
  };
  const Case cases[] = {
      {"--moe-token-dispatcher-type alltoall", "alltoall"},
      {"--moe-token-dispatcher-type flex",
       "deepep"},  // MCore's default flex backend
      {"--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend "
       "hybridep",
       "hybridep"},
      {"--moe-enable-deepep", "deepep"},
      {"--moe-flex-dispatcher-backend hybridep",
       "hybridep"},  // Bridge implies flex
  };
  for (const Case& c : cases) {
    Scenario spec;
    auto w = ApplyMegatronArgs(c.args, spec);
    ASSERT_TRUE(w) << c.args << ": " << w.error().message;
    EXPECT_EQ(spec.dispatcher(), c.dispatcher) << c.args;
  }
}

TEST(MegatronArgsTest, CudaGraphs) {
  struct Case {
    const char* args;
    const char* cuda_graph;
  };
  const Case cases[] = {
      {"--cuda-graph-impl transformer_engine --cuda-graph-scope attn "
       "moe_router moe_preprocess",
       "te:attn;moe_router;moe_preprocess"},
      {"--cuda-graph-impl local --cuda-graph-scope full_iteration",
       "full_iteration"},
      {"--cuda-graph-impl local", "local:transformer_layer"},
      {"--cuda-graph-impl none", "none"},
  };
  for (const Case& c : cases) {
    Scenario spec;
    auto w = ApplyMegatronArgs(c.args, spec);
    ASSERT_TRUE(w) << c.args << ": " << w.error().message;
    EXPECT_EQ(spec.cuda_graph(), c.cuda_graph) << c.args;
  }
}

TEST(MegatronArgsTest, OptimizerRoutingAndFlags) {
  Scenario spec;
  auto w = ApplyMegatronArgs(
      "--optimizer-cpu-offload --use-precision-aware-optimizer "
      "--main-grads-dtype bf16 "
      "--exp-avg-dtype bf16 --fp8-param-gather --sequence-parallel "
      "--moe-shared-expert-overlap "
      "--overlap-moe-expert-parallel-comm --cpu-offloading "
      "--moe-expert-capacity-factor 1.25 "
      "--recompute-granularity full --recompute-method block "
      "--recompute-num-layers 2 "
      "--num-layers 8",
      spec);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_TRUE(w->empty());
  EXPECT_DOUBLE_EQ(spec.optimizer_offload_fraction(),
                   1.0);  // Megatron's default fraction
  EXPECT_TRUE(spec.use_precision_aware_optimizer());
  EXPECT_EQ(spec.main_grads_dtype(), "bf16");
  EXPECT_EQ(spec.exp_avg_dtype(), "bf16");
  EXPECT_TRUE(spec.fp8_param_gather());
  EXPECT_TRUE(spec.layout().sequence_parallel());
  EXPECT_TRUE(spec.moe_shared_expert_overlap());
  EXPECT_TRUE(spec.overlap_moe_expert_parallel_comm());
  EXPECT_TRUE(spec.cpu_offloading());
  EXPECT_DOUBLE_EQ(spec.moe_expert_capacity_factor(), 1.25);
  EXPECT_EQ(spec.routing(), "tokendrop");
  EXPECT_EQ(spec.recompute().granularity(), "full");
  EXPECT_EQ(spec.recompute().method(), "block");
  EXPECT_EQ(spec.recompute().num_layers(), 2);
  EXPECT_EQ(spec.num_layers(), 8);
}

// --fp8-dot-product-attention sets the scenario field (whether the recipe
// admits it is Resolve's rule) and FormatMegatronArgs writes it back.
TEST(MegatronArgsTest, Fp8DotProductAttention) {
  Scenario spec;
  auto w = ApplyMegatronArgs(
      "--fp8-format e4m3 --fp8-recipe mxfp8 --fp8-dot-product-attention", spec);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_TRUE(w->empty());
  EXPECT_EQ(spec.precision(), "mxfp8");
  EXPECT_TRUE(spec.fp8_dot_product_attention());
  EXPECT_NE(FormatMegatronArgs(spec).find("--fp8-recipe mxfp8 "
                                          "--fp8-dot-product-attention"),
            std::string::npos)
      << FormatMegatronArgs(spec);
  Scenario off;
  ASSERT_TRUE(ApplyMegatronArgs("--fp8-format e4m3", off));
  EXPECT_FALSE(off.fp8_dot_product_attention());
  EXPECT_EQ(FormatMegatronArgs(off).find("--fp8-dot-product-attention"),
            std::string::npos);
}

// --moe-pad-expert-input-to-capacity with a capacity factor: token drop
// padded to capacity, and FormatMegatronArgs writes both back.
TEST(MegatronArgsTest, PadExpertInputToCapacity) {
  Scenario spec;
  auto w = ApplyMegatronArgs(
      "--moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity",
      spec);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_TRUE(w->empty());
  EXPECT_EQ(spec.routing(), "tokendrop");
  EXPECT_TRUE(spec.moe_pad_expert_input_to_capacity());
  EXPECT_NE(FormatMegatronArgs(spec).find("--moe-expert-capacity-factor 1 "
                                          "--moe-pad-expert-input-to-capacity"),
            std::string::npos)
      << FormatMegatronArgs(spec);
}

// Megatron-FSDP and CPU activation offloading map onto the scenario and
// FormatMegatronArgs writes them back.
TEST(MegatronArgsTest, MegatronFsdpAndActivationOffload) {
  Scenario spec;
  auto w = ApplyMegatronArgs(
      "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads "
      "--cpu-offloading --cpu-offloading-num-layers 12",
      spec);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_TRUE(w->empty());
  EXPECT_TRUE(spec.use_megatron_fsdp());
  EXPECT_EQ(spec.data_parallel_sharding_strategy(), "optim_grads");
  EXPECT_TRUE(spec.cpu_offloading());
  EXPECT_EQ(spec.cpu_offloading_num_layers(), 12);
  const std::string args = FormatMegatronArgs(spec);
  EXPECT_NE(args.find("--use-megatron-fsdp --data-parallel-sharding-strategy "
                      "optim_grads"),
            std::string::npos)
      << args;
  EXPECT_NE(args.find("--cpu-offloading --cpu-offloading-num-layers 12"),
            std::string::npos)
      << args;
}

// The Megatron-MoE model zoo's Kimi-K2 GB200 128K recipe spells its
// offloading this way (tests/data/megatron_args/
// moezoo_bp__kimi_k2_gb200_128k.sh), with the tuning flags of
// fine_grained_activation_offloading.md.
TEST(MegatronArgsTest, FineGrainedAndOptimizerStateOffload) {
  Scenario spec;
  auto w = ApplyMegatronArgs(
      "--fine-grained-activation-offloading --offload-modules core_attn "
      "attn_proj expert_fc1 --activation-offload-fraction 0.8 "
      "--min-offloaded-tensor-size 4096 --offload-optimizer-states",
      spec);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_TRUE(w->empty());
  EXPECT_TRUE(spec.fine_grained_activation_offloading());
  ASSERT_EQ(spec.offload_modules_size(), 3);
  EXPECT_EQ(spec.offload_modules(2), "expert_fc1");
  EXPECT_DOUBLE_EQ(spec.activation_offload_fraction(), 0.8);
  EXPECT_EQ(spec.min_offloaded_tensor_size(), 4096);
  EXPECT_TRUE(spec.offload_optimizer_states());
  const std::string args = FormatMegatronArgs(spec);
  EXPECT_NE(args.find("--fine-grained-activation-offloading --offload-modules "
                      "core_attn attn_proj expert_fc1 "
                      "--activation-offload-fraction 0.8 "
                      "--min-offloaded-tensor-size 4096"),
            std::string::npos)
      << args;
  EXPECT_NE(args.find("--offload-optimizer-states"), std::string::npos) << args;
  // Megatron's range for the fraction.
  Scenario bad;
  auto e = ApplyMegatronArgs("--activation-offload-fraction 2", bad);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("--activation-offload-fraction"),
            std::string::npos);
}

TEST(MegatronArgsTest, ContextParallelCommType) {
  Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(64);
  auto w = ApplyMegatronArgs(
      "--context-parallel-size 8 --cp-comm-type a2a+p2p "
      "--hierarchical-context-parallel-sizes 4 2",
      spec);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_TRUE(w->empty());
  EXPECT_EQ(spec.cp_comm_type(), "a2a+p2p");
  ASSERT_EQ(spec.hierarchical_context_parallel_sizes_size(), 2);
  EXPECT_EQ(spec.hierarchical_context_parallel_sizes(0), 4);
  EXPECT_EQ(spec.hierarchical_context_parallel_sizes(1), 2);
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->training.cp_comm_type, models::CpCommType::kA2aP2p);
  EXPECT_EQ(r->training.hierarchical_cp_sizes, (std::vector<int>{4, 2}));

  // A per-layer list with one type throughout is that type; a second
  // --hierarchical-context-parallel-sizes replaces the first.
  w = ApplyMegatronArgs(
      "--cp-comm-type a2a a2a a2a --hierarchical-context-parallel-sizes=2,4",
      spec);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(spec.cp_comm_type(), "a2a");
  ASSERT_EQ(spec.hierarchical_context_parallel_sizes_size(), 2);
  EXPECT_EQ(spec.hierarchical_context_parallel_sizes(0), 2);
  EXPECT_EQ(spec.hierarchical_context_parallel_sizes(1), 4);
  w = ApplyMegatronArgs("--cp_comm_type allgather", spec);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(spec.cp_comm_type(), "allgather");
}

TEST(MegatronArgsTest, LayersPerVirtualStageResolvesToVpp) {
  Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(8);
  auto w = ApplyMegatronArgs(
      "--pipeline_model_parallel_size 2 "
      "--num-layers-per-virtual-pipeline-stage 6",
      spec);
  ASSERT_TRUE(w) << w.error().message;
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->parallel.pp, 2);
  EXPECT_EQ(r->parallel.vpp, 4);  // 48 layers / (PP 2 * 6)
}

TEST(MegatronArgsTest, AbsentFlagsKeepTheScenario) {
  Scenario spec;
  spec.set_precision("mxfp8");
  spec.mutable_layout()->set_context_parallel_size(4);
  auto w = ApplyMegatronArgs("--tensor-model-parallel-size 2", spec);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(spec.precision(), "mxfp8");
  EXPECT_EQ(spec.layout().context_parallel_size(), 4);
  EXPECT_EQ(spec.layout().tensor_model_parallel_size(), 2);
}

TEST(MegatronArgsTest, NoEffectFlagsWarn) {
  Scenario spec;
  auto w = ApplyMegatronArgs(
      "--optimizer-offload-fraction 0.5 --fp8-recipe blockwise", spec);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_DOUBLE_EQ(spec.optimizer_offload_fraction(), 0);
  EXPECT_EQ(spec.precision(), "");
  ASSERT_EQ(w->size(), 2u);
}

TEST(MegatronArgsTest, Errors) {
  struct Case {
    const char* args;
    const char* error;
  };
  const Case cases[] = {
      {"--tensor-model-parallel-size --pipeline-model-parallel-size 2",
       "--megatron-args: --tensor-model-parallel-size: needs a value"},
      {"--seq-length", "--megatron-args: --seq-length: needs a value"},
      {"--micro-batch-size two",
       "--megatron-args: --micro-batch-size: 'two' is not an integer"},
      {"--global-batch-size 1e3", "'1e3' is not an integer"},
      {"--tensor-model-parallel-size 0",
       "--tensor-model-parallel-size: must be >= 1, got 0"},
      {"--tensor-model-parallel-size 2 4", "takes one value, got '2 4'"},
      {"--optimizer-offload-fraction 1.5",
       "--optimizer-offload-fraction: '1.5' is out of range"},
      {"--moe-expert-capacity-factor abc", "'abc' is not a number"},
      {"--fp8-format e5m2", "--fp8-format: unknown 'e5m2' (e4m3, hybrid)"},
      {"--fp8-format e4m3 --fp8-recipe custom",
       "--fp8-recipe: unknown 'custom'"},
      {"--moe-token-dispatcher-type allgather",
       "--moe-token-dispatcher-type: allgather is not modelled"},
      {"--recompute-method stripes", "--recompute-method: unknown 'stripes'"},
      {"--sequence-parallel 4", "--sequence-parallel: takes no value, got '4'"},
      {"--use-distributed-optimizer=maybe", "'maybe' is not true or false"},
      {"--pipeline-model-parallel-layout \"Et|(tt|)*30mL",
       "unterminated double quote"},
      {"--cuda-graph-impl local --cuda-graph-scope attn",
       "only full_iteration"},
      {"--cuda-graph-impl transformer_engine --cuda-graph-scope full_iteration",
       "full_iteration needs --cuda-graph-impl local"},
      {"--fp8-format e4m3 --fp4-format e2m1",
       "cannot be combined with --fp8-format"},
      {"--virtual-pipeline-model-parallel-size 2 "
       "--num-layers-per-virtual-pipeline-stage 3",
       "cannot be combined with a virtual pipeline size"},
      {"--cp-comm-type ring",
       "--megatron-args: --cp-comm-type: unknown 'ring' (p2p, a2a, allgather, "
       "a2a+p2p)"},
      {"--cp-comm-type p2p p2p a2a",
       "--megatron-args: --cp-comm-type: per-layer cp_comm_type lists are not "
       "modelled; got 'p2p p2p a2a'"},
      {"--cp-comm-type", "--megatron-args: --cp-comm-type: needs a value"},
      {"--hierarchical-context-parallel-sizes 4 x",
       "--megatron-args: --hierarchical-context-parallel-sizes: 'x' is not an "
       "integer"},
      {"--hierarchical-context-parallel-sizes 0 8",
       "--hierarchical-context-parallel-sizes: must be >= 1, got 0"},
  };
  for (const Case& c : cases) {
    Scenario spec;
    auto w = ApplyMegatronArgs(c.args, spec);
    ASSERT_FALSE(w) << c.args;
    EXPECT_NE(w.error().message.find(c.error), std::string::npos)
        << c.args << " -> " << w.error().message;
    EXPECT_TRUE(w.error().message.starts_with("--megatron-args: "))
        << w.error().message;
  }
}

}  // namespace
}  // namespace moesim::scenarios
