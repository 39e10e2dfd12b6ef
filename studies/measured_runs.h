// Measured runs (calibration/runs/SCHEMA.md) as scenarios, and their replay:
// what `moesim validate` compares and `moesim calibrate fit` fits to.
//
// A row's columns map onto the scenario flags one to one (the flags use the
// runs' vocabulary); its `mtp_layers` and the modelled keys of `extra`
// (capacity_factor, optimizer dtypes, precision-aware optimizer, FP8
// parameter gather, offload copy overlap, shared-expert overlap, manual GC)
// go in as Megatron arguments. A malformed file (missing column, unknown
// model or GPU, a number that does not parse) is an error naming the line;
// a valid row whose layout the rules refuse is kept, with the reason, and
// not replayed.
#ifndef MOESIM_STUDIES_MEASURED_RUNS_H_
#define MOESIM_STUDIES_MEASURED_RUNS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/profile.h"
#include "models/flops.h"
#include "scenarios/scenario.h"
#include "studies/scenario_flags.h"
#include "util/error.h"

namespace moesim::studies {

struct MeasuredRun {
  std::string id, model, gpu, precision, confidence;
  std::string container;  // the optional `container` column ("" if absent)
  std::string source;     // the optional `source` column
  // The optional `cp_comm_type` column as written ("" when absent or empty:
  // Megatron's default, p2p) and `flops_formula` (empty: megatron-bridge).
  std::string cp_comm_type;
  models::FlopsFormula flops_formula = models::FlopsFormula::kMegatronBridge;
  std::string unexpressible;  // why the row cannot be simulated, if so
  int line = 0;
  ScenarioFlags flags;
  std::optional<double> tflops, step_s, mem_gib;  // measured
  // measured_tokens_per_sec_per_gpu, an optional column. With `tflops` it
  // gives the FLOPs per token the run's own logger counted.
  std::optional<double> tokens_per_s;
  // The row's FLOPs per token (TFLOPS / tokens/s), when it publishes both.
  // Without tokens/s, a row whose flops_formula is not megatron-bridge is
  // compared in that formula's count (validate).
  std::optional<double> logged_flops_per_token() const {
    if (!tflops || !tokens_per_s) return std::nullopt;
    return *tflops * 1e12 / *tokens_per_s;
  }
};

struct MeasuredRuns {
  std::string name;  // the file, as errors name it
  std::vector<MeasuredRun> rows;
};

// Reads a runs CSV; `file` empty: the shipped calibration/runs/runs.csv.
// Errors: "flags: <flag>: <file>: cannot read file" (flag names the
// command-line argument the file came from), "<file>:1: missing column '<c>'",
// "<file>:<line>: <column>: <rule>".
[[nodiscard]] util::Result<MeasuredRuns> LoadMeasuredRuns(
    const std::string& file, std::string_view flag);

// A number of a runs-style CSV cell: nullopt when empty; an error naming
// file, line and column when it does not parse or is not finite.
[[nodiscard]] util::Result<std::optional<double>> ParseRunNumber(
    const std::string& text, const std::string& file, int line,
    std::string_view column);

// One row's replay.
struct RunPrediction {
  const MeasuredRun* row = nullptr;
  bool simulated = false;
  std::string reason;  // when not simulated
  // TFLOPS/GPU in the row's own FLOPs count where it publishes tokens/s
  // (predicted tokens/s x the row's logged FLOPs per token): Bridge's
  // formula changed between containers (GPT-OSS experts counted non-gated
  // and the sliding window ignored before 26.06, 27.2 against today's 32.6
  // GF/token), and a TFLOPS figure is only comparable within one count.
  // Without tokens/s, predicted tokens/s x the FLOPs per token of the row's
  // flops_formula (NeMo's 2024 count for its long-sequence tables). Else
  // moesim's count, today's Megatron-Bridge formula (models/flops.h).
  double tflops = 0, step_s = 0, mem_gib = 0;
  double tokens_per_s = 0;  // predicted tokens/s/GPU
  double model_tflops = 0;  // in moesim's own FLOPs count
  // The count `tflops` is in: "row" (the row's logged FLOPs per token),
  // a flops_formula word ("nemo-2024"), or "moesim".
  std::string flops_count = "moesim";
  std::vector<std::string> defaults_used;
  // What the replay says of the run, for grouping errors: the binding wall
  // (sim::DiagnoseWall, as `moesim run` names it), the host CPU of the
  // system (topology HostLink.cpu) and the routed experts per EP rank
  // (num_moe_experts / EP; 0 for a dense model).
  std::string wall, host_cpu;
  int64_t local_experts = 0;
  // REQUIRES: simulated and row->tflops.
  double error_pct() const {
    return (tflops - *row->tflops) / *row->tflops * 100;
  }
};

// The rows' scenarios, resolved once; replays them under any profile.
// Holds a pointer to `rows`, which must outlive it.
class RunReplayer {
 public:
  explicit RunReplayer(const std::vector<MeasuredRun>& rows);

  // Replays the rows (those with `selected[i]`, all when empty) on `jobs`
  // threads (0: one per hardware thread) with `profile` applied. Platforms
  // are built first, one per system and GPU count, then each row's result
  // goes in its own slot: the output does not depend on the thread count.
  // A row not replayed says why (not expressible, nothing measured, the
  // rules refuse it, not selected, or the replay's error).
  std::vector<RunPrediction> Simulate(
      const calibration::Profile& profile, int jobs,
      const std::vector<bool>& selected = {}) const;

 private:
  const std::vector<MeasuredRun>* rows_;
  std::vector<std::optional<scenarios::ResolvedScenario>> scenarios_;
  std::vector<std::string> reasons_;  // when no scenario
};

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_MEASURED_RUNS_H_
