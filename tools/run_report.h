// `moesim run`: replay one training step of a scenario and report step time,
// model TFLOPS/GPU, tokens/s/GPU, MFU, the idle share (bubble), communication
// (total and exposed) by kind, time by op class and per-stage memory with
// the out-of-memory verdict; as text or JSON; optionally a Perfetto trace.
// --calibration PROFILE applies a calibration profile (calibration/profile.h).
#ifndef MOESIM_TOOLS_RUN_REPORT_H_
#define MOESIM_TOOLS_RUN_REPORT_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "sim/replay.h"
#include "studies/run.h"
#include "studies/scenario_flags.h"
#include "tools/memory_report.h"
#include "util/error.h"

namespace moesim::tools {

struct RunFlags {
  studies::ScenarioFlags scenario;
  bool json = false;
  std::string trace_file;  // empty: no trace
  std::string network = "analytical";
  bool full = false;  // --full: replay every rank
  // --every-microbatch: no periodic steady-state shortcut (sim/periodic.h)
  bool every_microbatch = false;
  // --every-ring-step: each p2p CP ring step its own ops
  // (sim::ReplayOptions::merge_ring_steps off)
  bool every_ring_step = false;
  // --straggler RANK:FACTOR, repeatable; needs --full.
  std::vector<std::string> stragglers;
  std::string calibration_file;  // a profile to apply; empty: none
};

void AddRunFlags(CLI::App& app, RunFlags& flags);

// --straggler values as sim::Stragglers. Errors ("flags: --straggler: ..."):
// not RANK:FACTOR, a rank that is not an integer >= 0 below `num_gpus`, a
// factor that is not a finite number >= 1; and any --straggler without
// --full.
[[nodiscard]] util::Result<std::vector<sim::Straggler>> ParseStragglers(
    const RunFlags& flags, int num_gpus);

std::string FormatRunText(const scenarios::ResolvedScenario& scenario,
                          const studies::RunReport& report);

// Keys: step_time_s, tflops_per_gpu, tokens_per_sec_per_gpu, mfu,
// peak_memory_gib, fits, margin_gib, bubble_fraction, exposed_comm_s {tp,
// cp, ep, dp, pp}, comm_s {...}, hidden_fraction {...}, time_by_op_class_s,
// stages[] {pp_rank, compute_s, idle_s, peak_memory_gib}, model_flops_per_step,
// ops, defaults_used, warnings. Full mode adds mode ("full"),
// ranks_simulated, slowest_rank and slowest_rank_compute_s, and per stage
// ranks, slowest_rank and slowest_compute_s (the stage figures being means
// over its ranks), and ranks[] {rank, pp_rank, compute_s, grouped_gemm_s,
// finish_s} in rank order. A step extended from its periodic steady state
// adds periodic_microbatches [m0, m0 + p, m0 + 2p] (sim/periodic.h).
std::string FormatRunJson(const scenarios::ResolvedScenario& scenario,
                          const studies::RunReport& report);

// The whole command: resolve, replay, write the trace file, format.
[[nodiscard]] util::Result<std::string> RunCommand(const RunFlags& flags);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_RUN_REPORT_H_
