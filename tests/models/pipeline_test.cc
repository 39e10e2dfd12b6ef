#include "models/pipeline.h"

#include <gtest/gtest.h>

#include <string>

#include "models/zoo.h"

namespace moesim::models {
namespace {

TEST(ParsePipelineLayout, DeepSeekV3Pp8Vpp4) {
  // "Et|(tt|)*30mL": stage 0 holds E and 1 layer, 30 stages of 2 layers, the
  // last MTP and loss: 1 + 60 = 61 layers over 32 = 8 x 4 virtual stages.
  auto plan = ParsePipelineLayout("Et|(tt|)*30mL", 61, 1, 8, 4);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->stages.size(), 32u);
  EXPECT_TRUE(plan->Stage(0, 0).embedding);
  EXPECT_EQ(plan->Stage(0, 0).layers, (std::vector<int64_t>{0}));
  // Virtual stage 1 runs on rank 1 as chunk 0 and holds layers 1, 2.
  EXPECT_EQ(plan->Stage(1, 0).layers, (std::vector<int64_t>{1, 2}));
  // Virtual stage 8 is rank 0's second chunk: layers 15, 16.
  EXPECT_EQ(plan->Stage(0, 1).layers, (std::vector<int64_t>{15, 16}));
  EXPECT_EQ(plan->Stage(7, 3).mtp_layers, 1);
  EXPECT_TRUE(plan->Stage(7, 3).loss);
  EXPECT_TRUE(plan->Stage(7, 3).layers.empty());
}

// A recipe layout that does not parse for its own model would be skipped
// silently by scenarios::Resolve (it only takes layouts that fit the
// effective depth), so every zoo entry must parse at the zoo's depth.
TEST(ParsePipelineLayout, EveryZooRecipeLayoutFitsItsModel) {
  int checked = 0;
  for (const std::string& name : ZooNames()) {
    auto model = LoadModel(name);
    ASSERT_TRUE(model) << model.error().message;
    for (const PipelineLayoutDefault& entry :
         model->recipe().pipeline_layouts()) {
      SCOPED_TRACE(name + " " + entry.layout());
      auto plan =
          ParsePipelineLayout(entry.layout(), model->num_layers(),
                              model->mtp_num_layers(), entry.pp(), entry.vpp());
      ASSERT_TRUE(plan) << plan.error().message;
      EXPECT_EQ(plan->stages.size(), size_t(entry.pp()) * entry.vpp());
      ++checked;
    }
  }
  // deepseek-v3, deepseek-v3-nomtp and kimi-k2 carry 6 entries each.
  EXPECT_EQ(checked, 18);
}

TEST(ParsePipelineLayout, RejectsWrongCounts) {
  auto stages = ParsePipelineLayout("Et|tL", 2, 0, 4, 1);
  ASSERT_FALSE(stages);
  EXPECT_NE(stages.error().message.find("has 2 stages, expected"),
            std::string::npos);
  auto layers = ParsePipelineLayout("Et|tL", 3, 0, 2, 1);
  ASSERT_FALSE(layers);
  EXPECT_NE(layers.error().message.find("places 2 decoder layers"),
            std::string::npos);
  auto symbol = ParsePipelineLayout("Ex|tL", 2, 0, 2, 1);
  ASSERT_FALSE(symbol);
  EXPECT_NE(symbol.error().message.find("unknown symbol 'x'"),
            std::string::npos);
  auto paren = ParsePipelineLayout("E(t|tL", 2, 0, 2, 1);
  ASSERT_FALSE(paren);
  EXPECT_NE(paren.error().message.find("missing ')'"), std::string::npos);
  auto late_e = ParsePipelineLayout("t|EtL", 2, 0, 2, 1);
  ASSERT_FALSE(late_e);
}

// Megatron-Core's get_num_stages_from_str: the stages of the expanded
// layout; commas are separators and dropped, as in its docstring's example
// "Ettt|(tt|)*29,m|L" (31 + 1 = 32 stages).
TEST(CountLayoutStages, CountsExpandedStagesAndDropsCommas) {
  EXPECT_EQ(CountLayoutStages("Ettt|(tt|)*29,m|L").value_or(-1), 32);
  EXPECT_EQ(CountLayoutStages("Et*48L").value_or(-1), 1);
  EXPECT_FALSE(CountLayoutStages("Et|(t"));
  auto plan = ParsePipelineLayout("Ettt|(tt|)*29,m|L", 61, 1, 8, 4);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->stages.size(), 32u);
  EXPECT_EQ(plan->stages[30].mtp_layers, 1);
}

// Megatron-Bridge's account_for_embedding/loss_in_pipeline_split: Llama 3.1
// 405B's 126 layers + embedding + loss = 128 = 64 virtual stages (PP8 VPP8)
// of 2: the first holds the embedding and 1 layer, the last 1 layer and the
// loss, the 62 between 2 layers each. Qwen3-235B's 94 + 2 = 96 on PP4 VPP12
// gives 48 stages of 2. 61 + 2 = 63 does not split over 32, and MTP models
// are left to an explicit layout.
TEST(AccountedLayout, CountsEmbeddingAndLossAsLayers) {
  EXPECT_EQ(AccountedLayout(126, 0, 8, 8), "Et|(t*2|)*62tL");
  auto plan = ParsePipelineLayout(AccountedLayout(126, 0, 8, 8), 126, 0, 8, 8);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->Stage(0, 0).embedding);
  EXPECT_EQ(plan->Stage(0, 0).layers.size(), 1u);
  EXPECT_EQ(plan->Stage(1, 0).layers.size(), 2u);
  EXPECT_TRUE(plan->Stage(7, 7).loss);
  EXPECT_EQ(plan->Stage(7, 7).layers.size(), 1u);
  EXPECT_EQ(AccountedLayout(94, 0, 4, 12), "Et|(t*2|)*46tL");
  EXPECT_EQ(AccountedLayout(61, 0, 8, 4), "");
  EXPECT_EQ(AccountedLayout(94, 1, 4, 12), "");
  // Embedding alone in the first stage when each stage holds one "layer".
  EXPECT_EQ(AccountedLayout(126, 0, 16, 8), "E|(t|)*126L");
}

TEST(UniformPipeline, SplitsEvenlyOrExplains) {
  auto plan = UniformPipeline(48, 0, 2, 2);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->Stage(1, 1).layers.front(),
            36);  // virtual stage 3 of 4, 12 each
  auto uneven = UniformPipeline(61, 1, 8, 4);
  ASSERT_FALSE(uneven);
  EXPECT_NE(uneven.error().message.find("not divisible"), std::string::npos);
}

}  // namespace
}  // namespace moesim::models
