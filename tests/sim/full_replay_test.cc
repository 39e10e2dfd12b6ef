// The full-rank replay (ReplayOptions::full): every rank on its own
// streams, collectives as joint ops among their group's members. Expected
// values are derived from the mechanism: a join starts at its last member's
// arrival, so identical members reproduce the symmetric timeline, and a slow
// member delays everyone it shares a collective with.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "scenarios/scenario.h"
#include "sim/op_pricing.h"
#include "sim/replay.h"
#include "tests/sim/simulate.h"
#include "tests/sim/trace_check.h"

namespace moesim::sim {
namespace {

using models::ExpertLoads;
using test_support::Resolve;

StepResult Simulate(const scenarios::ResolvedScenario& s, bool full,
                    std::vector<Straggler> stragglers = {}, bool trace = false,
                    NetworkKind network = NetworkKind::kAnalytical) {
  ReplayOptions options;
  options.full = full;
  options.stragglers = std::move(stragglers);
  options.trace = trace;
  options.network = network;
  return test_support::Simulate(s, options);
}

// Dense, TP2 x PP2 x DP4.
constexpr const char* kDenseTpPp = R"(
model: "llama3-8b" system: "dgx-h100" num_gpus: 16 seq_length: 4096
precision: "bf16"
layout { tensor_model_parallel_size: 2 pipeline_model_parallel_size: 2
         micro_batch_size: 1 global_batch_size: 32 })";

// DeepSeek-V3 trimmed to 8 layers: MLA, 256 experts over EP8, PP4 x VPP2,
// DeepEP, FP8 blockwise.
constexpr const char* kDeepSeekEpVpp = R"(
model: "deepseek-v3" system: "dgx-h100" num_gpus: 32 seq_length: 4096
num_layers: 8 mtp_num_layers: 0 precision: "fp8-block" dispatcher: "deepep"
layout { expert_model_parallel_size: 8 pipeline_model_parallel_size: 4
         virtual_pipeline_model_parallel_size: 2
         micro_batch_size: 1 global_batch_size: 32 })";

// The same with EP overlap (Megatron's merged forward-backward 1F1B).
constexpr const char* kDeepSeekEpOverlap = R"(
model: "deepseek-v3" system: "dgx-h100" num_gpus: 32 seq_length: 4096
num_layers: 8 mtp_num_layers: 0 precision: "fp8-block" dispatcher: "deepep"
overlap_moe_expert_parallel_comm: true
layout { expert_model_parallel_size: 8 pipeline_model_parallel_size: 4
         virtual_pipeline_model_parallel_size: 2
         micro_batch_size: 1 global_batch_size: 32 })";

// The same with --delay-wgrad-compute: the merged schedule's own backward
// template (weight gradients deferred past the exchanges) is joined and
// retargeted like the plain one.
constexpr const char* kDeepSeekDelayWgrad = R"(
model: "deepseek-v3" system: "dgx-h100" num_gpus: 32 seq_length: 4096
num_layers: 8 mtp_num_layers: 0 precision: "fp8-block" dispatcher: "deepep"
overlap_moe_expert_parallel_comm: true delay_wgrad_compute: true
layout { expert_model_parallel_size: 8 pipeline_model_parallel_size: 4
         virtual_pipeline_model_parallel_size: 2
         micro_batch_size: 1 global_batch_size: 32 })";

// Long context: CP4 (the p2p ring) x TP2 x DP2 at 32K.
constexpr const char* kDenseCp = R"(
model: "llama3-8b" system: "dgx-h100" num_gpus: 16 seq_length: 32768
precision: "bf16"
layout { tensor_model_parallel_size: 2 context_parallel_size: 4
         micro_batch_size: 1 global_batch_size: 8 })";

// Full and symmetric agree on layouts without imbalance. Why: every rank of
// a stage is priced with the stage representative's templates and runs the
// same schedule, so by induction over the timeline each member of a group
// reaches each joint op at the very time the representative does; the join
// then starts at that time (the last arrival is everyone's arrival) and
// lasts the representative's price. Every rank's timeline is the
// representative's, so the step (max over ranks) is the symmetric step; the
// 1% allows only for rounding, and in fact they agree to the picosecond.
TEST(FullReplay, AgreesWithSymmetricOnSymmetricLayouts) {
  for (const char* text : {kDenseTpPp, kDeepSeekEpVpp, kDeepSeekEpOverlap,
                           kDeepSeekDelayWgrad, kDenseCp}) {
    const scenarios::ResolvedScenario s = Resolve(text);
    const StepResult sym = Simulate(s, false);
    const StepResult full = Simulate(s, true);
    ASSERT_GT(sym.step_time_s, 0) << text;
    EXPECT_NEAR(full.step_time_s / sym.step_time_s, 1.0, 0.01) << text;
    EXPECT_EQ(full.step_time_s, sym.step_time_s) << text;
    EXPECT_TRUE(full.full);
    EXPECT_EQ(full.ranks.size(), static_cast<size_t>(s.parallel.num_gpus()));
    // Per stage, the mean over ranks is the representative's figure.
    ASSERT_EQ(full.stages.size(), sym.stages.size());
    for (size_t r = 0; r < sym.stages.size(); ++r) {
      EXPECT_NEAR(full.stages[r].compute_s, sym.stages[r].compute_s,
                  1e-9 * sym.stages[r].compute_s + 1e-12);
      EXPECT_EQ(full.stages[r].ranks, s.parallel.num_gpus() / s.parallel.pp);
    }
  }
}

// The same on the flow network, where every transfer's flows share links
// with whatever else runs. The symmetric mode plays only the
// representative's transfers; the full mode plays every rank's, each on its
// own group's GPUs and, for a CP ring hop, from the rank to its own ring
// neighbour (StepBuilder::RetargetTransfers). On these DGX H100 layouts no
// two ranks' transfers share a directed link (NVSwitch ports are per GPU
// and direction, a node's GPUs sit on different IB rails), so the full step
// is the symmetric one, to the picosecond. The 8-GPU CP ring is the case
// that tells: priced as the representative's hop on every rank, its eight
// K/V hops would all cross the same NVLink ports and the step would grow
// by about a tenth.
TEST(FullReplay, AgreesWithSymmetricOnTheFlowNetwork) {
  constexpr const char* kCpRingOneNode = R"(
    model: "llama3-8b" system: "dgx-h100" num_gpus: 8 seq_length: 16384
    precision: "bf16"
    layout { context_parallel_size: 8 micro_batch_size: 1
             global_batch_size: 2 })";
  for (const char* text : {kDenseTpPp, kDeepSeekEpVpp, kDeepSeekEpOverlap,
                           kDeepSeekDelayWgrad, kDenseCp, kCpRingOneNode}) {
    const scenarios::ResolvedScenario s = Resolve(text);
    const StepResult sym = Simulate(s, false, {}, false, NetworkKind::kFlow);
    const StepResult full = Simulate(s, true, {}, false, NetworkKind::kFlow);
    ASSERT_GT(sym.step_time_s, 0) << text;
    EXPECT_EQ(full.step_time_s, sym.step_time_s) << text;
    EXPECT_EQ(full.ranks.size(), static_cast<size_t>(s.parallel.num_gpus()));
    for (const char* kind : {"tp", "cp", "ep", "dp"}) {
      EXPECT_NEAR(full.comm_s.at(kind).total_s, sym.comm_s.at(kind).total_s,
                  1e-9 * sym.comm_s.at(kind).total_s + 1e-12)
          << text << " " << kind;
    }
  }
}

// A straggler on a pure data-parallel layout (llama3-8b, DP8, no PP, four
// micro-batches per rank). Ranks meet only at the DP collectives: the
// parameter all-gathers before the first forward and the gradient
// reduce-scatters as the last backward completes its buckets. Rank 3's
// kernels take F = 1.5 times longer, so it reaches the last reduce-scatter
// (F - 1) x C later, C its compute time at full speed; everyone waits for it
// there, so the step grows by about (F - 1) x C: F x (its compute share)
// of the step, less the share it had. The optimizer (Adam) after the last
// reduce-scatter is also slowed on rank 3 alone, hence "about": within 5% of
// the step. Every rank's last op ends after that wait.
TEST(FullReplay, StragglerSlowsEveryRankOfAPureDpLayout) {
  const scenarios::ResolvedScenario s = Resolve(R"(
    model: "llama3-8b" system: "dgx-h100" num_gpus: 8 seq_length: 4096
    precision: "bf16"
    layout { micro_batch_size: 1 global_batch_size: 32 })");
  ASSERT_EQ(s.parallel.dp, 8);
  const double factor = 1.5;
  // The same on both networks: the DP collectives are where ranks meet.
  for (const NetworkKind network :
       {NetworkKind::kAnalytical, NetworkKind::kFlow}) {
    SCOPED_TRACE(network == NetworkKind::kFlow ? "flow" : "analytical");
    const StepResult base = Simulate(s, true, {}, false, network);
    const StepResult slow = Simulate(s, true, {{3, factor}}, false, network);
    const double compute_s = base.ranks[3].compute_s;
    const double expected = base.step_time_s + (factor - 1) * compute_s;
    EXPECT_NEAR(slow.step_time_s / expected, 1.0, 0.05)
        << "base " << base.step_time_s << " s, compute " << compute_s << " s";
    // The straggler is the slowest rank, with F times the compute.
    EXPECT_EQ(slow.slowest_rank, 3);
    EXPECT_NEAR(slow.ranks[3].compute_s / compute_s, factor, 0.01);
    // Everyone waited for it at the last reduce-scatter.
    for (const RankTime& rank : slow.ranks) {
      EXPECT_GT(rank.finish_s,
                base.step_time_s + 0.9 * (factor - 1) * compute_s)
          << "rank " << rank.rank;
    }
    // Without the straggler every rank ends together.
    for (const RankTime& rank : base.ranks) {
      EXPECT_NEAR(rank.finish_s, base.step_time_s, 1e-9);
    }
  }
}

// Routing skew (Zipf s = 1.2 over Qwen3-30B-A3B's 128 experts, EP8): each EP
// rank's grouped GEMMs carry its own routed tokens (ExpertLoads), so they
// differ by rank; the busiest rank is priced exactly as the symmetric mode
// prices every rank, and every other rank waits for it at each dispatch
// join, so the step matches the symmetric one (2%: the other ranks' shorter
// kernels can only let their host threads run further ahead).
TEST(FullReplay, RoutingSkewGivesEachEpRankItsOwnGemmsAndTheSameStep) {
  const scenarios::ResolvedScenario s = Resolve(R"(
    model: "qwen3-30b-a3b" system: "dgx-h100" num_gpus: 16 seq_length: 4096
    precision: "bf16" routing: "dropless_natural" moe_routing_skew: 1.2
    layout { pipeline_model_parallel_size: 2 expert_model_parallel_size: 8
             micro_batch_size: 1 global_batch_size: 32 })");
  const StepResult sym = Simulate(s, false);
  const StepResult full = Simulate(s, true);
  EXPECT_NEAR(full.step_time_s / sym.step_time_s, 1.0, 0.02);
  // Stage 0 holds ranks 0-7, one EP group (EP rank j = rank j).
  const std::vector<double> loads = ExpertLoads(128, 8, 1.2);
  const int busiest = static_cast<int>(
      std::max_element(loads.begin(), loads.end()) - loads.begin());
  const int lightest = static_cast<int>(
      std::min_element(loads.begin(), loads.end()) - loads.begin());
  ASSERT_GT(loads[busiest] / loads[lightest], 1.1);
  double most = 0;
  int most_rank = -1;
  for (int rank = 0; rank < 8; ++rank) {
    const double g = full.ranks[rank].grouped_gemm_s;
    if (g > most) {
      most = g;
      most_rank = rank;
    }
  }
  EXPECT_EQ(most_rank, busiest);
  EXPECT_LT(full.ranks[lightest].grouped_gemm_s, 0.95 * most);
  // The busiest rank's grouped GEMMs are the symmetric representative's.
  EXPECT_NEAR(most / sym.ranks[0].grouped_gemm_s, 1.0, 1e-9);
}

// Same inputs, same bytes: the per-rank figures and the trace (Chrome JSON;
// in full mode a bounded set of ranks) of two full replays.
TEST(FullReplay, TwoRunsAreIdenticalAndTheTraceIsBounded) {
  const scenarios::ResolvedScenario s = Resolve(kDeepSeekEpVpp);
  const StepResult a = Simulate(s, true, {{5, 1.25}}, true);
  const StepResult b = Simulate(s, true, {{5, 1.25}}, true);
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    EXPECT_EQ(a.ranks[i].finish_s, b.ranks[i].finish_s);
    EXPECT_EQ(a.ranks[i].compute_s, b.ranks[i].compute_s);
  }
  EXPECT_EQ(a.trace, b.trace);
  EXPECT_TRUE(CheckChromeTrace(a.trace));
  // Kept: stage firsts 0, 8, 16, 24, straggler 5, and the slowest rank's
  // stage (0-7): ranks 0-7, 8, 16, 24.
  EXPECT_NE(a.trace.find("\"stage0.rank5\""), std::string::npos);
  EXPECT_NE(a.trace.find("\"stage3.rank24\""), std::string::npos);
  EXPECT_EQ(a.trace.find("\"stage1.rank9\""), std::string::npos);
}

// The full mode's rules, before anything is built.
TEST(FullReplay, RefusesWhatItCannotDo) {
  const scenarios::ResolvedScenario s = Resolve(kDenseTpPp);
  ReplayOptions options;
  options.stragglers = {{1, 2.0}};
  EXPECT_FALSE(CheckFullMode(s, options));  // stragglers need full mode
  options.full = true;
  EXPECT_TRUE(CheckFullMode(s, options));
  options.stragglers = {{16, 2.0}};  // 16 GPUs: ranks 0-15
  EXPECT_FALSE(CheckFullMode(s, options));
  options.stragglers = {{1, 0.5}};
  EXPECT_FALSE(CheckFullMode(s, options));
  options.stragglers = {{1, std::nan("")}};
  EXPECT_FALSE(CheckFullMode(s, options));
  options.stragglers.clear();
  options.network = NetworkKind::kFlow;  // every rank's flows, since 2026-12
  EXPECT_TRUE(CheckFullMode(s, options));
}

}  // namespace
}  // namespace moesim::sim
