#include "tools/measured_runs.h"

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
#include "tools/jobs.h"
#include "tools/physical_limits.h"
#include "tools/text_format.h"
#include "topology/system.h"
#include "util/csv.h"
#include "util/message.h"
#include "util/textproto.h"
#include "util/thread_errors.h"

namespace moesim::tools {

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

// "<file>:<line>: <column>: <rule>", the one-line error of a bad row.
util::Error RowError(const std::string& file, int line, std::string_view column,
                     std::string_view rule) {
  return util::Error{file + ":" + std::to_string(line) + ": " +
                     std::string(column) + ": " + std::string(rule)};
}

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
    return std::unexpected(RowError(
        file, line, column, "'" + util::Excerpt(text) + "' is not a number"));
  }
  return std::optional<double>(value);
}

namespace {

util::Result<std::optional<int>> Integer(const std::string& text,
                                         const std::string& file, int line,
                                         std::string_view column) {
  auto v = ParseRunNumber(text, file, line, column);
  if (!v) return std::unexpected(v.error());
  if (!*v) return std::optional<int>();
  if (**v != std::floor(**v) || **v < 0 || **v > 1e9) {
    return std::unexpected(
        RowError(file, line, column,
                 "'" + util::Excerpt(text) + "' is not a whole number"));
  }
  return std::optional<int>(static_cast<int>(**v));
}

// The modelled keys of the `extra` column as Megatron arguments; a key with
// no Megatron-LM flag goes to moesim's own flag in `flags`
// (batch_p2p_sync, a Megatron-Bridge config field).
std::string ExtraArgs(const std::string& extra, ScenarioFlags& flags) {
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
    } else if (key == "fp8_dot_product_attention" && on) {
      args += " --fp8-dot-product-attention";
    } else if (key == "overlap_cpu_optimizer_d2h_h2d" && on) {
      args += " --overlap-cpu-optimizer-d2h-h2d";
    } else if (key == "manual_gc") {
      args += std::string(" --manual-gc=") + (on ? "true" : "false");
    } else if (key == "batch_p2p_sync") {
      flags.batch_p2p_sync = on ? 1 : 0;
    } else if (key == "moe_shared_expert_overlap" && on) {
      args += " --moe-shared-expert-overlap";
    } else if (key == "delay_wgrad_compute" && on) {
      args += " --delay-wgrad-compute";
    } else if (key == "moe_pad_expert_input_to_capacity" && on) {
      args += " --moe-pad-expert-input-to-capacity";
    } else if (key == "use_megatron_fsdp" && on) {
      // Megatron-Bridge's performance scripts turn Megatron-FSDP on with
      // optim_grads_params (set_mcore_fsdp_configs) unless a row says else.
      args += " --use-megatron-fsdp --data-parallel-sharding-strategy ";
      const size_t at = extra.find("fsdp_sharding=");
      args += at == std::string::npos
                  ? std::string("optim_grads_params")
                  : extra.substr(at + 14, extra.find(';', at) - at - 14);
    } else if (key == "activation_cpu_offloading_layers") {
      // Megatron-Bridge's perf override: cpu_offloading (activations only)
      // for this many layers (scripts/performance utils).
      args += " --cpu-offloading --cpu-offloading-num-layers " + value;
    }
  }
  return args;
}

// The optional cp_comm_type column and the hierarchical sizes in `extra`
// (hierarchical_context_parallel_sizes=8 4, inner first, as Megatron's
// flag): a word moesim does not know, or a split Transformer Engine
// refuses (scenarios::CpExchangeRule), is an error naming the row.
util::Result<void> CpExchange(const util::CsvTable& t, size_t i,
                              const std::string& file,
                              const models::Model& model, MeasuredRun& r) {
  constexpr std::string_view kColumn = "cp_comm_type";
  constexpr std::string_view kSizesKey = "hierarchical_context_parallel_sizes";
  const std::string& word = t.Get(i, kColumn);
  std::vector<int> sizes;
  for (const std::string& kv : util::SplitList(t.Get(i, "extra"), ";")) {
    if (kv.rfind(std::string(kSizesKey) + "=", 0) != 0) continue;
    for (const std::string& part :
         util::SplitList(kv.substr(kSizesKey.size() + 1), " x,")) {
      auto size = Integer(part, file, r.line, "extra");
      if (!size) return std::unexpected(size.error());
      sizes.push_back(size->value_or(0));
    }
  }
  if (word.empty() && sizes.empty()) return {};
  auto type = scenarios::ParseCpCommType(word.empty() ? "p2p" : word);
  if (!type) {
    return std::unexpected(
        RowError(file, r.line, kColumn, type.error().message));
  }
  r.cp_comm_type = word;
  ScenarioFlags& f = r.flags;
  if (!word.empty()) f.cp_comm_type = word;
  if (!sizes.empty()) {
    std::string text;
    for (int size : sizes)
      text += (text.empty() ? "" : ",") + std::to_string(size);
    f.hierarchical_cp_sizes = text;
  }
  const std::optional<scenarios::FieldRule> broken =
      scenarios::CpExchangeRule(model, f.tp.value_or(1), f.cp.value_or(1),
                                *type, word.empty() ? "p2p" : word, sizes);
  if (!broken) return {};
  const std::string field = broken->field == kColumn ? std::string(kColumn)
                            : broken->field == "layout.context_parallel_size"
                                ? std::string("cp")
                                : "extra " + broken->field;
  return std::unexpected(RowError(file, r.line, field, broken->rule));
}

// The word columns against moesim's vocabularies (scenarios/vocabulary.h)
// and the schema's confidence levels (validation README): an unknown word is
// refused with its row, not left to make the row silently unsimulated.
util::Result<void> CheckWords(const util::CsvTable& t, size_t i,
                              const std::string& file, int line) {
  for (const char* column :
       {"precision", "dispatcher", "recompute", "cuda_graph", "routing"}) {
    const std::string& word = t.Get(i, column);
    if (word.empty()) continue;
    if (auto ok = scenarios::CheckWord(column, word); !ok)
      return std::unexpected(RowError(file, line, column, ok.error().message));
  }
  const std::string& confidence = t.Get(i, "confidence");
  if (confidence != "high" && confidence != "medium" && confidence != "low") {
    return std::unexpected(RowError(
        file, line, "confidence",
        "unknown '" + util::Excerpt(confidence) + "' (high, medium, low)"));
  }
  for (const std::string& kv : util::SplitList(t.Get(i, "extra"), ";")) {
    if (!kv.starts_with("capacity_factor=")) continue;
    const std::string value = kv.substr(kv.find('=') + 1);
    auto v = ParseRunNumber(value, file, line, "extra capacity_factor");
    if (!v) return std::unexpected(v.error());
    if (!*v || !(**v > 0)) {
      return std::unexpected(
          RowError(file, line, "extra capacity_factor",
                   "must be > 0, got '" + util::Excerpt(value) + "'"));
    }
  }
  return {};
}

// The measured columns and their ceilings (tools/physical_limits.h).
struct MeasuredLimit {
  const char* column;
  double max;
  const char* what;
};
constexpr MeasuredLimit kMeasuredLimits[] = {
    {"measured_tflops_per_gpu", kMaxTflopsPerGpu, "TFLOPS per GPU"},
    {"measured_step_time_s", kMaxStepSeconds, "seconds per step"},
    {"measured_peak_mem_gib", kMaxGibPerGpu, "GiB per GPU"},
    {"measured_tokens_per_sec_per_gpu", kMaxTokensPerSecPerGpu,
     "tokens per second per GPU"},
};

// A measured value: empty, or > 0 and at most its column's ceiling.
util::Result<std::optional<double>> Measured(const util::CsvTable& t, size_t i,
                                             const std::string& file, int line,
                                             const MeasuredLimit& limit) {
  const std::string& text = t.Get(i, limit.column);
  auto v = ParseRunNumber(text, file, line, limit.column);
  if (!v || !*v) return v;
  if (!(**v > 0) || **v > limit.max) {
    char max[32];
    std::snprintf(max, sizeof(max), "%g", limit.max);
    return std::unexpected(RowError(file, line, limit.column,
                                    "must be > 0 and at most " +
                                        std::string(max) + " " + limit.what +
                                        ", got " + util::Excerpt(text)));
  }
  return v;
}

util::Result<MeasuredRun> ParseRow(const util::CsvTable& t, size_t i,
                                   const std::string& file) {
  MeasuredRun r;
  r.line = t.Line(i);
  r.id = t.Get(i, "id");
  r.model = t.Get(i, "model");
  r.gpu = t.Get(i, "gpu");
  r.precision = t.Get(i, "precision");
  r.confidence = t.Get(i, "confidence");
  r.container = t.Get(i, "container");
  r.source = t.Get(i, "source");
  if (r.id.empty())
    return std::unexpected(RowError(file, r.line, "id", "is empty"));
  const std::vector<std::string> zoo = models::ZooNames();
  if (std::find(zoo.begin(), zoo.end(), r.model) == zoo.end()) {
    return std::unexpected(
        RowError(file, r.line, "model", "unknown model '" + r.model + "'"));
  }
  // runs.csv's GPU column -> the shipped system of that GPU.
  const util::Result<std::string> system = topology::SystemForGpu(r.gpu);
  if (r.gpu.empty()) {
    r.unexpressible = "the row publishes no GPU";
  } else if (!system) {
    return std::unexpected(
        RowError(file, r.line, "gpu",
                 "unknown GPU '" + r.gpu + "' (" +
                     util::JoinList(topology::ShippedGpus()) + ")"));
  }
  ScenarioFlags& f = r.flags;
  f.model = r.model;
  if (system) f.system = *system;
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
  if (f.ep_overlap && *f.ep_overlap > 1) {
    return std::unexpected(RowError(
        file, r.line, "ep_overlap",
        "must be 0 or 1, got " + util::Excerpt(t.Get(i, "ep_overlap"))));
  }
  auto offload =
      ParseRunNumber(t.Get(i, "cpu_offload"), file, r.line, "cpu_offload");
  if (!offload) return std::unexpected(offload.error());
  if (*offload && !(**offload >= 0 && **offload <= 1)) {
    return std::unexpected(
        RowError(file, r.line, "cpu_offload",
                 "must be in [0, 1] (a fraction of the optimizer state), got " +
                     util::Excerpt(t.Get(i, "cpu_offload"))));
  }
  f.cpu_offload = *offload;
  if (auto ok = CheckWords(t, i, file, r.line); !ok)
    return std::unexpected(ok.error());
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
  // The zoo name was checked above; the model's architecture is needed by
  // the CP exchange's head rules and the FLOPs formula's family check.
  auto model = models::LoadModel(r.model);
  if (!model) return std::unexpected(model.error());
  if (auto cp = CpExchange(t, i, file, *model, r); !cp)
    return std::unexpected(cp.error());
  if (const std::string& word = t.Get(i, "flops_formula"); !word.empty()) {
    const std::optional<models::FlopsFormula> formula =
        models::ParseFlopsFormula(word);
    if (!formula) {
      return std::unexpected(RowError(
          file, r.line, "flops_formula",
          "unknown '" + word + "' (" + models::FlopsFormulaWords() + ")"));
    }
    if (!models::CanCountAs(*model, *formula)) {
      return std::unexpected(RowError(
          file, r.line, "flops_formula",
          word +
              " counts dense llama-family models only (NeMo's llama2 / "
              "llama3 formula), not '" +
              r.model + "'"));
    }
    r.flops_formula = *formula;
  }
  for (const std::string& kv : util::SplitList(t.Get(i, "extra"), ";")) {
    if (kv == "packed_sequences=thd" && r.unexpressible.empty()) {
      // A packed batch's attention is causal within each document, and
      // the documents' lengths are not published; the row is kept, not
      // replayed.
      r.unexpressible =
          "THD-packed sequences (document lengths not published): packed "
          "batches are not modelled";
    }
  }
  std::string args = ExtraArgs(t.Get(i, "extra"), f);
  auto mtp = Integer(t.Get(i, "mtp_layers"), file, r.line, "mtp_layers");
  if (!mtp) return std::unexpected(mtp.error());
  if (*mtp) args += " --mtp-num-layers " + std::to_string(**mtp);
  if (!args.empty()) f.megatron_args = args;
  std::optional<double>* outs[] = {&r.tflops, &r.step_s, &r.mem_gib,
                                   &r.tokens_per_s};
  for (size_t k = 0; k < std::size(kMeasuredLimits); ++k) {
    auto v = Measured(t, i, file, r.line, kMeasuredLimits[k]);
    if (!v) return std::unexpected(v.error());
    *outs[k] = *v;
  }
  return r;
}

}  // namespace

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
    if (!read) return std::unexpected(FlagError(flag, read.error().message));
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
    auto row = ParseRow(*table, i, runs.name);
    if (!row) return std::unexpected(row.error());
    if (auto [it, added] = id_lines.emplace(row->id, row->line); !added) {
      return std::unexpected(RowError(
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

}  // namespace moesim::tools
