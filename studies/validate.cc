// validate's replay, statistics and A/B pairs (studies/validate.h).

#include "studies/validate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "calibration/tables.h"
#include "studies/measured_runs.h"
#include "util/csv.h"
#include "util/format.h"
#include "util/message.h"
#include "util/textproto.h"

namespace moesim::studies {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The row's CP exchange: "-" without CP, Megatron's default p2p when the
// row states none.
std::string CpCommOf(const MeasuredRun& row) {
  if (row.flags.cp.value_or(1) <= 1) return "-";
  return row.cp_comm_type.empty() ? "p2p" : row.cp_comm_type;
}

}  // namespace

Stats StatsOf(const std::vector<double>& errors) {
  Stats s;
  s.rows = static_cast<int>(errors.size());
  if (errors.empty()) return s;
  std::vector<double> abs;
  for (double e : errors) abs.push_back(std::abs(e));
  for (double a : abs) s.mape += a / errors.size();
  s.median_abs = Median(abs);
  s.median_signed = Median(errors);
  return s;
}

// One cell per key; a key's value may hold spaces (a CPU name).
std::vector<std::string> GroupKey(const RunPrediction& r,
                                  const std::vector<std::string>& by) {
  const MeasuredRun& row = *r.row;
  std::vector<std::string> key;
  for (const std::string& b : by) {
    std::string v = b == "model"        ? row.model
                    : b == "gpu"        ? row.gpu
                    : b == "precision"  ? row.precision
                    : b == "confidence" ? row.confidence
                    : b == "container"  ? row.container
                    : b == "cuda_graph" ? row.flags.cuda_graph.value_or("")
                    : b == "seq_len" ? std::to_string(row.flags.seq.value_or(0))
                    : b == "cp"      ? std::to_string(row.flags.cp.value_or(1))
                    : b == "cp_comm_type" ? CpCommOf(row)
                    : b == "wall"         ? r.wall
                    : b == "host"         ? r.host_cpu
                                          : std::to_string(r.local_experts);
    if (v.empty()) v = b == "cuda_graph" ? "none" : "-";
    key.push_back(std::move(v));
  }
  return key;
}

std::string Joined(const std::vector<std::string>& key) {
  std::string out;
  for (const std::string& part : key) out += (out.empty() ? "" : " ") + part;
  return out;
}

// A pairs CSV (ab_pairs.csv schema; "shipped": the one in
// calibration/runs/) with its name, read and checked before the replay's
// seconds of work so that a bad --pairs fails at once.
util::Result<util::CsvTable> LoadPairs(const std::string& file,
                                       std::string& name) {
  std::string pairs_text;
  const bool shipped = file == "shipped";
  name = shipped ? "calibration/runs/ab_pairs.csv" : file;
  const std::string& pairs_name = name;
  if (shipped) {
    auto content = calibration::ShippedRunsFile("ab_pairs.csv");
    if (!content) return std::unexpected(content.error());
    pairs_text = std::string(*content);
  } else {
    auto read = util::ReadFile(file);  // bounded; never blocks
    if (!read) {
      return std::unexpected(util::FlagError("--pairs", read.error().message));
    }
    pairs_text = std::move(*read);
  }
  auto parsed = util::CsvTable::Parse(pairs_text, pairs_name);
  if (!parsed) return std::unexpected(parsed.error());
  auto* pt = &*parsed;
  for (const char* column : {"pair_id", "knob", "a_id", "b_id", "metric",
                             "a_measured", "b_measured"}) {
    if (pt->Column(column) < 0) {
      return std::unexpected(util::Error{pairs_name + ":1: missing column '" +
                                         std::string(column) + "'"});
    }
  }
  // Measured sides: empty (not measured) or a number > 0, since the pair
  // compares their ratio.
  for (size_t i = 0; i < pt->num_rows(); ++i) {
    for (const char* column : {"a_measured", "b_measured"}) {
      auto v =
          ParseRunNumber(pt->Get(i, column), pairs_name, pt->Line(i), column);
      if (!v) return std::unexpected(v.error());
      if (*v && !(**v > 0)) {
        return std::unexpected(util::Error{
            pairs_name + ":" + std::to_string(pt->Line(i)) + ": " + column +
            ": must be > 0, got " + util::Excerpt(pt->Get(i, column))});
      }
    }
  }
  return std::move(*parsed);
}

namespace {

// Statistics: TFLOPS over high/medium rows, low rows apart; memory.
// Statistics: TFLOPS over high/medium rows, low rows apart; memory.
void AddStatistics(Validation& v) {
  std::vector<double> main_errors, low_errors, mem_errors, short_errors,
      long_errors;
  for (const RunPrediction& r : v.results) {
    if (!r.simulated) continue;
    if (r.row->tflops) {
      (Low(*r.row) ? low_errors : main_errors).push_back(r.error_pct());
      if (!Low(*r.row)) {
        v.groups[GroupKey(r, v.by)].push_back(r.error_pct());
        v.ranked.push_back(static_cast<size_t>(&r - v.results.data()));
        if (LongContext(*r.row)) {
          long_errors.push_back(r.error_pct());
          Series& one = v.series[{r.row->source, r.row->model, r.row->gpu}];
          one.container = r.row->container;
          one.errors.push_back(r.error_pct());
        } else {
          short_errors.push_back(r.error_pct());
        }
      }
    }
    if (r.row->mem_gib) {
      mem_errors.push_back((r.mem_gib - *r.row->mem_gib) / *r.row->mem_gib *
                           100);
    }
  }
  std::stable_sort(v.ranked.begin(), v.ranked.end(), [&](size_t a, size_t b) {
    return std::abs(v.results[a].error_pct()) >
           std::abs(v.results[b].error_pct());
  });
  v.main = StatsOf(main_errors);
  v.low = StatsOf(low_errors);
  v.mem = StatsOf(mem_errors);
  v.short_context = StatsOf(short_errors);
  v.long_context = StatsOf(long_errors);
}

// Each A/B pair of `table` predicted from the replayed rows.
// Each A/B pair of `table` predicted from the replayed rows.
void AddPairs(const util::CsvTable& table, const std::string& pairs_name,
              Validation& v) {
  const util::CsvTable* pt = &table;
  std::map<std::string, const RunPrediction*> by_id;
  for (const RunPrediction& r : v.results) by_id[r.row->id] = &r;
  std::vector<std::string> seen;
  for (size_t i = 0; i < pt->num_rows(); ++i) {
    PairResult p;
    p.pair_id = pt->Get(i, "pair_id");
    if (std::find(seen.begin(), seen.end(), p.pair_id) != seen.end()) {
      continue;  // a pair listed twice (the file repeats some)
    }
    seen.push_back(p.pair_id);
    p.knob = pt->Get(i, "knob");
    p.metric = pt->Get(i, "metric");
    // Checked when the file was read.
    const auto am = ParseRunNumber(pt->Get(i, "a_measured"), pairs_name,
                                   pt->Line(i), "a_measured");
    const auto bm = ParseRunNumber(pt->Get(i, "b_measured"), pairs_name,
                                   pt->Line(i), "b_measured");
    const auto a = by_id.find(pt->Get(i, "a_id"));
    const auto b = by_id.find(pt->Get(i, "b_id"));
    if (a == by_id.end() || b == by_id.end()) {
      p.reason = "a run of the pair is not in " + v.runs_name;
    } else if (!a->second->simulated || !b->second->simulated) {
      p.reason = !a->second->simulated ? a->second->reason : b->second->reason;
    } else if (!*am || !*bm) {
      p.reason = "a side is not measured";
    } else if (p.metric != "step_time_s" && p.metric != "tflops_per_gpu") {
      p.reason = "metric '" + p.metric + "' is not predicted";
    } else {
      const bool step = p.metric == "step_time_s";
      p.predicted_a = step ? a->second->step_s : a->second->tflops;
      p.predicted_b = step ? b->second->step_s : b->second->tflops;
      p.measured_a = **am;
      p.measured_b = **bm;
      const double measured = p.measured_b / p.measured_a;
      const double predicted = p.predicted_b / p.predicted_a;
      p.direction_right =
          (measured - 1) * (predicted - 1) > 0 ||
          (std::abs(measured - 1) < 0.01 && std::abs(predicted - 1) < 0.01);
      p.ratio_error_pct = (predicted / measured - 1) * 100;
    }
    v.pairs.push_back(std::move(p));
  }
}

}  // namespace

Validation Validate(MeasuredRuns runs, const ValidateOptions& options) {
  Validation v;
  v.runs_name = std::move(runs.name);
  v.by = options.by;
  v.rows =
      std::make_shared<const std::vector<MeasuredRun>>(std::move(runs.rows));
  const RunReplayer replayer(*v.rows);
  v.results = replayer.Simulate(options.profile, options.jobs);
  AddStatistics(v);
  v.has_pairs = options.pairs.has_value();
  if (options.pairs) AddPairs(*options.pairs, options.pairs_name, v);
  return v;
}

}  // namespace moesim::studies
