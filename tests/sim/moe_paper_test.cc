// Held-out checks against NVIDIA, "Scalable Training of Mixture-of-Experts
// Models with Megatron Core" (arXiv 2603.07685, v2): no table row or fitted
// factor comes from it.
//
// The EP exchanges against the one published table that times both
// dispatchers at the runs' own shape on both platforms (section 4.2.2,
// Table 7: "EP Scaling Performance for HybridEP and all-to-all (in us)";
// hidden 7168, sequence 4096, 256
// experts, EP 8-64 on GB200 NVL72 and on H100; "communication latency
// only", neither permutation nor host). The replay's figures come from
// other sources (HybridEP: DeepEP's Hybrid-EP README kernel-only rates;
// all-to-all: the network model), so the table is a held-out check, not a
// calibration input.
#include <gtest/gtest.h>

#include <iterator>
#include <string>

#include "tests/sim/simulate.h"

namespace moesim::sim {
namespace {

struct Table7Point {
  const char* system;
  const char* dispatcher;
  int ep;
  double dispatch_us, combine_us;  // as published
};

constexpr Table7Point kTable7[] = {
    {"gb200-nvl72", "hybridep", 8, 391, 353},
    {"gb200-nvl72", "hybridep", 16, 578, 527},
    {"gb200-nvl72", "hybridep", 32, 612, 646},
    {"gb200-nvl72", "hybridep", 64, 675, 744},
    {"gb200-nvl72", "alltoall", 8, 735, 741},
    {"gb200-nvl72", "alltoall", 16, 743, 765},
    {"gb200-nvl72", "alltoall", 32, 769, 758},
    {"gb200-nvl72", "alltoall", 64, 930, 827},
    {"dgx-h100", "hybridep", 8, 661, 624},
    {"dgx-h100", "hybridep", 16, 1485, 1688},
    {"dgx-h100", "hybridep", 32, 3064, 3088},
    {"dgx-h100", "hybridep", 64, 4626, 4398},
    {"dgx-h100", "alltoall", 8, 1265, 1277},
    {"dgx-h100", "alltoall", 16, 5774, 5628},
    {"dgx-h100", "alltoall", 32, 8059, 7815},
    {"dgx-h100", "alltoall", 64, 9164, 8727},
};

// One MoE layer's dispatch + combine in the replay, in us: DeepSeek-V3
// (hidden 7168, top-8 of 256), one 4096-token micro-batch per rank, BF16,
// EP over all `ep` GPUs. The EP stream of a step carries each MoE layer's
// dispatch and combine forward and their mirrors backward (the same bytes);
// the difference of 8 and 4 decoder layers is 4 MoE layers, which leaves
// out DeepSeek-V3's dense first layers.
double ReplayedDispatchPlusCombineUs(const Table7Point& p) {
  auto ep_seconds = [&](int layers) {
    const std::string text =
        std::string("model: \"deepseek-v3\" system: \"") + p.system +
        "\" num_gpus: " + std::to_string(p.ep) +
        " seq_length: 4096 precision: \"bf16\" mtp_num_layers: 0"
        " num_layers: " +
        std::to_string(layers) + " dispatcher: \"" + p.dispatcher +
        "\" layout { expert_model_parallel_size: " + std::to_string(p.ep) +
        " micro_batch_size: 1 global_batch_size: " + std::to_string(p.ep) +
        " }";
    const StepResult r = test_support::Simulate(test_support::Resolve(text));
    return r.comm_s.at("ep").total_s;
  };
  return (ep_seconds(8) - ep_seconds(4)) / 4 / 2 * 1e6;
}

// Agreement: every point within 30% on GB200 (one NVLink domain) and 45%
// on H100 (8-GPU nodes over InfiniBand from EP16), the replay's errors as
// of this test (GB200 -15..+17%, H100 +1..+38%; docs/accuracy.md "Validation").
// The paper's findings: HybridEP beats all-to-all at every EP size on H100
// ("consistently outperforms all-to-all"), by more across H100 nodes than
// inside GB200's NVLink domain at the same EP size ("larger gains in
// inter-node scenarios": 3.5x, 2.6x, 2.0x against 1.4x, 1.2x, 1.2x at
// EP16, 32, 64); and the H100 all-to-all jumps once EP leaves the node
// (EP8 -> EP16 at least 3x: 1265 + 1277 -> 5774 + 5628 us).
TEST(Dispatchers, MegatronCoreMoePaperTable7) {
  double replayed[std::size(kTable7)];
  for (size_t i = 0; i < std::size(kTable7); ++i) {
    const Table7Point& p = kTable7[i];
    SCOPED_TRACE(std::string(p.system) + " " + p.dispatcher + " EP" +
                 std::to_string(p.ep));
    replayed[i] = ReplayedDispatchPlusCombineUs(p);
    const double published = p.dispatch_us + p.combine_us;
    const double tolerance =
        std::string(p.system) == "gb200-nvl72" ? 0.30 : 0.45;
    EXPECT_NEAR(replayed[i] / published, 1.0, tolerance)
        << "replayed " << replayed[i] << " us, published " << published;
  }
  // Rows 0-3 / 4-7: GB200 HybridEP / all-to-all; 8-11 / 12-15: H100.
  for (int k = 0; k < 4; ++k) {
    EXPECT_LT(replayed[8 + k], replayed[12 + k])
        << "H100 EP" << kTable7[8 + k].ep;
    if (k == 0) continue;  // EP8 is one node on both
    EXPECT_GT(replayed[12 + k] / replayed[8 + k], replayed[4 + k] / replayed[k])
        << "EP" << kTable7[8 + k].ep << ": HybridEP's gain across H100 nodes";
  }
  EXPECT_GT(replayed[13] / replayed[12], 3.0);
}

// Section 4.3.6: partial CUDA graphs (attn, moe_router, moe_preprocess)
// "achieve 10% end-to-end speedup with about 7 GB extra memory on
// DeepSeek-V3 GB200 training", the paper's GB200 layout (Table 17 and
// appendix B: 256 GPUs, TP1 PP4 VPP4 EP64, MBS 1, GBS 8192, MXFP8,
// HybridEP, mlp recompute, EP overlap off) with Megatron-Bridge's
// 16-stage layout (runs.csv ps2604-deepseek-v3-gb200-256g-mxfp8). The
// replay's speedup is 12%, asserted within 5 points of the paper's. (Its
// memory is not checked: the TE-scoped graph pool is a flat 2 GiB,
// models/memory.cc kTeGraphGiB, against the paper's "about 7 GB".)
TEST(CudaGraphs, PartialGraphsOnDeepSeekV3Gb200AsThePaperMeasures) {
  auto run = [](const char* scope) {
    return test_support::Simulate(test_support::Resolve(
        std::string(R"(model: "deepseek-v3" system: "gb200-nvl72"
        num_gpus: 256 seq_length: 4096 precision: "mxfp8"
        dispatcher: "hybridep" cuda_graph: ")") +
        scope + R"(" fp8_param_gather: true
        recompute { granularity: "selective" modules: "mlp" }
        layout { expert_model_parallel_size: 64
                 pipeline_model_parallel_size: 4
                 virtual_pipeline_model_parallel_size: 4
                 pipeline_model_parallel_layout: "Etttt|(tttt|)*14tmL"
                 micro_batch_size: 1 global_batch_size: 8192 })"));
  };
  const StepResult eager = run("none");
  const StepResult graphed = run("te:attn;moe_router;moe_preprocess");
  EXPECT_NEAR(eager.step_time_s / graphed.step_time_s, 1.10, 0.05);
}

}  // namespace
}  // namespace moesim::sim
