// What `moesim validate` computes (tools/validate_report.h formats it): the
// measured runs replayed, the statistics of their errors by group and by
// long-context series, and the one-knob A/B pairs predicted.
#ifndef MOESIM_STUDIES_VALIDATE_H_
#define MOESIM_STUDIES_VALIDATE_H_

#include <algorithm>
#include <compare>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/profile.h"
#include "studies/measured_runs.h"
#include "util/csv.h"
#include "util/error.h"

namespace moesim::studies {

struct Stats {
  int rows = 0;
  double mape = 0, median_abs = 0, median_signed = 0;
};

// Rows, MAPE, median |error| and median signed error of `errors` (%).
Stats StatsOf(const std::vector<double>& errors);

// --group-by keys: the row's own columns, then what the replay says of it.
inline constexpr std::string_view kGroupKeys[] = {
    "model",        "gpu",        "precision", "confidence",
    "container",    "cuda_graph", "seq_len",   "cp",
    "cp_comm_type", "wall",       "host",      "local_experts"};

// One cell per key; a key's value may hold spaces (a CPU name).
std::vector<std::string> GroupKey(const RunPrediction& r,
                                  const std::vector<std::string>& by);

// Keys in order, numbers by value ("2" before "16").
struct KeyLess {
  bool operator()(const std::vector<std::string>& a,
                  const std::vector<std::string>& b) const {
    auto number = [](const std::string& s) {
      return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return c >= '0' && c <= '9';
      });
    };
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (a[i] == b[i]) continue;
      if (number(a[i]) && number(b[i]) && a[i].size() != b[i].size()) {
        return a[i].size() < b[i].size();
      }
      return a[i] < b[i];
    }
    return a.size() < b.size();
  }
};

// The key's cells joined by spaces.
std::string Joined(const std::vector<std::string>& key);

inline bool Low(const MeasuredRun& row) { return row.confidence == "low"; }

// Long context: 16K tokens and longer (the rows run at 4K, 8K, then 16K up);
// the accuracy guard's short-context figure is over the rest.
inline constexpr int kLongContextTokens = 16384;
inline bool LongContext(const MeasuredRun& row) {
  return row.flags.seq.value_or(0) >= kLongContextTokens;
}

// A long-context series: one source's rows of one model on one GPU.
struct SeriesKey {
  std::string source, model, gpu;
  auto operator<=>(const SeriesKey&) const = default;
};
struct Series {
  std::string container;
  std::vector<double> errors;
};

// What `validate` finds: the replayed rows, error statistics over them,
// by group and by long-context series, the rows ranked by |error|, and the
// A/B pairs predicted.
struct PairResult {
  std::string pair_id, knob, metric, reason;
  double predicted_a = 0, predicted_b = 0, measured_a = 0, measured_b = 0;
  bool direction_right = false;
  double ratio_error_pct = 0;
};
struct Validation {
  std::string runs_name;
  // The rows `results` point into, shared so that a copy stays valid.
  std::shared_ptr<const std::vector<MeasuredRun>> rows;
  std::vector<std::string> by;  // --group-by keys
  std::vector<RunPrediction> results;
  Stats main, low, mem, short_context, long_context;
  std::map<std::vector<std::string>, std::vector<double>, KeyLess> groups;
  std::map<SeriesKey, Series> series;
  // Indices into `results`, worst |error| first (indices, so that a copy
  // of the Validation stays whole).
  std::vector<size_t> ranked;
  bool has_pairs = false;
  std::vector<PairResult> pairs;
};

// A pairs CSV (ab_pairs.csv schema; "shipped": the one in
// calibration/runs/) with its name, read and checked before the replay's
// seconds of work so that a bad --pairs fails at once.
util::Result<util::CsvTable> LoadPairs(const std::string& file,
                                       std::string& name);

// What a validation takes besides the runs: the group keys (each one of
// kGroupKeys), the calibration profile applied to every replay, the replay
// threads (0: one per hardware thread; the result does not depend on it)
// and the A/B pairs to predict (LoadPairs), if any.
struct ValidateOptions {
  std::vector<std::string> by;
  calibration::Profile profile;
  int jobs = 0;
  std::optional<util::CsvTable> pairs;
  std::string pairs_name;
};

// Replays every row of `runs` and computes the statistics (TFLOPS over
// high/medium rows, low rows apart; memory; by group and by long-context
// series) and, with pairs, each pair predicted from the replayed rows.
[[nodiscard]] Validation Validate(MeasuredRuns runs,
                                  const ValidateOptions& options);

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_VALIDATE_H_
