// Property tests of the step replay: each expected value is derived from the
// mechanism (the pipeline schedule, the CP ring, the network model), not
// taken from a run of the code under test.
#include "sim/replay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <tuple>

#include "calibration/profile.h"
#include "models/dispatchers.h"
#include "models/layer_ops.h"
#include "models/memory.h"
#include "models/pipeline.h"
#include "models/pipeline_schedules.h"
#include "models/zoo.h"
#include "sim/pipeline_schedule.h"
#include "sim/step_stats.h"
#include "sim/template_emitter.h"
#include "tests/sim/simulate.h"
#include "tests/sim/trace_check.h"
#include "topology/system.h"

namespace moesim::sim {
namespace {

// ---- Pipeline schedule -----------------------------------------------------

// A compute-only pipeline: every chunk's forward takes f, its backward b, and
// stage-to-stage transfers take no time. Megatron's interleaved 1F1B leaves a
// bubble of (pp - 1) x (f + b) per stage, i.e. (pp - 1) / (vpp x m) of the
// ideal m x vpp x (f + b) (Narayanan et al., SC'21, section 2.2.2). A
// schedule that splits the backward runs its input gradient in b - w and its
// weight gradient in w.
Time ComputeOnlyPipeline(
    int pp, int vpp, int64_t m, Time f, Time b,
    models::PipelineScheduleKind kind = models::PipelineScheduleKind::kOneFOneB,
    Time w = Time::Zero()) {
  Engine engine;
  std::vector<StreamId> compute;
  for (int r = 0; r < pp; ++r) {
    compute.push_back(engine.Stream("stage" + std::to_string(r) + "/compute"));
  }
  PipelineCallbacks callbacks;
  callbacks.run = [&](int r, const models::ScheduleStep& step,
                      const std::vector<OpId>& entry) {
    const Time t = step.forward()                              ? f
                   : step.kind == models::StepKind::kBackward  ? b
                   : step.kind == models::StepKind::kInputGrad ? b - w
                                                               : w;
    return engine.Add(compute[r], t, entry, step.forward() ? "f" : "b");
  };
  callbacks.send = [&](int r, int, const models::ScheduleStep&, OpId done) {
    return engine.Add(compute[r], Time::Zero(), {done}, "send");
  };
  std::vector<OpId> chain(pp, -1);
  EmitPipeline(kind, pp, vpp, m, chain, callbacks);
  EXPECT_TRUE(engine.Run());
  return engine.makespan();
}

TEST(PipelineSchedule, ComputeOnlyBubbleIsPpMinusOneOverVppM) {
  const Time f = Time::Millis(1), b = Time::Millis(2);
  for (const int pp : {2, 4, 8}) {
    for (const int vpp : {1, 2, 4}) {
      for (const int64_t m : {int64_t{pp}, 2 * int64_t{pp}, 8 * int64_t{pp}}) {
        const Time ideal = Time::Picos(m * vpp * (f + b).picos());
        const Time makespan = ComputeOnlyPipeline(pp, vpp, m, f, b);
        const double bubble =
            static_cast<double>((makespan - ideal).picos()) / ideal.picos();
        EXPECT_NEAR(bubble, (pp - 1.0) / (vpp * m), 1e-12)
            << "pp " << pp << " vpp " << vpp << " m " << m;
      }
    }
  }
}

// ZB-H1 (Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, sec. 3.1
// and its Table 2): with the backward split into B (input gradient) and W
// (weight gradient), the bubble falls from 1F1B's (pp - 1)(F + B + W) to
// (pp - 1)(F + B - W) per stage: a third with F = B = W. Checked for
// unequal passes too, each W no longer than its F.
TEST(PipelineSchedule, ZeroBubbleH1BubbleIsPpMinusOneTimesFPlusBMinusW) {
  const int64_t ms = Time::Millis(1).picos();
  for (const auto& [f, b, w] : {std::tuple{1, 1, 1}, std::tuple{1, 2, 1},
                                std::tuple{2, 2, 1}, std::tuple{3, 2, 1}}) {
    const Time F = Time::Picos(f * ms), B = Time::Picos(b * ms),
               W = Time::Picos(w * ms);
    for (const int pp : {2, 4, 8}) {
      for (const int64_t m : {int64_t{pp}, 2 * int64_t{pp}, 8 * int64_t{pp}}) {
        const Time ideal = Time::Picos(m * (f + b + w) * ms);
        const Time zb = ComputeOnlyPipeline(
            pp, 1, m, F, B + W, models::PipelineScheduleKind::kZeroBubbleH1, W);
        EXPECT_EQ((zb - ideal).picos(), (pp - 1) * (f + b - w) * ms)
            << "F " << f << " B " << b << " W " << w << " pp " << pp << " m "
            << m;
        const Time one_f_one_b = ComputeOnlyPipeline(pp, 1, m, F, B + W);
        EXPECT_EQ((one_f_one_b - ideal).picos(), (pp - 1) * (f + b + w) * ms);
      }
    }
  }
}

// Each rank of ZB-H1 runs every forward, input gradient and weight gradient
// once, each micro-batch's in that order, with 1F1B's warm-up and at most
// `rank` weight gradients pending (the delay that fills the rank's tail;
// sail-sg/zero-bubble-pipeline-parallelism's quick ZB-H1 schedules.py).
TEST(PipelineSchedule, ZeroBubbleH1RunsEachPassOnceInOrder) {
  for (const int pp : {1, 2, 4, 8}) {
    for (const int64_t m : {int64_t{1}, int64_t{3}, 4 * int64_t{pp}}) {
      for (int r = 0; r < pp; ++r) {
        const std::unique_ptr<models::PipelineSchedule> s =
            models::MakeSchedule(models::PipelineScheduleKind::kZeroBubbleH1, r,
                                 pp, 1, m);
        EXPECT_EQ(s->warmup(), std::min<int64_t>(pp - r - 1, m));
        ASSERT_EQ(s->size(), 3 * m);
        std::vector<int> stage_of(m, 0);  // 0 none, 1 F, 2 B, 3 W
        int64_t f = 0, b = 0, w = 0, max_pending = 0;
        for (int64_t i = 0; i < s->size(); ++i) {
          const models::ScheduleStep step = (*s)[i];
          ASSERT_GE(step.microbatch, 0);
          ASSERT_LT(step.microbatch, m);
          int& at = stage_of[step.microbatch];
          switch (step.kind) {
            case models::StepKind::kForward:
              EXPECT_EQ(at, 0);
              EXPECT_EQ(step.microbatch, f++);
              at = 1;
              break;
            case models::StepKind::kInputGrad:
              EXPECT_EQ(at, 1);
              EXPECT_EQ(step.microbatch, b++);
              at = 2;
              break;
            case models::StepKind::kWeightGrad:
              EXPECT_EQ(at, 2);
              EXPECT_EQ(step.microbatch, w++);
              at = 3;
              break;
            case models::StepKind::kBackward:
              ADD_FAILURE() << "ZB-H1 splits every backward";
          }
          if (step.kind == models::StepKind::kInputGrad)
            max_pending = std::max(max_pending, b - w);
        }
        EXPECT_EQ(f, m);
        EXPECT_EQ(w, m);
        EXPECT_LE(max_pending, r + 1) << "pp " << pp << " rank " << r;
      }
    }
  }
}

// Megatron's warm-up count (schedules.py): (pp - rank - 1) without
// interleaving, (pp - rank - 1) x 2 + (vpp - 1) x pp with it; the stage then
// holds warm-up + 1 micro-batches' activations at most.
TEST(PipelineSchedule, InFlightEqualsMegatronWarmupFormula) {
  for (const int pp : {4, 8}) {
    for (const int vpp : {1, 2, 3}) {
      const int64_t m = 4 * pp;
      for (int r = 0; r < pp; ++r) {
        const models::OneFOneBSchedule s(r, pp, vpp, m);
        const int64_t warmup =
            vpp == 1 ? pp - r - 1 : (pp - r - 1) * 2 + (vpp - 1) * pp;
        EXPECT_EQ(s.warmup(), warmup);
        int64_t in_flight = 0, peak = 0, forwards_before_backward = -1;
        for (int64_t i = 0; i < s.size(); ++i) {
          in_flight += s[i].forward() ? 1 : -1;
          peak = std::max(peak, in_flight);
          if (!s[i].forward() && forwards_before_backward < 0) {
            forwards_before_backward = i;
          }
        }
        EXPECT_EQ(in_flight, 0);
        EXPECT_EQ(peak, warmup + 1);
        EXPECT_EQ(forwards_before_backward, warmup + 1);
      }
    }
  }
}

// get_schedule_table with 6 micro-batches on pp 4, vpp 2: one full group
// (micro-batches 0-3 through chunk 0 then chunk 1), then the remainder
// (4-5) through chunk 0 then chunk 1.
TEST(PipelineSchedule, ForwardTableWithPartialLastGroup) {
  const models::OneFOneBSchedule s(0, 4, 2, 6);
  const std::pair<int64_t, int> want[] = {{0, 0}, {1, 0}, {2, 0}, {3, 0},
                                          {0, 1}, {1, 1}, {2, 1}, {3, 1},
                                          {4, 0}, {5, 0}, {4, 1}, {5, 1}};
  for (int k = 0; k < 12; ++k) {
    EXPECT_EQ(s.Forward(k).microbatch, want[k].first) << k;
    EXPECT_EQ(s.Forward(k).chunk, want[k].second) << k;
    EXPECT_EQ(s.Backward(k).chunk, 1 - want[k].second) << k;
  }
}

// ---- Op pricing: CP ring and all-to-all -------------------------------------

using Fixture = test_support::PlatformFixture;
using models::ExpertLoads;
using models::RoutingImbalance;

RankContext Context(const Fixture& f, models::Group group,
                    std::vector<int> gpus) {
  RankContext rank;
  rank.costs = f.platform.costs.get();
  rank.network = &f.platform.network;
  rank.cluster = f.platform.cluster.get();
  for (int g = 0; g < kNumGroups; ++g) rank.groups[g] = {gpus.front()};
  rank.groups[static_cast<int>(group)] = gpus;
  rank.shapes[static_cast<int>(group)] =
      topology::ShapeOf(gpus, *f.platform.cluster);
  if (group == models::Group::kCp) rank.cp_hop = {gpus[0], gpus[1]};
  rank.ep = group == models::Group::kEp ? static_cast<int>(gpus.size()) : 1;
  return rank;
}

// Runs a template alone on a fresh engine; returns the makespan and the CP
// stream's exposed time.
std::pair<Time, double> RunAlone(const OpTemplate& t) {
  Engine engine;
  StepStreams streams;
  streams.class_s.resize(1);
  std::vector<OpId> ids;
  for (const TimedOp& op : t.ops) {
    std::vector<OpId> deps;
    for (const int d : op.deps) {
      if (d != kEntry) deps.push_back(ids[d]);
    }
    const std::string stream = std::string("s/") + StreamKindName(op.stream);
    const StreamId id = engine.Stream(stream);
    if (static_cast<size_t>(id) >= streams.streams.size()) {
      streams.streams.push_back({0, op.stream});
    }
    ids.push_back(engine.Add(id, op.duration, deps, op.name));
  }
  EXPECT_TRUE(engine.Run());
  const StepResult r = SummarizeStep(engine, streams, 1);
  return {engine.makespan(), r.comm_s.at("cp").exposed_s};
}

// Core attention of a DeepSeek-V3-sized MLA layer (128 heads, q/k 192, v
// 128) on 8K tokens with cp = 2: each rank holds 4K tokens; the ring has a
// causal diagonal block and one half block, and one K/V hop of
// 4096 x 128 x 320 x 2 B = 335.5 MB that runs beside the diagonal block.
models::LayerOp MlaAttention() {
  models::LayerOp op;
  op.name = "core_attn";
  op.kind = models::OpKind::kAttention;
  op.role = models::OpRole::kCoreAttn;
  op.attention = {.batch = 1,
                  .seq_q = 4096,
                  .seq_kv = 8192,
                  .heads_q = 128,
                  .heads_kv = 128,
                  .head_dim_qk = 192,
                  .head_dim_v = 128,
                  .causal = true};
  return op;
}

// fp8_dot_product_attention prices core attention in the recipe's FP8
// format (AttentionDtype: MXFP8 under mxfp8, per-tensor FP8 under fp8-cs and
// fp8-delayed, 16 bits without the option): the op takes the cost model's
// time for that dtype, here H100's per-tensor FP8 rows (forward; its FP8
// backward falls back to the 16-bit rate, calibration/cost_model.h).
TEST(OpPricing, Fp8AttentionPricesCoreAttentionInTheRecipesFormat) {
  models::TrainingOptions t;
  t.precision = models::Precision::kMxfp8;
  EXPECT_EQ(AttentionDtype(t), calibration::Dtype::kBf16);
  t.fp8_dot_product_attention = true;
  EXPECT_EQ(AttentionDtype(t), calibration::Dtype::kMxfp8);
  t.precision = models::Precision::kFp8CurrentScaling;
  EXPECT_EQ(AttentionDtype(t), calibration::Dtype::kFp8);
  t.precision = models::Precision::kFp8Delayed;
  EXPECT_EQ(AttentionDtype(t), calibration::Dtype::kFp8);

  const Fixture f = test_support::H100Platform(8);
  models::LayerOp op = MlaAttention();
  op.attention.seq_kv = op.attention.seq_q;  // cp = 1: the whole sequence
  RankContext rank = Context(f, models::Group::kTp, {0});
  calibration::AttentionShape shape{.batch = 1,
                                    .seq_q = 4096,
                                    .seq_kv = 4096,
                                    .heads_q = 128,
                                    .heads_kv = 128,
                                    .head_dim_qk = 192,
                                    .head_dim_v = 128,
                                    .causal = true};
  for (auto dtype : {calibration::Dtype::kBf16, calibration::Dtype::kFp8}) {
    rank.attention_dtype = dtype;
    shape.dtype = dtype;
    auto priced = PriceOps({op}, rank);
    ASSERT_TRUE(priced) << priced.error().message;
    ASSERT_EQ(priced->ops.size(), 1u);
    EXPECT_EQ(priced->ops[0].duration,
              Time::FromSecondsCeil(
                  f.platform.costs->Attention(shape, false).seconds));
  }
  shape.dtype = calibration::Dtype::kBf16;
  const double bf16 = f.platform.costs->Attention(shape, false).seconds;
  shape.dtype = calibration::Dtype::kFp8;
  EXPECT_LT(f.platform.costs->Attention(shape, false).seconds, bf16);
}

// The op of `t` named `name` (ASSERTs it is there).
const TimedOp& Named(const OpTemplate& t, const std::string& name) {
  for (const TimedOp& op : t.ops) {
    if (op.name == name) return op;
  }
  ADD_FAILURE() << "no op " << name;
  return t.ops.front();
}

// Seconds of the ops of `t` whose name contains `part`.
Time SumNamed(const OpTemplate& t, const std::string& part) {
  Time sum;
  for (const TimedOp& op : t.ops) {
    if (op.name.find(part) != std::string::npos) sum += op.duration;
  }
  return sum;
}

// Seconds the collective model gives one send/recv of `bytes` between the
// two GPUs of `pair`.
double SendRecvSeconds(const Fixture& f, std::vector<int> pair, double bytes) {
  return topology::EstimateCollective(
             f.platform.network, topology::Collective::kSendRecv,
             topology::ShapeOf(pair, *f.platform.cluster), bytes)
      .seconds;
}

// Transformer Engine's forward ring on 2 ranks (context_parallel.py,
// AttnFuncWithCPAndKVP2P): the hop for step 1 beside the diagonal block,
// step 1's tile, its softmax-statistics correction, then one output
// correction per step. Within a node the hop is shorter than the diagonal
// block and nothing of it is exposed.
TEST(OpPricing, CpRingHiddenWhenHopShorterThanBlock) {
  const Fixture f = test_support::H100Platform(16);
  // GPUs 0 and 1 share an NVLink domain: the hop takes less than the block.
  auto t = PriceOps({MlaAttention()}, Context(f, models::Group::kCp, {0, 1}));
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->ops.size(), 6u);
  const Time hop = Named(*t, "core_attn cp kv hop 1").duration,
             diag = Named(*t, "core_attn diag").duration,
             tile = Named(*t, "core_attn step 1").duration,
             fixes = SumNamed(*t, "correction");
  ASSERT_LT(hop, diag);
  const auto [makespan, exposed] = RunAlone(*t);
  EXPECT_EQ(makespan, diag + tile + fixes);
  EXPECT_EQ(exposed, 0.0);
}

TEST(OpPricing, CpRingExposedByTheDifferenceWhenHopLonger) {
  const Fixture f = test_support::H100Platform(16);
  // GPUs 0 and 8 sit in different nodes: the hop crosses one 400G NIC
  // (about 7 ms for 335 MB) and outlasts the diagonal block.
  auto t = PriceOps({MlaAttention()}, Context(f, models::Group::kCp, {0, 8}));
  ASSERT_TRUE(t) << t.error().message;
  const Time hop = Named(*t, "core_attn cp kv hop 1").duration,
             diag = Named(*t, "core_attn diag").duration,
             tile = Named(*t, "core_attn step 1").duration,
             fixes = SumNamed(*t, "correction");
  ASSERT_GT(hop, diag);
  const auto [makespan, exposed] = RunAlone(*t);
  EXPECT_EQ(makespan, hop + tile + fixes);
  EXPECT_NEAR(exposed, (hop - diag).seconds(), 1e-12);
  // The hop is what the collective model says for one send/recv of the
  // packed K and V (V at its own head dim 128, K at 192).
  const double expected = SendRecvSeconds(f, {0, 8}, 4096.0 * 128 * 320 * 2);
  EXPECT_EQ(hop, Time::FromSecondsCeil(expected));
  // The template records the ring's balance for the run's warning.
  ASSERT_TRUE(t->ring.has_value());
  EXPECT_TRUE(t->ring->crosses_domains);
  EXPECT_NEAR(t->ring->hop_s, expected, 1e-12);
  EXPECT_GT(t->ring->hop_s, t->ring->tile_s);
}

// A step after the first is a lower-triangle tile on some ranks (2c queries
// against c keys) and an upper-triangle one on the others (c against 2c);
// the ring waits for the slower, so the step is priced at the longer of the
// two kernels, and the output corrections rescale the rank's whole output
// (3 x tokens x heads x v x 2 B each, the last rank's size).
TEST(OpPricing, CpRingStepIsTheSlowerTileAndCorrectionsReadTheOutput) {
  const Fixture f = test_support::H100Platform(16);
  auto t = PriceOps({MlaAttention()}, Context(f, models::Group::kCp, {0, 1}));
  ASSERT_TRUE(t) << t.error().message;
  const calibration::CostModel& costs = *f.platform.costs;
  calibration::AttentionShape lower{.batch = 1,
                                    .seq_q = 4096,
                                    .seq_kv = 2048,
                                    .heads_q = 128,
                                    .heads_kv = 128,
                                    .head_dim_qk = 192,
                                    .head_dim_v = 128,
                                    .causal = false};
  calibration::AttentionShape upper = lower;
  upper.seq_q = 2048;
  upper.seq_kv = 4096;
  const double slower = std::max(costs.Attention(lower, false).seconds,
                                 costs.Attention(upper, false).seconds);
  EXPECT_EQ(Named(*t, "core_attn step 1").duration,
            Time::FromSecondsCeil(slower));
  EXPECT_EQ(Named(*t, "core_attn out correction 0").duration,
            Time::FromSecondsCeil(
                costs.MemoryBound("copy", 3.0 * 4096 * 128 * 128 * 2).seconds));
}

// Backward on a 4-rank ring, as TE sends it: step 0 K/V alone, steps 1 and
// 2 K/V with the accumulated dK/dV in one buffer (twice the bytes), step 3
// dK/dV alone; no message after the last step's kernel (the last dK/dV
// add waits for step 3's message, which runs beside step 3's kernel).
TEST(OpPricing, CpRingBackwardSendsKvThenKvAndDkvThenDkv) {
  const Fixture f = test_support::H100Platform(16);
  models::LayerOp op = MlaAttention();
  op.pass = models::Pass::kDgrad;
  op.attention.seq_q = 2048;  // 8K tokens over 4 ranks
  auto t = PriceOps({op}, Context(f, models::Group::kCp, {0, 1, 2, 3}));
  ASSERT_TRUE(t) << t.error().message;
  const double kv = 2048.0 * 128 * 320 * 2;
  auto hop = [&](double bytes) {
    return Time::FromSecondsCeil(SendRecvSeconds(f, {0, 1}, bytes));
  };
  EXPECT_EQ(Named(*t, "core_attn cp kv hop 0").duration, hop(kv));
  EXPECT_EQ(Named(*t, "core_attn cp kv+dkv hop 1").duration, hop(2 * kv));
  EXPECT_EQ(Named(*t, "core_attn cp kv+dkv hop 2").duration, hop(2 * kv));
  EXPECT_EQ(Named(*t, "core_attn cp dkv hop 3").duration, hop(kv));
  int messages = 0;
  for (const TimedOp& o : t->ops) messages += o.stream == StreamKind::kCp;
  EXPECT_EQ(messages, 4);
  // The template ends with the last dK/dV add, which waits for step 3's
  // message.
  const TimedOp& last = t->ops[t->exit];
  EXPECT_EQ(last.name, "core_attn dkv add 3");
}

// FP8 attention with a per-tensor recipe sends K and V as uint8 (TE: "FP8DS/CS
// attention: q, k, v: dtype=torch.uint8"): half the bytes of the 16-bit hop.
// MXFP8 attention keeps 16-bit tensors on the wire.
TEST(OpPricing, CpRingFp8AttentionSendsOneBytePerElement) {
  const Fixture f = test_support::H100Platform(16);
  RankContext rank = Context(f, models::Group::kCp, {0, 8});
  auto hop = [&](double bytes) {
    return Time::FromSecondsCeil(SendRecvSeconds(f, {0, 8}, bytes));
  };
  const double elements = 4096.0 * 128 * 320;
  for (auto [dtype, bytes] : {std::pair{calibration::Dtype::kFp8, 1.0},
                              std::pair{calibration::Dtype::kMxfp8, 2.0},
                              std::pair{calibration::Dtype::kBf16, 2.0}}) {
    rank.attention_dtype = dtype;
    auto t = PriceOps({MlaAttention()}, rank);
    ASSERT_TRUE(t) << t.error().message;
    EXPECT_EQ(Named(*t, "core_attn cp kv hop 1").duration,
              hop(elements * bytes));
  }
}

// Ulysses CP (a2a) on 2 GPUs of a node: an all-to-all of this rank's Q, K, V
// (4096 tokens x (128 x 192 + 128 x (192 + 128)) x 2 B), attention over the
// whole 8K sequence with half the heads, an all-to-all of the output back
// (4096 x 128 x 128 x 2 B).
TEST(OpPricing, CpA2aTradesSequenceForHeads) {
  const Fixture f = test_support::H100Platform(16);
  RankContext rank = Context(f, models::Group::kCp, {0, 1});
  rank.cp_comm_type = models::CpCommType::kA2a;
  auto t = PriceOps({MlaAttention()}, rank);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_EQ(t->ops.size(), 3u);
  const topology::GroupShape shape =
      topology::ShapeOf(std::vector<int>{0, 1}, *f.platform.cluster);
  auto a2a = [&](double bytes) {
    return Time::FromSecondsCeil(
        topology::EstimateCollective(
            f.platform.network, topology::Collective::kAllToAll, shape, bytes)
            .seconds);
  };
  EXPECT_EQ(t->ops[0].duration, a2a(4096.0 * (128 * 192 + 128 * 320) * 2));
  EXPECT_EQ(t->ops[2].duration, a2a(4096.0 * 128 * 128 * 2));
  calibration::AttentionShape wide;
  wide.seq_q = wide.seq_kv = 8192;
  wide.heads_q = wide.heads_kv = 64;
  wide.head_dim_qk = 192;
  wide.head_dim_v = 128;
  wide.causal = true;
  EXPECT_EQ(
      t->ops[1].duration,
      Time::FromSecondsCeil(f.platform.costs->Attention(wide, false).seconds));
}

// Recomputing core_attn replays the CP exchange with it: a DeepSeek-V3
// layer at CP2 (p2p) recomputes its core attention before the backward, and
// that recompute carries the forward's K/V hop (one hop for a 2-rank ring).
TEST(OpPricing, CoreAttnRecomputeReplaysTheCpExchange) {
  const Fixture f = test_support::H100Platform(16);
  auto model = models::LoadModel("deepseek-v3");
  ASSERT_TRUE(model);
  models::Parallelism par;
  par.cp = 2;
  par.dp = 8;
  par.ep = 16;
  par.edp = 1;
  models::TrainingOptions tr;
  tr.seq_length = 8192;
  tr.recompute.core_attn = true;
  const models::LayerOps ops =
      models::BuildLayerOps(*model, 0, false, par, tr, false);
  ASSERT_FALSE(ops.recompute.empty());
  auto t = PriceOps(ops.recompute, Context(f, models::Group::kCp, {0, 8}));
  ASSERT_TRUE(t) << t.error().message;
  int hops = 0;
  for (const TimedOp& o : t->ops) hops += o.stream == StreamKind::kCp;
  EXPECT_EQ(hops, 1);
}

// TE quantizes a GroupedLinear input one local expert at a time
// (host_calls.cc QuantizeKernels: one kernel per local expert, three with
// FP8 current scaling), so the experts' quantize of B bytes over 16 local
// experts is 16 kernels of B / 16, each paying a memory-bound kernel's
// fixed time (calibration/tables: 1.27 us); a dense layer's quantize of the
// same bytes is one kernel.
TEST(OpPricing, PerExpertQuantizeIsOneKernelPerLocalExpert) {
  const Fixture f = test_support::H100Platform(8);
  RankContext rank = Context(f, models::Group::kEp, {0, 1, 2, 3, 4, 5, 6, 7});
  rank.local_experts = 16;
  const double bytes = 64.0 * 1024 * 1024;
  models::LayerOp op;
  op.kind = models::OpKind::kMemoryBound;
  op.kernel = "fp8_quantize";
  op.bytes = bytes;
  op.name = "experts_fc1.quantize";
  op.role = models::OpRole::kExpertQuantize;  // what the price keys on
  op.module = models::RecomputeModule::kMoe;
  auto experts = PriceOps({op}, rank);
  ASSERT_TRUE(experts) << experts.error().message;
  op.name = "fc1.quantize";
  op.role = models::OpRole::kQuantize;
  op.module = models::RecomputeModule::kMlp;
  auto dense = PriceOps({op}, rank);
  ASSERT_TRUE(dense) << dense.error().message;
  const calibration::CostModel& costs = *f.platform.costs;
  EXPECT_EQ(experts->ops[0].duration,
            Time::FromSecondsCeil(
                16 * costs.MemoryBound("fp8_quantize", bytes / 16).seconds));
  EXPECT_EQ(
      dense->ops[0].duration,
      Time::FromSecondsCeil(costs.MemoryBound("fp8_quantize", bytes).seconds));
  // 15 more fixed times: at least 15 x 1.27 us longer.
  EXPECT_GT((experts->ops[0].duration - dense->ops[0].duration).seconds(),
            15 * 1.27e-6 * 0.99);
}

// A Qwen3-30B-A3B forward dispatch: 4096 tokens, top-8 of 128 experts,
// hidden 2048, BF16.
models::LayerOp Qwen30bDispatch() {
  models::LayerOp op;
  op.name = "dispatch";
  op.kind = models::OpKind::kDispatch;
  op.role = models::OpRole::kDispatch;
  op.dispatch = {.tokens = 4096, .topk = 8, .hidden = 2048, .experts = 128};
  return op;
}

TEST(OpPricing, AllToAllAloneTakesWhatTheNetworkModelSays) {
  const Fixture f = test_support::H100Platform(16);
  models::LayerOp op = Qwen30bDispatch();
  const std::vector<int> ep = {0, 1, 2,  3,  4,  5,  6,  7,
                               8, 9, 10, 11, 12, 13, 14, 15};
  auto t = PriceOps({op}, Context(f, models::Group::kEp, ep));
  ASSERT_TRUE(t) << t.error().message;
  // permute, all-to-all, sort chunks.
  ASSERT_EQ(t->ops.size(), 3u);
  EXPECT_EQ(t->ops[1].stream, StreamKind::kEp);
  const double bytes = 4096.0 * 8 * 2048 * 2;  // every routed row, bf16
  const double seconds =
      topology::EstimateCollective(
          f.platform.network, topology::Collective::kAllToAll,
          topology::ShapeOf(ep, *f.platform.cluster), bytes)
          .seconds;
  EXPECT_EQ(t->ops[1].duration, Time::FromSecondsCeil(seconds));
}

// HybridEP's dispatch_with_permute runs its dispatch kernel into the
// receive buffer and then its own permute kernel from the buffer into the
// output tensor; combine_with_unpermute unpermutes into the send buffer
// before the combine kernel; across NVLink domains each dispatch first
// stages its input into the RDMA buffer with a device-to-device copy
// (deepseek-ai/DeepEP csrc/hybrid_ep/executor/executor.cu). The dispatch
// table's HybridEP rows are kernel-only figures, so these copies are ops of
// their own: the permute reads each received token once (tokens x the
// distinct ranks a token reaches, here 8 x (1 - C(112,8)/C(128,8)) for
// top-8 of 128 experts over EP8) and writes every routed row (tokens x 8),
// at the memory-bound table's permute rate.
TEST(OpPricing, HybridEpPermutesBesideItsKernelOnlyExchange) {
  const Fixture f = test_support::H100Platform(16);
  models::LayerOp op = Qwen30bDispatch();
  RankContext node = Context(f, models::Group::kEp, {0, 1, 2, 3, 4, 5, 6, 7});
  node.dispatcher = models::Dispatcher::kHybridEp;
  auto dispatch = PriceOps({op}, node);
  ASSERT_TRUE(dispatch) << dispatch.error().message;
  ASSERT_EQ(dispatch->ops.size(), 2u);
  EXPECT_EQ(dispatch->ops[0].stream, StreamKind::kEp);
  double no_rank = 1;  // C(112,8)/C(128,8)
  for (int i = 0; i < 8; ++i) no_rank *= (112.0 - i) / (128.0 - i);
  const double received = 4096 * 8 * (1 - no_rank);
  const double routed = 4096.0 * 8;
  const double row_bytes = 2048.0 * 2;
  const calibration::CostModel& costs = *f.platform.costs;
  // `t`'s op `i` is `name`, one memory-bound `kernel` over `bytes`.
  auto expect_copy = [&](const OpTemplate& t, size_t i, const char* name,
                         const char* kernel, double bytes) {
    ASSERT_LT(i, t.ops.size());
    EXPECT_EQ(t.ops[i].name, name);
    EXPECT_EQ(t.ops[i].duration,
              Time::FromSecondsCeil(costs.MemoryBound(kernel, bytes).seconds));
  };
  expect_copy(*dispatch, 1, "dispatch permute", "permute",
              (received + routed) * row_bytes);

  op.name = "combine";
  op.dispatch.combine = true;
  auto combine = PriceOps({op}, node);
  ASSERT_TRUE(combine) << combine.error().message;
  ASSERT_EQ(combine->ops.size(), 2u);
  expect_copy(*combine, 0, "combine unpermute", "unpermute",
              (received + routed) * row_bytes);
  EXPECT_EQ(combine->ops[1].stream, StreamKind::kEp);

  // EP16 over two 8-GPU nodes: the dispatch stages its 4096 input rows
  // (read and written once) before the exchange; the combine does not.
  std::vector<int> two_nodes(16);
  for (int g = 0; g < 16; ++g) two_nodes[g] = g;
  RankContext wide = Context(f, models::Group::kEp, two_nodes);
  wide.dispatcher = models::Dispatcher::kHybridEp;
  op.name = "dispatch";
  op.dispatch.combine = false;
  auto staged = PriceOps({op}, wide);
  ASSERT_TRUE(staged) << staged.error().message;
  ASSERT_EQ(staged->ops.size(), 3u);
  expect_copy(*staged, 0, "dispatch stage", "copy", 2 * 4096 * row_bytes);
  op.dispatch.combine = true;
  auto wide_combine = PriceOps({op}, wide);
  ASSERT_TRUE(wide_combine) << wide_combine.error().message;
  EXPECT_EQ(wide_combine->ops.size(), 2u);
}

// The exchange itself, inside one NVLink domain: the dispatch table's
// figures are the bytes a rank receives over the kernel's time, its own
// rows included (DeepEP tests/test_hybrid_ep.py and test_intranode.py:
// dispatched_hidden.numel() * 2 / t, the combine's send bytes the same),
// so the replay divides that count by the rate: tokens x the distinct ranks
// a token reaches x the row, here 4096 x 8 (1 - C(112,8)/C(128,8)) x 2048 x
// 2 bytes. Before, the rank's own share (1/8) was left out, which made
// every one-domain HybridEP and DeepEP exchange 12.5% too short.
// For HybridEP and DeepEP, dispatch and combine, over the EP group `gpus`:
// the exchange takes `bytes` at the dispatch table's `tier` rate.
void ExpectExchangeDividesBytes(const Fixture& f, const std::vector<int>& gpus,
                                const char* tier, double bytes) {
  models::LayerOp op = Qwen30bDispatch();
  const int ep = static_cast<int>(gpus.size());
  for (const models::Dispatcher dispatcher :
       {models::Dispatcher::kHybridEp, models::Dispatcher::kDeepEp}) {
    RankContext rank = Context(f, models::Group::kEp, gpus);
    rank.dispatcher = dispatcher;
    for (const bool combine : {false, true}) {
      op.dispatch.combine = combine;
      auto t = PriceOps({op}, rank);
      ASSERT_TRUE(t) << t.error().message;
      const auto comm = std::find_if(
          t->ops.begin(), t->ops.end(),
          [](const TimedOp& o) { return o.stream == StreamKind::kEp; });
      ASSERT_NE(comm, t->ops.end());
      const auto rate = f.platform.costs->Dispatch(
          dispatcher == models::Dispatcher::kDeepEp ? "deepep" : "hybridep",
          combine ? "combine" : "dispatch", tier, ep, 4096,
          calibration::Dtype::kBf16, models::TraitsOf(dispatcher).sms_held);
      ASSERT_TRUE(rate);
      EXPECT_EQ(comm->duration,
                Time::FromSecondsCeil(bytes / (rate->gb_s * 1e9)))
          << (combine ? "combine" : "dispatch");
    }
  }
}

TEST(OpPricing, NvlinkDispatchCountsEveryReceivedRowAsItsBenchmarkDoes) {
  double no_rank = 1;  // C(112,8)/C(128,8)
  for (int i = 0; i < 8; ++i) no_rank *= (112.0 - i) / (128.0 - i);
  ExpectExchangeDividesBytes(test_support::H100Platform(8),
                             {0, 1, 2, 3, 4, 5, 6, 7}, "nvlink",
                             4096 * 8 * (1 - no_rank) * 2048.0 * 2);
}

// Across NVLink domains the benchmarks count each (token, node) pair once,
// the local node included (HybridEP tests/test_hybrid_ep.py
// count_rdma_send_from_routing_map, DeepEP num_rdma_token_sent), and the
// replay divides the same count by the `net` rate: EP16 over two 8-GPU
// nodes, top-8 of 128 experts, 64 per node: 4096 x 2 (1 - C(64,8)/C(128,8))
// x 2048 x 2 bytes, about 3.1x fewer than the rows sent to other ranks
// (4096 x 16 (1 - C(120,8)/C(128,8)) x 15/16), which it divided before.
TEST(OpPricing, NetworkDispatchCountsTokenNodePairsAsItsBenchmarkDoes) {
  std::vector<int> two_nodes(16);
  for (int g = 0; g < 16; ++g) two_nodes[g] = g;
  double no_node = 1, no_rank = 1;  // C(64,8)/C(128,8), C(120,8)/C(128,8)
  for (int i = 0; i < 8; ++i) {
    no_node *= (64.0 - i) / (128.0 - i);
    no_rank *= (120.0 - i) / (128.0 - i);
  }
  const double other_ranks = 4096 * 16 * (1 - no_rank) * 15.0 / 16;
  EXPECT_NEAR(other_ranks / (4096 * 2 * (1 - no_node)), 3.1, 0.05);
  ExpectExchangeDividesBytes(test_support::H100Platform(16), two_nodes, "net",
                             4096 * 2 * (1 - no_node) * 2048.0 * 2);
}

// ---- Host launches and CUDA graphs ------------------------------------------

// One stage's streams ("s/compute", "s/tp", ..., "s/host") on `engine`.
StageStreams OneStage(Engine& engine) {
  StageStreams streams;
  for (int k = 0; k < kNumStreamKinds; ++k) {
    streams[k] = engine.Stream(std::string("s/") +
                               StreamKindName(static_cast<StreamKind>(k)));
  }
  return streams;
}

// n memory-bound kernels of the attention block (tiny copies: about a
// microsecond each on an H100, far below the launch cost L of one eager
// op), priced and emitted alone with the host model.
struct HostRun {
  Time makespan;
  Time kernel_sum;
  Time last_kernel;
};
HostRun RunKernels(int n, bool graphed, double launch_s, double graph_launch_s,
                   double bytes = 64 * 1024) {
  const Fixture f = test_support::H100Platform(8);
  RankContext rank = Context(f, models::Group::kTp, {0});
  rank.launch_s = launch_s;
  rank.graph_launch_s = graph_launch_s;
  rank.graphed[static_cast<int>(models::GraphScope::kAttn)] = graphed;
  std::vector<models::LayerOp> ops;
  for (int i = 0; i < n; ++i) {
    models::LayerOp op;
    op.name = "small";
    op.kind = models::OpKind::kMemoryBound;
    op.kernel = "copy";
    op.bytes = bytes;
    op.scope = models::GraphScope::kAttn;
    ops.push_back(op);
  }
  auto t = PriceOps(ops, rank);
  EXPECT_TRUE(t) << t.error().message;
  HostRun out;
  for (const TimedOp& op : t->ops) out.kernel_sum += op.duration;
  out.last_kernel = t->ops.back().duration;
  Engine engine;
  const StageStreams streams = OneStage(engine);
  TemplateEmitter emitter(engine, false);
  emitter.Emit(streams, *t, HostSegments(*t, rank), {});
  EXPECT_TRUE(engine.Run());
  out.makespan = engine.makespan();
  return out;
}

// Launch cost L, n kernels of duration d < L, eager: the host launches one
// kernel every L and the GPU runs each as soon as it is launched, so the
// step is host-bound: the last kernel is launched at n L and ends d later.
TEST(HostModel, SmallKernelsAreHostBoundAtNTimesL) {
  const double launch = 11.2e-6;
  const HostRun r = RunKernels(100, false, launch, 15e-6);
  ASSERT_LT(r.last_kernel.seconds(), launch);
  EXPECT_NEAR(r.makespan.seconds(), 100 * launch + r.last_kernel.seconds(),
              1e-9);
  EXPECT_GT(r.makespan, r.kernel_sum * 2);  // gaps dominate
}

// The same kernels in one CUDA graph: one graph launch G, then the kernels
// back to back: G + sum of d. The gaps are gone.
TEST(HostModel, CudaGraphRemovesTheLaunchGaps) {
  const double graph_launch = 15e-6;
  const HostRun r = RunKernels(100, true, 11.2e-6, graph_launch);
  EXPECT_NEAR(r.makespan.seconds(), graph_launch + r.kernel_sum.seconds(),
              1e-9);
}

// Kernels longer than their launch (256 MiB copies, about 0.1 ms each):
// the host stays ahead after the first launch, so the step is L + sum of d
// (GPU-bound).
TEST(HostModel, LongKernelsHideTheHost) {
  const double launch = 11.2e-6;
  const HostRun r = RunKernels(50, false, launch, 15e-6, 256.0 * (1 << 20));
  ASSERT_GT(r.last_kernel.seconds(), launch);
  EXPECT_NEAR(r.makespan.seconds(), launch + r.kernel_sum.seconds(), 1e-9);
}

// ---- Whole steps ---------------------------------------------------------

using test_support::Resolve;

StepResult Simulate(const scenarios::ResolvedScenario& s, bool trace = false) {
  ReplayOptions options;
  options.trace = trace;
  return test_support::Simulate(s, options);
}

std::string Qwen30b(int gbs) {
  return R"(model: "qwen3-30b-a3b" system: "dgx-h100" num_gpus: 16
    seq_length: 4096 precision: "bf16"
    layout { tensor_model_parallel_size: 1 pipeline_model_parallel_size: 2
             expert_model_parallel_size: 8 micro_batch_size: 1
             global_batch_size: )" +
         std::to_string(gbs) + " }";
}

// Megatron's non-interleaved 1F1B with batch_p2p_sync calls
// torch.cuda.synchronize() after every batched pipeline exchange
// (p2p_communication.py _communicate). PP 2, 4 micro-batches: stage 0 runs
// F0 F1 B0 F2 B1 F3 B2 B3 and exchanges after F0 (send), F1, F2, F3 (send,
// receive) and before B3 (receive): 5 syncs; stage 1 runs F0 B0 F1 B1 ...
// and exchanges before each forward (receive, and the gradient of the
// backward before it): 4 (its last send ends the step). Interleaved stages
// (overlap_p2p_comm) and batch_p2p_sync false do not sync. A sync only
// holds the host, so the step cannot get shorter.
TEST(Replay, BatchP2pSyncHoldsTheHostAtEachPipelineExchange) {
  auto syncs = [](const StepResult& r) {
    int n = 0;
    for (size_t at = r.trace.find("\"p2p sync\""); at != std::string::npos;
         at = r.trace.find("\"p2p sync\"", at + 1)) {
      ++n;
    }
    return n;
  };
  const std::string layout = R"(model: "qwen3-30b-a3b" system: "dgx-h100"
    num_gpus: 16 seq_length: 4096 precision: "bf16" num_layers: 4
    layout { pipeline_model_parallel_size: 2 expert_model_parallel_size: 8
             micro_batch_size: 1 global_batch_size: 32 )";
  const StepResult synced = Simulate(Resolve(layout + "}"), true);
  EXPECT_EQ(syncs(synced), 5 + 4);
  const StepResult free =
      Simulate(Resolve(layout + "} batch_p2p_sync: false"), true);
  EXPECT_EQ(syncs(free), 0);
  EXPECT_GE(synced.step_time_s, free.step_time_s);
  const StepResult interleaved = Simulate(
      Resolve(layout + "virtual_pipeline_model_parallel_size: 2 }"), true);
  EXPECT_EQ(syncs(interleaved), 0);
}

// Doubling the global batch doubles the micro-batches per step: compute
// doubles, the bubble (pp - 1) x (f + b) and the optimizer stay, so the step
// grows by a factor just under 2 and TFLOPS/GPU barely moves. With pp 2 and
// m = 32 -> 64 micro-batches the pure-pipeline ratio is 2 (1 + 1/64) /
// (1 + 1/32) = 1.97.
TEST(Replay, DoublingGlobalBatchNearlyDoublesStepTime) {
  const StepResult a = Simulate(Resolve(Qwen30b(256)));  // dp 8: m = 32
  const StepResult b = Simulate(Resolve(Qwen30b(512)));  // m = 64
  const double ratio = b.step_time_s / a.step_time_s;
  EXPECT_GT(ratio, 1.9);
  EXPECT_LT(ratio, 2.0);
  EXPECT_NEAR(b.tflops_per_gpu / a.tflops_per_gpu, 1.0, 0.05);
  EXPECT_LT(b.bubble_fraction, a.bubble_fraction);
}

// Optimizer CPU offload of 100% on llama3-8b, 8 H100s, DP 8: the step ends
// with the gradients copied down, CPU Adam and the weights copied up, each at
// its table's rate (calibration/tables/h100/host_copy.csv, cpu_adam.csv), on
// this GPU's shard of the parameters (the stage's parameters / DP). Within
// 3%: the replay counts the shard from the layers' ops and the memory model
// from the module sums (tied embeddings, norms).
TEST(Replay, OptimizerOffloadCostsWhatTheTablesSay) {
  const scenarios::ResolvedScenario s =
      Resolve(R"(model: "llama3-8b" system: "dgx-h100" num_gpus: 8
        seq_length: 4096 precision: "bf16" optimizer_offload_fraction: 1
        layout { global_batch_size: 8 })");
  const StepResult r = Simulate(s);
  auto tables = calibration::LoadTables("h100");
  ASSERT_TRUE(tables);
  double d2h = 0, h2d = 0;
  for (const auto& row : tables->host_copy) {
    (row.direction == "d2h" ? d2h : h2d) =
        std::max(row.direction == "d2h" ? d2h : h2d, row.gb_s);
  }
  const double params_per_s = tables->cpu_adam.front().params_per_s;
  const models::MemoryEstimate m = models::EstimateMemory(
      s.model, s.pipeline, s.parallel, s.training, 80 * models::kGiB);
  const double shard = static_cast<double>(m.stages[0].params) / 8;
  const double expected = shard * s.training.main_grad_bytes / (d2h * 1e9) +
                          shard / params_per_s + shard * 2 / (h2d * 1e9);
  EXPECT_NEAR(r.time_by_op_class_s.at("optimizer") / expected, 1.0, 0.03);
}

// Without --manual-gc, Python's automatic collections stall the step by
// host.csv's auto_gc_stall_fraction (0.0383, calibration/tables/h100): the
// step grows by exactly that share of the replayed step, nothing else moves.
TEST(HostModel, AutomaticGcStallsTheStepByTheTableFraction) {
  const char* base = R"(model: "llama3-8b" system: "dgx-h100" num_gpus: 8
        seq_length: 4096 precision: "bf16" layout { global_batch_size: 16 })";
  const StepResult manual = Simulate(Resolve(base));
  const StepResult automatic =
      Simulate(Resolve(std::string(base) + " manual_gc: false"));
  auto tables = calibration::LoadTables("h100");
  ASSERT_TRUE(tables);
  double fraction = 0;
  for (const auto& row : tables->host) {
    if (row.quantity == "auto_gc_stall_fraction") fraction = row.value;
  }
  ASSERT_GT(fraction, 0);
  EXPECT_EQ(manual.gc_stall_s, 0);
  EXPECT_NEAR(automatic.gc_stall_s, fraction * manual.step_time_s, 1e-12);
  EXPECT_NEAR(automatic.step_time_s, manual.step_time_s * (1 + fraction),
              1e-12);
}

// The busiest EP rank under Zipf routing: with one expert per rank (8 experts,
// EP 8) it is the rank holding the most popular expert, weight 1 against a
// mean of H_8(s) / 8 (H the generalized harmonic number): at s = 1,
// 8 / 2.717857 = 2.94353. Uniform routing (s = 0) is balanced.
TEST(Routing, ZipfImbalanceOfTheBusiestRank) {
  EXPECT_EQ(RoutingImbalance(8, 8, 0), 1.0);
  double h = 0;
  for (int r = 1; r <= 8; ++r) h += 1.0 / r;
  EXPECT_NEAR(RoutingImbalance(8, 8, 1.0), 8 / h, 1e-12);
  // More experts per rank average the skew out: lower imbalance.
  EXPECT_LT(RoutingImbalance(128, 8, 1.0), RoutingImbalance(8, 8, 1.0));
  EXPECT_GT(RoutingImbalance(128, 8, 1.0), 1.0);
}

// A measured histogram gives the loads directly: 8 experts on EP 4 (two
// per rank) with counts 8,0 | 1,1 | 1,1 | 1,1 put 8 of the 14 tokens on rank
// 0 against a mean of 3.5: loads 8/3.5 and 2/3.5 (x3), busiest 16/7. Equal
// counts are balanced, whatever their scale.
TEST(Routing, HistogramGivesEachRanksShare) {
  const std::vector<double> counts = {8, 0, 1, 1, 1, 1, 1, 1};
  const std::vector<double> loads = ExpertLoads(8, 4, 0, counts);
  ASSERT_EQ(loads.size(), 4u);
  EXPECT_NEAR(loads[0], 8 / 3.5, 1e-12);
  for (int r = 1; r < 4; ++r) EXPECT_NEAR(loads[r], 2 / 3.5, 1e-12);
  EXPECT_NEAR(RoutingImbalance(8, 4, 0, counts), 16.0 / 7, 1e-12);
  const std::vector<double> equal(8, 250.0);
  EXPECT_EQ(RoutingImbalance(8, 4, 0, equal), 1.0);
}

// The memory timeline of the replay (activations stored from each forward's
// start to its backward's end, the transient working set during backward)
// peaks where the foundation's analytic model says (memory.h replays the
// same 1F1B order): equal for every stage of an interleaved layout.
// Under ZB-H1 (no interleaving) likewise, with every stage holding pp
// micro-batches at its peak: pp - r stored forwards and r awaiting their
// weight gradient (Qi et al., ICLR 2024, sec. 3.1), against 1F1B's pp - r.
void ExpectTimelinePeakIsTheAnalyticPeak(const std::string& text) {
  const scenarios::ResolvedScenario s = Resolve(text);
  const StepResult r = Simulate(s);
  const models::MemoryEstimate m =
      models::EstimateMemory(s.model, s.pipeline, s.parallel, s.training,
                             s.system.gpu().memory_gib() * models::kGiB);
  ASSERT_EQ(r.stages.size(), m.stages.size());
  for (size_t i = 0; i < m.stages.size(); ++i) {
    EXPECT_NEAR(r.stages[i].memory_peak_bytes / m.stages[i].peak_bytes, 1.0,
                1e-9)
        << "pp" << i;
  }
}

TEST(Replay, MemoryTimelinePeakMatchesTheAnalyticPeak) {
  ExpectTimelinePeakIsTheAnalyticPeak(
      R"(model: "qwen3-30b-a3b" system: "dgx-h100" num_gpus: 16
        seq_length: 4096 precision: "bf16"
        layout { pipeline_model_parallel_size: 4
                 virtual_pipeline_model_parallel_size: 2
                 expert_model_parallel_size: 4 global_batch_size: 64 })");
  const std::string zb = R"(model: "qwen3-30b-a3b" system: "dgx-h100"
      num_gpus: 16 seq_length: 4096 precision: "bf16"
      layout { pipeline_model_parallel_size: 4
               expert_model_parallel_size: 4 global_batch_size: 64 })";
  ExpectTimelinePeakIsTheAnalyticPeak(zb + " pipeline_schedule: \"zb-h1\"");
  for (const char* schedule : {"1f1b", "zb-h1"}) {
    const scenarios::ResolvedScenario s =
        Resolve(zb + " pipeline_schedule: \"" + std::string(schedule) + "\"");
    const models::MemoryEstimate m =
        models::EstimateMemory(s.model, s.pipeline, s.parallel, s.training,
                               s.system.gpu().memory_gib() * models::kGiB);
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(m.stages[r].peak_in_flight,
                std::string(schedule) == "zb-h1" ? 4 : 4 - r)
          << schedule << " pp" << r;
    }
  }
}

// A training step is sustained load: on B200 the replay's cost model runs
// compute-bound kernels (GEMM, grouped GEMM, attention) at the sustained
// share of their benchmarked rate (calibration/tables/b200/sustained.csv:
// 0.853, flashinfer PR 2899) and keeps memory-bound kernels at theirs; a
// GPU without a sustained row (H100) keeps every rate. A profile's factors
// multiply on top.
TEST(Replay, SustainedLoadSlowsComputeBoundKernelsOnly) {
  auto corrections = [](const std::string& system,
                        const calibration::Profile& profile) {
    std::string text = Qwen30b(256);
    text.replace(text.find("dgx-h100"), 8, system);
    auto platform = BuildPlatform(Resolve(text), profile);
    EXPECT_TRUE(platform) << platform.error().message;
    return platform->costs->corrections();
  };
  using calibration::Factor;
  const calibration::Corrections b200 = corrections("dgx-b200", {});
  for (Factor f : {Factor::kGemm, Factor::kGroupedGemm, Factor::kAttention})
    EXPECT_DOUBLE_EQ(b200.at(f), 0.853);
  EXPECT_DOUBLE_EQ(b200.at(Factor::kMemoryBound), 1.0);
  EXPECT_TRUE(corrections("dgx-h100", {}).IsIdentity());
  calibration::Profile profile;
  profile.all.at(Factor::kGemm) = 1.1;
  EXPECT_DOUBLE_EQ(corrections("dgx-b200", profile).at(Factor::kGemm),
                   0.853 * 1.1);
}

// The flow network (transfers as flows sharing links by max-min) against the
// analytical one on a layout whose transfers rarely meet: the same step
// within 1% (each transfer alone takes the analytical time, by the network
// model's own test), and communication no faster than analytical.
TEST(Replay, FlowNetworkAgreesWhenTransfersDoNotMeet) {
  const scenarios::ResolvedScenario s = Resolve(Qwen30b(32));
  auto platform = BuildPlatform(s);
  ASSERT_TRUE(platform);
  ReplayOptions flow;
  flow.network = NetworkKind::kFlow;
  auto a = Replay(s, *platform, {});
  auto b = Replay(s, *platform, flow);
  ASSERT_TRUE(a && b);
  EXPECT_NEAR(b->step_time_s / a->step_time_s, 1.0, 0.01);
  EXPECT_GE(b->comm_s.at("ep").total_s, 0.99 * a->comm_s.at("ep").total_s);
}

// The long-context rule of thumb (seeds_notes.md: CP ~ seq/4096) emerges
// from the mechanisms: DeepSeek-V3 at 128K on H100 (PP8 VPP4 EP32, the
// default's recompute and offload, hierarchical CP with the a2a inside a
// node) does not fit at CP8; CP32 = 131072/4096 fits with the CP exchange
// mostly hidden; CP64 (on twice the GPUs) exposes a larger share of it.
TEST(Replay, LongContextCpSizingRuleEmerges) {
  auto spec = scenarios::LoadScenario(std::string(MOESIM_SOURCE_DIR) +
                                      "/scenarios/default.textproto");
  ASSERT_TRUE(spec);
  struct Case {
    int cp, gpus;
    std::vector<int> hierarchy;  // empty: a2a inside the node
    bool fits = false;
    double exposed_share = 0;
  };
  std::vector<Case> cases = {
      {8, 256, {}}, {32, 256, {8, 4}}, {64, 512, {8, 8}}};
  for (Case& c : cases) {
    scenarios::Scenario s = *spec;
    s.set_num_gpus(c.gpus);
    s.mutable_layout()->set_context_parallel_size(c.cp);
    s.set_cp_comm_type(c.hierarchy.empty() ? "a2a" : "a2a+p2p");
    s.clear_hierarchical_context_parallel_sizes();
    for (int size : c.hierarchy)
      s.add_hierarchical_context_parallel_sizes(size);
    auto r = scenarios::Resolve(s, "test");
    ASSERT_TRUE(r) << r.error().message;
    const StepResult step = Simulate(*r);
    const models::MemoryEstimate m =
        models::EstimateMemory(r->model, r->pipeline, r->parallel, r->training,
                               r->system.gpu().memory_gib() * models::kGiB);
    c.fits = m.fits;
    c.exposed_share = step.comm_s.at("cp").exposed_s / step.step_time_s;
  }
  EXPECT_FALSE(cases[0].fits);  // CP8: too many tokens per GPU
  EXPECT_TRUE(cases[1].fits);
  EXPECT_LT(cases[1].exposed_share, 0.10);
  EXPECT_TRUE(cases[2].fits);
  EXPECT_GT(cases[2].exposed_share, cases[1].exposed_share);
}

// Selective before full recompute (the workflow card's rule): at 16K on 16
// H100s (Qwen3-30B, PP2 EP8) recomputing moe_act, layernorm and moe fits as
// full recompute does, and full recompute replays every forward op, so the
// selective step gives more TFLOPS/GPU.
TEST(Replay, SelectiveRecomputeBeatsFullWhenBothFit) {
  auto run = [](const char* recompute) {
    const scenarios::ResolvedScenario s =
        Resolve(std::string(R"(model: "qwen3-30b-a3b" system: "dgx-h100"
          num_gpus: 16 seq_length: 16384 precision: "bf16"
          layout { pipeline_model_parallel_size: 2
                   expert_model_parallel_size: 8 global_batch_size: 64 }
          recompute { )") +
                recompute + " }");
    const models::MemoryEstimate m =
        models::EstimateMemory(s.model, s.pipeline, s.parallel, s.training,
                               s.system.gpu().memory_gib() * models::kGiB);
    EXPECT_TRUE(m.fits) << recompute;
    return Simulate(s).tflops_per_gpu;
  };
  const double selective = run(
      R"(granularity: "selective" modules: ["moe_act", "layernorm", "moe"])");
  const double full = run(R"(granularity: "full" method: "uniform"
                              num_layers: 1)");
  EXPECT_GT(selective, full);
}

// "HybridEP beats alltoall where the data says so": the workflow card's
// measured winner for Qwen3-30B on 16 H100s (EP16, two nodes) is HybridEP
// (seeds_notes.md §2, phase 4); its all-to-all sends each token once per
// destination rank instead of once per routed expert.
TEST(Replay, HybridEpBeatsAllToAllOnQwen30bAcrossTwoNodes) {
  auto run = [](const char* dispatcher) {
    return Simulate(Resolve(std::string(R"(model: "qwen3-30b-a3b"
      system: "dgx-h100" num_gpus: 16 seq_length: 4096 precision: "bf16"
      dispatcher: ")") + dispatcher +
                            R"("
      layout { expert_model_parallel_size: 16 global_batch_size: 256 })"))
        .tflops_per_gpu;
  };
  EXPECT_GT(run("hybridep"), run("alltoall"));
}

TEST(Replay, TraceIsValidChromeTraceAndDeterministic) {
  const scenarios::ResolvedScenario s = Resolve(Qwen30b(32));
  const StepResult a = Simulate(s, true), b = Simulate(s, true);
  EXPECT_TRUE(CheckChromeTrace(a.trace));
  EXPECT_EQ(a.trace, b.trace);
  EXPECT_EQ(a.step_time_s, b.step_time_s);
}

// Without a trace, runs of serial compute ops merge into one engine op
// (Coalesce): they run back to back either way, so every figure is the same
// with fewer ops.
TEST(Replay, MergedComputeRunsGiveTheSameStep) {
  const scenarios::ResolvedScenario s = Resolve(Qwen30b(64));
  const StepResult detailed = Simulate(s, true), merged = Simulate(s, false);
  EXPECT_LT(merged.ops, detailed.ops);
  EXPECT_EQ(merged.step_time_s, detailed.step_time_s);
  EXPECT_EQ(merged.bubble_fraction, detailed.bubble_fraction);
  for (const auto& [kind, c] : detailed.comm_s) {
    EXPECT_EQ(merged.comm_s.at(kind).exposed_s, c.exposed_s) << kind;
  }
  for (const auto& [name, seconds] : detailed.time_by_op_class_s) {
    EXPECT_NEAR(merged.time_by_op_class_s.at(name), seconds, 1e-9) << name;
  }
}

// The shipped default and the seed layouts (scenarios/seeds/): each resolves
// and replays, and every figure is finite and within its physical range: a
// positive step, 0 < MFU < 1, a bubble in [0, 1), exposed communication
// within total, one stage result per pipeline rank.
TEST(Replay, DefaultAndSeedScenariosArePlausible) {
  for (const char* file :
       {"default.textproto", "seeds/dsv3-256k-h100.textproto",
        "seeds/qwen3-235b-128k-gb200.textproto",
        "seeds/qwen3-next-8k-gb200.textproto",
        "seeds/qwen3-next-32k-gb200.textproto",
        "seeds/qwen3-next-64k-gb200.textproto"}) {
    SCOPED_TRACE(file);
    auto spec = scenarios::LoadScenario(std::string(MOESIM_SOURCE_DIR) +
                                        "/scenarios/" + file);
    ASSERT_TRUE(spec) << spec.error().message;
    auto s = scenarios::Resolve(*spec, file);
    ASSERT_TRUE(s) << s.error().message;
    const StepResult r = Simulate(*s);
    EXPECT_GT(r.step_time_s, 0);
    EXPECT_GT(r.mfu, 0);
    EXPECT_LT(r.mfu, 1);
    EXPECT_GE(r.bubble_fraction, 0);
    EXPECT_LT(r.bubble_fraction, 1);
    for (const auto& [kind, c] : r.comm_s) {
      EXPECT_LE(c.exposed_s, c.total_s + 1e-9) << kind;
      EXPECT_GE(c.exposed_s, 0) << kind;
    }
    EXPECT_EQ(r.stages.size(), static_cast<size_t>(s->parallel.pp));
  }
}

// ---- EP overlap -----------------------------------------------------------

// A GEMM running beside a DeepEP all-to-all shares the GPU with the 20 SMs
// DeepEP holds (Megatron's --moe-deepep-num-sms default): on an H100's 132
// SMs it runs at 112/132 of its speed while the all-to-all lasts, and at
// full speed after it. A 100 us all-to-all beside two 100 us GEMMs: in its
// 100 us the first GEMM does 100 x 112/132 = 84.85 us of its work, the
// other 15.15 us run at full speed (115.15 us); the second is untouched.
// One 200 us GEMM in the same window takes 215.15 us: the same as the two,
// so merging a chain of kernels (Coalesce) does not change the replay.
TEST(EpOverlap, GemmBesideDeepEpSlowsByTheSmShare) {
  auto chain = [](int n, int64_t micros) {
    OpTemplate t;
    for (int i = 0; i < n; ++i) {
      TimedOp gemm;
      gemm.name = "gemm";
      gemm.category = "gemm";
      gemm.duration = Time::Micros(micros);
      gemm.deps = {i == 0 ? kEntry : i - 1};
      t.ops.push_back(gemm);
    }
    t.exit = n - 1;
    return t;
  };
  const double stretch = 132.0 / 112.0;
  const double inside = 100e-6 / stretch;  // work done beside the all-to-all
  // Durations of a chain of `n` GEMMs of `micros` each, beside a 100 us
  // all-to-all.
  auto beside = [&](int n, int64_t micros) {
    const OpTemplate t = chain(n, micros);
    Engine engine;
    const StageStreams streams = OneStage(engine);
    TemplateEmitter emitter(engine, false);
    std::vector<OpId> ids(n, -1);
    emitter.EmitPart(streams, t, 0, n - 1, {{0, n - 1, 0, 0}}, ids, {}, stretch,
                     100e-6);
    EXPECT_TRUE(engine.Run());
    std::vector<Time> out;
    for (const OpId id : ids) out.push_back(engine.duration(id));
    return out;
  };
  const std::vector<Time> two = beside(2, 100);
  EXPECT_EQ(two[0], Time::FromSecondsCeil(100e-6 + (100e-6 - inside)));
  EXPECT_EQ(two[1], Time::Micros(100));
  EXPECT_EQ(beside(1, 200)[0],
            Time::FromSecondsCeil(100e-6 + (200e-6 - inside)));
  // A window longer than the work stretches all of it.
  EXPECT_EQ(beside(2, 10)[1], Time::FromSecondsCeil(10e-6 * stretch));
}

// Tracing keeps every kernel apart where the plain replay merges chains of
// them (Coalesce); the step must not depend on it. Qwen3-30B on 8 GB200s
// with HybridEP and EP overlap (runs.csv ps2606-qwen3-30b-a3b-gb200-8g-mxfp8)
// once took 5.24 s plain and 5.14 s traced, when the kernel the SM-sharing
// window ended in was stretched whole.
TEST(EpOverlap, TraceDoesNotChangeTheStep) {
  const scenarios::ResolvedScenario s = Resolve(R"(model: "qwen3-30b-a3b"
      system: "gb200-nvl72" num_gpus: 8 seq_length: 4096 precision: "mxfp8"
      dispatcher: "hybridep" overlap_moe_expert_parallel_comm: true
      cuda_graph: "full_iteration"
      layout { expert_model_parallel_size: 8 micro_batch_size: 4
               global_batch_size: 512 })");
  const StepResult plain = Simulate(s), with_trace = Simulate(s, true);
  EXPECT_FALSE(with_trace.trace.empty());
  EXPECT_NEAR(with_trace.step_time_s, plain.step_time_s,
              1e-9 * plain.step_time_s);
}

// The same for host launches: a merged run of kernels waits for its first
// kernel's launch only, not for the whole run's host time capped at one
// launch. DeepSeek-V3 on GB200 with attn + moe_router + moe_preprocess
// graphs (runs.csv ps2604-deepseek-v3-gb200-256g-mxfp8, 12.706 s plain and
// 12.694 s traced before) trimmed to 8 layers on 128 GPUs.
TEST(Replay, TraceDoesNotChangeHostLaunches) {
  const scenarios::ResolvedScenario s = Resolve(R"(model: "deepseek-v3"
      system: "gb200-nvl72" num_gpus: 128 seq_length: 4096 precision: "mxfp8"
      num_layers: 8 mtp_num_layers: 0
      dispatcher: "hybridep" cuda_graph: "te:attn;moe_router;moe_preprocess"
      layout { expert_model_parallel_size: 64 pipeline_model_parallel_size: 2
               virtual_pipeline_model_parallel_size: 2
               global_batch_size: 256 })");
  const StepResult plain = Simulate(s), with_trace = Simulate(s, true);
  EXPECT_NEAR(with_trace.step_time_s, plain.step_time_s,
              1e-9 * plain.step_time_s);
}

// Megatron's merged forward-backward 1F1B on Qwen3-30B (16 H100, EP16,
// HybridEP, the comm-overlap card's A/B): with the overlap some of the EP
// all-to-all hides behind the other half's compute, so the step is shorter;
// without it none of it is hidden.
TEST(EpOverlap, HidesAllToAllAndShortensTheStep) {
  auto run = [](bool overlap) {
    return Simulate(Resolve(std::string(R"(model: "qwen3-30b-a3b"
      system: "dgx-h100" num_gpus: 16 seq_length: 4096 precision: "bf16"
      dispatcher: "hybridep" overlap_moe_expert_parallel_comm: )") +
                            (overlap ? "true" : "false") + R"(
      layout { expert_model_parallel_size: 16 global_batch_size: 256 })"));
  };
  const StepResult plain = run(false), overlapped = run(true);
  EXPECT_EQ(plain.comm_s.at("ep").exposed_s, plain.comm_s.at("ep").total_s);
  EXPECT_LT(overlapped.comm_s.at("ep").exposed_s,
            0.8 * overlapped.comm_s.at("ep").total_s);
  EXPECT_LT(overlapped.step_time_s, plain.step_time_s);
}

// Megatron's --delay-wgrad-compute (model_chunk_schedule_plan.py,
// TransformerLayerSchedulePlan.run: mlp.backward, mlp.backward_dw, then the
// dispatch backward, which waits for the dgrad only; attn.backward_dw after
// the attention backward). A layer's backward: combine.bwd, fc2 dgrad and
// wgrad, act.bwd, fc1 dgrad and wgrad, dispatch.bwd, qkv dgrad and wgrad.
// The wgrads move: fc2's and fc1's to just after dispatch.bwd, which now
// waits for fc1.dgrad, qkv's to the end, where the next layer's pass no
// longer waits for it (handoff qkv.dgrad). Timed on one stage: dgrads
// 100 us, wgrads 100 us, act.bwd 50 us, exchanges 150 us. Undeferred the
// dispatch starts after fc1.wgrad, at 150 + 350 + 100 = 600 us; deferred
// after fc1.dgrad, at 150 + 250 = 400 us, beside the two wgrads (200 us),
// so qkv.dgrad starts when both are done, at max(400 + 150, 400 + 200) =
// 600 us instead of 600 + 150 = 750 us.
TEST(EpOverlap, DelayWgradComputeRunsWeightGradientsBesideTheDispatch) {
  auto op = [](const char* name, StreamKind stream, int64_t micros, int dep,
               bool wgrad) {
    TimedOp o;
    o.name = name;
    o.category = stream == StreamKind::kEp ? "ep" : "gemm";
    o.stream = stream;
    o.duration = Time::Micros(micros);
    o.deps = {dep};
    o.wgrad = wgrad;
    return o;
  };
  const StreamKind c = StreamKind::kCompute, ep = StreamKind::kEp;
  OpTemplate t;
  t.ops = {op("combine.bwd", ep, 150, kEntry, false),
           op("fc2.dgrad", c, 100, 0, false),
           op("fc2.wgrad", c, 100, 1, true),
           op("act.bwd", c, 50, 2, false),
           op("fc1.dgrad", c, 100, 3, false),
           op("fc1.wgrad", c, 100, 4, true),
           op("dispatch.bwd", ep, 150, 5, false),
           op("qkv.dgrad", c, 100, 6, false),
           op("qkv.wgrad", c, 100, 7, true)};
  t.exit = 8;
  const OpTemplate d = DeferWeightGradients(t);
  std::vector<std::string> names;
  for (const TimedOp& o : d.ops) names.push_back(o.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"combine.bwd", "fc2.dgrad", "act.bwd",
                                      "fc1.dgrad", "dispatch.bwd", "fc2.wgrad",
                                      "fc1.wgrad", "qkv.dgrad", "qkv.wgrad"}));
  EXPECT_EQ(d.ops[2].deps, std::vector<int>{1});  // act.bwd <- fc2.dgrad
  EXPECT_EQ(d.ops[4].deps, std::vector<int>{3});  // dispatch <- fc1.dgrad
  EXPECT_EQ(d.ops[5].deps, std::vector<int>{1});  // fc2.wgrad <- its dgrad
  EXPECT_EQ(d.ops[7].deps, std::vector<int>{4});  // qkv.dgrad <- dispatch
  EXPECT_TRUE(d.ops[5].deferred && d.ops[6].deferred && d.ops[8].deferred);
  EXPECT_EQ(d.exit, 8);
  EXPECT_EQ(d.handoff, 7);
  EXPECT_EQ(t.HandoffOrExit(), 8);
  // The EP-overlap parts: the wgrads close the dispatch's part.
  const std::vector<TemplatePart> parts = SplitAtEpComm(d, RankContext{});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].first, 1);
  EXPECT_EQ(parts[1].ep, 4);
  EXPECT_EQ(parts[1].last, 6);
  EXPECT_EQ(parts[2].ep, -1);
  auto qkv_start = [](const OpTemplate& tt, int qkv) {
    Engine engine;
    const StageStreams streams = OneStage(engine);
    TemplateEmitter emitter(engine, false);
    const int n = static_cast<int>(tt.ops.size());
    std::vector<OpId> ids(n, -1);
    emitter.EmitPart(streams, tt, 0, n - 1, {{0, n - 1, 0, 0}}, ids, {});
    EXPECT_TRUE(engine.Run());
    return engine.timing(ids[qkv]).start;
  };
  EXPECT_EQ(qkv_start(t, 7), Time::Micros(750));
  EXPECT_EQ(qkv_start(d, 7), Time::Micros(600));
}

// On a replayed step: the deferral only moves work the merged schedule runs
// beside an exchange, so the step gets no longer, and shorter where the
// dispatch backward was exposed; tracing (which keeps kernels apart) gives
// the same step. Qwen3-30B on 32 H100s, EP32 HybridEP over four nodes (at
// EP16 over two, the EP-overlap A/B's layout, the step is host-bound and the
// deferral moves nothing it waits on).
TEST(EpOverlap, DelayWgradComputeShortensAnExposedStep) {
  auto scenario = [](bool delay) {
    return Resolve(std::string(R"(model: "qwen3-30b-a3b"
      system: "dgx-h100" num_gpus: 32 seq_length: 4096 precision: "bf16"
      dispatcher: "hybridep" overlap_moe_expert_parallel_comm: true
      delay_wgrad_compute: )") +
                   (delay ? "true" : "false") + R"(
      layout { expert_model_parallel_size: 32 global_batch_size: 256 })");
  };
  const StepResult plain = Simulate(scenario(false));
  const scenarios::ResolvedScenario delayed = scenario(true);
  const StepResult deferred = Simulate(delayed);
  EXPECT_LT(deferred.step_time_s, plain.step_time_s);
  EXPECT_LT(deferred.comm_s.at("ep").exposed_s,
            plain.comm_s.at("ep").exposed_s);
  // The same kernels run: no compute time is created or lost.
  for (const auto& [name, seconds] : plain.time_by_op_class_s) {
    EXPECT_NEAR(deferred.time_by_op_class_s.at(name), seconds, 1e-9) << name;
  }
  EXPECT_NEAR(Simulate(delayed, true).step_time_s, deferred.step_time_s,
              1e-9 * deferred.step_time_s);
}

// ---- Calibration profiles (calibration/profile.h) --------------------------

StepResult SimulateWith(const scenarios::ResolvedScenario& s,
                        const calibration::Profile& profile) {
  return test_support::Simulate(s, {}, profile);
}

// The identity profile changes no bit of the step: every factor multiplies
// or divides by exactly 1.
TEST(Calibration, IdentityProfileIsNoProfile) {
  const scenarios::ResolvedScenario s = Resolve(Qwen30b(32));
  const StepResult a = Simulate(s);
  calibration::Profile identity;
  identity.by_gpu.push_back({"h100", calibration::Corrections{}});
  const StepResult b = SimulateWith(s, identity);
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.time_by_op_class_s, b.time_by_op_class_s);
  for (const auto& [kind, c] : a.comm_s) {
    EXPECT_EQ(c.exposed_s, b.comm_s.at(kind).exposed_s) << kind;
  }
  EXPECT_EQ(a.host_busy_s, b.host_busy_s);
}

// gemm_efficiency 0.5 on a GEMM-bound dense step (llama3-8b, 4096 tokens per
// micro-batch: every linear layer is a >= 4096 x 4096 x 4096 GEMM) halves
// every GEMM's compute rate, so the GEMM class's busy time nearly doubles:
// the HBM traffic part of a GEMM's time does not move (cost_model.h; the
// H100 BF16 cuBLAS fit writes the output after the compute, 4096^2 x 2 B at
// 3015 GB/s = 11 us of the 189 us 4096^3 row, 6%), so the ratio is 2 less
// the traffic share, above 1.9. Attention and memory-bound kernels do not
// move; the step grows by less than 2x (they and the communication are the
// rest of it).
TEST(Calibration, HalfGemmEfficiencyDoublesTheGemmTime) {
  const scenarios::ResolvedScenario s =
      Resolve(R"(model: "llama3-8b" system: "dgx-h100" num_gpus: 8
        seq_length: 4096 precision: "bf16" layout { global_batch_size: 16 })");
  const StepResult a = Simulate(s);
  calibration::Profile half;
  half.all.at(calibration::Factor::kGemm) = 0.5;
  const StepResult b = SimulateWith(s, half);
  ASSERT_GT(a.time_by_op_class_s.at("gemm"), 0);
  const double ratio =
      b.time_by_op_class_s.at("gemm") / a.time_by_op_class_s.at("gemm");
  EXPECT_GT(ratio, 1.9);
  EXPECT_LT(ratio, 2.0);
  EXPECT_EQ(b.time_by_op_class_s.at("attention"),
            a.time_by_op_class_s.at("attention"));
  EXPECT_EQ(b.time_by_op_class_s.at("memory_bound"),
            a.time_by_op_class_s.at("memory_bound"));
  EXPECT_GT(b.step_time_s, a.step_time_s);
  EXPECT_LT(b.step_time_s, 2 * a.step_time_s);
}

// A profile for another GPU leaves this one alone; nvlink_comm_efficiency
// 0.5 on the H100 slows the data-parallel reduce-scatters and all-gathers
// inside the 8-GPU NVLink node, and no compute.
TEST(Calibration, CommunicationFactorsReachTheNetworkModel) {
  const scenarios::ResolvedScenario s =
      Resolve(R"(model: "llama3-8b" system: "dgx-h100" num_gpus: 8
        seq_length: 4096 precision: "bf16" layout { global_batch_size: 16 })");
  const StepResult a = Simulate(s);
  calibration::Profile other;
  other.by_gpu.push_back({"b200", calibration::Corrections{
                                      {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2}}});
  EXPECT_EQ(SimulateWith(s, other).step_time_s, a.step_time_s);
  calibration::Profile nvlink;
  nvlink.all.at(calibration::Factor::kNvlinkComm) = 0.5;
  const StepResult b = SimulateWith(s, nvlink);
  EXPECT_GT(b.comm_s.at("dp").total_s, 1.5 * a.comm_s.at("dp").total_s);
  EXPECT_EQ(b.time_by_op_class_s.at("gemm"), a.time_by_op_class_s.at("gemm"));
}

// A zero-bubble schedule's backward in two steps (SplitWeightGradients):
// the input gradient keeps every op but the TE linears' weight gradients,
// an op that waited for one now waiting for what that one waited for; the
// weight gradients keep their order and wait for nothing else of theirs.
TEST(ZeroBubble, SplitWeightGradientsPartsTheBackward) {
  auto op = [](const char* name, StreamKind stream, int dep, bool wgrad) {
    TimedOp o;
    o.name = name;
    o.category = stream == StreamKind::kEp ? "ep" : "gemm";
    o.stream = stream;
    o.duration = Time::Micros(100);
    o.deps = {dep};
    o.wgrad = wgrad;
    return o;
  };
  const StreamKind c = StreamKind::kCompute, ep = StreamKind::kEp;
  OpTemplate t;
  t.ops = {op("combine.bwd", ep, kEntry, false), op("fc2.dgrad", c, 0, false),
           op("fc2.wgrad", c, 1, true),          op("act.bwd", c, 2, false),
           op("fc1.dgrad", c, 3, false),         op("fc1.wgrad", c, 4, true),
           op("dispatch.bwd", ep, 5, false),     op("qkv.dgrad", c, 6, false),
           op("qkv.wgrad", c, 7, true)};
  t.exit = 8;
  const SplitBackward split = SplitWeightGradients(t);
  auto names = [](const OpTemplate& part) {
    std::vector<std::string> out;
    for (const TimedOp& o : part.ops) out.push_back(o.name);
    return out;
  };
  EXPECT_EQ(names(split.input), (std::vector<std::string>{
                                    "combine.bwd", "fc2.dgrad", "act.bwd",
                                    "fc1.dgrad", "dispatch.bwd", "qkv.dgrad"}));
  EXPECT_EQ(names(split.weight),
            (std::vector<std::string>{"fc2.wgrad", "fc1.wgrad", "qkv.wgrad"}));
  EXPECT_EQ(split.input.ops[2].deps, std::vector<int>{1});  // act <- fc2.dgrad
  EXPECT_EQ(split.input.ops[4].deps, std::vector<int>{3});  // dispatch
  EXPECT_EQ(split.input.ops[5].deps, std::vector<int>{4});  // qkv.dgrad
  for (const TimedOp& o : split.weight.ops)
    EXPECT_EQ(o.deps, std::vector<int>{kEntry}) << o.name;
  EXPECT_EQ(split.input.exit, 5);
  EXPECT_EQ(split.weight.exit, 2);
}

// On a replayed step: ZB-H1 runs the same kernels as 1F1B, so each stage's
// compute time is the same, and fills the bubbles with weight gradients, so
// each stage idles less and the step is shorter. Llama 3 8B on 8 H100s,
// TP2 PP4, 16 micro-batches of 4K tokens (compute-bound).
TEST(ZeroBubble, ZbH1KeepsTheComputeAndShortensTheStep) {
  const std::string layout = R"(model: "llama3-8b" system: "dgx-h100"
    num_gpus: 8 seq_length: 4096 precision: "bf16"
    layout { tensor_model_parallel_size: 2 pipeline_model_parallel_size: 4
             micro_batch_size: 1 global_batch_size: 16 })";
  const StepResult one_f_one_b = Simulate(Resolve(layout));
  const StepResult zb =
      Simulate(Resolve(layout + " pipeline_schedule: \"zb-h1\""));
  ASSERT_EQ(zb.stages.size(), one_f_one_b.stages.size());
  for (size_t r = 0; r < zb.stages.size(); ++r) {
    EXPECT_NEAR(zb.stages[r].compute_s, one_f_one_b.stages[r].compute_s,
                1e-9 * one_f_one_b.stages[r].compute_s)
        << "stage " << r;
    EXPECT_LT(zb.stages[r].idle_s, one_f_one_b.stages[r].idle_s)
        << "stage " << r;
  }
  EXPECT_LT(zb.step_time_s, one_f_one_b.step_time_s);
}

}  // namespace
}  // namespace moesim::sim
