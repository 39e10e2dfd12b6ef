// scenarios::Resolve: Megatron-Bridge defaults, parallel folding, and one
// passing and one failing case per layout rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "util/textproto.h"

namespace moesim::scenarios {
namespace {

constexpr char kDefaultScenario[] =
    MOESIM_SOURCE_DIR "/scenarios/default.textproto";

bool Contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

TEST(ResolveTest, DefaultScenarioResolves) {
  auto text = util::ReadFile(kDefaultScenario);
  ASSERT_TRUE(text) << text.error().message;
  auto spec = ParseScenario(*text, kDefaultScenario);
  ASSERT_TRUE(spec) << spec.error().message;
  auto r = Resolve(*spec, kDefaultScenario, *text);
  ASSERT_TRUE(r) << r.error().message;

  // TP1 x CP32 x PP8 = 256 GPUs -> DP 1; ETP1 x EP32 x PP8 = 256 -> EDP 1.
  EXPECT_EQ(r->parallel.tp, 1);
  EXPECT_EQ(r->parallel.cp, 32);
  EXPECT_EQ(r->parallel.ep, 32);
  EXPECT_EQ(r->parallel.pp, 8);
  EXPECT_EQ(r->parallel.vpp, 4);
  EXPECT_EQ(r->parallel.dp, 1);
  EXPECT_EQ(r->parallel.edp, 1);
  EXPECT_FALSE(r->parallel.sequence_parallel);  // TP 1
  EXPECT_EQ(r->training.seq_length, 131072);
  EXPECT_EQ(r->training.global_batch_size, 128);
  EXPECT_EQ(r->training.num_microbatches(), 128);  // 128 / (1 * DP 1)
  EXPECT_EQ(r->training.precision, models::Precision::kFp8Blockwise);
  EXPECT_EQ(r->training.dispatcher, models::Dispatcher::kDeepEp);
  EXPECT_TRUE(r->training.recompute.mla_up_proj);
  EXPECT_TRUE(r->training.recompute.layernorm);
  EXPECT_TRUE(r->training.recompute.moe);
  EXPECT_TRUE(r->training.recompute.mlp);
  EXPECT_FALSE(r->training.recompute.core_attn);
  EXPECT_DOUBLE_EQ(r->training.optimizer_offload_fraction, 1.0);
  EXPECT_TRUE(r->training.distributed_optimizer);
  EXPECT_EQ(r->model.num_layers(), 61);
  EXPECT_EQ(r->model.mtp_num_layers(), 1);
  // "Et|(tt|)*30mL": 1 + 30 + 1 = 32 = PP8 x VPP4 virtual stages.
  ASSERT_EQ(r->pipeline.stages.size(), 32u);
  EXPECT_TRUE(r->pipeline.stages.front().embedding);
  EXPECT_EQ(r->pipeline.stages.front().layers.size(), 1u);
  EXPECT_TRUE(r->pipeline.stages.back().loss);
  EXPECT_EQ(r->pipeline.stages.back().mtp_layers, 1);
  // Set in the file, so not defaults.
  EXPECT_FALSE(Contains(r->defaults_used, "micro_batch_size=1"));
  EXPECT_FALSE(Contains(r->defaults_used, "precision=bf16"));
  EXPECT_TRUE(Contains(r->defaults_used, "routing=force_balanced"));
  EXPECT_TRUE(Contains(r->defaults_used, "use_distributed_optimizer=true"));
}

// dropless_natural routing with neither a Zipf skew nor a histogram has no
// distribution to apply: the experts come out balanced, and the report says
// so rather than leaving it silent. A given skew takes the note away.
TEST(ResolveTest, NaturalRoutingWithoutADistributionSaysItIsBalanced) {
  Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(8);
  spec.mutable_layout()->set_expert_model_parallel_size(8);
  spec.set_routing("dropless_natural");
  constexpr char kNote[] =
      "moe_routing_skew=0 (no skew or histogram: balanced experts)";
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(Contains(r->defaults_used, kNote));
  spec.set_moe_routing_skew(1.2);
  auto skewed = Resolve(spec, "flags");
  ASSERT_TRUE(skewed) << skewed.error().message;
  EXPECT_FALSE(Contains(skewed->defaults_used, kNote));
}

TEST(ResolveTest, DefaultsUsedListsUnsetFields) {
  Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(8);
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  for (const char* expected : {"tensor_model_parallel_size=1",
                               "context_parallel_size=1",
                               "expert_model_parallel_size=1",
                               "expert_tensor_parallel_size=1",
                               "pipeline_model_parallel_size=1",
                               "virtual_pipeline_model_parallel_size=1",
                               "micro_batch_size=1",
                               "global_batch_size=8",  // MBS 1 x DP 8
                               "sequence_parallel=false",
                               "seq_length=4096",
                               "precision=bf16",
                               "dispatcher=alltoall",
                               "pipeline_schedule=1f1b",
                               "routing=force_balanced",
                               "cuda_graph=none",
                               "recompute.granularity=none",
                               "use_distributed_optimizer=true",
                               "main_grads_dtype=fp32",
                               "exp_avg_dtype=fp32",
                               "cp_comm_type=p2p"}) {
    EXPECT_TRUE(Contains(r->defaults_used, expected)) << expected;
  }
  EXPECT_EQ(r->spec.cp_comm_type(), "p2p");
  EXPECT_EQ(r->training.cp_comm_type, models::CpCommType::kP2p);
  EXPECT_TRUE(r->training.hierarchical_cp_sizes.empty());
  EXPECT_EQ(r->parallel.dp, 8);
  EXPECT_EQ(r->parallel.edp, 8);
  EXPECT_EQ(r->training.main_grad_bytes, 4);
  EXPECT_EQ(r->training.exp_avg_bytes, 4);
  EXPECT_EQ(r->spec.layout().global_batch_size(), 8);
  EXPECT_EQ(r->pipeline.stages.size(), 1u);
  EXPECT_EQ(r->training.pipeline_schedule,
            models::PipelineScheduleKind::kOneFOneB);
}

// The pipeline schedule's word and the features a split backward cannot
// host (scenarios/rules.cc CheckPipelineSchedule), each refused with the
// field and the rule.
TEST(ResolveTest, ZeroBubbleScheduleRules) {
  auto resolve = [](const std::string& schedule, int vpp, bool ep_overlap,
                    const std::string& fsdp) {
    Scenario spec;
    spec.set_model("qwen3-30b-a3b");
    spec.set_system("dgx-h100");
    spec.set_num_gpus(32);
    spec.set_pipeline_schedule(schedule);
    spec.mutable_layout()->set_expert_model_parallel_size(8);
    spec.mutable_layout()->set_pipeline_model_parallel_size(4);
    spec.mutable_layout()->set_virtual_pipeline_model_parallel_size(vpp);
    spec.set_overlap_moe_expert_parallel_comm(ep_overlap);
    if (!fsdp.empty()) {
      spec.set_use_megatron_fsdp(true);
      spec.set_data_parallel_sharding_strategy(fsdp);
    }
    return Resolve(spec, "flags");
  };
  auto zb = resolve("zb-h1", 1, false, "");
  ASSERT_TRUE(zb) << zb.error().message;
  EXPECT_EQ(zb->training.pipeline_schedule,
            models::PipelineScheduleKind::kZeroBubbleH1);
  auto unknown = resolve("zb-v", 1, false, "");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message,
            "flags: --pipeline-schedule: unknown 'zb-v' (1f1b, zb-h1)");
  auto interleaved = resolve("zb-h1", 2, false, "");
  ASSERT_FALSE(interleaved);
  EXPECT_EQ(interleaved.error().message,
            "flags: --pipeline-schedule: zb-h1 runs without interleaving; "
            "needs virtual_pipeline_model_parallel_size 1, got 2");
  auto overlap = resolve("zb-h1", 1, true, "");
  ASSERT_FALSE(overlap);
  EXPECT_TRUE(overlap.error().message.starts_with(
      "flags: --pipeline-schedule: zb-h1 splits each backward;"))
      << overlap.error().message;
  auto fsdp = resolve("zb-h1", 1, false, "optim_grads_params");
  ASSERT_FALSE(fsdp);
  EXPECT_TRUE(fsdp.error().message.find("Megatron-FSDP") != std::string::npos)
      << fsdp.error().message;
  EXPECT_TRUE(resolve("zb-h1", 1, false, "optim_grads")) << "grads only";
}

// No layout and an uneven split (126 layers on PP8 VPP8): the Bridge rule
// counts the embedding and the loss as layers, and says so.
TEST(ResolveTest, UnevenSplitCountsEmbeddingAndLoss) {
  Scenario spec;
  spec.set_model("llama3.1-405b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(512);
  Layout& l = *spec.mutable_layout();
  l.set_tensor_model_parallel_size(8);
  l.set_pipeline_model_parallel_size(8);
  l.set_virtual_pipeline_model_parallel_size(8);
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->pipeline.stages.size(), 64u);
  EXPECT_TRUE(Contains(r->defaults_used,
                       "pipeline_model_parallel_layout=Et|(t*2|)*62tL "
                       "(account_for_embedding/loss_in_pipeline_split)"));
}

// DeepSeek-V3's 61 layers split over PP 4 x VPP 4 neither evenly nor with
// the embedding and loss counted (63 / 16): the Bridge recipe's layout_map
// (models/zoo/deepseek-v3.textproto, its source) gives the layout, and the
// report says so. PP 8 x VPP 4 is not in the map and stays an error.
// Token drop without a capacity factor takes Megatron-Bridge's token-drop
// helper's defaults (apply_moe_token_drop: capacity 1.0, padded to
// capacity), and says so; a stated factor is kept, unpadded as in Megatron.
TEST(ResolveTest, TokenDropWithoutCapacityTakesBridgesHelperDefaults) {
  Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(8);
  spec.set_routing("tokendrop");
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_DOUBLE_EQ(r->training.moe_expert_capacity_factor, 1.0);
  EXPECT_TRUE(r->training.moe_pad_expert_input_to_capacity);
  EXPECT_TRUE(Contains(r->defaults_used, "moe_expert_capacity_factor=1.0"));
  EXPECT_TRUE(
      Contains(r->defaults_used, "moe_pad_expert_input_to_capacity=true"));

  spec.set_moe_expert_capacity_factor(1.25);
  auto stated = Resolve(spec, "flags");
  ASSERT_TRUE(stated) << stated.error().message;
  EXPECT_DOUBLE_EQ(stated->training.moe_expert_capacity_factor, 1.25);
  EXPECT_FALSE(stated->training.moe_pad_expert_input_to_capacity);
  EXPECT_FALSE(
      Contains(stated->defaults_used, "moe_expert_capacity_factor=1.0"));
}

// Megatron's batch_p2p_sync defaults to true (ModelParallelConfig); it acts
// only where Megatron batches the pipeline exchanges, PP > 1 without VPP, so
// only there is the default reported.
TEST(ResolveTest, BatchP2pSyncDefaultIsNamedWithoutVirtualStages) {
  Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(16);
  spec.mutable_layout()->set_pipeline_model_parallel_size(2);
  auto plain = Resolve(spec, "flags");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_TRUE(plain->training.batch_p2p_sync);
  EXPECT_TRUE(Contains(plain->defaults_used, "batch_p2p_sync=true"));
  spec.mutable_layout()->set_virtual_pipeline_model_parallel_size(2);
  auto interleaved = Resolve(spec, "flags");
  ASSERT_TRUE(interleaved) << interleaved.error().message;
  EXPECT_FALSE(Contains(interleaved->defaults_used, "batch_p2p_sync=true"));
  spec.mutable_layout()->clear_virtual_pipeline_model_parallel_size();
  spec.set_batch_p2p_sync(false);
  auto off = Resolve(spec, "flags");
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_FALSE(off->training.batch_p2p_sync);
  EXPECT_FALSE(Contains(off->defaults_used, "batch_p2p_sync=true"));
}

TEST(ResolveTest, DeepSeekV3TakesTheRecipeLayoutForItsPipeline) {
  Scenario spec;
  spec.set_model("deepseek-v3");
  spec.set_system("gb200-nvl72");
  spec.set_num_gpus(256);
  Layout& l = *spec.mutable_layout();
  l.set_expert_model_parallel_size(64);
  l.set_pipeline_model_parallel_size(4);
  l.set_virtual_pipeline_model_parallel_size(4);
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->spec.layout().pipeline_model_parallel_layout(),
            "Et*4|(t*4|)*14tmL");
  ASSERT_EQ(r->pipeline.stages.size(), 16u);
  EXPECT_TRUE(Contains(r->defaults_used,
                       "pipeline_model_parallel_layout=Et*4|(t*4|)*14tmL (the "
                       "Megatron-Bridge recipe's layout for PP 4, VPP 4)"));

  l.set_pipeline_model_parallel_size(8);
  spec.set_num_gpus(512);
  auto unmapped = Resolve(spec, "flags");
  ASSERT_FALSE(unmapped);
  EXPECT_NE(unmapped.error().message.find("set pipeline_model_parallel_layout"),
            std::string::npos)
      << unmapped.error().message;

  // A depth override (32 layers) does not fit the recipe's table, which is
  // written for 61: it splits evenly, 2 layers per virtual stage, and takes
  // no layout string.
  l.set_pipeline_model_parallel_size(4);
  spec.set_num_layers(32);
  auto trimmed = Resolve(spec, "flags");
  ASSERT_TRUE(trimmed) << trimmed.error().message;
  EXPECT_TRUE(trimmed->spec.layout().pipeline_model_parallel_layout().empty());
}

TEST(ResolveTest, ParallelFoldingComputesDpAndEdp) {
  // seeds_notes.md §2: 256 GPUs, attention TP4 CP2 DP8 PP4 -> MoE EP64 ETP1
  // EDP1.
  Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(256);
  Layout& l = *spec.mutable_layout();
  l.set_tensor_model_parallel_size(4);
  l.set_context_parallel_size(2);
  l.set_pipeline_model_parallel_size(4);
  l.set_expert_model_parallel_size(64);
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->parallel.dp, 8);   // 256 / (4 * 2 * 4)
  EXPECT_EQ(r->parallel.edp, 1);  // 256 / (1 * 64 * 4)
  EXPECT_TRUE(r->parallel.sequence_parallel);
  EXPECT_TRUE(Contains(r->defaults_used, "sequence_parallel=true"));
  EXPECT_EQ(r->training.dp_for_gbs, 8);
  EXPECT_EQ(r->pipeline.stages.size(), 4u);
}

TEST(ResolveTest, OverridesAndOptimizerBytes) {
  Scenario spec;
  spec.set_model("deepseek-v3");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(8);
  spec.set_num_layers(8);
  spec.set_mtp_num_layers(0);
  spec.set_use_precision_aware_optimizer(true);
  spec.set_main_grads_dtype("bf16");
  spec.set_exp_avg_dtype("bfloat16");  // runs.csv spelling
  spec.mutable_layout()->set_pipeline_model_parallel_size(2);
  spec.mutable_layout()->set_num_layers_per_virtual_pipeline_stage(2);
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->model.num_layers(), 8);
  EXPECT_EQ(r->model.mtp_num_layers(), 0);
  EXPECT_EQ(r->parallel.vpp, 2);  // 8 layers / (PP2 * 2 per virtual stage)
  EXPECT_EQ(r->training.main_grad_bytes, 2);
  EXPECT_EQ(r->training.exp_avg_bytes, 2);
  EXPECT_EQ(r->pipeline.stages.size(), 4u);
}

TEST(ResolveTest, FileErrorsCiteTheFieldLine) {
  const std::string text =
      "model: \"qwen3-30b-a3b\"\n"
      "system: \"dgx-h100\"\n"
      "num_gpus: 48\n"
      "layout {\n"
      "  context_parallel_size: 3\n"
      "}\n";
  auto spec = ParseScenario(text, "x.textproto");
  ASSERT_TRUE(spec) << spec.error().message;
  auto r = Resolve(*spec, "x.textproto", text);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "x.textproto:5: layout.context_parallel_size: seq_length 4096 is "
            "not divisible by "
            "2*context_parallel_size = 6");
}

TEST(ResolveTest, FlagErrorsNameTheFlag) {
  Scenario spec;
  spec.set_model("qwen3-30b-a3b");
  spec.set_system("dgx-h100");
  spec.set_num_gpus(48);
  spec.mutable_layout()->set_context_parallel_size(3);
  auto r = Resolve(spec, "flags");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "flags: --cp: seq_length 4096 is not divisible by "
            "2*context_parallel_size = 6");
}

TEST(ResolveTest, CpCommTypeReachesTrainingOptions) {
  Scenario spec;
  spec.set_model("qwen3-30b-a3b");  // 32 heads, 4 query groups
  spec.set_system("dgx-h100");
  spec.set_num_gpus(64);
  spec.mutable_layout()->set_context_parallel_size(8);
  spec.set_cp_comm_type("a2a+p2p");
  spec.add_hierarchical_context_parallel_sizes(4);
  spec.add_hierarchical_context_parallel_sizes(2);
  auto r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->training.cp_comm_type, models::CpCommType::kA2aP2p);
  EXPECT_EQ(r->training.hierarchical_cp_sizes, (std::vector<int>{4, 2}));
  EXPECT_FALSE(Contains(r->defaults_used, "cp_comm_type=p2p"));

  spec.set_cp_comm_type("allgather");
  spec.clear_hierarchical_context_parallel_sizes();
  r = Resolve(spec, "flags");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->training.cp_comm_type, models::CpCommType::kAllGather);

  // From a file, the errors cite the field's line.
  const std::string text =
      "model: \"qwen3-30b-a3b\"\n"
      "system: \"dgx-h100\"\n"
      "num_gpus: 64\n"
      "cp_comm_type: \"a2a+p2p\"\n"
      "hierarchical_context_parallel_sizes: [4, 4]\n"
      "layout {\n"
      "  context_parallel_size: 8\n"
      "}\n";
  auto file_spec = ParseScenario(text, "x.textproto");
  ASSERT_TRUE(file_spec) << file_spec.error().message;
  r = Resolve(*file_spec, "x.textproto", text);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "x.textproto:5: hierarchical_context_parallel_sizes: product 4*4 = "
            "16 is not context_parallel_size 8");

  // From flags, the errors name the command-line flags.
  spec.set_cp_comm_type("a2a");
  r = Resolve(spec, "flags");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "flags: --cp-comm-type: a2a scatters heads over CP: "
            "num_query_groups 4 / tensor_model_parallel_size 1 = 4 heads per "
            "TP rank not divisible by context_parallel_size 8");
  spec.set_cp_comm_type("p2p");
  spec.add_hierarchical_context_parallel_sizes(4);
  spec.add_hierarchical_context_parallel_sizes(2);
  r = Resolve(spec, "flags");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "flags: --hierarchical-cp-sizes: only used with cp_comm_type "
            "a2a+p2p, got p2p");
}

TEST(ResolveTest, MissingRequiredFields) {
  Scenario spec;
  auto r = Resolve(spec, "flags");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "flags: --model: required (a zoo name or model file, or the "
            "architecture flags of a Megatron argument list)");
  r = Resolve(spec, "s.textproto", "system: \"dgx-h100\"\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "s.textproto: model: required (a zoo name or model file, or the "
            "architecture flags of a Megatron argument list)");
}

// One rule case: a scenario .textproto and the error fragment it must raise,
// or "" when it must resolve.
struct RuleCase {
  const char* name;
  std::string text;
  const char* error;
};

std::ostream& operator<<(std::ostream& os, const RuleCase& c) {
  return os << c.name;
}

constexpr char kQwen[] =
    "model: \"qwen3-30b-a3b\" system: \"dgx-h100\" ";  // 128 experts, 48 layers
constexpr char kLlama[] =
    "model: \"llama3-8b\" system: \"dgx-h100\" ";  // dense
constexpr char kMoonlight[] =  // MLA, shared experts, 1 dense layer, 27 layers
    "model: \"moonlight-16b-a3b\" system: \"dgx-h100\" ";
constexpr char kDsv3[] = "model: \"deepseek-v3\" system: \"dgx-h100\" ";

std::string Q(const std::string& rest) { return kQwen + rest; }
std::string L(const std::string& rest) { return kLlama + rest; }
std::string M(const std::string& rest) { return kMoonlight + rest; }
std::string D(const std::string& rest) { return kDsv3 + rest; }

const RuleCase kRuleCases[] = {
    // Required fields.
    {"RequiredModelFail", "system: \"dgx-h100\" num_gpus: 8",
     "model: required"},
    {"RequiredSystemFail", "model: \"llama3-8b\" num_gpus: 8",
     "system: required"},
    {"RequiredGpusFail", L(""), "num_gpus: required"},
    {"RequiredPass", L("num_gpus: 8"), ""},
    {"UnknownModelFail", "model: \"gpt-5\" system: \"dgx-h100\" num_gpus: 8",
     "unknown model 'gpt-5'"},
    {"UnknownSystemFail", "model: \"llama3-8b\" system: \"tpu\" num_gpus: 8",
     "unknown system 'tpu'"},
    // Sizes >= 1.
    {"NegativeSizeFail",
     L("num_gpus: 8 layout { tensor_model_parallel_size: -2 }"),
     "layout.tensor_model_parallel_size: must be >= 1, got -2"},
    {"NegativeGpusFail", L("num_gpus: -8"), "num_gpus: must be >= 1, got -8"},
    // Attention mesh TP x CP x DP x PP = GPUs.
    {"AttentionMeshPass",
     L("num_gpus: 16 layout { tensor_model_parallel_size: 8 }"), ""},
    {"AttentionMeshFail",
     L("num_gpus: 12 layout { tensor_model_parallel_size: 8 }"),
     "(attention mesh TPxCPxDPxPP)"},
    // MoE mesh ETP x EP x EDP x PP = GPUs.
    {"MoeMeshPass", Q("num_gpus: 16 layout { expert_model_parallel_size: 16 }"),
     ""},
    {"MoeMeshFail", Q("num_gpus: 16 layout { expert_model_parallel_size: 32 }"),
     "(MoE mesh ETPxEPxEDPxPP)"},
    // Heads and query groups divisible by TP.
    {"HeadsPass", Q("num_gpus: 4 layout { tensor_model_parallel_size: 4 }"),
     ""},
    {"HeadsFail", Q("num_gpus: 64 layout { tensor_model_parallel_size: 64 }"),
     "num_attention_heads 32 is not divisible by tensor_model_parallel_size "
     "64"},
    {"QueryGroupsFail",
     Q("num_gpus: 8 layout { tensor_model_parallel_size: 8 }"),
     "num_query_groups 4 is not divisible by tensor_model_parallel_size 8"},
    // Experts divisible by EP; EP/ETP need an MoE model; moe_ffn by ETP.
    {"ExpertsPass", Q("num_gpus: 48 layout { expert_model_parallel_size: 4 }"),
     ""},
    {"ExpertsFail", Q("num_gpus: 48 layout { expert_model_parallel_size: 3 }"),
     "num_moe_experts 128 is not divisible by expert_model_parallel_size 3"},
    {"DenseEpFail", L("num_gpus: 8 layout { expert_model_parallel_size: 2 }"),
     "expert_model_parallel_size 2 needs an MoE model; llama3-8b is dense"},
    {"DenseEtpFail", L("num_gpus: 8 layout { expert_tensor_parallel_size: 2 }"),
     "expert_tensor_parallel_size 2 needs an MoE model"},
    {"EtpPass", Q("num_gpus: 8 layout { expert_tensor_parallel_size: 2 }"), ""},
    {"EtpFail", Q("num_gpus: 5 layout { expert_tensor_parallel_size: 5 }"),
     "moe_ffn_hidden_size 768 is not divisible by expert_tensor_parallel_size "
     "5"},
    // VPP needs PP; layers split over PP x VPP unless a layout string.
    {"VppPass",
     Q("num_gpus: 8 layout { pipeline_model_parallel_size: 2 "
       "virtual_pipeline_model_parallel_size: 2 }"),
     ""},
    {"VppWithoutPpFail",
     Q("num_gpus: 8 layout { virtual_pipeline_model_parallel_size: 2 }"),
     "needs pipeline_model_parallel_size > 1"},
    {"LayerSplitFail",
     Q("num_gpus: 8 layout { pipeline_model_parallel_size: 4 "
       "virtual_pipeline_model_parallel_size: 5 }"),
     "num_layers 48 is not divisible by pipeline_model_parallel_size*"
     "virtual_pipeline_model_parallel_size = 4*5 = 20"},
    {"LayoutStringPass",
     D("num_gpus: 64 layout { pipeline_model_parallel_size: 8 "
       "virtual_pipeline_model_parallel_size: 4 expert_model_parallel_size: 8 "
       "pipeline_model_parallel_layout: \"Et|(tt|)*30mL\" }"),
     ""},
    {"LayoutStringFail",
     D("num_gpus: 64 layout { pipeline_model_parallel_size: 8 "
       "virtual_pipeline_model_parallel_size: 4 expert_model_parallel_size: 8 "
       "pipeline_model_parallel_layout: \"Et|(tt|)*29mL\" }"),
     "layout.pipeline_model_parallel_layout:"},
    {"LayersPerVirtualStageFail",
     Q("num_gpus: 8 layout { pipeline_model_parallel_size: 2 "
       "num_layers_per_virtual_pipeline_stage: 5 }"),
     "num_layers 48 is not divisible by pipeline_model_parallel_size*"
     "num_layers_per_virtual_pipeline_stage = 10"},
    // A layout string sets VPP = stages / PP (Megatron-LM arguments.py):
    // 4 stages at PP2 resolve as VPP2; 3 stages are not a multiple of PP2.
    {"LayoutSetsVppPass",
     Q("num_gpus: 8 layout { pipeline_model_parallel_size: 2 "
       "pipeline_model_parallel_layout: \"Et*12|t*12|t*12|t*12L\" }"),
     ""},
    {"LayoutStagesNotMultipleOfPpFail",
     Q("num_gpus: 8 layout { pipeline_model_parallel_size: 2 "
       "pipeline_model_parallel_layout: \"Et*16|t*16|t*16L\" }"),
     "has 3 stages, not a multiple of pipeline_model_parallel_size 2"},
    {"LayoutStagesWithoutPpFail",
     Q("num_gpus: 8 layout { "
       "pipeline_model_parallel_layout: \"Et*24|t*24L\" }"),
     "has 2 stages but pipeline_model_parallel_size is 1"},
    {"LayoutAndLayersPerVirtualStageFail",
     Q("num_gpus: 8 layout { pipeline_model_parallel_size: 2 "
       "num_layers_per_virtual_pipeline_stage: 12 "
       "pipeline_model_parallel_layout: \"Et*12|t*12|t*12|t*12L\" }"),
     "set either this or pipeline_model_parallel_layout"},
    {"LayersPerVirtualStageTwiceFail",
     Q("num_gpus: 8 layout { pipeline_model_parallel_size: 2 "
       "num_layers_per_virtual_pipeline_stage: 6 "
       "virtual_pipeline_model_parallel_size: 4 }"),
     "set either this or virtual_pipeline_model_parallel_size"},
    // Sequence: divisible by 2*CP, and by TP per CP shard with SP.
    {"CpPass", Q("num_gpus: 48 layout { context_parallel_size: 4 }"), ""},
    {"CpFail", Q("num_gpus: 48 layout { context_parallel_size: 3 }"),
     "seq_length 4096 is not divisible by 2*context_parallel_size = 6"},
    {"SequenceParallelFail",
     L("num_gpus: 8 seq_length: 4100 layout { tensor_model_parallel_size: 8 }"),
     "with sequence parallel, seq_length/context_parallel_size = 4100 is not "
     "divisible by "
     "tensor_model_parallel_size 8"},
    {"SequenceParallelOffPass",
     L("num_gpus: 8 seq_length: 4100 layout { "
       "tensor_model_parallel_size: 8 sequence_parallel: false }"),
     ""},
    // Global batch divisible by MBS x DP.
    {"GbsPass", Q("num_gpus: 16 layout { global_batch_size: 32 }"), ""},
    {"GbsFail", Q("num_gpus: 16 layout { global_batch_size: 24 }"),
     "global_batch_size 24 is not divisible by micro_batch_size*DP = 1*16 = "
     "16"},
    // Recompute module names and architecture.
    {"RecomputeAliasPass",
     D("num_gpus: 8 layout { expert_model_parallel_size: 8 } "
       "recompute { modules: [\"up_proj\", \"norm\", \"moe\", \"mlp\"] }"),
     ""},
    {"RecomputeUnknownFail", Q("num_gpus: 8 recompute { modules: \"attn\" }"),
     "recompute.modules: unknown module 'attn'"},
    {"RecomputeGranularityFail",
     Q("num_gpus: 8 recompute { granularity: \"partial\" }"),
     "recompute.granularity: unknown 'partial'"},
    {"MlaUpProjPass", M("num_gpus: 8 recompute { modules: \"mla_up_proj\" }"),
     ""},
    {"MlaUpProjFail", Q("num_gpus: 8 recompute { modules: \"mla_up_proj\" }"),
     "mla_up_proj needs multi-latent attention"},
    {"MoeActPass", Q("num_gpus: 8 recompute { modules: \"moe_act\" }"), ""},
    {"MoeActDenseFail", L("num_gpus: 8 recompute { modules: \"moe_act\" }"),
     "moe_act needs an MoE model"},
    {"MoeDenseFail", L("num_gpus: 8 recompute { modules: \"moe\" }"),
     "moe needs an MoE model"},
    {"SharedExpertsPass",
     M("num_gpus: 8 recompute { modules: \"shared_experts\" }"), ""},
    {"SharedExpertsFail",
     Q("num_gpus: 8 recompute { modules: \"shared_experts\" }"),
     "shared_experts needs a model with shared experts"},
    {"MlpPass", M("num_gpus: 8 recompute { modules: \"mlp\" }"), ""},
    {"MlpOnMoeOnlyFail", Q("num_gpus: 8 recompute { modules: \"mlp\" }"),
     "mlp recompute has no effect on MoE layers"},
    // Full recompute needs a method and a layer count.
    {"FullPass",
     Q("num_gpus: 8 recompute { granularity: \"full\" method: \"block\" "
       "num_layers: 2 }"),
     ""},
    {"FullNoMethodFail",
     Q("num_gpus: 8 recompute { granularity: \"full\" num_layers: 1 }"),
     "full recompute needs method uniform or block"},
    {"FullNoLayersFail",
     Q("num_gpus: 8 recompute { granularity: \"full\" method: \"uniform\" }"),
     "full recompute needs num_layers >= 1"},
    // Precision and the GPU generation (TE support matrix).
    {"PrecisionUnknownFail", Q("num_gpus: 8 precision: \"fp6\""),
     "precision: unknown 'fp6'"},
    {"Fp8BlockHopperPass", Q("num_gpus: 8 precision: \"fp8-block\""), ""},
    {"Mxfp8BlackwellPass",
     "model: \"qwen3-30b-a3b\" system: \"dgx-b200\" num_gpus: 8 "
     "precision: \"mxfp8\"",
     ""},
    // The generation is the system file's gpu.architecture.
    {"Mxfp8HopperFail", Q("num_gpus: 8 precision: \"mxfp8\""),
     "mxfp8 needs a Blackwell GPU (b200, b300, gb200, gb300); system "
     "dgx-h100 has gpu.architecture 'hopper'"},
    {"Nvfp4HopperFail", Q("num_gpus: 8 precision: \"nvfp4\""),
     "nvfp4 needs a Blackwell GPU"},
    {"Fp8ParamGatherFail", Q("num_gpus: 8 fp8_param_gather: true"),
     "fp8_param_gather: needs an FP8 or FP4 precision"},
    // FP8 attention: the per-tensor and MXFP8 recipes only (Megatron's
    // get_fp8_recipe passes fp8_dpa to no other; TE's DotProductAttention
    // refuses blockwise and NVFP4), and cuDNN's FP8 head dims.
    {"Fp8AttentionPerTensorPass",
     Q("num_gpus: 8 precision: \"fp8-cs\" fp8_dot_product_attention: true"),
     ""},
    {"Fp8AttentionDelayedPass",
     Q("num_gpus: 8 precision: \"fp8-delayed\" fp8_dot_product_attention: "
       "true"),
     ""},
    {"Fp8AttentionMxfp8MlaPass",  // DeepSeek-V3's d_qk 192, d_v 128
     "model: \"deepseek-v3\" system: \"gb300-nvl72\" num_gpus: 256 "
     "precision: \"mxfp8\" fp8_dot_product_attention: true layout { "
     "pipeline_model_parallel_size: 4 expert_model_parallel_size: 64 }",
     ""},
    {"Fp8AttentionBf16Fail", Q("num_gpus: 8 fp8_dot_product_attention: true"),
     "fp8_dot_product_attention: needs an FP8 recipe TE runs attention under "
     "(fp8-cs, fp8-delayed or mxfp8), not bf16"},
    {"Fp8AttentionBlockwiseFail",
     Q("num_gpus: 8 precision: \"fp8-block\" fp8_dot_product_attention: "
       "true"),
     "fp8_dot_product_attention: needs an FP8 recipe TE runs attention under "
     "(fp8-cs, fp8-delayed or mxfp8), not fp8-block"},
    {"Fp8AttentionNvfp4Fail",
     "model: \"qwen3-30b-a3b\" system: \"dgx-b200\" num_gpus: 8 "
     "precision: \"nvfp4\" fp8_dot_product_attention: true",
     "not nvfp4"},
    {"Fp8AttentionHeadDim256Fail",  // Qwen3-Next: kv_channels 256
     "model: \"qwen3-next-80b-a3b\" system: \"gb200-nvl72\" num_gpus: 64 "
     "precision: \"mxfp8\" fp8_dot_product_attention: true layout { "
     "expert_model_parallel_size: 64 }",
     "fp8_dot_product_attention: cuDNN's FP8 attention needs head dims d_qk "
     "<= 128 (a multiple of 16) or d_qk 192 with d_v 128; qwen3-next-80b-a3b "
     "has d_qk 256, d_v 256"},
    // Dispatcher.
    {"DispatcherPass",
     Q("num_gpus: 8 dispatcher: \"hybridep\" layout { "
       "expert_model_parallel_size: 8 }"),
     ""},
    {"DispatcherUnknownFail", Q("num_gpus: 8 dispatcher: \"nccl\""),
     "dispatcher: unknown 'nccl'"},
    {"DeepEpNoEpFail", Q("num_gpus: 8 dispatcher: \"deepep\""),
     "deepep needs expert_model_parallel_size > 1"},
    {"DeepEpDenseFail", L("num_gpus: 8 dispatcher: \"deepep\""),
     "deepep needs an MoE model"},
    // Routing.
    {"TokenDropPass",
     Q("num_gpus: 8 routing: \"tokendrop\" moe_expert_capacity_factor: 1.0"),
     ""},
    {"RoutingUnknownFail", Q("num_gpus: 8 routing: \"aux_loss\""),
     "routing: unknown 'aux_loss'"},
    // Optimizer offload and the precision-aware optimizer.
    {"OffloadPass", Q("num_gpus: 8 optimizer_offload_fraction: 0.5"), ""},
    {"OffloadRangeFail", Q("num_gpus: 8 optimizer_offload_fraction: 1.5"),
     "optimizer_offload_fraction: must be in [0, 1], got 1.5"},
    {"OffloadNoDistOptFail",
     Q("num_gpus: 8 optimizer_offload_fraction: 1 use_distributed_optimizer: "
       "false"),
     "optimizer CPU offload needs use_distributed_optimizer"},
    {"MainGradsBf16Pass",
     Q("num_gpus: 8 use_precision_aware_optimizer: true main_grads_dtype: "
       "\"bf16\""),
     ""},
    {"MainGradsBf16Fail", Q("num_gpus: 8 main_grads_dtype: \"bf16\""),
     "bf16 needs use_precision_aware_optimizer"},
    {"ExpAvgUnknownFail",
     Q("num_gpus: 8 use_precision_aware_optimizer: true exp_avg_dtype: "
       "\"int4\""),
     "exp_avg_dtype: unknown 'int4'"},
    {"PrecisionAwareNoDistOptFail",
     Q("num_gpus: 8 use_precision_aware_optimizer: true "
       "use_distributed_optimizer: false"),
     "the precision-aware optimizer needs use_distributed_optimizer"},
    // CUDA graphs.
    {"CudaGraphTePass",
     Q("num_gpus: 8 cuda_graph: \"te:attn;moe_router;moe_preprocess\""), ""},
    {"CudaGraphLocalPass",
     Q("num_gpus: 8 cuda_graph: \"local:transformer_layer\""), ""},
    {"CudaGraphUnknownFail", Q("num_gpus: 8 cuda_graph: \"partial\""),
     "cuda_graph: unknown 'partial'"},
    {"CudaGraphEmptyTeFail", Q("num_gpus: 8 cuda_graph: \"te:\""),
     "te: needs at least one scope"},
    {"CudaGraphScopeFail", Q("num_gpus: 8 cuda_graph: \"te:attn,router\""),
     "unknown TE scope 'router'"},
    {"CudaGraphMoeAndRouterFail",
     Q("num_gpus: 8 cuda_graph: \"te:moe;moe_router\""),
     "TE scopes moe and moe_router are mutually exclusive"},
    {"CudaGraphPreprocessFail",
     Q("num_gpus: 8 cuda_graph: \"te:attn;moe_preprocess\""),
     "TE scope moe_preprocess needs moe_router"},
    {"FullRecomputeFullIterationPass",
     Q("num_gpus: 8 cuda_graph: \"full_iteration\" recompute { granularity: "
       "\"full\" "
       "method: \"uniform\" num_layers: 1 }"),
     ""},
    {"FullRecomputeTeGraphFail",
     Q("num_gpus: 8 cuda_graph: \"te:attn\" recompute { granularity: \"full\" "
       "method: \"uniform\" num_layers: 1 }"),
     "full recompute is only supported with full iteration CUDA graph"},
    {"MoeRecomputeRouterGraphFail",
     Q("num_gpus: 8 cuda_graph: \"te:moe_router\" recompute { modules: \"moe\" "
       "}"),
     "moe recompute is not supported with the moe_router CUDA-graph scope"},
    // CPU activation offloading.
    {"CpuOffloadingPass", Q("num_gpus: 8 cpu_offloading: true"), ""},
    {"CpuOffloadingGraphFail",
     Q("num_gpus: 8 cpu_offloading: true cuda_graph: \"te:attn\""),
     "CPU activation offloading is incompatible with CUDA graphs"},
    {"CpuOffloadingPpFail",
     Q("num_gpus: 8 cpu_offloading: true layout { "
       "pipeline_model_parallel_size: 2 }"),
     "CPU activation offloading needs pipeline_model_parallel_size 1"},
    {"CpuOffloadingRecomputeFail",
     Q("num_gpus: 8 cpu_offloading: true recompute { modules: \"moe_act\" }"),
     "CPU activation offloading is incompatible with recompute"},
    // FP8 delayed scaling and output-discarding recompute.
    {"LayernormFp8CsPass",
     Q("num_gpus: 8 precision: \"fp8-cs\" recompute { modules: \"layernorm\" "
       "}"),
     ""},
    {"LayernormFp8DelayedFail",
     Q("num_gpus: 8 precision: \"fp8-delayed\" recompute { modules: "
       "\"layernorm\" }"),
     "layernorm recompute is not supported with fp8-delayed"},
    {"MoeActFp8DelayedFail",
     Q("num_gpus: 8 precision: \"fp8-delayed\" recompute { modules: "
       "\"moe_act\" }"),
     "moe_act recompute is not supported with fp8-delayed"},
    {"SharedExpertsOverlapFail",
     M("num_gpus: 8 moe_shared_expert_overlap: true recompute { modules: "
       "\"shared_experts\" }"),
     "shared_experts recompute is incompatible with moe_shared_expert_overlap"},
    // EP overlap.
    {"EpOverlapPass",
     Q("num_gpus: 16 overlap_moe_expert_parallel_comm: true layout { "
       "expert_model_parallel_size: 8 pipeline_model_parallel_size: 2 "
       "virtual_pipeline_model_parallel_size: 2 }"),
     ""},
    {"EpOverlapNoEpFail",
     Q("num_gpus: 8 overlap_moe_expert_parallel_comm: true"),
     "EP overlap needs expert_model_parallel_size > 1"},
    {"EpOverlapDenseFail",
     L("num_gpus: 8 overlap_moe_expert_parallel_comm: true"),
     "EP overlap needs an MoE model"},
    {"EpOverlapNoVppFail",
     Q("num_gpus: 16 overlap_moe_expert_parallel_comm: true layout { "
       "expert_model_parallel_size: 8 pipeline_model_parallel_size: 2 }"),
     "needs virtual_pipeline_model_parallel_size > 1 when "
     "pipeline_model_parallel_size > 1"},
    {"EpOverlapFullRecomputeFail",
     Q("num_gpus: 8 overlap_moe_expert_parallel_comm: true layout { "
       "expert_model_parallel_size: 8 } "
       "recompute { granularity: \"full\" method: \"uniform\" num_layers: 1 }"),
     "EP overlap is incompatible with full recompute"},
    {"EpOverlapMoeRecomputeFail",
     Q("num_gpus: 8 overlap_moe_expert_parallel_comm: true layout { "
       "expert_model_parallel_size: 8 } "
       "recompute { modules: \"moe\" }"),
     "EP overlap is incompatible with moe recompute"},
    {"EpOverlapSharedOverlapFail",
     M("num_gpus: 8 overlap_moe_expert_parallel_comm: true "
       "moe_shared_expert_overlap: true "
       "layout { expert_model_parallel_size: 8 }"),
     "EP overlap needs moe_shared_expert_overlap off"},
    // Megatron's TransformerConfig asserts EP overlap for
    // delay_wgrad_compute.
    {"DelayWgradWithEpOverlapPass",
     Q("num_gpus: 8 overlap_moe_expert_parallel_comm: true "
       "delay_wgrad_compute: true layout { expert_model_parallel_size: 8 }"),
     ""},
    // Megatron's dispatchers assert a capacity factor under drop_and_pad.
    {"PadToCapacityWithTokenDropPass",
     Q("num_gpus: 8 routing: \"tokendrop\" moe_expert_capacity_factor: 1 "
       "moe_pad_expert_input_to_capacity: true "
       "layout { expert_model_parallel_size: 8 }"),
     ""},
    {"PadToCapacityDroplessFail",
     Q("num_gpus: 8 moe_pad_expert_input_to_capacity: true "
       "layout { expert_model_parallel_size: 8 }"),
     "moe_pad_expert_input_to_capacity: pads to a capacity: needs routing "
     "tokendrop"},
    {"DelayWgradWithoutEpOverlapFail",
     Q("num_gpus: 8 delay_wgrad_compute: true "
       "layout { expert_model_parallel_size: 8 }"),
     "delay_wgrad_compute: needs EP overlap"},
    {"EpOverlapMtpFail",
     D("num_gpus: 8 mtp_num_layers: 2 overlap_moe_expert_parallel_comm: true "
       "layout { expert_model_parallel_size: 8 }"),
     "EP overlap needs mtp_num_layers <= 1, got 2"},
    // Context-parallel communication type (TE: a2a scatters heads over CP).
    {"CpCommTypeUnknownFail", Q("num_gpus: 8 cp_comm_type: \"ring\""),
     "cp_comm_type: unknown 'ring' (p2p, a2a, allgather, a2a+p2p)"},
    {"CpAllGatherPass",
     Q("num_gpus: 16 cp_comm_type: \"allgather\" layout { "
       "context_parallel_size: 8 }"),
     ""},
    {"CpA2aPass",
     Q("num_gpus: 16 cp_comm_type: \"a2a\" layout { context_parallel_size: 4 "
       "}"),
     ""},
    {"CpA2aWithoutCpPass", L("num_gpus: 8 cp_comm_type: \"a2a\""), ""},
    {"CpA2aQueryGroupsFail",
     Q("num_gpus: 64 cp_comm_type: \"a2a\" layout { context_parallel_size: 8 "
       "}"),
     "cp_comm_type: a2a scatters heads over CP: "
     "num_query_groups 4 / tensor_model_parallel_size 1 = 4 heads per TP rank "
     "not divisible by context_parallel_size 8"},
    {"CpA2aMlaHeadsFail",
     M("num_gpus: 32 cp_comm_type: \"a2a\" layout { "
       "tensor_model_parallel_size: 2 context_parallel_size: 16 }"),
     "a2a scatters heads over CP: num_attention_heads 16 / "
     "tensor_model_parallel_size 2 = 8 heads per TP rank not divisible by "
     "context_parallel_size 16"},
    {"CpA2aP2pPass",
     Q("num_gpus: 64 cp_comm_type: \"a2a+p2p\" "
       "hierarchical_context_parallel_sizes: [4, 2] layout { "
       "context_parallel_size: 8 }"),
     ""},
    {"CpA2aP2pNoSizesFail",
     Q("num_gpus: 64 cp_comm_type: \"a2a+p2p\" layout { "
       "context_parallel_size: 8 }"),
     "cp_comm_type: a2a+p2p needs hierarchical_context_parallel_sizes (inner "
     "a2a size, outer p2p size)"},
    {"CpA2aP2pProductFail",
     Q("num_gpus: 64 cp_comm_type: \"a2a+p2p\" "
       "hierarchical_context_parallel_sizes: [4, 4] layout { "
       "context_parallel_size: 8 }"),
     "hierarchical_context_parallel_sizes: product 4*4 = 16 is not "
     "context_parallel_size 8"},
    {"CpA2aP2pThreeSizesFail",
     Q("num_gpus: 64 cp_comm_type: \"a2a+p2p\" "
       "hierarchical_context_parallel_sizes: [2, 2, 2] layout { "
       "context_parallel_size: 8 }"),
     "a2a+p2p takes exactly 2 sizes (inner a2a, outer p2p), got [2, 2, 2]"},
    {"CpA2aP2pInnerHeadsFail",
     Q("num_gpus: 64 cp_comm_type: \"a2a+p2p\" "
       "hierarchical_context_parallel_sizes: [8, 1] layout { "
       "context_parallel_size: 8 }"),
     "hierarchical_context_parallel_sizes: a2a+p2p scatters heads over CP: "
     "num_query_groups 4 / tensor_model_parallel_size 1 = 4 heads per TP rank "
     "not divisible by the inner a2a size 8"},
    {"CpSizeZeroFail",
     Q("num_gpus: 64 cp_comm_type: \"a2a+p2p\" "
       "hierarchical_context_parallel_sizes: [0, 8] layout { "
       "context_parallel_size: 8 }"),
     "hierarchical_context_parallel_sizes: every size must be >= 1, got [0, "
     "8]"},
    {"CpSizesWithP2pFail",
     Q("num_gpus: 16 hierarchical_context_parallel_sizes: [2, 2] layout { "
       "context_parallel_size: 4 }"),
     "hierarchical_context_parallel_sizes: only used with cp_comm_type "
     "a2a+p2p, got p2p"},
};

class RuleTest : public testing::TestWithParam<RuleCase> {};

TEST_P(RuleTest, ResolvesOrFailsWithTheRule) {
  const RuleCase& c = GetParam();
  auto spec = ParseScenario(c.text, "case.textproto");
  ASSERT_TRUE(spec) << spec.error().message;
  auto r = Resolve(*spec, "case.textproto", c.text);
  if (std::string(c.error).empty()) {
    EXPECT_TRUE(r) << r.error().message;
    return;
  }
  ASSERT_FALSE(r) << "resolved, expected: " << c.error;
  EXPECT_NE(r.error().message.find(c.error), std::string::npos)
      << r.error().message;
  EXPECT_TRUE(r.error().message.starts_with("case.textproto"))
      << r.error().message;
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos)
      << r.error().message;
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleTest, testing::ValuesIn(kRuleCases),
                         [](const testing::TestParamInfo<RuleCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace moesim::scenarios
