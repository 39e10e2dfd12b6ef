// A model from Megatron's architecture flags (scenarios/architecture.cc):
// built when no model is named, checked against the named model otherwise.
#include "scenarios/architecture.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/params.h"
#include "models/zoo.h"
#include "scenarios/megatron_args.h"
#include "scenarios/scenario.h"

namespace moesim::scenarios {
namespace {

// The network-size and MoE flags of the Megatron MoE model zoo's
// DeepSeek-V3 config (yanring/Megatron-MoE-ModelZoo@e8650517d6:
// model_configs/benchmarking/DeepSeek-V3.yaml), with MTP on.
constexpr char kDeepSeekV3[] =
    "--num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 "
    "--num-attention-heads 128 --kv-channels 128 "
    "--make-vocab-size-divisible-by 3232 --normalization RMSNorm --swiglu "
    "--disable-bias-linear "
    "--untie-embeddings-and-output-weights --multi-latent-attention "
    "--qk-layernorm --num-experts 256 --moe-layer-freq '([0]*3+[1]*58)' "
    "--moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 "
    "--moe-router-topk 8 --q-lora-rank 1536 --kv-lora-rank 512 "
    "--qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 "
    "--tokenizer-type HuggingFaceTokenizer "
    "--tokenizer-model deepseek-ai/DeepSeek-V3 --mtp-num-layers 1 "
    "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 8 "
    "--pipeline-model-parallel-layout 'Et*8|(t*8|)*6t*5mL' "
    "--expert-model-parallel-size 32 --seq-length 4096 "
    "--micro-batch-size 1 --global-batch-size 8192 --bf16";

util::Result<ResolvedScenario> ResolveArgs(const std::string& args,
                                           const std::string& model = "",
                                           int gpus = 256) {
  Scenario spec;
  auto applied = ApplyMegatronArgs(args, spec);
  if (!applied) return std::unexpected(applied.error());
  spec.set_model(model);
  spec.set_system("dgx-h100");
  spec.set_num_gpus(gpus);
  return Resolve(spec, "flags");
}

// The flags alone give DeepSeek-V3: the parameter count equals the zoo
// model's (671.026B without MTP, 682.636B with, shared/reference/models.md).
TEST(ArchitectureTest, DeepSeekV3FromItsFlagsHasTheZooParameterCount) {
  auto r = ResolveArgs(kDeepSeekV3);
  ASSERT_TRUE(r) << r.error().message;
  const models::ParamSummary built = models::CountParams(r->model);
  auto zoo = models::LoadModel("deepseek-v3");
  ASSERT_TRUE(zoo);
  const models::ParamSummary expected = models::CountParams(*zoo);
  EXPECT_EQ(built.total_with_mtp, expected.total_with_mtp);
  EXPECT_EQ(built.active_with_mtp, expected.active_with_mtp);
  EXPECT_NEAR(built.total / 1e9, 671.026, 0.01);
  EXPECT_EQ(r->model.num_layers(), 61);
  ASSERT_EQ(r->model.moe_layer_freq_size(), 61);
  EXPECT_EQ(r->model.moe_layer_freq(2), 0);
  EXPECT_EQ(r->model.moe_layer_freq(3), 1);
  EXPECT_EQ(r->parallel.ep, 32);
  EXPECT_EQ(r->parallel.pp, 8);
}

// Megatron-LM's DeepSeek-V3 proxy test: 14 layers, 64 experts, 3 dense
// (tests/functional_tests/test_cases/mixtral/deepseekv3_proxy_flex_*/
// model_config.yaml). Its vocabulary is the Nemotron tokenizer's 256,000.
// Expected: 3 dense MLA layers + 11 MoE layers of 64 x 2048 experts, counted
// by the same rules as the zoo (the issue measured "about 37B").
TEST(ArchitectureTest, DeepSeekV3ProxyIsNotDeepSeekV3) {
  auto r = ResolveArgs(
      "--num-layers 14 --hidden-size 7168 --ffn-hidden-size 18432 "
      "--num-attention-heads 128 --kv-channels 128 --swiglu "
      "--untie-embeddings-and-output-weights --multi-latent-attention "
      "--make-vocab-size-divisible-by 3232 "
      "--tokenizer-type GPTSentencePieceTokenizer "
      "--tokenizer-model /data/utils/nemotron_2_256k.model "
      "--num-experts 64 --moe-layer-freq '([0]*3+[1]*11)' "
      "--moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 "
      "--moe-router-topk 8 --q-lora-rank 1536 --kv-lora-rank 512 "
      "--qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 "
      "--mtp-num-layers 1 --tensor-model-parallel-size 2 "
      "--pipeline-model-parallel-size 4 "
      "--pipeline-model-parallel-layout 'Et*2|(tt|)*5t|tmL' "
      "--expert-model-parallel-size 16 --micro-batch-size 1 "
      "--global-batch-size 512 --seq-length 4096",
      "", 64);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->model.num_moe_experts(), 64);
  EXPECT_EQ(r->model.vocab_size(), 256000);
  EXPECT_EQ(r->model.num_layers(), 14);
  const double total = models::CountParams(r->model).total / 1e9;
  EXPECT_GT(total, 30);
  EXPECT_LT(total, 45);
  EXPECT_EQ(r->parallel.vpp, 2);  // 8 layout stages / PP 4
}

TEST(ArchitectureTest, NamedModelMustAgreeWithTheFlags) {
  auto ok = ResolveArgs(kDeepSeekV3, "deepseek-v3");
  ASSERT_TRUE(ok) << ok.error().message;
  auto bad = ResolveArgs(std::string(kDeepSeekV3) + " --num-experts 64",
                         "deepseek-v3");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "flags: --num-experts: 64 contradicts deepseek-v3's "
            "num_moe_experts 256");
  auto deeper = ResolveArgs("--num-layers 90", "deepseek-v3");
  ASSERT_FALSE(deeper);
  EXPECT_NE(deeper.error().message.find(
                "flags: --num-layers: 90 is more than deepseek-v3's 61"),
            std::string::npos)
      << deeper.error().message;
}

TEST(ArchitectureTest, MegatronDefaults) {
  // arguments.py: ffn 4h (GeLU) or int(8h/3/64)*64 (SwiGLU); kv_channels
  // h / heads; add_bias_linear on; top-k 2; moe_ffn = ffn.
  auto gelu = ResolveArgs(
      "--num-layers 2 --hidden-size 512 --num-attention-heads 8 "
      "--vocab-size 1000 --num-experts 4",
      "", 8);
  ASSERT_TRUE(gelu) << gelu.error().message;
  EXPECT_EQ(gelu->model.ffn_hidden_size(), 2048);
  EXPECT_EQ(gelu->model.activation(), "gelu");
  EXPECT_TRUE(gelu->model.add_bias_linear());
  EXPECT_EQ(gelu->model.moe_router_topk(), 2);
  EXPECT_EQ(gelu->model.moe_ffn_hidden_size(), 2048);
  auto swiglu = ResolveArgs(
      "--num-layers 2 --hidden-size 4096 --num-attention-heads 32 "
      "--vocab-size 1000 --swiglu --disable-bias-linear",
      "", 8);
  ASSERT_TRUE(swiglu) << swiglu.error().message;
  EXPECT_EQ(swiglu->model.ffn_hidden_size(), 10880);  // int(10922.67/64)*64
  EXPECT_FALSE(swiglu->model.add_bias_linear());
}

TEST(ArchitectureTest, QueryGroupsNeedGroupQueryAttention) {
  // argument_utils.py: without --group-query-attention num_query_groups is
  // None, one KV group per head.
  Scenario spec;
  auto w = ApplyMegatronArgs("--num-query-groups 8", spec);
  ASSERT_TRUE(w);
  EXPECT_FALSE(spec.architecture().has_num_query_groups());
  ASSERT_FALSE(w->empty());
  EXPECT_NE(w->back().find("--num-query-groups without"), std::string::npos);
  Scenario gqa;
  ASSERT_TRUE(
      ApplyMegatronArgs("--group-query-attention --num-query-groups 8", gqa));
  EXPECT_EQ(gqa.architecture().num_query_groups(), 8);
}

TEST(ArchitectureTest, FrequencyPatterns) {
  Scenario spec;
  ASSERT_TRUE(
      ApplyMegatronArgs("--num-layers 8 --window-size '(127, 0)' "
                        "--window-attn-skip-freq '([1]+[0])*4' "
                        "--experimental-attention-variant gated_delta_net "
                        "--linear-attention-freq 4",
                        spec));
  EXPECT_EQ(spec.architecture().window_size(), 128);
  EXPECT_EQ(spec.architecture().window_attn_skip_freq(), 2);
  EXPECT_EQ(spec.architecture().linear_attention_freq(), 4);

  auto moe = internal::ExpandLayerFreq("([0]*3+[1]*2)", 5);
  ASSERT_TRUE(moe);
  EXPECT_EQ(*moe, (std::vector<int32_t>{0, 0, 0, 1, 1}));
  auto every = internal::ExpandLayerFreq("2", 5);
  ASSERT_TRUE(every);
  EXPECT_EQ(*every, (std::vector<int32_t>{1, 0, 1, 0, 1}));
}

// --decoder-first/last-pipeline-num-layers give Megatron's uneven split
// (transformer_layer.py get_transformer_layer_offset): the first and last
// ranks hold the given layers split over their virtual stages, the middle
// ranks share the rest; layout stage k is rank k % PP.
TEST(ArchitectureTest, UnevenPipelineBecomesALayoutString) {
  constexpr char kModel[] =
      "--num-layers 62 --hidden-size 512 --num-attention-heads 8 "
      "--vocab-size 1000 --micro-batch-size 1 --global-batch-size 8 ";
  auto plain = ResolveArgs(std::string(kModel) +
                               "--pipeline-model-parallel-size 4 "
                               "--decoder-first-pipeline-num-layers 14 "
                               "--decoder-last-pipeline-num-layers 16",
                           "", 8);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->spec.layout().pipeline_model_parallel_layout(),
            "Et*14|t*16|t*16|t*16L");
  auto vpp = ResolveArgs(std::string(kModel) +
                             "--pipeline-model-parallel-size 4 "
                             "--num-virtual-stages-per-pipeline-rank 2 "
                             "--decoder-first-pipeline-num-layers 14 "
                             "--decoder-last-pipeline-num-layers 16",
                         "", 8);
  ASSERT_TRUE(vpp) << vpp.error().message;
  EXPECT_EQ(vpp->spec.layout().pipeline_model_parallel_layout(),
            "Et*7|t*8|t*8|t*8|t*7|t*8|t*8|t*8L");
  EXPECT_EQ(vpp->parallel.vpp, 2);
  auto uneven = ResolveArgs(std::string(kModel) +
                                "--pipeline-model-parallel-size 4 "
                                "--decoder-first-pipeline-num-layers 15",
                            "", 8);
  ASSERT_FALSE(uneven);
  EXPECT_EQ(uneven.error().message,
            "flags: --decoder-first-pipeline-num-layers: the other 47 layers "
            "do not divide evenly over 3 ranks x 1 virtual stages");
  auto both = ResolveArgs(std::string(kModel) +
                              "--pipeline-model-parallel-size 2 "
                              "--decoder-first-pipeline-num-layers 30 "
                              "--pipeline-model-parallel-layout 'Et*31|t*31L'",
                          "", 8);
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message.find("cannot be combined with "
                                      "pipeline_model_parallel_layout"),
            std::string::npos);
}

// --account-for-embedding/loss-in-pipeline-split: the embedding and loss
// each count as a layer of the even split (transformer_block.py
// get_num_layers_to_build): 30 layers + 2 over PP 4 = 8 per stage, the
// first and last building 7.
TEST(ArchitectureTest, AccountedEmbeddingAndLossSplit) {
  auto r = ResolveArgs(
      "--num-layers 30 --hidden-size 512 --num-attention-heads 8 "
      "--vocab-size 1000 --micro-batch-size 1 --global-batch-size 8 "
      "--pipeline-model-parallel-size 4 "
      "--account-for-embedding-in-pipeline-split "
      "--account-for-loss-in-pipeline-split",
      "", 8);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->spec.layout().pipeline_model_parallel_layout(),
            "Et*7|t*8|t*8|t*7L");
  auto odd = ResolveArgs(
      "--num-layers 30 --hidden-size 512 --num-attention-heads 8 "
      "--vocab-size 1000 --pipeline-model-parallel-size 4 "
      "--account-for-embedding-in-pipeline-split",
      "", 8);
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error().message,
            "flags: --account-for-embedding-in-pipeline-split: num_layers 30 "
            "plus the accounted embedding/loss = 31 is not divisible by PP x "
            "VPP = 4");
}

// A Megatron-LM launch takes Megatron-LM's argparse defaults, not the
// Bridge recipe's (megatron/training/arguments.py: --sequence-parallel,
// --use-distributed-optimizer and --manual-gc are store_true; the router
// runs as trained; TransformerConfig's dispatcher default is allgather).
TEST(ArchitectureTest, MegatronLmLaunchTakesMegatronLmDefaults) {
  Scenario spec;
  ASSERT_TRUE(ApplyMegatronArgs("--tensor-model-parallel-size 2", spec));
  spec.set_model("deepseek-v3");
  spec.set_num_layers(4);
  spec.set_system("dgx-h100");
  spec.set_num_gpus(8);
  auto bridge = Resolve(spec, "flags");
  ASSERT_TRUE(bridge) << bridge.error().message;
  EXPECT_TRUE(bridge->parallel.sequence_parallel);
  EXPECT_TRUE(bridge->training.distributed_optimizer);
  EXPECT_EQ(bridge->training.main_grad_bytes, 2);  // the recipe's bf16
  spec.set_defaults("megatron-lm");
  auto mlm = Resolve(spec, "flags");
  ASSERT_TRUE(mlm) << mlm.error().message;
  EXPECT_FALSE(mlm->parallel.sequence_parallel);
  EXPECT_FALSE(mlm->training.distributed_optimizer);
  EXPECT_FALSE(mlm->training.manual_gc);
  EXPECT_EQ(mlm->training.main_grad_bytes, 4);
  EXPECT_EQ(mlm->spec.routing(), "dropless_natural");
  int named = 0;
  for (const std::string& w : mlm->warnings) {
    if (w.find("Megatron-LM would train in FP32") != std::string::npos ||
        w.find("Megatron-LM's default is allgather") != std::string::npos)
      ++named;
  }
  EXPECT_EQ(named, 2);
  spec.set_defaults("megatron");
  auto bad = Resolve(spec, "flags");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "flags: --defaults: unknown 'megatron' (megatron-bridge, "
            "megatron-lm)");
}

TEST(ArchitectureTest, Errors) {
  struct Case {
    const char* args;
    const char* error;
  };
  const Case cases[] = {
      {"--num-layers 4 --moe-layer-freq '[1]*3'",
       "has 3 entries, expected one per layer (num_layers 4)"},
      {"--num-layers 4 --moe-layer-freq '[1,2]*2'", "entries must be 0 or 1"},
      {"--num-layers 4 --moe-layer-freq '((((([1]*4'", "missing ')'"},
      {"--num-layers 4 --linear-attention-freq '[1,0,0,1]' "
       "--experimental-attention-variant gated_delta_net",
       "is not modelled: only the periodic pattern"},
      {"--window-size 128,64", "expected 'left,0'"},
      {"--squared-relu",
       "--squared-relu: the squared-ReLU MLP is not modelled"},
      {"--softmax-type off-by-one", "'off-by-one' is not modelled"},
      {"--experimental-attention-variant dsa", "'dsa' is not modelled"},
      {"--hidden-size 0", "--hidden-size: must be >= 1, got 0"},
  };
  for (const Case& c : cases) {
    auto r = ResolveArgs(c.args, "", 8);
    ASSERT_FALSE(r) << c.args;
    EXPECT_NE(r.error().message.find(c.error), std::string::npos)
        << c.args << " -> " << r.error().message;
  }
  // Deep nesting is refused, not recursed into.
  std::string deep = "--num-layers 1 --moe-layer-freq '" +
                     std::string(100000, '(') + "[1]" +
                     std::string(100000, ')') + "'";
  auto r = ResolveArgs(deep, "", 8);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("nests more than 64 parentheses"),
            std::string::npos)
      << r.error().message.substr(0, 200);
  // Without any model: one line saying what is missing.
  auto none = ResolveArgs("--tensor-model-parallel-size 2", "", 8);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message,
            "flags: --model: required (a zoo name or model file, or the "
            "architecture flags of a Megatron argument list)");
  auto no_vocab = ResolveArgs(
      "--num-layers 2 --hidden-size 64 "
      "--num-attention-heads 4",
      "", 8);
  ASSERT_FALSE(no_vocab);
  EXPECT_NE(no_vocab.error().message.find("flags: --vocab-size: required"),
            std::string::npos)
      << no_vocab.error().message;
}

}  // namespace
}  // namespace moesim::scenarios
