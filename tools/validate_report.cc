#include "tools/validate_report.h"

#include <algorithm>
#include <optional>

#include "calibration/profile.h"
#include "calibration/tables.h"
#include "studies/measured_runs.h"
#include "tools/cli_checks.h"
#include "tools/text_format.h"
#include "tools/validate_internal.h"
#include "util/csv.h"
#include "util/message.h"
#include "util/textproto.h"

namespace moesim::tools {

using internal::FormatValidateJson;
using internal::FormatValidateMarkdown;
using internal::FormatValidateText;
using studies::kGroupKeys;
using studies::LoadPairs;
using studies::Validation;

void AddValidateFlags(CLI::App& app, ValidateFlags& f) {
  app.add_option("runs", f.runs_file,
                 "Measured runs CSV (default: the shipped "
                 "calibration/runs/runs.csv)");
  app.add_option("--pairs", f.pairs_file,
                 "One-knob A/B pairs CSV (ab_pairs.csv schema) to predict; "
                 "'shipped' for calibration/runs/ab_pairs.csv");
  app.add_option("--group-by", f.group_by,
                 "Comma-separated: model, gpu, precision, confidence, "
                 "container, cuda_graph, seq_len, cp, cp_comm_type (the "
                 "row's columns; cp_comm_type p2p where a CP row states "
                 "none, - without CP); wall, host, "
                 "local_experts (the replay's binding wall, the system's "
                 "host CPU, routed experts per EP rank)");
  app.add_option("--min-seq-len", f.min_seq_len,
                 "Only the rows of at least this many tokens (16384: the "
                 "long-context rows)")
      ->check(IntInRange(0));
  app.add_option("--max-seq-len", f.max_seq_len,
                 "Only the rows of at most this many tokens (8192: the "
                 "short-context rows the accuracy guard covers)")
      ->check(IntInRange(0));
  CLI::Option* json = app.add_flag("--json", f.json, "Print JSON");
  app.add_flag("--markdown", f.markdown,
               "Print only the accuracy table by group, in Markdown (the "
               "table in docs/accuracy.md)")
      ->excludes(json);
  app.add_flag("--commands", f.commands,
               "Print each row's id and the `moesim run` command that replays "
               "it (for its breakdown and --trace), without replaying")
      ->excludes(json);
  app.add_option("-j,--jobs", f.jobs,
                 "Replay threads (default: one per hardware thread); the "
                 "output does not depend on it")
      ->check(IntInRange(0));
  app.add_option("--calibration", f.calibration_file,
                 "Apply a calibration profile (.textproto, as `moesim "
                 "calibrate fit` writes) to every replay");
}

namespace {

// The --group-by keys; an error names the flag and the keys known.
util::Result<std::vector<std::string>> ParseGroupBy(const std::string& text) {
  std::vector<std::string> by = util::SplitList(text, ",");
  if (by.empty()) {
    return std::unexpected(FlagError(
        "--group-by", "needs at least one key, e.g. model,gpu (got '" +
                          util::Excerpt(text) + "')"));
  }
  for (const std::string& b : by) {
    if (std::find(std::begin(kGroupKeys), std::end(kGroupKeys), b) ==
        std::end(kGroupKeys)) {
      std::string keys;
      for (std::string_view k : kGroupKeys) {
        keys += (keys.empty() ? "" : ", ") + std::string(k);
      }
      return std::unexpected(
          FlagError("--group-by", "unknown key '" + b + "' (" + keys + ")"));
    }
  }
  return by;
}
}  // namespace

util::Result<std::string> RunValidate(const ValidateFlags& f) {
  calibration::Profile profile;
  if (!f.calibration_file.empty()) {
    auto loaded = calibration::LoadProfile(f.calibration_file);
    if (!loaded) return std::unexpected(loaded.error());
    profile = std::move(*loaded);
  }
  auto runs = studies::LoadMeasuredRuns(f.runs_file, "RUNS");
  if (!runs) return std::unexpected(runs.error());
  studies::ValidateOptions options;
  auto by = ParseGroupBy(f.group_by);
  if (!by) return std::unexpected(by.error());
  options.by = std::move(*by);
  options.profile = std::move(profile);
  options.jobs = f.jobs;
  if (f.max_seq_len > 0 && f.min_seq_len > f.max_seq_len) {
    return std::unexpected(FlagError(
        "--min-seq-len",
        std::to_string(f.min_seq_len) + " is above --max-seq-len " +
            std::to_string(f.max_seq_len) + ": no run could be selected"));
  }
  if (f.min_seq_len > 0 || f.max_seq_len > 0) {
    std::erase_if(runs->rows, [&](const studies::MeasuredRun& row) {
      const int seq = row.flags.seq.value_or(0);
      return seq < f.min_seq_len || (f.max_seq_len > 0 && seq > f.max_seq_len);
    });
  }
  if (f.commands) {
    std::string out;
    for (const studies::MeasuredRun& row : runs->rows) {
      out += row.id + "\t" +
             (row.unexpressible.empty()
                  ? "moesim run " + studies::FlagsCommandLine(row.flags)
                  : "# not expressible: " + row.unexpressible) +
             "\n";
    }
    return out;
  }
  if (!f.pairs_file.empty()) {
    auto loaded = LoadPairs(f.pairs_file, options.pairs_name);
    if (!loaded) return std::unexpected(loaded.error());
    options.pairs = std::move(*loaded);
  }
  const Validation v = studies::Validate(std::move(*runs), options);
  if (f.markdown) return FormatValidateMarkdown(v);
  if (f.json) return FormatValidateJson(v);
  return FormatValidateText(v, f.group_by);
}

}  // namespace moesim::tools
