// Layer-level check of the calibration tables: Megatron's single-layer MoE
// benchmark on 8 H100s (EP8; calibration/validation/moe_layer.csv, from
// NVIDIA/Megatron-LM@d98e8a6 tests/functional_tests/.../moe_perf), forward and
// backward predicted op by op from the h100 tables and the network model.
#include "sim/moe_layer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

#include "sim/op_pricing.h"
#include "sim/replay.h"
#include "topology/system.h"
#include "util/csv.h"

namespace moesim::sim {
namespace {

// Group-limited routing of the DeepSeek proxy: 8 groups, 4 per token; one
// group per EP rank, so a token reaches exactly 4 ranks.
TEST(MoeLayer, DistinctRanksPerToken) {
  EXPECT_NEAR(DistinctRanksPerToken(32, 8, 8, 8, 4), 4.0, 1e-9);
  // Without groups: 8 * (1 - C(28, 8) / C(32, 8)) = 8 * (1 - 3108105 /
  // 10518300) = 5.636.
  EXPECT_NEAR(DistinctRanksPerToken(32, 8, 8), 8 * (1 - 3108105.0 / 10518300.0),
              1e-6);
  // Mixtral: 8 experts on 8 ranks, top-2: every expert on its own rank.
  EXPECT_NEAR(DistinctRanksPerToken(8, 2, 8), 2.0, 1e-9);
}

// The dgx-h100 network model and the h100 cost tables.
class MoeLayerOnH100 : public testing::Test {
 protected:
  void SetUp() override {
    auto system = topology::LoadSystem("dgx-h100");
    ASSERT_TRUE(system);
    auto network = topology::NetworkParamsFor(*system);
    ASSERT_TRUE(network) << network.error().message;
    auto tables = calibration::LoadTables("h100");
    ASSERT_TRUE(tables) << tables.error().message;
    network_ = std::move(*network);
    costs_.emplace(std::move(*tables), PeaksOf(*system));
  }
  topology::NetworkParams network_;
  std::optional<calibration::CostModel> costs_;
};

TEST_F(MoeLayerOnH100, MegatronBenchmarkOnH100Within15Percent) {
  auto runs = util::CsvTable::Load(std::string(MOESIM_SOURCE_DIR) +
                                   "/calibration/validation/moe_layer.csv");
  ASSERT_TRUE(runs) << runs.error().message;
  std::printf("%-10s %-9s %-9s %-4s %9s %9s %7s\n", "model", "dispatch",
              "precision", "dir", "measured", "moesim", "error");
  int checked = 0;
  for (size_t r = 0; r < runs->num_rows(); ++r) {
    const std::string model = runs->Get(r, "model");
    MoeLayerSpec s;
    s.tokens_per_gpu = std::stoll(runs->Get(r, "tokens_per_gpu"));
    s.hidden = std::stoll(runs->Get(r, "hidden"));
    s.moe_ffn_hidden = std::stoll(runs->Get(r, "moe_ffn_hidden"));
    s.experts = std::stoll(runs->Get(r, "experts"));
    s.topk = std::stoll(runs->Get(r, "topk"));
    // 0 for the DeepSeek proxy: the benchmark never builds its shared expert
    // (moe_layer.csv source).
    s.shared_expert_hidden = std::stoll(runs->Get(r, "shared_expert_hidden"));
    s.ep = std::stoll(runs->Get(r, "ep"));
    s.dispatcher = runs->Get(r, "dispatcher");
    if (model.find("deepseek") != std::string::npos) {
      // The proxy's group-limited routing: 8 groups, top-4 (moe_layer.csv).
      s.router_groups = 8;
      s.router_group_topk = 4;
    }
    const std::string precision = runs->Get(r, "precision");
    s.dtype = precision == "bf16" ? calibration::Dtype::kBf16
                                  : calibration::Dtype::kFp8;
    const topology::GroupShape ep{static_cast<int>(s.ep), 1,
                                  static_cast<int>(s.ep),
                                  topology::Tier::kNvlink};
    auto time = EstimateMoeLayer(s, *costs_, network_, ep);
    ASSERT_TRUE(time) << time.error().message;
    const bool bwd = runs->Get(r, "direction") == "bwd";
    if (r == 0 || std::getenv("MOESIM_VERBOSE")) {
      for (const MoeOp& op : time->ops) {
        std::printf("    %-28s %s %8.3f ms\n", op.name.c_str(),
                    op.backward ? "bwd" : "fwd", op.seconds * 1e3);
      }
    }
    const double measured = std::stod(runs->Get(r, "ms"));
    const double ours = (bwd ? time->backward_s : time->forward_s) * 1e3;
    const double error = (ours - measured) / measured * 100;
    std::printf("%-10s %-9s %-9s %-4s %9.3f %9.3f %+6.1f%%\n",
                model.substr(0, 10).c_str(), s.dispatcher.c_str(),
                precision.c_str(), bwd ? "bwd" : "fwd", measured, ours, error);
    // The DeepSeek proxy in BF16, every dispatcher, forward and backward,
    // within 15% (the bar). Printed, not asserted (known
    // differences, issue note):
    // - FP8 blockwise rows: the tables have no blockwise-scaled (1x128 /
    //   128x128) FP8 GEMM rows for H100, only per-tensor cuBLAS and DeepGEMM,
    //   and none of Transformer Engine's quantize/transpose kernels; moesim
    //   predicts FP8 15-30% faster than measured.
    // - Mixtral proxy backward: its per-expert GEMMs (8192 x 28672 x 4096)
    //   ran at ~0.83 of the 989 TFLOPS peak in this benchmark, above every
    //   published H100 cuBLAS row (MAMF 0.80); moesim is +20-27% there.
    if (precision == "bf16" && model == "deepseek_proxy") {
      EXPECT_LE(std::abs(error), 15.0)
          << model << " " << s.dispatcher << " " << precision;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6);  // 3 dispatchers x forward/backward
}

// The dispatcher is read with the scenario's words (scenarios/vocabulary.h),
// so an unknown one is refused with the list every other input gives.
TEST_F(MoeLayerOnH100, UnknownDispatcherNamesTheScenarioWords) {
  MoeLayerSpec s;
  s.dispatcher = "flex";
  const topology::GroupShape ep{8, 1, 8, topology::Tier::kNvlink};
  auto time = EstimateMoeLayer(s, *costs_, network_, ep);
  ASSERT_FALSE(time);
  EXPECT_EQ(time.error().message,
            "moe layer: dispatcher: unknown 'flex' (alltoall, deepep, "
            "hybridep)");
}

}  // namespace
}  // namespace moesim::sim
