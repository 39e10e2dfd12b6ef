// `moesim run`: replay one training step of a scenario and report step time,
// model TFLOPS/GPU, tokens/s/GPU, MFU, the pipeline bubble, communication
// (total and exposed) by kind, time by op class and per-stage memory with
// the out-of-memory verdict; as text or JSON; optionally a Perfetto trace.
// --calibration PROFILE applies a calibration profile (calibration/profile.h).
#ifndef MOESIM_TOOLS_RUN_REPORT_H_
#define MOESIM_TOOLS_RUN_REPORT_H_

#include <CLI/CLI.hpp>
#include <string>

#include "scenarios/scenario.h"
#include "sim/replay.h"
#include "tools/memory_report.h"
#include "tools/scenario_flags.h"
#include "util/error.h"

namespace moesim::tools {

struct RunFlags {
  ScenarioFlags scenario;
  bool json = false;
  std::string trace_file;  // empty: no trace
  std::string network = "analytical";
  std::string calibration_file;  // a profile to apply; empty: none
};

void AddRunFlags(CLI::App& app, RunFlags& flags);

struct RunReport {
  sim::StepResult step;
  MemoryReport memory;
};

// `profile`: corrections applied to the platform (sim::BuildPlatform).
[[nodiscard]] util::Result<RunReport> BuildRunReport(
    const scenarios::ResolvedScenario& scenario,
    const sim::ReplayOptions& options,
    const calibration::Profile& profile = {});

std::string FormatRunText(const scenarios::ResolvedScenario& scenario,
                          const RunReport& report);

// Keys: step_time_s, tflops_per_gpu, tokens_per_sec_per_gpu, mfu,
// peak_memory_gib, fits, margin_gib, bubble_fraction, exposed_comm_s {tp,
// cp, ep, dp, pp}, comm_s {...}, hidden_fraction {...}, time_by_op_class_s,
// stages[] {pp_rank, compute_s, idle_s, peak_memory_gib}, model_flops_per_step,
// ops, defaults_used, warnings.
std::string FormatRunJson(const scenarios::ResolvedScenario& scenario,
                          const RunReport& report);

// The whole command: resolve, replay, write the trace file, format.
[[nodiscard]] util::Result<std::string> RunCommand(const RunFlags& flags);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_RUN_REPORT_H_
