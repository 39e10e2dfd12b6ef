// Megatron-FSDP's per-layer gathers and reductions and CPU activation
// offloading's copies in the replay (sim/step_builder.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "calibration/tables.h"
#include "models/memory.h"
#include "sim/replay.h"
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
  const double one = Simulate(Resolve(Llama8b(8, fsdp))).comm_s.at("dp").total_s;
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
// run on their own stream; the step never gets shorter.
TEST(CpuOffloading, CopiesWhatTheMemoryModelOffloadsAtTheTableRates) {
  const scenarios::ResolvedScenario s = Resolve(Llama8b(
      16, "cpu_offloading: true cpu_offloading_num_layers: 16"));
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
  const double expected =
      microbatches * (bytes / (d2h * 1e9) + bytes / (h2d * 1e9));
  ASSERT_TRUE(r.comm_s.contains("copy"));
  EXPECT_NEAR(r.comm_s.at("copy").total_s / expected, 1.0, 1e-6);
  EXPECT_FALSE(base.comm_s.contains("copy"));
  EXPECT_GE(r.step_time_s, base.step_time_s);
}

}  // namespace
}  // namespace moesim::sim
