// A p2p CP ring's steady steps added as one run of ops (op_pricing.cc,
// MergedSteps) against every step its own ops (--every-ring-step): the
// step, and everything computed from whole streams, as before.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "scenarios/scenario.h"
#include "sim/replay.h"
#include "tests/sim/simulate.h"

namespace moesim::sim {
namespace {

// The default scenario (DeepSeek-V3, PP8 VPP4 EP32 on 256 H100s) with a
// p2p ring over `cp` ranks at `seq` tokens, 16 micro-batches.
// nullopt (with a test failure) when it does not resolve.
std::optional<scenarios::ResolvedScenario> DeepSeekRing(
    int seq, int cp, bool fp8_attention = false) {
  constexpr int kGpus = 256;
  auto spec = scenarios::LoadScenario(std::string(MOESIM_SOURCE_DIR) +
                                      "/scenarios/default.textproto");
  if (!spec) {
    ADD_FAILURE() << spec.error().message;
    return std::nullopt;
  }
  scenarios::Scenario s = *spec;
  s.set_seq_length(seq);
  s.set_num_gpus(kGpus);
  s.mutable_layout()->set_context_parallel_size(cp);
  s.mutable_layout()->set_global_batch_size(16 * kGpus / (cp * 8));
  s.set_cp_comm_type("p2p");
  s.clear_hierarchical_context_parallel_sizes();
  if (fp8_attention) {
    s.set_precision("fp8-cs");
    s.set_fp8_dot_product_attention(true);
  }
  auto r = scenarios::Resolve(s, "test");
  if (!r) {
    ADD_FAILURE() << r.error().message;
    return std::nullopt;
  }
  return *r;
}

struct Pair {
  StepResult merged, every;
};

Pair Replay(const std::optional<scenarios::ResolvedScenario>& s,
            bool full = false) {
  if (!s) return {};  // DeepSeekRing failed the test
  ReplayOptions merged, every;
  merged.full = every.full = full;
  every.merge_ring_steps = false;
  return {test_support::Simulate(*s, merged),
          test_support::Simulate(*s, every)};
}

// What holds for every ring: the step to the picosecond, and each stage's
// compute, idle time, host time and CP exchange (whole-stream interval
// unions, so exact); the merged replay has fewer ops.
void ExpectSameStep(const Pair& p, int ring) {
  ASSERT_TRUE(p.merged.cp_ring);
  EXPECT_EQ(p.merged.cp_ring->merged_steps, ring - 3);
  ASSERT_TRUE(p.every.cp_ring);
  EXPECT_EQ(p.every.cp_ring->merged_steps, 0);
  EXPECT_EQ(p.merged.step_time_s, p.every.step_time_s);
  EXPECT_LT(p.merged.ops, p.every.ops);
  ASSERT_EQ(p.merged.stages.size(), p.every.stages.size());
  for (size_t i = 0; i < p.every.stages.size(); ++i) {
    const StageTime &a = p.merged.stages[i], &b = p.every.stages[i];
    EXPECT_EQ(a.compute_s, b.compute_s) << "stage " << i;
    EXPECT_EQ(a.idle_s, b.idle_s) << "stage " << i;
    // A host segment's launch time sums its ops' host seconds: a merged
    // op's are one product, not a sum of steps, so each segment's may round
    // a picosecond apart (about 1e-11 of the host's time here).
    EXPECT_NEAR(a.host_busy_s, b.host_busy_s, 1e-9 * b.host_busy_s)
        << "stage " << i;
    EXPECT_NEAR(a.host_wait_s, b.host_wait_s, 1e-9 * (1 + b.host_wait_s))
        << "stage " << i;
  }
  EXPECT_EQ(p.merged.comm_s.at("cp").total_s, p.every.comm_s.at("cp").total_s);
  EXPECT_EQ(p.merged.comm_s.at("cp").exposed_s,
            p.every.comm_s.at("cp").exposed_s);
  for (const auto& [name, seconds] : p.every.time_by_op_class_s) {
    EXPECT_NEAR(p.merged.time_by_op_class_s.at(name), seconds, 1e-9 * seconds)
        << name;
  }
  for (const auto& [kind, seconds] : p.every.critical_path_s) {
    EXPECT_NEAR(p.merged.critical_path_s.at(kind), seconds,
                1e-9 * (1 + seconds))
        << kind;
  }
}

// CP8 inside a node at 64K: a hop of K/V over NVLink is shorter than a
// tile, so the ring hides its exchange; the merged steps keep the compute
// back to back and each hop inside it, so every stream's exposure is the
// same too.
TEST(RingMerge, HiddenRingReplaysTheSameStep) {
  const auto s = DeepSeekRing(65536, 8);
  const Pair p = Replay(s);
  ASSERT_TRUE(p.every.cp_ring);
  ASSERT_LT(p.every.cp_ring->hop_s, p.every.cp_ring->tile_s);
  ExpectSameStep(p, 8);
  for (const auto& [kind, comm] : p.every.comm_s) {
    EXPECT_EQ(p.merged.comm_s.at(kind).exposed_s, comm.exposed_s) << kind;
  }
}

// CP32 across nodes at 128K: each hop outlasts its tile (the exposed ring
// `run` warns about). The step, the compute and the CP exchange are the
// same; what runs beside the ring on other streams may overlap its
// compute differently (docs/replay.md).
TEST(RingMerge, ExposedRingReplaysTheSameStep) {
  const auto s = DeepSeekRing(131072, 32);
  const Pair p = Replay(s);
  ASSERT_TRUE(p.every.cp_ring);
  ASSERT_GT(p.every.cp_ring->hop_s, p.every.cp_ring->tile_s);
  ExpectSameStep(p, 32);
  EXPECT_LT(p.merged.ops, p.every.ops / 4);
}

// FP8 attention under a per-tensor recipe: the backward sends K/V alone and
// its dK/dV go home in one all-to-all, so step s's message does not wait
// for the dK/dV add; the merged steps still end where the ring did.
TEST(RingMerge, Fp8AttentionRingReplaysTheSameStep) {
  ExpectSameStep(Replay(DeepSeekRing(131072, 32, true)), 32);
  ExpectSameStep(Replay(DeepSeekRing(65536, 8, true)), 8);
}

// Every rank replayed, each with its own ring.
TEST(RingMerge, FullModeReplaysTheSameStep) {
  ExpectSameStep(Replay(DeepSeekRing(65536, 8), /*full=*/true), 8);
}

// A trace shows every step; a ring of 4 has no steps to merge.
TEST(RingMerge, NotForATraceNorAShortRing) {
  ReplayOptions trace;
  trace.trace = true;
  const auto cp8 = DeepSeekRing(65536, 8), cp4 = DeepSeekRing(32768, 4);
  ASSERT_TRUE(cp8 && cp4);
  const StepResult traced = test_support::Simulate(*cp8, trace);
  ASSERT_TRUE(traced.cp_ring);
  EXPECT_EQ(traced.cp_ring->merged_steps, 0);
  const StepResult short_ring = test_support::Simulate(*cp4);
  ASSERT_TRUE(short_ring.cp_ring);
  EXPECT_EQ(short_ring.cp_ring->merged_steps, 0);
}

}  // namespace
}  // namespace moesim::sim
