// `moesim memory`: the per-stage memory table, parameter counts and model
// FLOPs of a resolved scenario, as text or JSON.
#ifndef MOESIM_TOOLS_MEMORY_REPORT_H_
#define MOESIM_TOOLS_MEMORY_REPORT_H_

#include <string>

#include "scenarios/scenario.h"
#include "studies/run.h"
#include "util/json_write.h"

namespace moesim::tools {

// "layout TP.. CP.. DP.. PP.. VPP.. | EP.. ETP.. EDP.. | seq .. MBS .. GBS ..
// (.. micro-batches)", no newline: the layout line every report starts with.
std::string LayoutLine(const scenarios::ResolvedScenario& scenario);

// "training <precision>, <dispatcher> dispatcher, recompute .., routing ..,
// CUDA graphs .., optimizer offload .., activation offload .., FSDP ..,
// distributed optimizer ..", no newline: what the replay trains with.
std::string TrainingLine(const scenarios::ResolvedScenario& scenario);

// The scenario as simulated, every field resolved, as one inline JSON
// object: {"model": .., "params_total": .., "num_layers": .., "layout":
// {"tp": .., ...}, "precision": .., ...}. `run --json` and `memory --json`
// print it as "scenario".
void WriteScenario(util::JsonWriter& w,
                   const scenarios::ResolvedScenario& scenario);

// Human-readable tables. Deterministic: same input, same bytes.
std::string FormatMemoryText(const scenarios::ResolvedScenario& scenario,
                             const studies::MemoryReport& report);

// JSON with at least: params_total, params_active, model_flops_per_step,
// model_flops_per_token, stages[] {pp_rank, params, params_gib, grads_gib,
// optimizer_gib, activations_gib, buffers_gib, peak_memory_gib, ...},
// peak_memory_gib (the busiest stage's; `run --json` uses the same keys),
// capacity_gib, fits, margin_gib, defaults_used, warnings.
std::string FormatMemoryJson(const scenarios::ResolvedScenario& scenario,
                             const studies::MemoryReport& report);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_MEMORY_REPORT_H_
