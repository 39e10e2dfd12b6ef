// Megatron-FSDP's per-layer gathers and reductions and CPU activation
// offloading's copies in the replay (sim/step_builder.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "calibration/tables.h"
#include "models/memory.h"
#include "sim/replay.h"
#include "sim/step_builder.h"
#include "tests/sim/simulate.h"

namespace moesim::sim {
namespace {

using test_support::Resolve;
using test_support::Simulate;

std::string Llama8b(int gbs, const std::string& extra) {
  return R"(model: "llama3-8b" system: "dgx-h100" num_gpus: 8
      seq_length: 4096 precision: "bf16" )" +
         extra + " layout { global_batch_size: " + std::to_string(gbs) + " }";
}

// ZeRO-3 gathers every layer's weights before its forward and its backward
// and reduce-scatters its gradients after every backward: the data-parallel
// traffic is the same for every micro-batch, so two micro-batches move twice
// what one does. DDP (distributed optimizer) gathers and reduces once per
// step whatever the micro-batch count; with one micro-batch ZeRO-3 adds one
// more gather of every weight, at least a third more traffic (a bf16 gather
// against an fp32 reduce-scatter of the same parameters).
TEST(MegatronFsdp, GathersAndReducesEveryMicroBatch) {
  const std::string fsdp =
      "use_megatron_fsdp: true "
      "data_parallel_sharding_strategy: \"optim_grads_params\"";
  const double one =
      Simulate(Resolve(Llama8b(8, fsdp))).comm_s.at("dp").total_s;
  const double two =
      Simulate(Resolve(Llama8b(16, fsdp))).comm_s.at("dp").total_s;
  const double ddp = Simulate(Resolve(Llama8b(8, ""))).comm_s.at("dp").total_s;
  const double ddp_two =
      Simulate(Resolve(Llama8b(16, ""))).comm_s.at("dp").total_s;
  EXPECT_NEAR(two / one, 2.0, 1e-6);
  EXPECT_NEAR(ddp_two / ddp, 1.0, 1e-6);
  EXPECT_GT(one / ddp, 1.3);
}

// cpu_offloading of 16 of 32 layers: each offloaded layer's stored
// activations (the memory model's bytes) cross to the host after its
// forward and back before its backward, at the host-copy table's rates
// (calibration/tables/h100/host_copy.csv), once per micro-batch. The copies
// down and the reloads run on their own streams (TE's offload handler has a
// d2h and an h2d stream); the step never gets shorter.
TEST(CpuOffloading, CopiesWhatTheMemoryModelOffloadsAtTheTableRates) {
  const scenarios::ResolvedScenario s = Resolve(
      Llama8b(16, "cpu_offloading: true cpu_offloading_num_layers: 16"));
  const StepResult r = Simulate(s);
  const StepResult base = Simulate(Resolve(Llama8b(16, "")));
  auto tables = calibration::LoadTables("h100");
  ASSERT_TRUE(tables);
  double d2h = 0, h2d = 0;
  for (const auto& row : tables->host_copy) {
    double& rate = row.direction == "d2h" ? d2h : h2d;
    rate = std::max(rate, row.gb_s);
  }
  const models::MemoryEstimate m = models::EstimateMemory(
      s.model, s.pipeline, s.parallel, s.training, 80 * models::kGiB);
  const double bytes = m.stages[0].activation_host_bytes;
  const double microbatches = 2;  // GBS 16 / DP 8
  ASSERT_TRUE(r.comm_s.contains("copy"));
  ASSERT_TRUE(r.comm_s.contains("copy_h2d"));
  EXPECT_NEAR(
      r.comm_s.at("copy").total_s / (microbatches * bytes / (d2h * 1e9)), 1.0,
      1e-6);
  EXPECT_NEAR(
      r.comm_s.at("copy_h2d").total_s / (microbatches * bytes / (h2d * 1e9)),
      1.0, 1e-6);
  EXPECT_FALSE(base.comm_s.contains("copy"));
  EXPECT_FALSE(base.comm_s.contains("copy_h2d"));
  EXPECT_GE(r.step_time_s, base.step_time_s);
}

// Transformer Engine's layer_window_map (cpu_offload.py,
// AsyncDoubleBufferGroupOffloadHandler.__init__): floor(L/N)(k + 1) - 1,
// plus k + 1 for the first L mod N layers and L mod N for the rest. Of 126
// layers with 95 offloaded (Llama 3.1 405B's recipe row): 126 // 95 = 1,
// 126 % 95 = 31, so layer k's copy is due by layer 2k + 1 for k < 31 and
// by layer k + 31 after; of 80 with 40: 2k + 1 for every layer.
TEST(CpuOffloading, WindowsFollowTransformerEngine) {
  const std::vector<int> w = internal::OffloadWindows(126, 95);
  ASSERT_EQ(w.size(), 95u);
  EXPECT_EQ(w[0], 1);
  EXPECT_EQ(w[30], 61);
  EXPECT_EQ(w[31], 62);
  EXPECT_EQ(w[94], 125);
  const std::vector<int> even = internal::OffloadWindows(80, 40);
  for (int k = 0; k < 40; ++k) EXPECT_EQ(even[k], 2 * k + 1) << k;
}

// Llama 3 70B on 8 GB200s (TP4, 8 micro-batches of 8K), 50 of 80 layers
// offloaded. Each copy down (about 560 MB at the host-copy table's
// NVLink-C2C rate, 377 GB/s: 1.5 ms) starts when TE's handler syncs and must be
// done by the end of layer w(k) (windows of 2k + 1, then k + 30): at least a
// whole layer's forward, about 9 ms, hides it; each reload hides behind a
// layer's backward. So the step is as long as without offloading. Waiting for
// each copy at the start of the next layer, as if the window were one layer
// counted from the copy's own, exposed every copy down: 8.9 % longer.
TEST(CpuOffloading, CopiesHideBehindTheirWindows) {
  const std::string base = R"(model: "llama3-70b" system: "gb200-nvl72"
      num_gpus: 8 seq_length: 8192 precision: "bf16"
      layout { tensor_model_parallel_size: 4 global_batch_size: 16 })";
  const StepResult off = Simulate(
      Resolve(base + " cpu_offloading: true cpu_offloading_num_layers: 50"));
  const StepResult none = Simulate(Resolve(base));
  ASSERT_TRUE(off.comm_s.contains("copy"));
  EXPECT_GE(off.step_time_s, none.step_time_s);
  EXPECT_LT(off.step_time_s, 1.005 * none.step_time_s);
}

double TableRate(const char* direction) {
  auto tables = calibration::LoadTables("h100");
  EXPECT_TRUE(tables);
  double rate = 0;
  for (const auto& row : tables->host_copy) {
    if (row.direction == direction) rate = std::max(rate, row.gb_s);
  }
  return rate * 1e9;
}

// Fine-grained offloading of expert_fc1 on Qwen3-30B-A3B (48 MoE layers),
// 8 H100s EP8 PP1, two micro-batches per rank (GBS 16 over DP 8). Each
// layer's group is linear_fc1's saved input, 32,768 rows x 2048 x 2 B =
// 128 MiB (tests/models/fine_grained_offload_test.cc). Without a pipeline
// every forward's backward comes next, so Megatron keeps each micro-batch's
// last layer on the GPU (should_bulk_offload): 47 layers go down on the copy
// stream and come back on the reload stream per micro-batch, at the
// host-copy table's rates. The copies hide behind a layer of compute each:
// the step grows by less than 2 %.
TEST(FineGrainedOffload, CopiesEachGroupDownAndBackAtTheTableRates) {
  const std::string base = R"(model: "qwen3-30b-a3b" system: "dgx-h100"
      num_gpus: 8 seq_length: 4096 precision: "bf16"
      layout { expert_model_parallel_size: 8 global_batch_size: 16 })";
  const StepResult off = Simulate(Resolve(base + R"(
      fine_grained_activation_offloading: true offload_modules: "expert_fc1")"));
  const StepResult none = Simulate(Resolve(base));
  const double bytes = 2 * 47 * (4096.0 * 8 * 2048 * 2);
  ASSERT_TRUE(off.comm_s.contains("copy"));
  ASSERT_TRUE(off.comm_s.contains("copy_h2d"));
  EXPECT_NEAR(off.comm_s.at("copy").total_s / (bytes / TableRate("d2h")), 1.0,
              1e-6);
  EXPECT_NEAR(off.comm_s.at("copy_h2d").total_s / (bytes / TableRate("h2d")),
              1.0, 1e-6);
  EXPECT_FALSE(none.comm_s.contains("copy"));
  EXPECT_GE(off.step_time_s, none.step_time_s);
  EXPECT_LT(off.step_time_s, 1.02 * none.step_time_s);
}

// --offload-optimizer-states: the master weights and moments (12 B per
// parameter of the shard) come back before the optimizer step, exposed,
// and go down again beside the next step's start.
TEST(OptimizerStateOffload, ReloadsTheStatesBeforeTheStep) {
  const std::string base = R"(model: "qwen3-30b-a3b" system: "dgx-h100"
      num_gpus: 8 seq_length: 4096 precision: "bf16"
      layout { expert_model_parallel_size: 8 global_batch_size: 16 })";
  const scenarios::ResolvedScenario s =
      Resolve(base + " offload_optimizer_states: true");
  const StepResult off = Simulate(s);
  const StepResult none = Simulate(Resolve(base));
  const models::MemoryEstimate m = models::EstimateMemory(
      s.model, s.pipeline, s.parallel, s.training, 80 * models::kGiB);
  const double bytes = m.stages[0].optimizer_host_bytes;
  ASSERT_GT(bytes, 0);
  EXPECT_NEAR(off.comm_s.at("copy_h2d").total_s / (bytes / TableRate("h2d")),
              1.0, 1e-6);
  EXPECT_NEAR(off.comm_s.at("copy").total_s / (bytes / TableRate("d2h")), 1.0,
              1e-6);
  EXPECT_NEAR(off.step_time_s - none.step_time_s, bytes / TableRate("h2d"),
              0.05 * bytes / TableRate("h2d"));
}

}  // namespace
}  // namespace moesim::sim
