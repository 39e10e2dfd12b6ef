// What `moesim run` and `moesim memory` compute for a resolved scenario: the
// analytic memory estimate with parameter counts and model FLOPs, and the
// replayed step beside it (tools/run_report.h and tools/memory_report.h
// print them).
#ifndef MOESIM_STUDIES_RUN_H_
#define MOESIM_STUDIES_RUN_H_

#include "calibration/profile.h"
#include "models/memory.h"
#include "models/params.h"
#include "scenarios/scenario.h"
#include "sim/replay.h"
#include "util/error.h"

namespace moesim::studies {

// The analytic side of a scenario: its parameters, its model FLOPs
// (Megatron-Bridge's count, models/flops.h) and its per-stage memory.
struct MemoryReport {
  models::ParamSummary params;
  double model_flops_per_step = 0;  // the whole global batch
  double model_flops_per_token = 0;
  models::MemoryEstimate memory;
};

MemoryReport BuildMemoryReport(const scenarios::ResolvedScenario& scenario);

// The replayed step (sim::Replay on the scenario's platform) beside the
// analytic memory.
struct RunReport {
  sim::StepResult step;
  MemoryReport memory;
  // The GPU's sustained-load share of benchmarked compute rates
  // (calibration/tables/<gpu>/sustained.csv; 1 without a row).
  double sustained_compute_rate = 1;
};

// Builds the platform, replays one step and estimates memory. `profile`:
// corrections applied to the platform (sim::BuildPlatform).
[[nodiscard]] util::Result<RunReport> BuildRunReport(
    const scenarios::ResolvedScenario& scenario,
    const sim::ReplayOptions& options,
    const calibration::Profile& profile = {});

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_RUN_H_
