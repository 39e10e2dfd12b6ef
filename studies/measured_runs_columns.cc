// The column readers of a measured-runs row
// (studies/measured_runs_internal.h).
#include <cmath>
#include <string>

#include "scenarios/scenario.h"
#include "scenarios/vocabulary.h"
#include "studies/measured_runs_internal.h"
#include "util/message.h"

namespace moesim::studies::internal {

util::Error RowError(const std::string& file, int line, std::string_view column,
                     std::string_view rule) {
  return util::Error{file + ":" + std::to_string(line) + ": " +
                     std::string(column) + ": " + std::string(rule)};
}

util::Result<std::optional<int>> Integer(const std::string& text,
                                         const std::string& file, int line,
                                         std::string_view column) {
  auto v = ParseRunNumber(text, file, line, column);
  if (!v) return std::unexpected(v.error());
  if (!*v) return std::optional<int>();
  if (**v != std::floor(**v) || **v < 0 || **v > 1e9) {
    return std::unexpected(RowError(
        file, line, column, util::Quoted(text) + " is not a whole number"));
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
    for (int size : sizes) {
      if (!text.empty()) text += ',';
      text += std::to_string(size);
    }
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

}  // namespace moesim::studies::internal
