// The periodic steady-state shortcut (sim/periodic.h): which micro-batch
// counts it replays, when it extends them, and that a replay through it
// gives what replaying every micro-batch gives.
#include "sim/periodic.h"

#include <gtest/gtest.h>

#include <string>

#include "scenarios/scenario.h"
#include "sim/replay.h"
#include "tests/scenarios/resolve_text.h"
#include "tests/sim/simulate.h"

namespace moesim::sim {
namespace {

using internal::ExtrapolateStep;
using internal::PeriodicSamples;
using test_support::Resolve;
using test_support::Simulate;

// The default scenario's layout: PP 8 x VPP 4. Stage 0 warms up with
// (8 - 1) x 2 + (4 - 1) x 8 = 38 forwards (Megatron's schedules.py), 10
// micro-batches of 4 chunks; two periods of 8 more make 26, and the next
// count in 128's class mod 8 is 32.
TEST(PeriodicSamples, InterleavedCountsArePeriodsOfPpPastTheWarmup) {
  const auto samples = PeriodicSamples(8, 4, 128);
  ASSERT_TRUE(samples);
  EXPECT_EQ((*samples)[0], 32);
  EXPECT_EQ((*samples)[1], 40);
  EXPECT_EQ((*samples)[2], 48);
  // 4096 micro-batches: the same counts. 130: 130 = 2 (mod 8), so 26.
  EXPECT_EQ(PeriodicSamples(8, 4, 4096), samples);
  const auto odd = PeriodicSamples(8, 4, 130);
  ASSERT_TRUE(odd);
  EXPECT_EQ((*odd)[0], 26);
}

// Without interleaving the period is one micro-batch. PP 4 warms up with 3
// (plus two periods: 5), and SteadyWindow wants warmup + 2 = 5 steady steps
// compared, after as many steady steps, with micro-batches past the first
// and before the last: 10 micro-batches are the fewest that hold them on
// stage 0 (steps 9-12 and 14 of 20), so the samples are 8, 9, 10.
TEST(PeriodicSamples, PlainOneFOneBPeriodIsOneMicrobatch) {
  const auto samples = PeriodicSamples(4, 1, 64);
  ASSERT_TRUE(samples);
  EXPECT_EQ((*samples)[0], 8);
  EXPECT_EQ((*samples)[2], 10);
  EXPECT_EQ(internal::SteadyWindow(0, 4, 1, 10).size(), 5u);
  EXPECT_TRUE(internal::SteadyWindow(0, 4, 1, 9).empty());
  // A second try starts at its least count.
  const auto again = PeriodicSamples(4, 1, 64, 16);
  ASSERT_TRUE(again);
  EXPECT_EQ((*again)[0], 16);
}

// The three replays cost 3 (m0 + p) micro-batches: no shortcut unless that
// is less than the step's own.
TEST(PeriodicSamples, NoneWhenTheSamplesCostAsMuchAsTheStep) {
  EXPECT_FALSE(PeriodicSamples(8, 4, 120));  // 3 x (32 + 8) = 120
  EXPECT_TRUE(PeriodicSamples(8, 4, 128));   // 120 < 128
  EXPECT_FALSE(PeriodicSamples(1, 1, 9));    // 3 x (2 + 1) = 9
  EXPECT_TRUE(PeriodicSamples(1, 1, 10));
}

// The samples below grow by 2 s a period; SteadyShift of the longest
// replay must say the same.
constexpr Time kShift = Time::Seconds(2);

StepResult Sample(double base, double per_period, int k) {
  StepResult r;
  r.step_time_s = base + per_period * k;
  r.host_busy_s = 0.5 * per_period * k;
  r.critical_path_s["compute"] = r.step_time_s;
  StageTime st;
  st.compute_s = 0.8 * per_period * k;
  st.idle_s = base;
  st.memory_peak_bytes = 1e9;
  r.stages.push_back(st);
  r.ops = 100 + 10 * static_cast<size_t>(k);
  return r;
}

// Figures affine in the period are extended to the step's count; derived
// ones (bubble_fraction) follow from the extended figures.
TEST(ExtrapolateStep, ExtendsAffineFiguresAndDerivesTheBubble) {
  const StepResult a = Sample(1, 2, 0), b = Sample(1, 2, 1),
                   c = Sample(1, 2, 2);
  const auto out =
      ExtrapolateStep(a, b, c, {4, 5, 6}, 16, kShift);  // 10 periods on
  ASSERT_TRUE(out);
  EXPECT_DOUBLE_EQ(out->step_time_s, 1 + 2 * 12);
  EXPECT_DOUBLE_EQ(out->host_busy_s, 0.5 * 2 * 12);
  EXPECT_DOUBLE_EQ(out->stages[0].compute_s, 0.8 * 2 * 12);
  EXPECT_DOUBLE_EQ(out->stages[0].memory_peak_bytes, 1e9);
  EXPECT_EQ(out->ops, 220u);
  EXPECT_DOUBLE_EQ(out->bubble_fraction, 1.0 / 25);
}

TEST(ExtrapolateStep, RefusesFiguresThatAreNotAffine) {
  const StepResult a = Sample(1, 2, 0), b = Sample(1, 2, 1);
  StepResult c = Sample(1, 2, 2);
  c.step_time_s += 1e-12;  // one picosecond off the line
  EXPECT_FALSE(ExtrapolateStep(a, b, c, {4, 5, 6}, 16, kShift));
  c = Sample(1, 2, 2);
  c.warnings.push_back("only in the longest sample");
  EXPECT_FALSE(ExtrapolateStep(a, b, c, {4, 5, 6}, 16, kShift));
}

// Affine samples whose longest replay did not repeat its ops a period apart
// (no shift), or whose steady ops moved by more or less than the step grew,
// are a transient.
TEST(ExtrapolateStep, RefusesSamplesWithoutTheSteadyShift) {
  const StepResult a = Sample(1, 2, 0), b = Sample(1, 2, 1),
                   c = Sample(1, 2, 2);
  EXPECT_FALSE(ExtrapolateStep(a, b, c, {4, 5, 6}, 16, std::nullopt));
  EXPECT_FALSE(
      ExtrapolateStep(a, b, c, {4, 5, 6}, 16, kShift + Time::Picos(1)));
  EXPECT_FALSE(
      ExtrapolateStep(a, b, c, {4, 5, 6}, 16, kShift - Time::Picos(1)));
}

// A stream busier per period than the step grows had a lead that later
// periods use up; then it binds, so the samples are not the steady state.
TEST(ExtrapolateStep, RefusesAStreamThatOutgrowsTheStep) {
  StepResult a = Sample(1, 2, 0), b = Sample(1, 2, 1), c = Sample(1, 2, 2);
  a.stages[0].host_busy_s = 0.5;
  b.stages[0].host_busy_s = 2.6;
  c.stages[0].host_busy_s = 4.7;  // 2.1 a period against the step's 2
  EXPECT_FALSE(ExtrapolateStep(a, b, c, {4, 5, 6}, 16, kShift));
}

// The default scenario at four times its global batch (512 micro-batches):
// through the shortcut and micro-batch by micro-batch, the same step to the
// picosecond and the same figures to 1e-9.
TEST(PeriodicReplay, DefaultScenarioMatchesEveryMicrobatch) {
  auto spec = scenarios::LoadScenario(std::string(MOESIM_SOURCE_DIR) +
                                      "/scenarios/default.textproto");
  ASSERT_TRUE(spec) << spec.error().message;
  spec->mutable_layout()->set_global_batch_size(512);
  auto s = scenarios::Resolve(*spec, "test");
  ASSERT_TRUE(s) << s.error().message;
  ReplayOptions every;
  every.periodic = false;
  const StepResult fast = Simulate(*s), exact = Simulate(*s, every);
  ASSERT_TRUE(fast.periodic_samples);
  EXPECT_FALSE(exact.periodic_samples);
  EXPECT_EQ(fast.step_time_s, exact.step_time_s);
  EXPECT_EQ(fast.ops, exact.ops);
  EXPECT_NEAR(fast.bubble_fraction, exact.bubble_fraction, 1e-9);
  ASSERT_EQ(fast.stages.size(), exact.stages.size());
  for (size_t i = 0; i < fast.stages.size(); ++i) {
    EXPECT_NEAR(fast.stages[i].compute_s, exact.stages[i].compute_s,
                1e-9 * exact.stages[i].compute_s);
    EXPECT_NEAR(fast.stages[i].memory_peak_bytes,
                exact.stages[i].memory_peak_bytes, 1);
  }
  for (const auto& [kind, seconds] : exact.critical_path_s) {
    EXPECT_NEAR(fast.critical_path_s.at(kind), seconds, 1e-9 * (1 + seconds))
        << kind;
  }
}

// Moonlight-16B on 16 H100s at PP 1 (calibration/runs/runs.csv,
// card-moonlight-16b-a3b-h100-16g-bf16-func, 32 micro-batches): the host
// launches slower than the GPU runs but starts first, so the GPU binds for
// the first 6 micro-batches and the host from the 7th. Samples of 2, 3 and
// 4 were affine but 2.2% short (the stream-outgrowth check refused them);
// the steady window puts the samples at 8, 9 and 10, past the switch, and
// they give the step to the picosecond.
TEST(PeriodicReplay, HostThatBindsLaterIsBehindTheSamples) {
  const scenarios::ResolvedScenario s = Resolve(R"(
    model: "moonlight-16b-a3b" system: "dgx-h100" num_gpus: 16
    seq_length: 4096
    layout { tensor_model_parallel_size: 1 context_parallel_size: 1
             expert_model_parallel_size: 8 expert_tensor_parallel_size: 1
             pipeline_model_parallel_size: 1 micro_batch_size: 2
             global_batch_size: 1024 }
    precision: "bf16" dispatcher: "hybridep" cuda_graph: "none"
    overlap_moe_expert_parallel_comm: true delay_wgrad_compute: true
    manual_gc: true routing: "dropless_natural" mtp_num_layers: 0
    use_precision_aware_optimizer: true exp_avg_dtype: "bf16"
    main_grads_dtype: "bf16")");
  ReplayOptions every;
  every.periodic = false;
  const StepResult fast = Simulate(s), exact = Simulate(s, every);
  ASSERT_TRUE(fast.periodic_samples);
  EXPECT_EQ((*fast.periodic_samples)[0], 8);
  EXPECT_EQ(fast.step_time_s, exact.step_time_s);
  EXPECT_NEAR(fast.host_busy_s, exact.host_busy_s, 1e-9);
}

// GPT-OSS-20B on 16 H100s, PP 4 (calibration/runs/runs.csv,
// card-gpt-oss-20b-h100-16g-bf16-func, 256 micro-batches): the loss stage's
// per-step host work grows with the micro-batches (a view each,
// StepHostCallsOf) and reaches the critical path only past about 50 of
// them. Samples of 8-10 micro-batches priced with their own count were
// affine but 0.05% short; priced with the step's 256 they give its step to
// the picosecond.
TEST(PeriodicReplay, PerStepHostWorkIsPricedForTheWholeStep) {
  const scenarios::ResolvedScenario s = Resolve(R"(
    model: "gpt-oss-20b" system: "dgx-h100" num_gpus: 16 seq_length: 4096
    layout { tensor_model_parallel_size: 2 context_parallel_size: 1
             expert_model_parallel_size: 4 expert_tensor_parallel_size: 1
             pipeline_model_parallel_size: 4 micro_batch_size: 1
             global_batch_size: 512 }
    precision: "bf16" dispatcher: "alltoall" cuda_graph: "none"
    manual_gc: true routing: "dropless_natural" mtp_num_layers: 0)");
  ReplayOptions every;
  every.periodic = false;
  const StepResult fast = Simulate(s), exact = Simulate(s, every);
  ASSERT_TRUE(fast.periodic_samples);
  EXPECT_EQ(fast.step_time_s, exact.step_time_s);
  EXPECT_NEAR(fast.critical_path_s.at("host"), exact.critical_path_s.at("host"),
              1e-9);
}

// No shortcut where durations are not fixed (the flow network) or every op
// is wanted (a trace).
TEST(PeriodicReplay, NotOnTheFlowNetworkNorForATrace) {
  const scenarios::ResolvedScenario s = Resolve(R"(
    model: "qwen3-30b-a3b" system: "dgx-h100" num_gpus: 16 seq_length: 4096
    layout { tensor_model_parallel_size: 1 expert_model_parallel_size: 8
             pipeline_model_parallel_size: 2 micro_batch_size: 1
             global_batch_size: 2048 }
    precision: "bf16")");
  EXPECT_TRUE(Simulate(s).periodic_samples);
  ReplayOptions flow;
  flow.network = NetworkKind::kFlow;
  EXPECT_FALSE(Simulate(s, flow).periodic_samples);
  ReplayOptions trace;
  trace.trace = true;
  EXPECT_FALSE(Simulate(s, trace).periodic_samples);
}

}  // namespace
}  // namespace moesim::sim
