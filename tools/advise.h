// `moesim advise`: the flags, the walk's report as text and JSON, and the
// command that resolves the scenario and runs the walk (studies/advise.h).
#ifndef MOESIM_TOOLS_ADVISE_H_
#define MOESIM_TOOLS_ADVISE_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "studies/advise.h"
#include "studies/scenario_flags.h"
#include "util/error.h"

namespace moesim::tools {

struct AdviseFlags {
  studies::ScenarioFlags scenario;
  bool json = false;
  int max_steps = 8;
  int max_candidates = 0;  // replays per step; 0: all
};

void AddAdviseFlags(CLI::App& app, AdviseFlags& flags);

// The layout as moesim scenario flags (what `moesim run` takes).
std::string FormatScenarioFlags(const scenarios::Scenario& spec);

std::string FormatAdviseText(const studies::AdviseResult& result);
// {"start": {...}, "steps": [{change, wall, tokens_per_sec_per_gpu,
// tflops_per_gpu, gain_pct, peak_memory_gib, fits, candidates, invalid}],
// "final": {flags, megatron_args, wall, tokens_per_sec_per_gpu,
// tflops_per_gpu, peak_memory_gib, fits, step, gain_pct_total}}; gain_pct_total
// is against the start, or the first fitting layout when the start does not
// fit.
std::string FormatAdviseJson(const studies::AdviseResult& result);

[[nodiscard]] util::Result<std::string> RunAdvise(const AdviseFlags& flags);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_ADVISE_H_
