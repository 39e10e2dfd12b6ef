#include "studies/measured_runs.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include "calibration/tables.h"
#include "models/memory.h"
#include "models/zoo.h"
#include "scenarios/vocabulary.h"
#include "sim/replay.h"
#include "sim/step_stats.h"
#include "studies/jobs.h"
#include "studies/measured_runs_internal.h"
#include "studies/physical_limits.h"
#include "topology/system.h"
#include "util/csv.h"
#include "util/format.h"
#include "util/message.h"
#include "util/textproto.h"
#include "util/thread_errors.h"

namespace moesim::studies {

namespace {

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

}  // namespace

util::Result<std::optional<double>> ParseRunNumber(const std::string& text,
                                                   const std::string& file,
                                                   int line,
                                                   std::string_view column) {
  if (text.empty()) return std::optional<double>();
  double value = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::unexpected(internal::RowError(
        file, line, column, util::Quoted(text) + " is not a number"));
  }
  return std::optional<double>(value);
}

util::Result<MeasuredRuns> LoadMeasuredRuns(const std::string& file,
                                            std::string_view flag) {
  MeasuredRuns runs;
  runs.name = file.empty() ? "calibration/runs/runs.csv" : file;
  std::string text;
  if (file.empty()) {
    auto shipped = calibration::ShippedRunsFile("runs.csv");
    if (!shipped) return std::unexpected(shipped.error());
    text = std::string(*shipped);
  } else {
    auto read = util::ReadFile(file);  // bounded; never blocks
    if (!read)
      return std::unexpected(util::FlagError(flag, read.error().message));
    text = std::move(*read);
  }
  auto table = util::CsvTable::Parse(text, runs.name);
  if (!table) return std::unexpected(table.error());
  for (const char* column : kRequired) {
    if (table->Column(column) < 0) {
      return std::unexpected(util::Error{runs.name + ":1: missing column '" +
                                         std::string(column) + "'"});
    }
  }
  std::map<std::string, int> id_lines;  // pairs refer to runs by id
  for (size_t i = 0; i < table->num_rows(); ++i) {
    auto row = internal::ParseRow(*table, i, runs.name);
    if (!row) return std::unexpected(row.error());
    if (auto [it, added] = id_lines.emplace(row->id, row->line); !added) {
      return std::unexpected(internal::RowError(
          runs.name, row->line, "id",
          "'" + row->id + "' duplicates line " + std::to_string(it->second)));
    }
    runs.rows.push_back(std::move(*row));
  }
  return runs;
}

RunReplayer::RunReplayer(const std::vector<MeasuredRun>& rows)
    : rows_(&rows), scenarios_(rows.size()), reasons_(rows.size()) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const MeasuredRun& row = rows[i];
    if (!row.unexpressible.empty() ||
        (!row.tflops && !row.step_s && !row.mem_gib)) {
      reasons_[i] =
          row.unexpressible.empty() ? "nothing measured" : row.unexpressible;
      continue;
    }
    auto s = ResolveFlags(row.flags);
    if (!s) {
      reasons_[i] = s.error().message;
      continue;
    }
    scenarios_[i] = std::move(*s);
  }
}

std::vector<RunPrediction> RunReplayer::Simulate(
    const calibration::Profile& profile, int jobs,
    const std::vector<bool>& selected) const {
  const std::vector<MeasuredRun>& rows = *rows_;
  std::map<std::pair<std::string, int>, sim::Platform> platforms;
  std::vector<RunPrediction> out(rows.size());
  std::vector<const sim::Platform*> platform_of(rows.size(), nullptr);
  for (size_t i = 0; i < rows.size(); ++i) {
    RunPrediction& r = out[i];
    r.row = &rows[i];
    if (!scenarios_[i]) {
      r.reason = reasons_[i];
      continue;
    }
    if (!selected.empty() && !selected[i]) {
      r.reason = "not selected";
      continue;
    }
    const scenarios::ResolvedScenario& s = *scenarios_[i];
    const auto key = std::pair{s.system.name(), s.spec.num_gpus()};
    auto it = platforms.find(key);
    if (it == platforms.end()) {
      auto platform = sim::BuildPlatform(s, profile);
      if (!platform) {
        r.reason = platform.error().message;
        continue;
      }
      it = platforms.emplace(key, std::move(*platform)).first;
    }
    platform_of[i] = &it->second;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < rows.size(); i = next++) {
      if (platform_of[i] == nullptr) continue;
      const scenarios::ResolvedScenario& s = *scenarios_[i];
      RunPrediction& r = out[i];
      auto step = sim::Replay(s, *platform_of[i], {});
      if (!step) {
        r.reason = step.error().message;
        continue;
      }
      r.simulated = true;
      r.model_tflops = step->tflops_per_gpu;
      r.tokens_per_s = step->tokens_per_sec_per_gpu;
      const std::optional<double> logged = rows[i].logged_flops_per_token();
      if (logged) {
        r.flops_count = "row";
        r.tflops = r.tokens_per_s * *logged / 1e12;
      } else if (rows[i].flops_formula !=
                 models::FlopsFormula::kMegatronBridge) {
        r.flops_count = models::FlopsFormulaName(rows[i].flops_formula);
        r.tflops =
            r.tokens_per_s *
            models::FlopsPerSequence(s.model, s.spec.seq_length(),
                                     s.parallel.tp, rows[i].flops_formula) /
            s.spec.seq_length() / 1e12;
      } else {
        r.tflops = r.model_tflops;
      }
      r.step_s = step->step_time_s;
      const models::MemoryEstimate m =
          models::EstimateMemory(s.model, s.pipeline, s.parallel, s.training,
                                 s.system.gpu().memory_gib() * models::kGiB);
      r.mem_gib = m.peak_bytes / models::kGiB;
      r.defaults_used = s.defaults_used;
      r.wall = sim::DiagnoseWall(*step, m.peak_bytes, m.capacity_bytes).name;
      r.host_cpu = s.system.host_link().cpu();
      r.local_experts = s.model.num_moe_experts() / s.parallel.ep;
    }
  };
  const int threads = JobCount(jobs);
  util::ThreadErrors errors;
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back([&] { errors.Run(work); });
  errors.Run(work);
  for (std::thread& t : pool) t.join();
  errors.Rethrow();
  return out;
}

}  // namespace moesim::studies
