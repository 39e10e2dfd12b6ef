// Tests of the Hugging Face config.json import (models/hf_config.h).
//
// The fixtures under tests/data/hf/<zoo name>/config.json carry the public HF
// values of each model (tests/data/hf/README.md names the hub file each one
// comes from). The expected models are the shipped zoo entries
// (models/zoo/<zoo name>.textproto), whose values cite Megatron-Bridge,
// Megatron-LM and HF sources: importing the HF file must give the same
// architecture as the zoo's hand-written Megatron description.
#include "models/hf_config.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/zoo.h"
#include "util/textproto.h"

namespace moesim::models {
namespace {

using google::protobuf::util::MessageDifferencer;

std::string FixturePath(const std::string& model) {
  return std::string(MOESIM_SOURCE_DIR) + "/tests/data/hf/" + model +
         "/config.json";
}

// Differences between `imported` and `zoo`, empty when they describe the same
// architecture. name, source and hf_model_type are provenance, checked
// separately; `also_ignore` lists fields a config.json cannot carry.
std::string ArchitectureDiff(const Model& imported, const Model& zoo,
                             const std::vector<std::string>& also_ignore) {
  MessageDifferencer differ;
  // `recipe` holds Megatron-Bridge recipe settings, which config.json lacks.
  std::vector<std::string> ignored = {"name", "source", "hf_model_type",
                                      "recipe"};
  ignored.insert(ignored.end(), also_ignore.begin(), also_ignore.end());
  for (const std::string& field : ignored) {
    const auto* descriptor = Model::descriptor()->FindFieldByName(field);
    EXPECT_NE(descriptor, nullptr) << field;
    if (descriptor != nullptr) differ.IgnoreField(descriptor);
  }
  std::string report;
  differ.ReportDifferencesToString(&report);
  // The report also lists the ignored fields, so it is only returned when
  // the comparison fails.
  return differ.Compare(zoo, imported) ? "" : report;
}

struct ZooCase {
  const char* model;       // fixture folder = zoo name
  const char* model_type;  // HF model_type written in the fixture
  // Zoo fields that HF config.json does not carry.
  std::vector<std::string> not_in_hf;
};

class ImportMatchesZooTest : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ImportMatchesZooTest, SameArchitectureAsZoo) {
  const ZooCase& c = GetParam();
  std::string path = FixturePath(c.model);
  auto text = util::ReadFile(path);
  ASSERT_TRUE(text.has_value()) << text.error().message;

  auto imported = ParseHfConfig(*text, path, c.model);
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  auto zoo = LoadModel(c.model);
  ASSERT_TRUE(zoo.has_value()) << zoo.error().message;

  EXPECT_EQ(ArchitectureDiff(*imported, *zoo, c.not_in_hf), "");
  // Provenance: the caller's name, the file path, the HF family.
  EXPECT_EQ(imported->name(), c.model);
  EXPECT_EQ(imported->source(), path);
  EXPECT_EQ(imported->hf_model_type(), c.model_type);
  auto valid = ValidateModel(*imported, path);
  EXPECT_TRUE(valid.has_value()) << valid.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ImportMatchesZooTest,
    ::testing::Values(
        // make_vocab_size_divisible_by 1280 in the zoo comes from Megatron-LM's
        // DeepSeek-R1.sh recipe (--make-vocab-size-divisible-by 1280), a
        // training setting HF does not record.
        ZooCase{"deepseek-v3", "deepseek_v3", {"make_vocab_size_divisible_by"}},
        ZooCase{"kimi-k2", "kimi_k2", {}},
        ZooCase{"qwen3-30b-a3b", "qwen3_moe", {}},
        ZooCase{"qwen3-next-80b-a3b", "qwen3_next", {}},
        ZooCase{"gpt-oss-120b", "gpt_oss", {}},
        ZooCase{"mixtral-8x7b", "mixtral", {}},
        ZooCase{"llama3-70b", "llama", {}}, ZooCase{"llama2-7b", "llama", {}},
        ZooCase{"qwen3-8b", "qwen3", {}}),
    [](const ::testing::TestParamInfo<ZooCase>& info) {
      std::string name = info.param.model;
      for (char& ch : name) {
        if (ch == '-' || ch == '.') ch = '_';
      }
      return name;
    });

// The specific values the mapping derives rather than copies, spelled out.
TEST(HfConfigTest, DeepSeekV3DerivedFields) {
  std::string path = FixturePath("deepseek-v3");
  auto text = util::ReadFile(path);
  ASSERT_TRUE(text.has_value()) << text.error().message;
  auto m = ParseHfConfig(*text, path, "deepseek-v3");
  ASSERT_TRUE(m.has_value()) << m.error().message;
  // first_k_dense_replace 3, moe_layer_freq 1: layers 0-2 dense, 3-60 MoE
  // (models.csv: moe_layer_freq=[0]*3+[1]*58).
  ASSERT_EQ(m->moe_layer_freq_size(), 61);
  EXPECT_EQ(m->moe_layer_freq(2), 0);
  EXPECT_EQ(m->moe_layer_freq(3), 1);
  // n_shared_experts 1 x moe_intermediate_size 2048.
  EXPECT_EQ(m->moe_shared_expert_intermediate_size(), 2048);
  EXPECT_EQ(m->mtp_num_layers(), 1);        // num_nextn_predict_layers 1
  EXPECT_EQ(m->qk_head_dim(), 128);         // qk_nope_head_dim
  EXPECT_EQ(m->qk_pos_emb_head_dim(), 64);  // qk_rope_head_dim
  EXPECT_TRUE(
      m->untie_embeddings_and_output_weights());  // tie_word_embeddings false
}

// Moonlight-16B-A3B ships a deepseek_v3 config.json with q_lora_rank null;
// values from the moonlight-16b-a3b zoo entry (which cites
// moonshotai/Moonlight-16B-A3B config.json). No num_nextn_predict_layers key:
// MTP depth 0.
TEST(HfConfigTest, NullQLoraRankIsNoCompression) {
  constexpr std::string_view kMoonlight = R"({
    "model_type": "deepseek_v3", "num_hidden_layers": 27, "hidden_size": 2048,
    "intermediate_size": 11264, "num_attention_heads": 16, "num_key_value_heads": 16,
    "vocab_size": 163840, "q_lora_rank": null, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "n_routed_experts": 64, "num_experts_per_tok": 6, "moe_intermediate_size": 1408,
    "n_shared_experts": 2, "first_k_dense_replace": 1, "moe_layer_freq": 1,
    "hidden_act": "silu", "tie_word_embeddings": false})";
  auto m =
      ParseHfConfig(kMoonlight, "moonlight/config.json", "moonlight-16b-a3b");
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->q_lora_rank(), 0);
  auto zoo = LoadModel("moonlight-16b-a3b");
  ASSERT_TRUE(zoo.has_value()) << zoo.error().message;
  EXPECT_EQ(ArchitectureDiff(*m, *zoo, {}), "");
}

TEST(HfConfigTest, ExplicitMoeLayerFreqListIsHonoured) {
  constexpr std::string_view kJson = R"({
    "model_type": "deepseek_v3", "num_hidden_layers": 4, "hidden_size": 64,
    "intermediate_size": 128, "num_attention_heads": 4, "vocab_size": 256,
    "q_lora_rank": 32, "kv_lora_rank": 16, "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 4, "v_head_dim": 8, "n_routed_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 32,
    "first_k_dense_replace": 0, "moe_layer_freq": [0, 1, 0, 1]})";
  auto m = ParseHfConfig(kJson, "tiny/config.json", "tiny");
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(std::vector<int32_t>(m->moe_layer_freq().begin(),
                                 m->moe_layer_freq().end()),
            (std::vector<int32_t>{0, 1, 0, 1}));
  EXPECT_EQ(m->moe_shared_expert_intermediate_size(),
            0);  // no n_shared_experts key
}

// Qwen3-MoE rule: layer i is sparse iff i not in mlp_only_layers and
// (i + 1) % decoder_sparse_step == 0. Step 2 over 4 layers with layer 3 listed
// as dense-only: [0, 1, 0, 0].
TEST(HfConfigTest, QwenSparseStepAndMlpOnlyLayers) {
  constexpr std::string_view kJson = R"({
    "model_type": "qwen3_moe", "num_hidden_layers": 4, "hidden_size": 64,
    "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 16, "vocab_size": 256, "num_experts": 4, "num_experts_per_tok": 2,
    "moe_intermediate_size": 32, "decoder_sparse_step": 2, "mlp_only_layers": [3]})";
  auto m = ParseHfConfig(kJson, "tiny/config.json", "tiny");
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(std::vector<int32_t>(m->moe_layer_freq().begin(),
                                 m->moe_layer_freq().end()),
            (std::vector<int32_t>{0, 1, 0, 0}));
}

TEST(HfConfigTest, UnsupportedModelTypeListsSupportedOnes) {
  auto m = ParseHfConfig(R"({"model_type": "bert", "hidden_size": 768})",
                         "bert/config.json", "bert");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message,
            "bert/config.json: model_type: unsupported 'bert'; supported: "
            "deepseek_v3, kimi_k2, "
            "qwen3_moe, qwen3_next, gpt_oss, mixtral, llama, qwen3");
}

TEST(HfConfigTest, MissingModelTypeIsAnError) {
  auto m = ParseHfConfig(R"({"hidden_size": 768})", "x/config.json", "x");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message.rfind("x/config.json: model_type: missing", 0),
            0u)
      << m.error().message;
}

TEST(HfConfigTest, MissingRequiredKeyNamesKeyAndFamily) {
  // A Llama config without num_hidden_layers.
  constexpr std::string_view kJson = R"({
    "model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672,
    "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 128256})";
  auto m = ParseHfConfig(kJson, "llama/config.json", "llama");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message,
            "llama/config.json: num_hidden_layers: missing (required for "
            "model_type llama)");
}

TEST(HfConfigTest, MissingMoeKeyForMoeFamily) {
  // A Mixtral config without num_local_experts.
  constexpr std::string_view kJson = R"({
    "model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
    "num_experts_per_tok": 2, "vocab_size": 32000})";
  auto m = ParseHfConfig(kJson, "mixtral/config.json", "mixtral");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message,
            "mixtral/config.json: num_local_experts: missing (required for "
            "model_type mixtral)");
}

TEST(HfConfigTest, MalformedJsonNamesFile) {
  auto m = ParseHfConfig(R"({"model_type": "llama", )", "broken/config.json",
                         "broken");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message,
            "broken/config.json:1:25: malformed JSON: unexpected end of input");
}

TEST(HfConfigTest, NonIntegerValueIsAnError) {
  constexpr std::string_view kJson = R"({
    "model_type": "llama", "num_hidden_layers": 80, "hidden_size": 8192.5,
    "intermediate_size": 28672, "num_attention_heads": 64, "vocab_size": 128256})";
  auto m = ParseHfConfig(kJson, "llama/config.json", "llama");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message,
            "llama/config.json: hidden_size: expected an integer, got 8192.5");
}

TEST(HfConfigTest, GptOssLayerTypesMustAlternate) {
  // Two full-attention layers in a row do not fit Megatron's
  // window_attn_skip_freq rule.
  constexpr std::string_view kJson = R"({
    "model_type": "gpt_oss", "num_hidden_layers": 4, "hidden_size": 64,
    "intermediate_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 16, "vocab_size": 256, "num_local_experts": 4, "experts_per_token": 2,
    "sliding_window": 8,
    "layer_types": ["sliding_attention", "full_attention", "full_attention", "full_attention"]})";
  auto m = ParseHfConfig(kJson, "oss/config.json", "oss");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message.rfind(
                "oss/config.json: layer_types: unsupported pattern", 0),
            0u)
      << m.error().message;
}

// rope_scaling of type yarn carries its factor and, when written, mscale and
// mscale_all_dim (the keys Megatron-Bridge's bridges copy into
// yarn_rotary_scaling_factor / yarn_mscale / yarn_mscale_all_dim); other
// types (Llama 3.1's llama3) leave the model without YaRN.
TEST(HfConfigTest, RopeScalingYarnFields) {
  auto oss = ParseHfConfig(*util::ReadFile(FixturePath("gpt-oss-120b")),
                           "oss/config.json", "oss");
  ASSERT_TRUE(oss.has_value()) << oss.error().message;
  EXPECT_EQ(oss->yarn_rotary_scaling_factor(), 32);
  EXPECT_FALSE(oss->has_yarn_mscale());  // the hub config has no mscale
  auto dsv3 = ParseHfConfig(*util::ReadFile(FixturePath("deepseek-v3")),
                            "dsv3/config.json", "dsv3");
  ASSERT_TRUE(dsv3.has_value()) << dsv3.error().message;
  EXPECT_EQ(dsv3->yarn_rotary_scaling_factor(), 40);
  EXPECT_EQ(dsv3->yarn_mscale(), 1);
  EXPECT_EQ(dsv3->yarn_mscale_all_dim(), 1);
  constexpr std::string_view kLlama31 = R"({
    "model_type": "llama", "num_hidden_layers": 80, "hidden_size": 8192,
    "intermediate_size": 28672, "num_attention_heads": 64, "vocab_size": 128256,
    "rope_scaling": {"factor": 8.0, "rope_type": "llama3"}})";
  auto llama = ParseHfConfig(kLlama31, "llama/config.json", "llama");
  ASSERT_TRUE(llama.has_value()) << llama.error().message;
  EXPECT_EQ(llama->yarn_rotary_scaling_factor(), 0);
}

TEST(HfConfigTest, RopeScalingYarnNeedsANumericFactor) {
  constexpr std::string_view kNoFactor = R"({
    "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
    "intermediate_size": 64, "num_attention_heads": 4, "vocab_size": 256,
    "rope_scaling": {"type": "yarn", "mscale": 1.0}})";
  auto m = ParseHfConfig(kNoFactor, "y/config.json", "y");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message,
            "y/config.json: rope_scaling.factor: missing (required for yarn)");
  constexpr std::string_view kTextFactor = R"({
    "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
    "intermediate_size": 64, "num_attention_heads": 4, "vocab_size": 256,
    "rope_scaling": {"rope_type": "yarn", "factor": "32"}})";
  m = ParseHfConfig(kTextFactor, "y/config.json", "y");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message,
            "y/config.json: rope_scaling.factor: expected a number >= 0, got "
            "'32'");
  constexpr std::string_view kList = R"({
    "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
    "intermediate_size": 64, "num_attention_heads": 4, "vocab_size": 256,
    "rope_scaling": [32]})";
  m = ParseHfConfig(kList, "y/config.json", "y");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().message,
            "y/config.json: rope_scaling: expected an object or null, got a "
            "list");
}

// LoadModel on a config.json path goes through ParseHfConfig and names the
// model after the file's folder (models/zoo.h).
TEST(HfConfigTest, LoadModelImportsConfigJsonPath) {
  auto m = LoadModel(FixturePath("mixtral-8x7b"));
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->name(), "mixtral-8x7b");
  EXPECT_EQ(m->num_moe_experts(), 8);  // num_local_experts
}

}  // namespace
}  // namespace moesim::models
