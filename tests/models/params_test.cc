// Parameter counts against ../shared/reference/models.md (table "total /
// active (B)", produced by param_flops_check.py from the configs cited there).
#include "models/params.h"

#include <gtest/gtest.h>

#include "models/zoo.h"

namespace moesim::models {
namespace {

struct Expected {
  const char* model;
  double total_b;
  double active_b;
  double total_with_mtp_b;  // 0: same as total
};

// models.md section 1, "total / active (B)" column (exact counts, unpadded
// vocabulary, untied embeddings counted twice, MTP excluded).
constexpr Expected kExpected[] = {
    {"deepseek-v3", 671.03, 37.55, 682.64},  // 671.0B / 37.6B (682.6B with MTP)
    {"qwen3-235b-a22b", 235.09, 22.19, 0},
    {"qwen3-30b-a3b", 30.53, 3.35, 0},
    {"kimi-k2", 1026.41, 32.86, 0},
    {"gpt-oss-120b", 116.83, 5.71, 0},
    {"mixtral-8x7b", 46.70, 12.88, 0},
    {"mixtral-8x22b", 140.62, 39.15, 0},
    {"llama3-70b", 70.55, 70.55, 0},
    {"llama3.1-405b", 405.85, 405.85, 0},
    {"qwen3-next-80b-a3b", 79.67, 3.87, 0},
};

TEST(CountParams, MatchesReferenceWithinPointTwoPercent) {
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.model);
    auto model = LoadModel(e.model);
    ASSERT_TRUE(model) << model.error().message;
    const ParamSummary p = CountParams(*model);
    EXPECT_NEAR(p.total / 1e9, e.total_b, 0.002 * e.total_b);
    EXPECT_NEAR(p.active / 1e9, e.active_b, 0.002 * e.active_b);
    const double with_mtp =
        e.total_with_mtp_b > 0 ? e.total_with_mtp_b : e.total_b;
    EXPECT_NEAR(p.total_with_mtp / 1e9, with_mtp, 0.002 * with_mtp);
  }
}

TEST(DecoderLayerParams, MlaDownProjectionsAreReplicatedAcrossTp) {
  // memory_flops.md a.2: for DeepSeek-V3 the duplicated down-projections and
  // their norms are h*q_lora + h*(kv_lora+rope) + q_lora + kv_lora = 15.14M
  // per layer; with the input layernorm (h = 7168) that is the replicated
  // part of a dense layer's attention, plus the pre-MLP norm (h).
  auto model = LoadModel("deepseek-v3");
  ASSERT_TRUE(model);
  const ParamGroups dense = DecoderLayerParams(*model, 0);
  const int64_t down = 7168LL * 1536 + 7168LL * (512 + 64) + 1536 + 512;
  EXPECT_EQ(down, 15140864);
  EXPECT_EQ(dense.replicated, down + 7168 + 7168);
  EXPECT_EQ(dense.experts, 0);
  // A MoE layer adds the router (h x E) to the replicated part and 256
  // experts of 3*h*f_e each.
  const ParamGroups moe = DecoderLayerParams(*model, 3);
  EXPECT_EQ(moe.experts, 256LL * 3 * 7168 * 2048);
  EXPECT_EQ(moe.active_experts, 8LL * 3 * 7168 * 2048);
  EXPECT_EQ(moe.replicated, down + 7168 + 7168 + 7168LL * 256);
}

TEST(CountParams, TrimmedModelKeepsLeadingDenseLayers) {
  auto model = LoadModel("deepseek-v3");
  ASSERT_TRUE(model);
  const Model trimmed = WithNumLayers(*model, 4);
  // 3 dense + 1 MoE layer: the difference from 3 dense layers is one MoE layer.
  const ParamSummary four = CountParams(trimmed);
  const ParamSummary three = CountParams(WithNumLayers(*model, 3));
  EXPECT_EQ(four.total - three.total, DecoderLayerParams(*model, 3).total());
}

// Parameter tensors of a Qwen3-30B-A3B layer (QK-norm GQA, 128 experts, no
// biases) on an EP8 rank (16 local experts), against the AccumulateGrad
// leaves calibration/notes/megatron_host_ops.md counts from the TE layer
// spec: section 1, 5 (qkv.weight, qkv.layer_norm_weight, q_layernorm,
// k_layernorm, proj.weight); section 2, 2 + 2 x 16 = 34 (router.weight,
// pre_mlp_layernorm.weight, one GroupedLinear weight per local expert for
// fc1 and for fc2). Replicated: the four norms and the router weight.
TEST(ParamTensors, Qwen3MoeLayerMatchesTheNoteLeafCounts) {
  auto model = LoadModel("qwen3-30b-a3b");
  ASSERT_TRUE(model) << model.error().message;
  const ParamTensors t = DecoderLayerTensors(*model, 0, 16);
  EXPECT_EQ(t.dense, 5 + 2);
  EXPECT_EQ(t.expert, 32);
  EXPECT_EQ(t.replicated, 4 + 1);
  // Fewer experts per rank (EP16: 8 local): 2 fewer expert tensors each.
  EXPECT_EQ(DecoderLayerTensors(*model, 0, 8).expert, 16);
}

// A dense Llama layer: qkv weight + its fused input norm, proj; fc1 + its
// fused pre-MLP norm, fc2 (section 4: 3 AccumulateGrad leaves in the MLP).
TEST(ParamTensors, DenseLayerHasSixTensors) {
  auto model = LoadModel("llama3-70b");
  ASSERT_TRUE(model) << model.error().message;
  const ParamTensors t = DecoderLayerTensors(*model, 0, 0);
  EXPECT_EQ(t.dense, 3 + 3);
  EXPECT_EQ(t.expert, 0);
  EXPECT_EQ(t.replicated, 2);
}

}  // namespace
}  // namespace moesim::models
