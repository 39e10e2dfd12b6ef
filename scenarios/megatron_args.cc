#include "scenarios/megatron_args.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include "scenarios/vocabulary.h"
#include "util/csv.h"

namespace moesim::scenarios {
namespace {

using util::Result;

constexpr std::string_view kPrefix = "--megatron-args: ";

enum class Kind { kBool, kInt, kDouble, kString, kList };

struct FlagInfo {
  std::string_view name;
  Kind kind;
};

// Every flag ApplyMegatronArgs models. Anything else is reported as not
// modelled.
constexpr FlagInfo kFlags[] = {
    {"--tensor-model-parallel-size", Kind::kInt},
    {"--context-parallel-size", Kind::kInt},
    {"--expert-model-parallel-size", Kind::kInt},
    {"--expert-tensor-parallel-size", Kind::kInt},
    {"--pipeline-model-parallel-size", Kind::kInt},
    {"--virtual-pipeline-model-parallel-size", Kind::kInt},
    {"--num-virtual-stages-per-pipeline-rank", Kind::kInt},
    {"--num-layers-per-virtual-pipeline-stage", Kind::kInt},
    {"--pipeline-model-parallel-layout", Kind::kString},
    {"--micro-batch-size", Kind::kInt},
    {"--global-batch-size", Kind::kInt},
    {"--seq-length", Kind::kInt},
    {"--num-layers", Kind::kInt},
    {"--mtp-num-layers", Kind::kInt},
    {"--recompute-granularity", Kind::kString},
    {"--recompute-modules", Kind::kList},
    {"--recompute-method", Kind::kString},
    {"--recompute-num-layers", Kind::kInt},
    {"--bf16", Kind::kBool},
    {"--fp8-format", Kind::kString},
    {"--fp8-recipe", Kind::kString},
    {"--fp4-format", Kind::kString},
    {"--fp4-recipe", Kind::kString},
    {"--moe-token-dispatcher-type", Kind::kString},
    {"--moe-flex-dispatcher-backend", Kind::kString},
    {"--moe-enable-deepep", Kind::kBool},
    {"--optimizer-cpu-offload", Kind::kBool},
    {"--optimizer-offload-fraction", Kind::kDouble},
    {"--overlap-cpu-optimizer-d2h-h2d", Kind::kBool},
    {"--cuda-graph-impl", Kind::kString},
    {"--cuda-graph-scope", Kind::kList},
    {"--enable-cuda-graph", Kind::kBool},
    {"--external-cuda-graph", Kind::kBool},
    {"--overlap-moe-expert-parallel-comm", Kind::kBool},
    {"--use-distributed-optimizer", Kind::kBool},
    {"--use-precision-aware-optimizer", Kind::kBool},
    {"--main-grads-dtype", Kind::kString},
    {"--exp-avg-dtype", Kind::kString},
    {"--fp8-param-gather", Kind::kBool},
    {"--fp8-dot-product-attention", Kind::kBool},
    {"--manual-gc", Kind::kBool},
    {"--sequence-parallel", Kind::kBool},
    {"--moe-expert-capacity-factor", Kind::kDouble},
    {"--moe-router-force-load-balancing", Kind::kBool},
    {"--moe-pad-expert-input-to-capacity", Kind::kBool},
    {"--moe-shared-expert-overlap", Kind::kBool},
    {"--delay-wgrad-compute", Kind::kBool},
    {"--cpu-offloading", Kind::kBool},
    {"--cpu-offloading-num-layers", Kind::kInt},
    {"--use-megatron-fsdp", Kind::kBool},
    {"--data-parallel-sharding-strategy", Kind::kString},
    {"--cp-comm-type", Kind::kList},
    {"--hierarchical-context-parallel-sizes", Kind::kList},
};

const FlagInfo* FindFlag(std::string_view name) {
  for (const FlagInfo& info : kFlags) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

util::Error FlagError(std::string_view flag, std::string_view rule) {
  return util::Error{std::string(kPrefix) + std::string(flag) + ": " +
                     std::string(rule)};
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

// An integer value of `flag`, >= min.
Result<int> ParseInt(std::string_view flag, const std::string& text, int min) {
  int64_t value = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() ||
      value > INT32_MAX || value < INT32_MIN) {
    return std::unexpected(FlagError(flag, "'" + text + "' is not an integer"));
  }
  if (value < min) {
    return std::unexpected(
        FlagError(flag, "must be >= " + std::to_string(min) + ", got " + text));
  }
  return static_cast<int>(value);
}

// Shell-like split: blanks separate, quotes group, backslash escapes, and
// a word that begins with '#' starts a comment to the end of its line, as
// in a launch script ("--tp 2  # per node").
Result<std::vector<std::string>> Tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  bool in_token = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size() &&
                 (text[i + 1] == '"' || text[i + 1] == '\\')) {
        current += text[++i];
      } else {
        current += c;
      }
    } else if (c == '#' && !in_token) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_token = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] != '\n') {
        current += text[i + 1];
        in_token = true;
      }
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_token) tokens.push_back(std::move(current));
      current.clear();
      in_token = false;
    } else {
      current += c;
      in_token = true;
    }
  }
  if (quote != 0) {
    return std::unexpected(util::Error{std::string(kPrefix) + "unterminated " +
                                       (quote == '"' ? "double" : "single") +
                                       " quote"});
  }
  if (in_token) tokens.push_back(std::move(current));
  return tokens;
}

// One occurrence of a flag with the values that follow it.
struct Arg {
  std::string flag;
  std::vector<std::string> values;
  bool inline_value = false;  // written --flag=value
};

// Groups tokens into flags; words before the first flag are reported.
std::vector<Arg> Group(const std::vector<std::string>& tokens,
                       std::vector<std::string>& warnings) {
  std::vector<Arg> args;
  std::vector<std::string> leading;
  for (const std::string& token : tokens) {
    if (token.starts_with("--") && token.size() > 2) {
      Arg arg;
      size_t eq = token.find('=');
      arg.flag = token.substr(0, eq);
      std::replace(arg.flag.begin() + 2, arg.flag.end(), '_', '-');
      if (eq != std::string::npos) {
        arg.values.push_back(token.substr(eq + 1));
        arg.inline_value = true;
      }
      args.push_back(std::move(arg));
    } else if (args.empty()) {
      leading.push_back(token);
    } else {
      args.back().values.push_back(token);
    }
  }
  if (!leading.empty()) {
    warnings.push_back(
        std::string(kPrefix) +
        "ignored words before the first flag: " + Join(leading, " "));
  }
  return args;
}

// The known flags given (last occurrence wins), checked for arity.
class Given {
 public:
  // Records `arg`; Err on a wrong number of values.
  Result<void> Add(const FlagInfo& info, Arg arg) {
    const size_t n = arg.values.size();
    switch (info.kind) {
      case Kind::kBool:
        if (n == 1 && arg.inline_value) {
          const std::string& v = arg.values[0];
          if (v != "true" && v != "false" && v != "1" && v != "0") {
            return std::unexpected(
                FlagError(arg.flag, "'" + v + "' is not true or false"));
          }
          bools_[arg.flag] = v == "true" || v == "1";
          return {};
        }
        if (n > 0) {
          return std::unexpected(FlagError(
              arg.flag, "takes no value, got '" + Join(arg.values, " ") + "'"));
        }
        bools_[arg.flag] = true;
        return {};
      case Kind::kInt:
      case Kind::kDouble:
      case Kind::kString:
        if (n == 0)
          return std::unexpected(FlagError(arg.flag, "needs a value"));
        if (n > 1) {
          return std::unexpected(FlagError(
              arg.flag,
              "takes one value, got '" + Join(arg.values, " ") + "'"));
        }
        values_[arg.flag] = {arg.values[0]};
        return {};
      case Kind::kList: {
        std::vector<std::string> items;
        for (const std::string& v : arg.values) {
          for (std::string& item : util::SplitList(v, ","))
            items.push_back(std::move(item));
        }
        if (items.empty())
          return std::unexpected(FlagError(arg.flag, "needs a value"));
        values_[arg.flag] = std::move(items);
        return {};
      }
    }
    return {};
  }

  bool Has(std::string_view flag) const {
    return values_.contains(std::string(flag)) ||
           bools_.contains(std::string(flag));
  }
  // Value of a bool flag; nullopt when absent.
  std::optional<bool> Bool(std::string_view flag) const {
    auto it = bools_.find(std::string(flag));
    if (it == bools_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<std::string> String(std::string_view flag) const {
    auto it = values_.find(std::string(flag));
    if (it == values_.end()) return std::nullopt;
    return it->second[0];
  }
  const std::vector<std::string>* List(std::string_view flag) const {
    auto it = values_.find(std::string(flag));
    return it == values_.end() ? nullptr : &it->second;
  }
  // Integer flag, >= min; nullopt when absent.
  Result<std::optional<int>> Int(std::string_view flag, int min) const {
    auto text = String(flag);
    if (!text) return std::optional<int>();
    auto value = ParseInt(flag, *text, min);
    if (!value) return std::unexpected(value.error());
    return std::optional<int>(*value);
  }
  // Floating-point flag in [lo, hi]; nullopt when absent.
  Result<std::optional<double>> Double(std::string_view flag, double lo,
                                       double hi) const {
    auto text = String(flag);
    if (!text) return std::optional<double>();
    double value = 0;
    auto [end, ec] =
        std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size()) {
      return std::unexpected(
          FlagError(flag, "'" + *text + "' is not a number"));
    }
    if (!(value >= lo && value <= hi)) {  // NaN too
      return std::unexpected(
          FlagError(flag, "'" + *text + "' is out of range"));
    }
    return std::optional<double>(value);
  }
  // String flag that must be one of `choices`; nullopt when absent.
  Result<std::optional<std::string>> Choice(
      std::string_view flag,
      std::initializer_list<std::string_view> choices) const {
    auto text = String(flag);
    if (!text) return std::optional<std::string>();
    std::string list;
    for (std::string_view c : choices) {
      if (*text == c) return text;
      list += list.empty() ? "" : ", ";
      list += c;
    }
    return std::unexpected(
        FlagError(flag, "unknown '" + *text + "' (" + list + ")"));
  }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, bool> bools_;
};

Result<void> ApplyLayout(const Given& g, Scenario& spec) {
  Layout& l = *spec.mutable_layout();
  const std::pair<std::string_view, void (Layout::*)(int32_t)> kSizes[] = {
      {"--tensor-model-parallel-size", &Layout::set_tensor_model_parallel_size},
      {"--context-parallel-size", &Layout::set_context_parallel_size},
      {"--expert-model-parallel-size", &Layout::set_expert_model_parallel_size},
      {"--expert-tensor-parallel-size",
       &Layout::set_expert_tensor_parallel_size},
      {"--pipeline-model-parallel-size",
       &Layout::set_pipeline_model_parallel_size},
      {"--virtual-pipeline-model-parallel-size",
       &Layout::set_virtual_pipeline_model_parallel_size},
      {"--num-virtual-stages-per-pipeline-rank",
       &Layout::set_virtual_pipeline_model_parallel_size},
      {"--num-layers-per-virtual-pipeline-stage",
       &Layout::set_num_layers_per_virtual_pipeline_stage},
      {"--micro-batch-size", &Layout::set_micro_batch_size},
      {"--global-batch-size", &Layout::set_global_batch_size},
  };
  for (auto [flag, set] : kSizes) {
    auto value = g.Int(flag, 1);
    if (!value) return std::unexpected(value.error());
    if (*value) (l.*set)(**value);
  }
  if (g.Has("--num-layers-per-virtual-pipeline-stage")) {
    // The two VPP spellings exclude each other (Megatron asserts the same).
    if (g.Has("--virtual-pipeline-model-parallel-size") ||
        g.Has("--num-virtual-stages-per-pipeline-rank")) {
      return std::unexpected(
          FlagError("--num-layers-per-virtual-pipeline-stage",
                    "cannot be combined with a virtual pipeline size"));
    }
    l.clear_virtual_pipeline_model_parallel_size();
  } else if (g.Has("--virtual-pipeline-model-parallel-size") ||
             g.Has("--num-virtual-stages-per-pipeline-rank")) {
    l.clear_num_layers_per_virtual_pipeline_stage();
  }
  if (auto layout = g.String("--pipeline-model-parallel-layout")) {
    l.set_pipeline_model_parallel_layout(*layout);
  }
  if (auto sp = g.Bool("--sequence-parallel")) l.set_sequence_parallel(*sp);

  auto seq = g.Int("--seq-length", 1);
  if (!seq) return std::unexpected(seq.error());
  if (*seq) spec.set_seq_length(**seq);
  auto layers = g.Int("--num-layers", 1);
  if (!layers) return std::unexpected(layers.error());
  if (*layers) spec.set_num_layers(**layers);
  auto mtp = g.Int("--mtp-num-layers", 0);
  if (!mtp) return std::unexpected(mtp.error());
  if (*mtp) spec.set_mtp_num_layers(**mtp);
  return {};
}

Result<void> ApplyRecompute(const Given& g, Scenario& spec) {
  Recompute& rc = *spec.mutable_recompute();
  auto granularity = g.Choice("--recompute-granularity", {"full", "selective"});
  if (!granularity) return std::unexpected(granularity.error());
  if (*granularity) rc.set_granularity(**granularity);
  if (const std::vector<std::string>* modules = g.List("--recompute-modules")) {
    rc.clear_modules();
    for (const std::string& m : *modules) rc.add_modules(m);
  }
  auto method = g.Choice("--recompute-method", {"uniform", "block"});
  if (!method) return std::unexpected(method.error());
  if (*method) rc.set_method(**method);
  auto layers = g.Int("--recompute-num-layers", 1);
  if (!layers) return std::unexpected(layers.error());
  if (*layers) rc.set_num_layers(**layers);
  return {};
}

// --bf16, --fp8-format/--fp8-recipe, --fp4-format/--fp4-recipe -> precision.
Result<void> ApplyPrecision(const Given& g, Scenario& spec,
                            std::vector<std::string>& warnings) {
  auto fp8 = g.Choice("--fp8-format", {"e4m3", "hybrid"});
  if (!fp8) return std::unexpected(fp8.error());
  auto recipe =
      g.Choice("--fp8-recipe", {"delayed", "tensorwise", "blockwise", "mxfp8"});
  if (!recipe) return std::unexpected(recipe.error());
  auto fp4 = g.Choice("--fp4-format", {"e2m1"});
  if (!fp4) return std::unexpected(fp4.error());
  auto fp4_recipe = g.Choice("--fp4-recipe", {"nvfp4"});
  if (!fp4_recipe) return std::unexpected(fp4_recipe.error());

  if (*fp4 && *fp8) {
    return std::unexpected(
        FlagError("--fp4-format", "cannot be combined with --fp8-format"));
  }
  if (*fp4) {
    spec.set_precision("nvfp4");
  } else if (*fp8) {
    // Megatron's --fp8-recipe default is delayed.
    const std::string r = recipe->value_or("delayed");
    spec.set_precision(r == "delayed"      ? "fp8-delayed"
                       : r == "tensorwise" ? "fp8-cs"
                       : r == "blockwise"  ? "fp8-block"
                                           : "mxfp8");
  } else if (g.Bool("--bf16").value_or(false)) {
    spec.set_precision("bf16");
  }
  if (*recipe && !*fp8) {
    warnings.push_back(std::string(kPrefix) +
                       "--fp8-recipe has no effect without --fp8-format");
  }
  // Whether the recipe admits it is Resolve's rule (the scenario field's).
  if (auto v = g.Bool("--fp8-dot-product-attention"))
    spec.set_fp8_dot_product_attention(*v);
  if (*fp4_recipe && !*fp4) {
    warnings.push_back(std::string(kPrefix) +
                       "--fp4-recipe has no effect without --fp4-format");
  }
  return {};
}

Result<void> ApplyDispatcher(const Given& g, Scenario& spec,
                             std::vector<std::string>& warnings) {
  auto type = g.Choice("--moe-token-dispatcher-type", {"alltoall", "flex"});
  if (!type) return std::unexpected(type.error());
  auto backend =
      g.Choice("--moe-flex-dispatcher-backend", {"deepep", "hybridep"});
  if (!backend) return std::unexpected(backend.error());
  const bool deepep = g.Bool("--moe-enable-deepep").value_or(false);
  if (*type == "alltoall") {
    spec.set_dispatcher("alltoall");
    if (*backend || deepep) {
      warnings.push_back(
          std::string(kPrefix) +
          "flex backend ignored with --moe-token-dispatcher-type alltoall");
    }
  } else if (*type == "flex" || *backend || deepep) {
    // Megatron's flex backend default is deepep; Megatron-Bridge switches to
    // flex when a backend is named.
    spec.set_dispatcher(backend->value_or("deepep"));
  }
  return {};
}

Result<void> ApplyOptimizer(const Given& g, Scenario& spec,
                            std::vector<std::string>& warnings) {
  auto fraction = g.Double("--optimizer-offload-fraction", 0, 1);
  if (!fraction) return std::unexpected(fraction.error());
  if (g.Bool("--optimizer-cpu-offload").value_or(false)) {
    // Megatron's --optimizer-offload-fraction default is 1.0.
    spec.set_optimizer_offload_fraction(fraction->value_or(1.0));
  } else if (*fraction) {
    warnings.push_back(std::string(kPrefix) +
                       "--optimizer-offload-fraction has no effect without "
                       "--optimizer-cpu-offload");
  }
  if (auto v = g.Bool("--use-distributed-optimizer"))
    spec.set_use_distributed_optimizer(*v);
  if (auto v = g.Bool("--use-precision-aware-optimizer"))
    spec.set_use_precision_aware_optimizer(*v);
  if (auto v = g.String("--main-grads-dtype")) spec.set_main_grads_dtype(*v);
  if (auto v = g.String("--exp-avg-dtype")) spec.set_exp_avg_dtype(*v);
  if (auto v = g.Bool("--fp8-param-gather")) spec.set_fp8_param_gather(*v);
  if (auto v = g.Bool("--manual-gc")) spec.set_manual_gc(*v);
  if (auto v = g.Bool("--use-megatron-fsdp")) spec.set_use_megatron_fsdp(*v);
  if (auto v = g.String("--data-parallel-sharding-strategy"))
    spec.set_data_parallel_sharding_strategy(*v);
  return {};
}

// --cuda-graph-impl {transformer_engine, local, none} + --cuda-graph-scope.
Result<void> ApplyCudaGraph(const Given& g, Scenario& spec,
                            std::vector<std::string>& warnings) {
  auto impl =
      g.Choice("--cuda-graph-impl", {"transformer_engine", "local", "none"});
  if (!impl) return std::unexpected(impl.error());
  std::optional<std::string> kind = *impl;
  if (!kind && g.Bool("--enable-cuda-graph").value_or(false)) kind = "local";
  if (!kind && g.Bool("--external-cuda-graph").value_or(false))
    kind = "transformer_engine";
  const std::vector<std::string>* scopes = g.List("--cuda-graph-scope");
  if (!kind) {
    if (scopes) {
      warnings.push_back(
          std::string(kPrefix) +
          "--cuda-graph-scope has no effect without --cuda-graph-impl");
    }
    return {};
  }
  if (*kind == "none") {
    spec.set_cuda_graph("none");
    return {};
  }
  const bool full_iteration =
      scopes && std::find(scopes->begin(), scopes->end(), "full_iteration") !=
                    scopes->end();
  if (*kind == "local") {
    if (full_iteration && scopes->size() == 1) {
      spec.set_cuda_graph("full_iteration");
    } else if (!scopes) {
      spec.set_cuda_graph("local:transformer_layer");
    } else {
      return std::unexpected(FlagError(
          "--cuda-graph-scope",
          "with --cuda-graph-impl local, only full_iteration (or no scope "
          "for whole layers) is modelled; got '" +
              Join(*scopes, " ") + "'"));
    }
    return {};
  }
  if (full_iteration) {
    return std::unexpected(FlagError(
        "--cuda-graph-scope", "full_iteration needs --cuda-graph-impl local"));
  }
  if (!scopes) {
    // No scope: TE graphs whole transformer layers.
    spec.set_cuda_graph("te:attn;mlp;moe");
    warnings.push_back(
        std::string(kPrefix) +
        "--cuda-graph-impl transformer_engine without --cuda-graph-scope: "
        "graphing whole layers (te:attn;mlp;moe)");
    return {};
  }
  spec.set_cuda_graph("te:" + Join(*scopes, ";"));
  return {};
}

Result<void> ApplyMoe(const Given& g, Scenario& spec) {
  if (auto v = g.Bool("--overlap-moe-expert-parallel-comm")) {
    spec.set_overlap_moe_expert_parallel_comm(*v);
  }
  if (auto v = g.Bool("--moe-shared-expert-overlap"))
    spec.set_moe_shared_expert_overlap(*v);
  if (auto v = g.Bool("--delay-wgrad-compute")) spec.set_delay_wgrad_compute(*v);
  if (auto v = g.Bool("--moe-pad-expert-input-to-capacity"))
    spec.set_moe_pad_expert_input_to_capacity(*v);
  if (auto v = g.Bool("--cpu-offloading")) spec.set_cpu_offloading(*v);
  auto offloaded = g.Int("--cpu-offloading-num-layers", 0);
  if (!offloaded) return std::unexpected(offloaded.error());
  if (*offloaded) spec.set_cpu_offloading_num_layers(**offloaded);
  if (auto v = g.Bool("--overlap-cpu-optimizer-d2h-h2d")) {
    spec.set_overlap_cpu_optimizer_d2h_h2d(*v);
  }
  if (g.Bool("--moe-router-force-load-balancing").value_or(false)) {
    spec.set_routing("force_balanced");
  }
  auto factor = g.Double("--moe-expert-capacity-factor", 0, 1e9);
  if (!factor) return std::unexpected(factor.error());
  if (*factor) {
    if (**factor <= 0) {
      return std::unexpected(
          FlagError("--moe-expert-capacity-factor", "must be > 0"));
    }
    spec.set_moe_expert_capacity_factor(**factor);
    spec.set_routing("tokendrop");
  }
  return {};
}

// --cp-comm-type (Megatron takes one type, or one per layer; a list is
// modelled only when every entry is the same) and
// --hierarchical-context-parallel-sizes.
Result<void> ApplyContextParallel(const Given& g, Scenario& spec) {
  constexpr std::string_view kType = "--cp-comm-type";
  if (const std::vector<std::string>* types = g.List(kType)) {
    for (const std::string& type : *types) {
      if (auto known = ParseCpCommType(type); !known) {
        return std::unexpected(FlagError(kType, known.error().message));
      }
    }
    if (std::adjacent_find(types->begin(), types->end(),
                           std::not_equal_to<>()) != types->end()) {
      return std::unexpected(FlagError(
          kType, "per-layer cp_comm_type lists are not modelled; got '" +
                     Join(*types, " ") + "'"));
    }
    spec.set_cp_comm_type(types->front());
  }
  constexpr std::string_view kSizes = "--hierarchical-context-parallel-sizes";
  if (const std::vector<std::string>* sizes = g.List(kSizes)) {
    spec.clear_hierarchical_context_parallel_sizes();
    for (const std::string& text : *sizes) {
      auto size = ParseInt(kSizes, text, 1);
      if (!size) return std::unexpected(size.error());
      spec.add_hierarchical_context_parallel_sizes(*size);
    }
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> ApplyMegatronArgs(std::string_view args,
                                                   Scenario& spec) {
  auto tokens = Tokenize(args);
  if (!tokens) return std::unexpected(tokens.error());
  std::vector<std::string> warnings;
  std::vector<std::string> not_modelled;
  Given given;
  for (Arg& arg : Group(*tokens, warnings)) {
    const FlagInfo* info = FindFlag(arg.flag);
    if (info == nullptr) {
      if (std::find(not_modelled.begin(), not_modelled.end(), arg.flag) ==
          not_modelled.end()) {
        not_modelled.push_back(arg.flag);
      }
      continue;
    }
    if (auto ok = given.Add(*info, std::move(arg)); !ok)
      return std::unexpected(ok.error());
  }
  if (auto ok = ApplyLayout(given, spec); !ok)
    return std::unexpected(ok.error());
  if (auto ok = ApplyRecompute(given, spec); !ok)
    return std::unexpected(ok.error());
  if (auto ok = ApplyPrecision(given, spec, warnings); !ok)
    return std::unexpected(ok.error());
  if (auto ok = ApplyDispatcher(given, spec, warnings); !ok)
    return std::unexpected(ok.error());
  if (auto ok = ApplyOptimizer(given, spec, warnings); !ok)
    return std::unexpected(ok.error());
  if (auto ok = ApplyCudaGraph(given, spec, warnings); !ok)
    return std::unexpected(ok.error());
  if (auto ok = ApplyMoe(given, spec); !ok) return std::unexpected(ok.error());
  if (auto ok = ApplyContextParallel(given, spec); !ok)
    return std::unexpected(ok.error());
  if (!not_modelled.empty()) {
    warnings.insert(warnings.begin(), std::string(kPrefix) + "not modelled: " +
                                          Join(not_modelled, ", "));
  }
  return warnings;
}

}  // namespace moesim::scenarios

namespace moesim::scenarios {
namespace {

std::string Quoted(const std::string& value) {
  if (value.find_first_of(" |()*'\"") == std::string::npos) return value;
  return "\"" + value + "\"";
}

std::string Number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", v);
  return buffer;
}

}  // namespace

std::string FormatMegatronArgs(const Scenario& spec) {
  std::vector<std::string> out;
  auto add = [&](std::string flag, std::string value = {}) {
    out.push_back(value.empty() ? std::move(flag) : flag + " " + value);
  };
  const Layout& l = spec.layout();
  add("--tensor-model-parallel-size",
      std::to_string(l.tensor_model_parallel_size()));
  add("--context-parallel-size", std::to_string(l.context_parallel_size()));
  add("--expert-model-parallel-size",
      std::to_string(l.expert_model_parallel_size()));
  add("--expert-tensor-parallel-size",
      std::to_string(l.expert_tensor_parallel_size()));
  add("--pipeline-model-parallel-size",
      std::to_string(l.pipeline_model_parallel_size()));
  if (l.virtual_pipeline_model_parallel_size() > 1) {
    add("--num-virtual-stages-per-pipeline-rank",
        std::to_string(l.virtual_pipeline_model_parallel_size()));
  }
  if (!l.pipeline_model_parallel_layout().empty()) {
    add("--pipeline-model-parallel-layout",
        Quoted(l.pipeline_model_parallel_layout()));
  }
  if (l.sequence_parallel()) add("--sequence-parallel");
  add("--micro-batch-size", std::to_string(l.micro_batch_size()));
  add("--global-batch-size", std::to_string(l.global_batch_size()));
  add("--seq-length", std::to_string(spec.seq_length()));
  if (spec.num_layers() > 0)
    add("--num-layers", std::to_string(spec.num_layers()));

  const Recompute& rc = spec.recompute();
  if (rc.granularity() == "full") {
    add("--recompute-granularity", "full");
    if (!rc.method().empty()) add("--recompute-method", rc.method());
    if (rc.num_layers() > 0)
      add("--recompute-num-layers", std::to_string(rc.num_layers()));
  } else if (rc.granularity() == "selective") {
    add("--recompute-granularity", "selective");
    std::string modules;
    for (const std::string& m : rc.modules())
      modules += (modules.empty() ? "" : " ") + m;
    add("--recompute-modules", modules);
  }

  const std::string& p = spec.precision();
  if (p == "bf16" || p.empty()) {
    add("--bf16");
  } else if (p == "nvfp4") {
    add("--bf16");
    add("--fp4-format", "e2m1");
    add("--fp4-recipe", "nvfp4");
  } else {
    add("--bf16");
    add("--fp8-format", "e4m3");
    add("--fp8-recipe", p == "fp8-delayed" ? "delayed"
                        : p == "fp8-cs"    ? "tensorwise"
                        : p == "fp8-block" ? "blockwise"
                                           : "mxfp8");
  }
  if (spec.fp8_dot_product_attention()) add("--fp8-dot-product-attention");

  if (spec.dispatcher() == "deepep" || spec.dispatcher() == "hybridep") {
    add("--moe-token-dispatcher-type", "flex");
    add("--moe-flex-dispatcher-backend", spec.dispatcher());
  } else {
    add("--moe-token-dispatcher-type", "alltoall");
  }
  if (spec.overlap_moe_expert_parallel_comm())
    add("--overlap-moe-expert-parallel-comm");
  if (spec.delay_wgrad_compute()) add("--delay-wgrad-compute");
  if (spec.routing() == "force_balanced") {
    add("--moe-router-force-load-balancing");
  } else if (spec.routing() == "tokendrop") {
    add("--moe-expert-capacity-factor",
        Number(spec.moe_expert_capacity_factor()));
    if (spec.moe_pad_expert_input_to_capacity())
      add("--moe-pad-expert-input-to-capacity");
  }

  if (spec.optimizer_offload_fraction() > 0) {
    add("--optimizer-cpu-offload");
    add("--optimizer-offload-fraction",
        Number(spec.optimizer_offload_fraction()));
    if (spec.overlap_cpu_optimizer_d2h_h2d())
      add("--overlap-cpu-optimizer-d2h-h2d");
  }

  const std::string& graph = spec.cuda_graph();
  if (graph.starts_with("te:")) {
    std::string scopes = graph.substr(3);
    std::replace(scopes.begin(), scopes.end(), ';', ' ');
    add("--cuda-graph-impl", "transformer_engine");
    add("--cuda-graph-scope", scopes);
  } else if (graph == "full_iteration") {
    add("--cuda-graph-impl", "local");
    add("--cuda-graph-scope", "full_iteration");
  } else if (graph == "local:transformer_layer") {
    add("--cuda-graph-impl", "local");
  }

  if (!spec.cp_comm_type().empty() && spec.cp_comm_type() != "p2p")
    add("--cp-comm-type", spec.cp_comm_type());
  if (spec.hierarchical_context_parallel_sizes_size() > 0) {
    std::string sizes;
    for (int size : spec.hierarchical_context_parallel_sizes())
      sizes += (sizes.empty() ? "" : " ") + std::to_string(size);
    add("--hierarchical-context-parallel-sizes", sizes);
  }
  if (spec.has_manual_gc() && spec.manual_gc()) add("--manual-gc");
  if (spec.use_megatron_fsdp()) {
    add("--use-megatron-fsdp");
    if (!spec.data_parallel_sharding_strategy().empty())
      add("--data-parallel-sharding-strategy",
          spec.data_parallel_sharding_strategy());
  }
  if (spec.cpu_offloading()) {
    add("--cpu-offloading");
    add("--cpu-offloading-num-layers",
        std::to_string(spec.cpu_offloading_num_layers()));
  }

  std::string joined;
  for (const std::string& item : out)
    joined += (joined.empty() ? "" : " ") + item;
  return joined;
}

}  // namespace moesim::scenarios
