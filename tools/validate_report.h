// `moesim validate [RUNS.csv] [--pairs PAIRS.csv] [--json] [--group-by ...]`:
// every measured run of a runs CSV (schema: calibration/runs/SCHEMA.md; the
// shipped calibration/runs/runs.csv by default) turned into a scenario,
// replayed, and compared with what was measured: TFLOPS/GPU, step time and
// peak memory where measured; per-row signed error, MAPE and median by
// group, the ten worst rows, and the rows that cannot be simulated with the
// reason. Low-confidence rows are reported apart from the MAPE. With
// --pairs, each one-knob A/B pair is predicted on both sides.
//
// Rows become scenarios as studies/measured_runs.h says; a malformed file is an
// error naming the line, a valid row whose layout the rules refuse is
// skipped with the rule. --calibration PROFILE applies a calibration profile
// (calibration/profile.h) to every replay.
#ifndef MOESIM_TOOLS_VALIDATE_REPORT_H_
#define MOESIM_TOOLS_VALIDATE_REPORT_H_

#include <CLI/CLI.hpp>
#include <string>

#include "util/error.h"

namespace moesim::tools {

struct ValidateFlags {
  std::string runs_file;   // empty: calibration/runs/runs.csv
  std::string pairs_file;  // empty: no pairs
  std::string group_by = "model,gpu,precision";
  bool json = false;
  bool markdown = false;  // only the by-group accuracy table, in Markdown
  bool commands = false;  // each row's `moesim run` command, no replay
  int jobs = 0;           // replay threads; 0: one per hardware thread
  std::string calibration_file;  // a profile to apply; empty: none
  // --min-seq-len / --max-seq-len: only the rows of at least / at most
  // this many tokens (0: no bound).
  int min_seq_len = 0, max_seq_len = 0;
};

void AddValidateFlags(CLI::App& app, ValidateFlags& flags);

[[nodiscard]] util::Result<std::string> RunValidate(const ValidateFlags& flags);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_VALIDATE_REPORT_H_
