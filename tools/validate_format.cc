// validate's reports (tools/validate_internal.h).

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "studies/measured_runs.h"
#include "tools/text_format.h"
#include "tools/validate_internal.h"
#include "util/csv.h"
#include "util/json_write.h"

namespace moesim::tools::internal {

std::string FormatValidateMarkdown(const studies::Validation& v) {
  std::string out = "|";
  for (const std::string& b : v.by) out += " " + b + " |";
  out += " rows | MAPE | median signed error |\n|";
  for (size_t i = 0; i < v.by.size() + 3; ++i) out += "---|";
  out += "\n";
  for (const auto& [key, errors] : v.groups) {
    const studies::Stats st = studies::StatsOf(errors);
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

std::string FormatValidateJson(const studies::Validation& v) {
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
  for (const studies::RunPrediction& r : v.results) {
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
  auto stats = [&w](std::string_view key, const studies::Stats& st) {
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
    const studies::Stats st = studies::StatsOf(one.errors);
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
  for (const studies::RunPrediction& r : v.results) {
    if (r.simulated) continue;
    w.BeginObject().Key("id").String(r.row->id);
    w.Key("reason").String(r.reason).EndObject();
  }
  w.EndArray();
  if (v.has_pairs) {
    w.Key("pairs").BeginArray(Layout::kLines);
    for (const studies::PairResult& p : v.pairs) {
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

std::string FormatValidateText(const studies::Validation& v,
                               const std::string& group_by) {
  std::string out;
  int simulated = 0;
  for (const studies::RunPrediction& r : v.results) simulated += r.simulated;
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
    width = std::max(width, static_cast<int>(studies::Joined(key).size()) + 1);
  }
  out += Format("%-*s %5s %8s %8s\n", width, ("by " + group_by).c_str(), "rows",
                "MAPE", "median");
  for (const auto& [key, errors] : v.groups) {
    const studies::Stats s = studies::StatsOf(errors);
    out +=
        Format("%-*s %5d %7.1f%% %+7.1f%%\n", width,
               studies::Joined(key).c_str(), s.rows, s.mape, s.median_signed);
  }
  if (!v.series.empty()) {
    out +=
        "\nlong-context series (one source, model and GPU; 16K tokens "
        "and longer)\n";
    for (const auto& [key, one] : v.series) {
      const studies::Stats st = studies::StatsOf(one.errors);
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
    const studies::RunPrediction& r = v.results[v.ranked[i]];
    out += Format("  %-54s %8.0f %8.0f %+7.1f%%\n", r.row->id.c_str(),
                  *r.row->tflops, r.tflops, r.error_pct());
  }
  out += "\nskipped\n";
  for (const studies::RunPrediction& r : v.results) {
    if (!r.simulated) {
      out += "  " + r.row->id + ": " + r.reason + "\n";
    }
  }
  if (v.has_pairs) {
    int right = 0, compared = 0;
    out +=
        "\nA/B pairs                                  knob          "
        "measured   moesim  direction  ratio error\n";
    for (const studies::PairResult& p : v.pairs) {
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

}  // namespace moesim::tools::internal
