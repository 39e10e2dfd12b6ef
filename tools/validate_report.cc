#include "tools/validate_report.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "calibration/tables.h"
#include "models/memory.h"
#include "models/zoo.h"
#include "sim/replay.h"
#include "tools/scenario_flags.h"
#include "tools/text_format.h"
#include "util/csv.h"
#include "util/textproto.h"

namespace moesim::tools {

namespace {

// runs.csv's GPU column -> the shipped system of that GPU.
const std::map<std::string, std::string, std::less<>> kSystems = {
    {"h100", "dgx-h100"}, {"h200", "hgx-h200"},     {"b200", "dgx-b200"},
    {"b300", "dgx-b300"}, {"gb200", "gb200-nvl72"}, {"gb300", "gb300-nvl72"}};

const char* const kRequired[] = {"id",
                                 "model",
                                 "gpu",
                                 "num_gpus",
                                 "seq_len",
                                 "mbs",
                                 "gbs",
                                 "tp",
                                 "cp",
                                 "ep",
                                 "etp",
                                 "pp",
                                 "vpp",
                                 "precision",
                                 "dispatcher",
                                 "recompute",
                                 "cuda_graph",
                                 "ep_overlap",
                                 "cpu_offload",
                                 "routing",
                                 "mtp_layers",
                                 "pp_layout",
                                 "extra",
                                 "measured_tflops_per_gpu",
                                 "measured_step_time_s",
                                 "measured_peak_mem_gib",
                                 "confidence"};

struct Row {
  std::string id, model, gpu, precision, confidence;
  std::string unexpressible;  // why the row cannot be simulated, if so
  int line = 0;
  ScenarioFlags flags;
  std::optional<double> tflops, step_s, mem_gib;  // measured
};

struct Result {
  const Row* row = nullptr;
  bool simulated = false;
  std::string reason;  // when not simulated
  double tflops = 0, step_s = 0, mem_gib = 0;
  std::vector<std::string> defaults_used;
  double error_pct() const {
    return (tflops - *row->tflops) / *row->tflops * 100;
  }
};

// "<file>:<line>: <column>: <rule>", the one-line error of a bad row.
util::Error RowError(const std::string& file, int line, std::string_view column,
                     std::string_view rule) {
  return util::Error{file + ":" + std::to_string(line) + ": " +
                     std::string(column) + ": " + std::string(rule)};
}

util::Result<std::optional<double>> Number(const std::string& text,
                                           const std::string& file, int line,
                                           std::string_view column) {
  if (text.empty()) return std::optional<double>();
  double value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::unexpected(
        RowError(file, line, column, "'" + text + "' is not a number"));
  }
  return std::optional<double>(value);
}

util::Result<std::optional<int>> Integer(const std::string& text,
                                         const std::string& file, int line,
                                         std::string_view column) {
  auto v = Number(text, file, line, column);
  if (!v) return std::unexpected(v.error());
  if (!*v) return std::optional<int>();
  if (**v != std::floor(**v) || **v < 0 || **v > 1e9) {
    return std::unexpected(
        RowError(file, line, column, "'" + text + "' is not a whole number"));
  }
  return std::optional<int>(static_cast<int>(**v));
}

// The modelled keys of the `extra` column as Megatron arguments.
std::string ExtraArgs(const std::string& extra) {
  std::string args;
  for (const std::string& kv : util::SplitList(extra, ";")) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    const bool on = value == "True" || value == "true" || value == "1";
    if (key == "capacity_factor") {
      args += " --moe-expert-capacity-factor " + value;
    } else if (key == "main_grads_dtype" || key == "exp_avg_dtype") {
      std::string flag = "--" + key;
      std::replace(flag.begin(), flag.end(), '_', '-');
      args += " " + flag + " " + value;
    } else if (key == "precision_aware_optimizer" && on) {
      args += " --use-precision-aware-optimizer";
    } else if (key == "fp8_param_gather" && on) {
      args += " --fp8-param-gather";
    } else if (key == "overlap_cpu_optimizer_d2h_h2d" && on) {
      args += " --overlap-cpu-optimizer-d2h-h2d";
    } else if (key == "manual_gc") {
      args += std::string(" --manual-gc=") + (on ? "true" : "false");
    } else if (key == "moe_shared_expert_overlap" && on) {
      args += " --moe-shared-expert-overlap";
    }
  }
  return args;
}

util::Result<Row> ParseRow(const util::CsvTable& t, size_t i,
                           const std::string& file) {
  Row r;
  r.line = t.Line(i);
  r.id = t.Get(i, "id");
  r.model = t.Get(i, "model");
  r.gpu = t.Get(i, "gpu");
  r.precision = t.Get(i, "precision");
  r.confidence = t.Get(i, "confidence");
  if (r.id.empty())
    return std::unexpected(RowError(file, r.line, "id", "is empty"));
  const std::vector<std::string> zoo = models::ZooNames();
  if (std::find(zoo.begin(), zoo.end(), r.model) == zoo.end()) {
    return std::unexpected(
        RowError(file, r.line, "model", "unknown model '" + r.model + "'"));
  }
  const auto system = kSystems.find(r.gpu);
  if (r.gpu.empty()) {
    r.unexpressible = "the row publishes no GPU";
  } else if (system == kSystems.end()) {
    return std::unexpected(RowError(
        file, r.line, "gpu",
        "unknown GPU '" + r.gpu + "' (h100, h200, b200, b300, gb200, gb300)"));
  }
  ScenarioFlags& f = r.flags;
  f.model = r.model;
  if (system != kSystems.end()) f.system = system->second;
  struct IntColumn {
    const char* column;
    std::optional<int>* flag;
  };
  const IntColumn ints[] = {{"num_gpus", &f.gpus},
                            {"seq_len", &f.seq},
                            {"mbs", &f.mbs},
                            {"gbs", &f.gbs},
                            {"tp", &f.tp},
                            {"cp", &f.cp},
                            {"ep", &f.ep},
                            {"etp", &f.etp},
                            {"pp", &f.pp},
                            {"vpp", &f.vpp},
                            {"ep_overlap", &f.ep_overlap}};
  for (const IntColumn& c : ints) {
    auto v = Integer(t.Get(i, c.column), file, r.line, c.column);
    if (!v) return std::unexpected(v.error());
    *c.flag = *v;
  }
  auto offload = Number(t.Get(i, "cpu_offload"), file, r.line, "cpu_offload");
  if (!offload) return std::unexpected(offload.error());
  f.cpu_offload = *offload;
  auto set = [&](const char* column, std::optional<std::string>& flag) {
    if (!t.Get(i, column).empty()) flag = t.Get(i, column);
  };
  set("precision", f.precision);
  set("dispatcher", f.dispatcher);
  set("cuda_graph", f.cuda_graph);
  set("routing", f.routing);
  set("pp_layout", f.pp_layout);
  if (const std::string& rc = t.Get(i, "recompute"); !rc.empty()) {
    f.recompute = rc;
  }
  std::string args = ExtraArgs(t.Get(i, "extra"));
  auto mtp = Integer(t.Get(i, "mtp_layers"), file, r.line, "mtp_layers");
  if (!mtp) return std::unexpected(mtp.error());
  if (*mtp) args += " --mtp-num-layers " + std::to_string(**mtp);
  if (!args.empty()) f.megatron_args = args;
  for (auto [column, out] : {std::pair{"measured_tflops_per_gpu", &r.tflops},
                             std::pair{"measured_step_time_s", &r.step_s},
                             std::pair{"measured_peak_mem_gib", &r.mem_gib}}) {
    auto v = Number(t.Get(i, column), file, r.line, column);
    if (!v) return std::unexpected(v.error());
    if (*v && !(**v > 0)) {  // errors are relative to it
      return std::unexpected(RowError(file, r.line, column,
                                      "must be > 0, got " + t.Get(i, column)));
    }
    *out = *v;
  }
  return r;
}

// Replays each row on `jobs` threads: rows are resolved and the platforms
// (shared by system and GPU count, read-only) built first, then the replays
// run in parallel, each result in its row's slot, so the output does not
// depend on the thread count.
std::vector<Result> Simulate(const std::vector<Row>& rows, int jobs) {
  std::map<std::pair<std::string, int>, sim::Platform> platforms;
  std::vector<Result> out(rows.size());
  std::vector<std::optional<scenarios::ResolvedScenario>> scenarios(
      rows.size());
  std::vector<const sim::Platform*> platform_of(rows.size(), nullptr);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    Result& r = out[i];
    r.row = &row;
    if (!row.unexpressible.empty() ||
        (!row.tflops && !row.step_s && !row.mem_gib)) {
      r.reason =
          row.unexpressible.empty() ? "nothing measured" : row.unexpressible;
      continue;
    }
    auto s = ResolveFlags(row.flags);
    if (!s) {
      r.reason = s.error().message;
      continue;
    }
    const auto key = std::pair{s->system.name(), s->spec.num_gpus()};
    auto it = platforms.find(key);
    if (it == platforms.end()) {
      auto platform = sim::BuildPlatform(*s);
      if (!platform) {
        r.reason = platform.error().message;
        continue;
      }
      it = platforms.emplace(key, std::move(*platform)).first;
    }
    platform_of[i] = &it->second;
    scenarios[i] = std::move(*s);
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < rows.size(); i = next++) {
      if (!scenarios[i]) continue;
      const scenarios::ResolvedScenario& s = *scenarios[i];
      Result& r = out[i];
      auto step = sim::Replay(s, *platform_of[i], {});
      if (!step) {
        r.reason = step.error().message;
        continue;
      }
      r.simulated = true;
      r.tflops = step->tflops_per_gpu;
      r.step_s = step->step_time_s;
      const models::MemoryEstimate m =
          models::EstimateMemory(s.model, s.pipeline, s.parallel, s.training,
                                 s.system.gpu().memory_gib() * models::kGiB);
      r.mem_gib = m.peak_bytes / models::kGiB;
      r.defaults_used = s.defaults_used;
    }
  };
  const int threads =
      jobs > 0
          ? jobs
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

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

std::string GroupKey(const Row& row, const std::vector<std::string>& by) {
  std::string key;
  for (const std::string& b : by) {
    const std::string& v = b == "model"       ? row.model
                           : b == "gpu"       ? row.gpu
                           : b == "precision" ? row.precision
                                              : row.confidence;
    key += (key.empty() ? "" : " ") + v;
  }
  return key;
}

bool Low(const Row& row) { return row.confidence == "low"; }

}  // namespace

void AddValidateFlags(CLI::App& app, ValidateFlags& f) {
  app.add_option("runs", f.runs_file,
                 "Measured runs CSV (default: the shipped "
                 "calibration/runs/runs.csv)");
  app.add_option("--pairs", f.pairs_file,
                 "One-knob A/B pairs CSV (ab_pairs.csv schema) to predict; "
                 "'shipped' for calibration/runs/ab_pairs.csv");
  app.add_option("--group-by", f.group_by,
                 "Comma-separated: model, gpu, precision, confidence");
  CLI::Option* json = app.add_flag("--json", f.json, "Print JSON");
  app.add_flag("--markdown", f.markdown,
               "Print only the accuracy table by group, in Markdown (the "
               "README's table)")
      ->excludes(json);
  app.add_option("-j,--jobs", f.jobs,
                 "Replay threads (default: one per hardware thread); the "
                 "output does not depend on it")
      ->check(CLI::NonNegativeNumber);
}

util::Result<std::string> RunValidate(const ValidateFlags& f) {
  // Load the runs.
  const std::string runs_name =
      f.runs_file.empty() ? "calibration/runs/runs.csv" : f.runs_file;
  std::string text;
  if (f.runs_file.empty()) {
    auto shipped = calibration::ShippedRunsFile("runs.csv");
    if (!shipped) return std::unexpected(shipped.error());
    text = std::string(*shipped);
  } else {
    std::ifstream in(f.runs_file, std::ios::binary);
    if (!in) {
      return std::unexpected(
          FlagError("RUNS", "cannot read '" + f.runs_file + "'"));
    }
    auto read = util::ReadFile(f.runs_file);  // size-limited
    if (!read) return std::unexpected(read.error());
    text = std::move(*read);
  }
  auto table = util::CsvTable::Parse(text, runs_name);
  if (!table) return std::unexpected(table.error());
  for (const char* column : kRequired) {
    if (table->Column(column) < 0) {
      return std::unexpected(util::Error{runs_name + ":1: missing column '" +
                                         std::string(column) + "'"});
    }
  }
  std::vector<std::string> by = util::SplitList(f.group_by, ",");
  for (const std::string& b : by) {
    if (b != "model" && b != "gpu" && b != "precision" && b != "confidence") {
      return std::unexpected(FlagError(
          "--group-by",
          "unknown key '" + b + "' (model, gpu, precision, confidence)"));
    }
  }
  std::vector<Row> rows;
  std::map<std::string, int> id_lines;  // pairs refer to runs by id
  for (size_t i = 0; i < table->num_rows(); ++i) {
    auto row = ParseRow(*table, i, runs_name);
    if (!row) return std::unexpected(row.error());
    if (auto [it, added] = id_lines.emplace(row->id, row->line); !added) {
      return std::unexpected(RowError(
          runs_name, row->line, "id",
          "'" + row->id + "' duplicates line " + std::to_string(it->second)));
    }
    rows.push_back(std::move(*row));
  }
  const std::vector<Result> results = Simulate(rows, f.jobs);

  // Statistics: TFLOPS over high/medium rows, low rows apart; memory.
  std::vector<double> main_errors, low_errors, mem_errors;
  std::map<std::string, std::vector<double>> groups;
  std::vector<const Result*> ranked;
  for (const Result& r : results) {
    if (!r.simulated) continue;
    if (r.row->tflops) {
      (Low(*r.row) ? low_errors : main_errors).push_back(r.error_pct());
      if (!Low(*r.row)) {
        groups[GroupKey(*r.row, by)].push_back(r.error_pct());
        ranked.push_back(&r);
      }
    }
    if (r.row->mem_gib) {
      mem_errors.push_back((r.mem_gib - *r.row->mem_gib) / *r.row->mem_gib *
                           100);
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Result* a, const Result* b) {
                     return std::abs(a->error_pct()) > std::abs(b->error_pct());
                   });
  const Stats main = StatsOf(main_errors), low = StatsOf(low_errors),
              mem = StatsOf(mem_errors);

  // A/B pairs.
  struct PairResult {
    std::string pair_id, knob, metric, reason;
    double predicted_a = 0, predicted_b = 0, measured_a = 0, measured_b = 0;
    bool direction_right = false;
    double ratio_error_pct = 0;
  };
  std::vector<PairResult> pairs;
  if (!f.pairs_file.empty()) {
    std::string pairs_text;
    const bool shipped = f.pairs_file == "shipped";
    const std::string pairs_name =
        shipped ? "calibration/runs/ab_pairs.csv" : f.pairs_file;
    if (shipped) {
      auto content = calibration::ShippedRunsFile("ab_pairs.csv");
      if (!content) return std::unexpected(content.error());
      pairs_text = std::string(*content);
    } else {
      std::ifstream in(f.pairs_file, std::ios::binary);
      if (!in) {
        return std::unexpected(
            FlagError("--pairs", "cannot read '" + f.pairs_file + "'"));
      }
      auto read = util::ReadFile(f.pairs_file);  // size-limited
      if (!read) return std::unexpected(read.error());
      pairs_text = std::move(*read);
    }
    auto pt = util::CsvTable::Parse(pairs_text, pairs_name);
    if (!pt) return std::unexpected(pt.error());
    for (const char* column : {"pair_id", "knob", "a_id", "b_id", "metric",
                               "a_measured", "b_measured"}) {
      if (pt->Column(column) < 0) {
        return std::unexpected(util::Error{pairs_name + ":1: missing column '" +
                                           std::string(column) + "'"});
      }
    }
    std::map<std::string, const Result*> by_id;
    for (const Result& r : results) by_id[r.row->id] = &r;
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
      auto am = Number(pt->Get(i, "a_measured"), pairs_name, pt->Line(i),
                       "a_measured");
      auto bm = Number(pt->Get(i, "b_measured"), pairs_name, pt->Line(i),
                       "b_measured");
      if (!am) return std::unexpected(am.error());
      if (!bm) return std::unexpected(bm.error());
      const auto a = by_id.find(pt->Get(i, "a_id"));
      const auto b = by_id.find(pt->Get(i, "b_id"));
      if (a == by_id.end() || b == by_id.end()) {
        p.reason = "a run of the pair is not in " + runs_name;
      } else if (!a->second->simulated || !b->second->simulated) {
        p.reason =
            !a->second->simulated ? a->second->reason : b->second->reason;
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
      pairs.push_back(std::move(p));
    }
  }

  if (f.markdown) {
    std::string out = "|";
    for (const std::string& b : by) out += " " + b + " |";
    out += " rows | MAPE | median signed error |\n|";
    for (size_t i = 0; i < by.size() + 3; ++i) out += "---|";
    out += "\n";
    for (const auto& [key, errors] : groups) {
      const Stats st = StatsOf(errors);
      out += "|";
      for (const std::string& part : util::SplitList(key, " ")) {
        out += " " + part + " |";
      }
      out += Format(" %d | %.1f%% | %+.1f%% |\n", st.rows, st.mape,
                    st.median_signed);
    }
    out += Format("| all |", 0);
    for (size_t i = 1; i < by.size(); ++i) out += " |";
    out += Format(" %d | %.1f%% | %+.1f%% |\n", main.rows, main.mape,
                  main.median_signed);
    return out;
  }
  if (f.json) {
    std::string out = "{\n  \"rows\": [";
    bool first = true;
    for (const Result& r : results) {
      if (!r.simulated) continue;
      out += first ? "\n" : ",\n";
      first = false;
      auto opt = [](const std::optional<double>& v) {
        return v ? JsonNumber(*v) : std::string("null");
      };
      out += "    {\"id\": " + JsonString(r.row->id) +
             ", \"confidence\": " + JsonString(r.row->confidence) +
             ", \"predicted_tflops_per_gpu\": " + JsonNumber(r.tflops) +
             ", \"measured_tflops_per_gpu\": " + opt(r.row->tflops) +
             ", \"error_pct\": " +
             (r.row->tflops ? JsonNumber(r.error_pct()) : "null") +
             ", \"predicted_step_time_s\": " + JsonNumber(r.step_s) +
             ", \"measured_step_time_s\": " + opt(r.row->step_s) +
             ", \"predicted_peak_mem_gib\": " + JsonNumber(r.mem_gib) +
             ", \"measured_peak_mem_gib\": " + opt(r.row->mem_gib) +
             ", \"defaults_used\": " + JsonList(r.defaults_used) + "}";
    }
    out += "\n  ],\n  \"mape_pct\": " + JsonNumber(main.mape) +
           ",\n  \"median_abs_error_pct\": " + JsonNumber(main.median_abs) +
           ",\n  \"low_confidence\": {\"rows\": " + JsonNumber(low.rows) +
           ", \"mape_pct\": " + JsonNumber(low.mape) + "}" +
           ",\n  \"memory_mape_pct\": " + JsonNumber(mem.mape) +
           ",\n  \"skipped\": [";
    first = true;
    for (const Result& r : results) {
      if (r.simulated) continue;
      out += first ? "\n" : ",\n";
      first = false;
      out += "    {\"id\": " + JsonString(r.row->id) +
             ", \"reason\": " + JsonString(r.reason) + "}";
    }
    out += "\n  ]";
    if (!f.pairs_file.empty()) {
      out += ",\n  \"pairs\": [";
      first = true;
      for (const PairResult& p : pairs) {
        out += first ? "\n" : ",\n";
        first = false;
        out += "    {\"pair_id\": " + JsonString(p.pair_id) +
               ", \"knob\": " + JsonString(p.knob) +
               ", \"metric\": " + JsonString(p.metric);
        if (!p.reason.empty()) {
          out += ", \"skipped\": " + JsonString(p.reason) + "}";
          continue;
        }
        out +=
            ", \"predicted_a\": " + JsonNumber(p.predicted_a) +
            ", \"predicted_b\": " + JsonNumber(p.predicted_b) +
            ", \"measured_a\": " + JsonNumber(p.measured_a) +
            ", \"measured_b\": " + JsonNumber(p.measured_b) +
            ", \"direction_right\": " + (p.direction_right ? "true" : "false") +
            ", \"ratio_error_pct\": " + JsonNumber(p.ratio_error_pct) + "}";
      }
      out += "\n  ]";
    }
    return out + "\n}\n";
  }

  std::string out;
  int simulated = 0;
  for (const Result& r : results) simulated += r.simulated;
  out +=
      Format("%s: %zu runs, %d simulated, %zu skipped\n\n", runs_name.c_str(),
             results.size(), simulated, results.size() - simulated);
  out += Format(
      "TFLOPS/GPU, high and medium confidence: %d rows, MAPE %.1f%%, median "
      "|error| %.1f%%, median signed %+.1f%%\n",
      main.rows, main.mape, main.median_abs, main.median_signed);
  out += Format("low confidence (apart): %d rows, MAPE %.1f%%\n", low.rows,
                low.mape);
  out += Format("peak memory: %d rows, MAPE %.1f%%\n\n", mem.rows, mem.mape);
  out += Format("%-36s %5s %8s %8s\n", ("by " + f.group_by).c_str(), "rows",
                "MAPE", "median");
  for (const auto& [key, errors] : groups) {
    const Stats s = StatsOf(errors);
    out += Format("%-36s %5d %7.1f%% %+7.1f%%\n", key.c_str(), s.rows, s.mape,
                  s.median_signed);
  }
  out +=
      "\nten worst rows                                            measured "
      " moesim   error\n";
  for (size_t i = 0; i < ranked.size() && i < 10; ++i) {
    const Result& r = *ranked[i];
    out += Format("  %-54s %8.0f %8.0f %+7.1f%%\n", r.row->id.c_str(),
                  *r.row->tflops, r.tflops, r.error_pct());
  }
  out += "\nskipped\n";
  for (const Result& r : results) {
    if (!r.simulated) {
      out += "  " + r.row->id + ": " + r.reason + "\n";
    }
  }
  if (!f.pairs_file.empty()) {
    int right = 0, compared = 0;
    out +=
        "\nA/B pairs                                  knob          "
        "measured   moesim  direction  ratio error\n";
    for (const PairResult& p : pairs) {
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

}  // namespace moesim::tools
