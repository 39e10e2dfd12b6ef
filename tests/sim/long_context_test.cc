// The seeds' long-context claims, replayed (../shared/seeds/
// 000_be0c97d8f9802a01.txt, the long-context skill; seeds_notes.md s1), and
// the CP exchange's warning.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/memory.h"
#include "scenarios/scenario.h"
#include "sim/replay.h"
#include "tests/sim/simulate.h"

namespace moesim::sim {
namespace {

scenarios::Scenario Default() {
  auto spec = scenarios::LoadScenario(std::string(MOESIM_SOURCE_DIR) +
                                      "/scenarios/default.textproto");
  EXPECT_TRUE(spec) << spec.error().message;
  return spec ? *spec : scenarios::Scenario{};
}

struct Point {
  int seq = 0;
  double tflops = 0;
  bool fits = false;
};

// The default's layout (TP1 EP32 PP8 VPP4, the skill's DSV3 family) at
// `seq` tokens with CP = seq / 4096 and 16.8M tokens a step (the default's
// 128 x 128K), on 256 H100s (512 at CP64, where TP1 x CP x PP8 needs
// them), with the exchange `type` (a2a+p2p: the inner a2a over the 8 CP
// ranks of a node).
Point DeepSeekAt(int seq, const std::string& type) {
  scenarios::Scenario s = Default();
  const int cp = seq / 4096;
  s.set_seq_length(seq);
  s.set_num_gpus(cp * 8 > 256 ? cp * 8 : 256);
  s.mutable_layout()->set_context_parallel_size(cp);
  s.mutable_layout()->set_global_batch_size(128 * 131072 / seq);
  s.set_cp_comm_type(type);
  s.clear_hierarchical_context_parallel_sizes();
  if (type == "a2a+p2p") {
    s.add_hierarchical_context_parallel_sizes(8);
    s.add_hierarchical_context_parallel_sizes(cp / 8);
  }
  auto r = scenarios::Resolve(s, "test");
  EXPECT_TRUE(r) << r.error().message;
  if (!r) return {};
  const StepResult step = test_support::Simulate(*r);
  const models::MemoryEstimate m =
      models::EstimateMemory(r->model, r->pipeline, r->parallel, r->training,
                             r->system.gpu().memory_gib() * models::kGiB);
  return {seq, step.tflops_per_gpu, m.fits};
}

std::string Figures(const std::vector<Point>& points) {
  std::string out;
  for (const Point& p : points) {
    out += std::to_string(p.seq / 1024) + "K " + std::to_string(p.tflops) +
           (p.fits ? "" : " (OOM)") + "; ";
  }
  return out;
}

// Seed: "DSV3 on H100 ... as long as CP is raised to match, throughput stays
// within a narrow band from mid-length to ultra-long context ... with a
// well-chosen layout long context does not immediately make utilization
// plunge". With CP = seq / 4096 (the skill's sizing rule) and the exchange
// the evidence names (scenarios/default.textproto: Megatron's p2p ring while
// the CP group stays in a node, a2a+p2p with the a2a over the node beyond),
// no point from 16K to 256K falls more than 8% below the 32K point, and
// every layout fits. The p2p ring across nodes, by contrast, plunges: its
// 4K-token K/V hop over one NIC (6.9 ms) outlasts a step's attention
// (1.2 ms), and the 128K step loses more than half its throughput.
// Not asserted: the points above the 32K one. The replay rises with the
// length (attention, 80% of the FLOPs at 128K, runs at about 500 TFLOPS in
// BF16 against the FP8 MoE layers' 300-odd); the skill's band would put
// them within 8% too (see the long-context issue's note).
TEST(LongContext, DeepSeekV3H100HoldsThroughputAlongCpSeqOver4096) {
  std::vector<Point> points;
  for (int seq : {16384, 32768, 65536, 131072, 262144}) {
    points.push_back(DeepSeekAt(seq, seq / 4096 <= 8 ? "p2p" : "a2a+p2p"));
  }
  const double mid = points[1].tflops;
  for (const Point& p : points) {
    EXPECT_TRUE(p.fits) << Figures(points);
    EXPECT_GE(p.tflops, 0.92 * mid) << Figures(points);
  }
  const Point p2p = DeepSeekAt(131072, "p2p");
  EXPECT_LT(p2p.tflops, 0.5 * points[3].tflops)
      << "p2p " << p2p.tflops << " against " << Figures(points);
}

// Seed: "Qwen3 235B shows that on NVL72, with TP, CP and HybridEP
// coordinated, long context still runs efficiently ... the best 128K-class
// configuration keeps a very high efficiency". The seed layout at 128K
// (scenarios/seeds/qwen3-235b-128k-gb200.textproto: TP4 CP4 EP32 PP4 VPP12,
// BF16, HybridEP, moe_act + layernorm recompute, attn + moe_router +
// moe_preprocess graphs) reaches at least the MFU of the same knobs at 4K
// with the CP and TP a 4K run needs none of (TP1 CP1, the Bridge 4K recipes'
// TP, EP32 PP4 VPP12 on the same 128 GB200s and the same tokens a step).
TEST(LongContext, Qwen3235bGb200At128kKeepsIts4kMfu) {
  auto seed = scenarios::LoadScenario(
      std::string(MOESIM_SOURCE_DIR) +
      "/scenarios/seeds/qwen3-235b-128k-gb200.textproto");
  ASSERT_TRUE(seed) << seed.error().message;
  auto replay = [](const scenarios::Scenario& s) {
    auto r = scenarios::Resolve(s, "test");
    EXPECT_TRUE(r) << r.error().message;
    return r ? test_support::Simulate(*r).mfu : 0.0;
  };
  const double long_mfu = replay(*seed);
  scenarios::Scenario short_run = *seed;
  short_run.set_seq_length(4096);
  short_run.mutable_layout()->set_tensor_model_parallel_size(1);
  short_run.mutable_layout()->set_context_parallel_size(1);
  short_run.mutable_layout()->set_global_batch_size(
      seed->layout().global_batch_size() * 131072 / 4096);
  short_run.clear_cp_comm_type();
  const double short_mfu = replay(short_run);
  EXPECT_GE(long_mfu, short_mfu)
      << "MFU at 128K " << long_mfu << ", at 4K " << short_mfu;
}

// `moesim run` warns about a p2p ring that crosses NVLink domains with hops
// longer than its steps' attention (the seed layout with --cp-comm-type
// p2p: 6.9 ms against 1.2 ms) and proposes the a2a+p2p split whose inner
// group is the node (8 of CP 32: "8,4"); with that split (the shipped
// default) the outer ring's step attention outlasts its hop and nothing is
// said.
TEST(LongContext, CrossDomainP2pRingThatCannotHideWarns) {
  scenarios::Scenario s = Default();
  auto shipped = scenarios::Resolve(s, "test");
  ASSERT_TRUE(shipped) << shipped.error().message;
  const StepResult quiet = test_support::Simulate(*shipped);
  ASSERT_TRUE(quiet.cp_ring.has_value());
  EXPECT_LT(quiet.cp_ring->hop_s, quiet.cp_ring->tile_s);
  EXPECT_TRUE(quiet.warnings.empty());

  s.set_cp_comm_type("p2p");
  s.clear_hierarchical_context_parallel_sizes();
  auto ring = scenarios::Resolve(s, "test");
  ASSERT_TRUE(ring) << ring.error().message;
  const StepResult warned = test_support::Simulate(*ring);
  ASSERT_TRUE(warned.cp_ring.has_value());
  EXPECT_TRUE(warned.cp_ring->crosses_domains);
  EXPECT_EQ(warned.cp_ring->ring, 32);
  EXPECT_GT(warned.cp_ring->hop_s, 5 * warned.cp_ring->tile_s);
  ASSERT_EQ(warned.warnings.size(), 1u);
  EXPECT_NE(warned.warnings[0].find("--hierarchical-cp-sizes 8,4"),
            std::string::npos)
      << warned.warnings[0];
}

}  // namespace
}  // namespace moesim::sim
