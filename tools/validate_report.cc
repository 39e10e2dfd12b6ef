#include "tools/validate_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "calibration/profile.h"
#include "calibration/tables.h"
#include "tools/cli_checks.h"
#include "tools/measured_runs.h"
#include "tools/text_format.h"
#include "util/csv.h"
#include "util/json_write.h"
#include "util/message.h"
#include "util/textproto.h"

namespace moesim::tools {

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Stats {
  int rows = 0;
  double mape = 0, median_abs = 0, median_signed = 0;
};
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

// --group-by keys: the row's own columns, then what the replay says of it.
constexpr std::string_view kGroupKeys[] = {
    "model",        "gpu",        "precision", "confidence",
    "container",    "cuda_graph", "seq_len",   "cp",
    "cp_comm_type", "wall",       "host",      "local_experts"};

// The row's CP exchange: "-" without CP, Megatron's default p2p when the
// row states none.
std::string CpCommOf(const MeasuredRun& row) {
  if (row.flags.cp.value_or(1) <= 1) return "-";
  return row.cp_comm_type.empty() ? "p2p" : row.cp_comm_type;
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

std::string Joined(const std::vector<std::string>& key) {
  std::string out;
  for (const std::string& part : key) out += (out.empty() ? "" : " ") + part;
  return out;
}

bool Low(const MeasuredRun& row) { return row.confidence == "low"; }

// Long context: 16K tokens and longer (the rows run at 4K, 8K, then 16K up);
// the accuracy guard's short-context figure is over the rest.
constexpr int kLongContextTokens = 16384;
bool LongContext(const MeasuredRun& row) {
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

}  // namespace

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
  std::vector<std::string> by;  // --group-by keys
  std::vector<RunPrediction> results;
  Stats main, low, mem, short_context, long_context;
  std::map<std::vector<std::string>, std::vector<double>, KeyLess> groups;
  std::map<SeriesKey, Series> series;
  std::vector<const RunPrediction*> ranked;  // into results, worst first
  bool has_pairs = false;
  std::vector<PairResult> pairs;
};

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
      return std::unexpected(FlagError("--pairs", read.error().message));
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
        v.ranked.push_back(&r);
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
  std::stable_sort(v.ranked.begin(), v.ranked.end(),
                   [](const RunPrediction* a, const RunPrediction* b) {
                     return std::abs(a->error_pct()) > std::abs(b->error_pct());
                   });
  v.main = StatsOf(main_errors);
  v.low = StatsOf(low_errors);
  v.mem = StatsOf(mem_errors);
  v.short_context = StatsOf(short_errors);
  v.long_context = StatsOf(long_errors);
}

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

std::string FormatValidateMarkdown(const Validation& v) {
  std::string out = "|";
  for (const std::string& b : v.by) out += " " + b + " |";
  out += " rows | MAPE | median signed error |\n|";
  for (size_t i = 0; i < v.by.size() + 3; ++i) out += "---|";
  out += "\n";
  for (const auto& [key, errors] : v.groups) {
    const Stats st = StatsOf(errors);
    out += "|";
    for (const std::string& part : key) out += " " + part + " |";
    out += Format(" %d | %.1f%% | %+.1f%% |\n", st.rows, st.mape,
                  st.median_signed);
  }
  out += Format("| all |", 0);
  for (size_t i = 1; i < v.by.size(); ++i) out += " |";
  out += Format(" %d | %.1f%% | %+.1f%% |\n", v.main.rows, v.main.mape,
                v.main.median_signed);
  return out;
}

std::string FormatValidateJson(const Validation& v) {
  using Layout = util::JsonWriter::Layout;
  util::JsonWriter w;
  auto opt = [&w](std::string_view key, const std::optional<double>& value) {
    w.Key(key);
    if (value) {
      w.Number(*value);
    } else {
      w.Null();
    }
  };
  w.BeginObject(Layout::kLines);
  w.Key("rows").BeginArray(Layout::kLines);
  for (const RunPrediction& r : v.results) {
    if (!r.simulated) continue;
    w.BeginObject();
    w.Key("id").String(r.row->id);
    w.Key("confidence").String(r.row->confidence);
    w.Key("predicted_tflops_per_gpu").Number(r.tflops);
    opt("measured_tflops_per_gpu", r.row->tflops);
    w.Key("flops_count").String(r.flops_count);
    w.Key("moesim_count_tflops_per_gpu").Number(r.model_tflops);
    w.Key("predicted_tokens_per_sec_per_gpu").Number(r.tokens_per_s);
    opt("measured_tokens_per_sec_per_gpu", r.row->tokens_per_s);
    opt("error_pct",
        r.row->tflops ? std::optional<double>(r.error_pct()) : std::nullopt);
    w.Key("predicted_step_time_s").Number(r.step_s);
    opt("measured_step_time_s", r.row->step_s);
    w.Key("predicted_peak_mem_gib").Number(r.mem_gib);
    opt("measured_peak_mem_gib", r.row->mem_gib);
    w.Key("wall").String(r.wall);
    w.Key("host").String(r.host_cpu);
    w.Key("defaults_used").Strings(r.defaults_used);
    w.EndObject();
  }
  w.EndArray();
  auto stats = [&w](std::string_view key, const Stats& st) {
    w.Key(key).BeginObject();
    w.Key("rows").Number(st.rows).Key("mape_pct").Number(st.mape);
    w.Key("median_abs_error_pct").Number(st.median_abs);
    w.Key("median_signed_error_pct").Number(st.median_signed);
    w.EndObject();
  };
  w.Key("mape_pct").Number(v.main.mape);
  w.Key("median_abs_error_pct").Number(v.main.median_abs);
  stats("short_context", v.short_context);
  stats("long_context", v.long_context);
  w.Key("long_context_series").BeginArray(Layout::kLines);
  for (const auto& [key, one] : v.series) {
    const Stats st = StatsOf(one.errors);
    w.BeginObject();
    w.Key("model").String(key.model).Key("gpu").String(key.gpu);
    w.Key("container").String(one.container).Key("source").String(key.source);
    w.Key("rows").Number(st.rows).Key("mape_pct").Number(st.mape);
    w.Key("median_signed_error_pct").Number(st.median_signed);
    w.EndObject();
  }
  w.EndArray();
  w.Key("low_confidence").BeginObject();
  w.Key("rows").Number(v.low.rows).Key("mape_pct").Number(v.low.mape);
  w.EndObject();
  w.Key("memory_mape_pct").Number(v.mem.mape);
  w.Key("skipped").BeginArray(Layout::kLines);
  for (const RunPrediction& r : v.results) {
    if (r.simulated) continue;
    w.BeginObject().Key("id").String(r.row->id);
    w.Key("reason").String(r.reason).EndObject();
  }
  w.EndArray();
  if (v.has_pairs) {
    w.Key("pairs").BeginArray(Layout::kLines);
    for (const PairResult& p : v.pairs) {
      w.BeginObject().Key("pair_id").String(p.pair_id);
      w.Key("knob").String(p.knob).Key("metric").String(p.metric);
      if (!p.reason.empty()) {
        w.Key("skipped").String(p.reason).EndObject();
        continue;
      }
      w.Key("predicted_a").Number(p.predicted_a);
      w.Key("predicted_b").Number(p.predicted_b);
      w.Key("measured_a").Number(p.measured_a);
      w.Key("measured_b").Number(p.measured_b);
      w.Key("direction_right").Bool(p.direction_right);
      w.Key("ratio_error_pct").Number(p.ratio_error_pct);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return std::move(w).Take();
}

std::string FormatValidateText(const Validation& v,
                               const std::string& group_by) {
  std::string out;
  int simulated = 0;
  for (const RunPrediction& r : v.results) simulated += r.simulated;
  out +=
      Format("%s: %zu runs, %d simulated, %zu skipped\n\n", v.runs_name.c_str(),
             v.results.size(), simulated, v.results.size() - simulated);
  out += Format(
      "TFLOPS/GPU, high and medium confidence: %d rows, MAPE %.1f%%, median "
      "|error| %.1f%%, median signed %+.1f%%\n",
      v.main.rows, v.main.mape, v.main.median_abs, v.main.median_signed);
  out +=
      "(a row that publishes tokens/s is compared in its own FLOPs count: "
      "predicted tokens/s x its logged FLOPs per token; else in its "
      "flops_formula's count, moesim's by default)\n";
  out += Format(
      "  up to 8K tokens: %d rows, MAPE %.1f%%, median |error| %.1f%%; "
      "16K and longer: %d rows, MAPE %.1f%%, median |error| %.1f%%\n",
      v.short_context.rows, v.short_context.mape, v.short_context.median_abs,
      v.long_context.rows, v.long_context.mape, v.long_context.median_abs);
  out += Format("low confidence (apart): %d rows, MAPE %.1f%%\n", v.low.rows,
                v.low.mape);
  out +=
      Format("peak memory: %d rows, MAPE %.1f%%\n\n", v.mem.rows, v.mem.mape);
  int width = 36;  // the key column, wide enough for the longest key
  for (const auto& [key, errors] : v.groups) {
    width = std::max(width, static_cast<int>(Joined(key).size()) + 1);
  }
  out += Format("%-*s %5s %8s %8s\n", width, ("by " + group_by).c_str(), "rows",
                "MAPE", "median");
  for (const auto& [key, errors] : v.groups) {
    const Stats s = StatsOf(errors);
    out += Format("%-*s %5d %7.1f%% %+7.1f%%\n", width, Joined(key).c_str(),
                  s.rows, s.mape, s.median_signed);
  }
  if (!v.series.empty()) {
    out +=
        "\nlong-context series (one source, model and GPU; 16K tokens "
        "and longer)\n";
    for (const auto& [key, one] : v.series) {
      const Stats st = StatsOf(one.errors);
      out += Format(
          "  %-22s %-6s %-10s %5d %7.1f%% %+7.1f%%  %s\n", key.model.c_str(),
          key.gpu.c_str(), one.container.empty() ? "-" : one.container.c_str(),
          st.rows, st.mape, st.median_signed, key.source.substr(0, 60).c_str());
    }
  }
  out +=
      "\nten worst rows                                            measured "
      " moesim   error\n";
  for (size_t i = 0; i < v.ranked.size() && i < 10; ++i) {
    const RunPrediction& r = *v.ranked[i];
    out += Format("  %-54s %8.0f %8.0f %+7.1f%%\n", r.row->id.c_str(),
                  *r.row->tflops, r.tflops, r.error_pct());
  }
  out += "\nskipped\n";
  for (const RunPrediction& r : v.results) {
    if (!r.simulated) {
      out += "  " + r.row->id + ": " + r.reason + "\n";
    }
  }
  if (v.has_pairs) {
    int right = 0, compared = 0;
    out +=
        "\nA/B pairs                                  knob          "
        "measured   moesim  direction  ratio error\n";
    for (const PairResult& p : v.pairs) {
      if (!p.reason.empty()) {
        out += Format("  %-40s %-12s skipped: %s\n", p.pair_id.c_str(),
                      p.knob.c_str(), p.reason.substr(0, 100).c_str());
        continue;
      }
      ++compared;
      right += p.direction_right;
      out += Format("  %-40s %-12s x%-7.3f x%-7.3f %-9s %+7.1f%%\n",
                    p.pair_id.c_str(), p.knob.c_str(),
                    p.measured_b / p.measured_a, p.predicted_b / p.predicted_a,
                    p.direction_right ? "right" : "WRONG", p.ratio_error_pct);
    }
    out += Format("  direction right in %d of %d pairs compared\n", right,
                  compared);
  }
  return out;
}

}  // namespace

util::Result<std::string> RunValidate(const ValidateFlags& f) {
  calibration::Profile profile;
  if (!f.calibration_file.empty()) {
    auto loaded = calibration::LoadProfile(f.calibration_file);
    if (!loaded) return std::unexpected(loaded.error());
    profile = std::move(*loaded);
  }
  auto runs = LoadMeasuredRuns(f.runs_file, "RUNS");
  if (!runs) return std::unexpected(runs.error());
  Validation v;
  v.runs_name = runs->name;
  auto by = ParseGroupBy(f.group_by);
  if (!by) return std::unexpected(by.error());
  v.by = std::move(*by);
  if (f.max_seq_len > 0 && f.min_seq_len > f.max_seq_len) {
    return std::unexpected(FlagError(
        "--min-seq-len",
        std::to_string(f.min_seq_len) + " is above --max-seq-len " +
            std::to_string(f.max_seq_len) + ": no run could be selected"));
  }
  if (f.min_seq_len > 0 || f.max_seq_len > 0) {
    std::erase_if(runs->rows, [&](const MeasuredRun& row) {
      const int seq = row.flags.seq.value_or(0);
      return seq < f.min_seq_len || (f.max_seq_len > 0 && seq > f.max_seq_len);
    });
  }
  if (f.commands) {
    std::string out;
    for (const MeasuredRun& row : runs->rows) {
      out += row.id + "\t" +
             (row.unexpressible.empty()
                  ? "moesim run " + FlagsCommandLine(row.flags)
                  : "# not expressible: " + row.unexpressible) +
             "\n";
    }
    return out;
  }
  std::optional<util::CsvTable> pairs;
  std::string pairs_name;
  if (!f.pairs_file.empty()) {
    auto loaded = LoadPairs(f.pairs_file, pairs_name);
    if (!loaded) return std::unexpected(loaded.error());
    pairs = std::move(*loaded);
  }
  const RunReplayer replayer(runs->rows);
  v.results = replayer.Simulate(profile, f.jobs);
  AddStatistics(v);
  v.has_pairs = pairs.has_value();
  if (pairs) AddPairs(*pairs, pairs_name, v);
  if (f.markdown) return FormatValidateMarkdown(v);
  if (f.json) return FormatValidateJson(v);
  return FormatValidateText(v, f.group_by);
}

}  // namespace moesim::tools
