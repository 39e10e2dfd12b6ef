#include "scenarios/megatron_args.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include "models/dispatchers.h"
#include "scenarios/architecture.h"
#include "scenarios/vocabulary.h"
#include "util/csv.h"

namespace moesim::scenarios {
namespace {

using util::Result;

constexpr std::string_view kPrefix = "--megatron-args: ";

// kText: every value up to the next flag, joined by blanks (a Python list
// expression such as "[0, 1, 1]" may be written with blanks).
enum class Kind { kBool, kInt, kDouble, kString, kList, kText };

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
    {"--fine-grained-activation-offloading", Kind::kBool},
    {"--offload-modules", Kind::kList},
    {"--activation-offload-fraction", Kind::kDouble},
    {"--min-offloaded-tensor-size", Kind::kInt},
    {"--offload-optimizer-states", Kind::kBool},
    {"--use-megatron-fsdp", Kind::kBool},
    {"--data-parallel-sharding-strategy", Kind::kString},
    {"--cp-comm-type", Kind::kList},
    {"--hierarchical-context-parallel-sizes", Kind::kList},
    {"--cuda-graph-modules", Kind::kList},
    {"--decoder-first-pipeline-num-layers", Kind::kInt},
    {"--decoder-last-pipeline-num-layers", Kind::kInt},
    {"--recompute-activations", Kind::kBool},
    {"--account-for-embedding-in-pipeline-split", Kind::kBool},
    {"--account-for-loss-in-pipeline-split", Kind::kBool},
    // The architecture (scenario field `architecture`).
    {"--hidden-size", Kind::kInt},
    {"--ffn-hidden-size", Kind::kInt},
    {"--num-attention-heads", Kind::kInt},
    {"--group-query-attention", Kind::kBool},
    {"--num-query-groups", Kind::kInt},
    {"--kv-channels", Kind::kInt},
    {"--vocab-size", Kind::kInt},
    {"--make-vocab-size-divisible-by", Kind::kInt},
    {"--tokenizer-model", Kind::kString},
    {"--swiglu", Kind::kBool},
    {"--quick-geglu", Kind::kBool},
    {"--squared-relu", Kind::kBool},
    {"--untie-embeddings-and-output-weights", Kind::kBool},
    {"--disable-bias-linear", Kind::kBool},
    {"--add-bias-linear", Kind::kBool},
    {"--qk-layernorm", Kind::kBool},
    {"--attention-output-gate", Kind::kBool},
    {"--softmax-type", Kind::kString},
    {"--multi-latent-attention", Kind::kBool},
    {"--q-lora-rank", Kind::kInt},
    {"--kv-lora-rank", Kind::kInt},
    {"--qk-head-dim", Kind::kInt},
    {"--qk-pos-emb-head-dim", Kind::kInt},
    {"--v-head-dim", Kind::kInt},
    {"--window-size", Kind::kText},
    {"--window-attn-skip-freq", Kind::kText},
    {"--experimental-attention-variant", Kind::kString},
    {"--linear-attention-type", Kind::kString},
    {"--position-embedding-type", Kind::kString},
    {"--rope-type", Kind::kString},
    {"--rotary-scaling-factor", Kind::kDouble},
    {"--mscale", Kind::kDouble},
    {"--mscale-all-dim", Kind::kDouble},
    {"--spec", Kind::kList},
    {"--normalization", Kind::kString},
    {"--tokenizer-type", Kind::kString},
    {"--linear-attention-freq", Kind::kText},
    {"--linear-num-key-heads", Kind::kInt},
    {"--linear-key-head-dim", Kind::kInt},
    {"--linear-num-value-heads", Kind::kInt},
    {"--linear-value-head-dim", Kind::kInt},
    {"--linear-conv-kernel-dim", Kind::kInt},
    {"--num-experts", Kind::kInt},
    {"--moe-router-topk", Kind::kInt},
    {"--moe-ffn-hidden-size", Kind::kInt},
    {"--moe-shared-expert-intermediate-size", Kind::kInt},
    {"--moe-shared-expert-gate", Kind::kBool},
    {"--moe-layer-freq", Kind::kText},
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

bool IsBoolWord(std::string_view v) {
  return v == "true" || v == "false" || v == "True" || v == "False" ||
         v == "1" || v == "0";
}

// The first shell variable reference ($NAME, ${...}, $(...)) in `value`.
std::optional<std::string> ShellVariable(std::string_view value) {
  const size_t dollar = value.find('$');
  if (dollar == std::string_view::npos || dollar + 1 >= value.size())
    return std::nullopt;
  size_t end = dollar + 1;
  if (value[end] == '{' || value[end] == '(') {
    const char close = value[end] == '{' ? '}' : ')';
    end = value.find(close, end);
    end = end == std::string_view::npos ? value.size() : end + 1;
  } else {
    while (end < value.size() &&
           (std::isalnum(static_cast<unsigned char>(value[end])) ||
            value[end] == '_'))
      ++end;
    if (end == dollar + 1) return std::nullopt;  // a lone '$'
  }
  return std::string(value.substr(dollar, std::min<size_t>(end - dollar, 60)));
}

// Megatron-Bridge inputs are recipes plus overrides: a recipe's settings are
// in Python that moesim does not read, so simulating the overrides alone
// would silently simulate another run. Refused, naming what was found.
Result<void> RefuseBridgeForms(const std::vector<std::string>& tokens) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t.ends_with("setup_experiment.py") || t.ends_with("run_recipe.py")) {
      std::string picked;
      for (size_t k = i + 1; k + 1 < tokens.size(); ++k) {
        const std::string& o = tokens[k];
        if (o == "-m" || o == "-mr" || o == "-g" || o == "-c" || o == "-ng" ||
            o == "--recipe" || o == "--model_recipe_name" || o == "--gpu" ||
            o == "--compute_dtype")
          picked += " " + o + " " + tokens[k + 1];
      }
      return std::unexpected(util::Error{
          std::string(kPrefix) + "Megatron-Bridge's " +
          t.substr(t.rfind('/') + 1) + " selects a recipe" +
          (picked.empty() ? "" : " (" + picked.substr(1) + ")") +
          " whose settings are Python that moesim does not import; give "
          "the run as Megatron-LM arguments, or --model with moesim's "
          "layout flags"});
    }
    const size_t eq = t.find('=');
    const size_t dot = t.find('.');
    if (!t.starts_with("-") && eq != std::string::npos &&
        dot != std::string::npos && dot < eq && dot > 0 &&
        std::all_of(t.begin(), t.begin() + static_cast<long>(eq), [](char c) {
          return std::islower(static_cast<unsigned char>(c)) ||
                 std::isdigit(static_cast<unsigned char>(c)) || c == '_' ||
                 c == '.';
        })) {
      return std::unexpected(util::Error{
          std::string(kPrefix) + "'" + t.substr(0, 60) +
          "' is a Megatron-Bridge recipe override: the recipe's other "
          "settings are Python that moesim does not import; give the run "
          "as Megatron-LM arguments (" +
          "--" +
          [&] {
            std::string flag = t.substr(dot + 1, eq - dot - 1);
            std::replace(flag.begin(), flag.end(), '_', '-');
            return flag;
          }() +
          " ...)"});
    }
  }
  return {};
}

// Megatron flags that set what a step computes on, not how much: logging,
// data loading, checkpoints, the learning-rate schedule and optimizer
// hyper-parameters, initialisation, dropout rates, position-embedding
// numerics, loss coefficients and run control.
bool IsWithoutCost(std::string_view flag) {
  constexpr std::string_view kPrefixes[] = {"--log-",
                                            "--no-log-",
                                            "--wandb-",
                                            "--tensorboard-",
                                            "--timing-log-",
                                            "--data-",
                                            "--tokenizer-",
                                            "--tiktoken-",
                                            "--save",
                                            "--load",
                                            "--no-load-",
                                            "--no-save-",
                                            "--ckpt-",
                                            "--dist-ckpt-",
                                            "--lr",
                                            "--adam-",
                                            "--weight-decay",
                                            "--eval-",
                                            "--exit-",
                                            "--init-method-",
                                            "--rotary-",
                                            "--train-",
                                            "--decoupled-",
                                            "--mtp-loss-",
                                            "--moe-aux-loss-",
                                            "--moe-z-loss-",
                                            "--moe-router-bias-update-",
                                            "--moe-router-topk-scaling-",
                                            "--use-checkpoint-",
                                            "--rerun-",
                                            "--wgrad-deferral-",
                                            "--seq-length-",
                                            "--grpo-",
                                            "--inference-",
                                            "--rl-",
                                            "--langrl-"};
  constexpr std::string_view kFlags[] = {
      "--min-lr",
      "--clip-grad",
      "--seed",
      "--split",
      "--mock-data",
      "--num-workers",
      "--no-mmap-bin-files",
      "--vocab-file",
      "--merge-file",
      "--no-create-attention-mask-in-dataloader",
      "--dataloader-type",
      "--attention-dropout",
      "--hidden-dropout",
      "--norm-epsilon",
      "--max-position-embeddings",
      "--position-embedding-type",
      "--no-position-embedding",
      "--use-rotary-position-embeddings",
      "--distributed-timeout-minutes",
      "--logging-level",
      "--enable-experimental",
      "--no-check-for-nan-in-loss-and-grad",
      "--manual-gc-interval",
      "--finetune",
      "--pretrained-checkpoint",
      "--auto-detect-ckpt-format",
      "--async-save",
      "--start-weight-decay",
      "--end-weight-decay",
      "--mscale",
      "--mscale-all-dim",
      "--eod-mask-loss",
      "--reset-position-ids",
      "--reset-attention-mask",
      "--override-opt-param-scheduler",
      "--use-checkpoint-opt_param-scheduler",
      "--no-initialization",
      "--micro-batch-size-per-gpu",
      "--wandb-project",
      "--wandb-exp-name",
      "--ft-num-warmup-iters",
      "--use-ft",
      "--hf-checkpoint",
      "--ref-load",
      "--tensorboard-dir",
      "--profile",
      "--profile-step-start",
      "--profile-step-end",
      "--profile-ranks",
      "--use-pytorch-profiler",
      "--trust-remote-code",
      "--export-te-mcore-model",
      "--ckpt-format"};
  for (std::string_view prefix : kPrefixes) {
    if (flag.starts_with(prefix)) return true;
  }
  return std::find(std::begin(kFlags), std::end(kFlags), flag) !=
         std::end(kFlags);
}

// Flags whose setting the replay always assumes, as the Megatron-Bridge
// recipes set them (sim/replay.h): data-parallel communication overlapped
// with the backward pass and the next forward, Transformer Engine layers
// with fused attention, grouped expert GEMMs, fused permute and router,
// fused cross entropy.
bool IsAssumed(std::string_view flag) {
  constexpr std::string_view kFlags[] = {
      "--overlap-grad-reduce",       "--overlap-param-gather",
      "--moe-grouped-gemm",          "--moe-permute-fusion",
      "--moe-router-fusion",         "--use-flash-attn",
      "--transformer-impl",          "--attention-backend",
      "--cross-entropy-loss-fusion", "--cross-entropy-fusion-impl",
      "--use-mcore-models"};
  return std::find(std::begin(kFlags), std::end(kFlags), flag) !=
         std::end(kFlags);
}

// The known flags given (last occurrence wins), checked for arity.
class Given {
 public:
  // Records `arg`; Err on a wrong number of values.
  Result<void> Add(const FlagInfo& info, Arg arg) {
    const size_t n = arg.values.size();
    switch (info.kind) {
      case Kind::kBool:
        // --flag=true, or --flag true as Megatron-Bridge style scripts write.
        if (n == 1 && (arg.inline_value || IsBoolWord(arg.values[0]))) {
          const std::string& v = arg.values[0];
          if (!IsBoolWord(v)) {
            return std::unexpected(
                FlagError(arg.flag, "'" + v + "' is not true or false"));
          }
          bools_[arg.flag] = v == "true" || v == "True" || v == "1";
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
        // Items are separated by blanks or commas: "a b", "a,b" and the
        // YAML form "[a, b]" (brackets dropped by the launch-file reader).
        for (const std::string& v : arg.values) {
          for (std::string& item : util::SplitList(v, ", \t\n"))
            items.push_back(std::move(item));
        }
        if (items.empty())
          return std::unexpected(FlagError(arg.flag, "needs a value"));
        values_[arg.flag] = std::move(items);
        return {};
      }
      case Kind::kText:
        if (n == 0)
          return std::unexpected(FlagError(arg.flag, "needs a value"));
        values_[arg.flag] = {Join(arg.values, " ")};
        return {};
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
  if (auto v = g.Bool("--account-for-embedding-in-pipeline-split"))
    l.set_account_for_embedding_in_pipeline_split(*v);
  if (auto v = g.Bool("--account-for-loss-in-pipeline-split"))
    l.set_account_for_loss_in_pipeline_split(*v);
  auto first = g.Int("--decoder-first-pipeline-num-layers", 0);
  if (!first) return std::unexpected(first.error());
  if (*first) l.set_decoder_first_pipeline_num_layers(**first);
  auto last = g.Int("--decoder-last-pipeline-num-layers", 0);
  if (!last) return std::unexpected(last.error());
  if (*last) l.set_decoder_last_pipeline_num_layers(**last);

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
  if (*granularity) {
    rc.set_granularity(**granularity);
  } else if (g.Bool("--recompute-activations").value_or(false)) {
    // megatron/training/arguments.py validate_args: --recompute-activations
    // sets recompute_granularity = 'selective' (modules default core_attn).
    rc.set_granularity("selective");
  }
  if (const std::vector<std::string>* modules = g.List("--recompute-modules")) {
    rc.clear_modules();
    for (const std::string& m : *modules) rc.add_modules(m);
  }
  auto method = g.Choice("--recompute-method", {"uniform", "block"});
  if (!method) return std::unexpected(method.error());
  if (*method) rc.set_method(**method);
  // Megatron accepts 0 (its "recompute no layers" spelling with block).
  auto layers = g.Int("--recompute-num-layers", 0);
  if (!layers) return std::unexpected(layers.error());
  if (*layers && **layers > 0) rc.set_num_layers(**layers);
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
  if (g.String("--moe-token-dispatcher-type") == "allgather") {
    return std::unexpected(FlagError(
        "--moe-token-dispatcher-type",
        "allgather is not modelled (moesim models alltoall and flex with "
        "deepep or hybridep); pass alltoall to simulate the nearest"));
  }
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
  // --cuda-graph-modules is the current name of --cuda-graph-scope
  // (megatron/training/arguments.py refuses both together).
  const std::vector<std::string>* scopes = g.List("--cuda-graph-scope");
  if (const std::vector<std::string>* modules =
          g.List("--cuda-graph-modules")) {
    if (scopes) {
      return std::unexpected(
          FlagError("--cuda-graph-modules",
                    "cannot be combined with --cuda-graph-scope (its old "
                    "name)"));
    }
    scopes = modules;
  }
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
  if (auto v = g.Bool("--delay-wgrad-compute"))
    spec.set_delay_wgrad_compute(*v);
  if (auto v = g.Bool("--moe-pad-expert-input-to-capacity"))
    spec.set_moe_pad_expert_input_to_capacity(*v);
  if (auto v = g.Bool("--cpu-offloading")) spec.set_cpu_offloading(*v);
  auto offloaded = g.Int("--cpu-offloading-num-layers", 0);
  if (!offloaded) return std::unexpected(offloaded.error());
  if (*offloaded) spec.set_cpu_offloading_num_layers(**offloaded);
  if (auto v = g.Bool("--overlap-cpu-optimizer-d2h-h2d")) {
    spec.set_overlap_cpu_optimizer_d2h_h2d(*v);
  }
  // Fine-grained activation offloading and optimizer-state offloading
  // (Megatron-LM arguments.py; checked by the scenario rules).
  if (auto v = g.Bool("--fine-grained-activation-offloading"))
    spec.set_fine_grained_activation_offloading(*v);
  if (const std::vector<std::string>* modules = g.List("--offload-modules")) {
    spec.clear_offload_modules();
    for (const std::string& m : *modules) spec.add_offload_modules(m);
  }
  auto fraction = g.Double("--activation-offload-fraction", 0, 1);
  if (!fraction) return std::unexpected(fraction.error());
  if (*fraction) spec.set_activation_offload_fraction(**fraction);
  auto min_size = g.Int("--min-offloaded-tensor-size", 0);
  if (!min_size) return std::unexpected(min_size.error());
  if (*min_size) spec.set_min_offloaded_tensor_size(**min_size);
  if (auto v = g.Bool("--offload-optimizer-states"))
    spec.set_offload_optimizer_states(*v);
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

// The integer N of a layer pattern that Megatron's integer form gives: layer
// i is "off" (0) when (i + 1) % N == 0, the rule of both frequencies it is
// used for (megatron/core/transformer/utils.py is_layer_window_attention:
// 1 = windowed; experimental_attention_variant_module_specs.py
// get_linear_attention_pattern: 1 = linear attention). nullopt when the
// pattern has no such period.
std::optional<int64_t> PeriodOfPattern(const std::vector<int32_t>& pattern) {
  auto first_zero = std::find(pattern.begin(), pattern.end(), 0);
  if (first_zero == pattern.end()) return std::nullopt;
  const int64_t n = first_zero - pattern.begin() + 1;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != ((static_cast<int64_t>(i) + 1) % n != 0 ? 1 : 0))
      return std::nullopt;
  }
  return n;
}

// A frequency flag that Megatron types with moe_freq_type / la_freq_type
// (megatron/training/arguments.py): an integer N, or a list expression of
// one 0/1 entry per layer. moesim's model keeps the integer rule, so a list
// must be that rule written out.
Result<std::optional<int64_t>> FrequencyFlag(const Given& g,
                                             std::string_view flag,
                                             int64_t num_layers) {
  auto text = g.String(flag);
  if (!text) return std::optional<int64_t>();
  if (text->find('[') == std::string::npos) {
    auto value = ParseInt(flag, *text, 1);
    if (!value) return std::unexpected(value.error());
    return std::optional<int64_t>(*value);
  }
  if (num_layers <= 0) {
    return std::unexpected(
        FlagError(flag, "a list pattern needs --num-layers"));
  }
  auto pattern = internal::ExpandLayerFreq(*text, num_layers);
  if (!pattern)
    return std::unexpected(FlagError(flag, pattern.error().message));
  auto period = PeriodOfPattern(*pattern);
  if (!period) {
    return std::unexpected(FlagError(
        flag, "'" + text->substr(0, 60) +
                  "' is not modelled: only the periodic pattern of an "
                  "integer frequency (N-1 layers of one kind, then one of "
                  "the other)"));
  }
  return std::optional<int64_t>(*period);
}

// The sizes, the query groups and the tokenizer (ApplyArchitecture).
Result<void> ApplyArchitectureSizes(const Given& g, Scenario& spec,
                                    std::vector<std::string>& warnings) {
  Architecture& a = *spec.mutable_architecture();
  const std::tuple<std::string_view, int, void (Architecture::*)(int64_t)>
      kInts[] = {
          {"--hidden-size", 1, &Architecture::set_hidden_size},
          {"--ffn-hidden-size", 1, &Architecture::set_ffn_hidden_size},
          {"--num-attention-heads", 1, &Architecture::set_num_attention_heads},
          {"--kv-channels", 1, &Architecture::set_kv_channels},
          {"--vocab-size", 1, &Architecture::set_vocab_size},
          {"--make-vocab-size-divisible-by", 1,
           &Architecture::set_make_vocab_size_divisible_by},
          {"--q-lora-rank", 1, &Architecture::set_q_lora_rank},
          {"--kv-lora-rank", 1, &Architecture::set_kv_lora_rank},
          {"--qk-head-dim", 1, &Architecture::set_qk_head_dim},
          {"--qk-pos-emb-head-dim", 0, &Architecture::set_qk_pos_emb_head_dim},
          {"--v-head-dim", 1, &Architecture::set_v_head_dim},
          {"--linear-num-key-heads", 1,
           &Architecture::set_linear_num_key_heads},
          {"--linear-key-head-dim", 1, &Architecture::set_linear_key_head_dim},
          {"--linear-num-value-heads", 1,
           &Architecture::set_linear_num_value_heads},
          {"--linear-value-head-dim", 1,
           &Architecture::set_linear_value_head_dim},
          {"--linear-conv-kernel-dim", 1,
           &Architecture::set_linear_conv_kernel_dim},
          {"--num-experts", 1, &Architecture::set_num_moe_experts},
          {"--moe-router-topk", 1, &Architecture::set_moe_router_topk},
          {"--moe-ffn-hidden-size", 1, &Architecture::set_moe_ffn_hidden_size},
          {"--moe-shared-expert-intermediate-size", 1,
           &Architecture::set_moe_shared_expert_intermediate_size},
      };
  for (auto [flag, min, set] : kInts) {
    auto value = g.Int(flag, min);
    if (!value) return std::unexpected(value.error());
    if (*value) (a.*set)(**value);
  }
  // argument_utils.py core_transformer_config_from_args: num_query_groups is
  // passed only with --group-query-attention, else it is None (one group
  // per head).
  if (g.Bool("--group-query-attention").value_or(false)) {
    auto groups = g.Int("--num-query-groups", 1);
    if (!groups) return std::unexpected(groups.error());
    if (*groups) a.set_num_query_groups(**groups);
  } else if (g.Has("--num-query-groups")) {
    warnings.push_back(std::string(kPrefix) +
                       "--num-query-groups without --group-query-attention "
                       "has no effect in Megatron (one KV group per head)");
  }
  if (auto tokenizer = g.String("--tokenizer-model"))
    a.set_tokenizer_model(*tokenizer);
  if (auto type = g.String("--tokenizer-type")) a.set_tokenizer_type(*type);

  return {};
}

// The MLP activation, the boolean architecture flags, the softmax and the
// normalization (ApplyArchitecture).
Result<void> ApplyActivationAndNorms(const Given& g, Scenario& spec,
                                     std::vector<std::string>& warnings) {
  Architecture& a = *spec.mutable_architecture();
  // Activation: argument_utils.py (--swiglu: gated SiLU; --quick-geglu:
  // gated quick GeLU; --squared-relu; else GeLU).
  const bool swiglu = g.Bool("--swiglu").value_or(false);
  const bool geglu = g.Bool("--quick-geglu").value_or(false);
  if (swiglu && geglu) {
    return std::unexpected(
        FlagError("--quick-geglu",
                  "cannot be combined with --swiglu (Megatron asserts "
                  "the same)"));
  }
  if (g.Bool("--squared-relu").value_or(false)) {
    return std::unexpected(
        FlagError("--squared-relu",
                  "the squared-ReLU MLP is not modelled (swiglu, "
                  "quick_geglu and gelu are)"));
  }
  if (swiglu) a.set_activation("swiglu");
  if (geglu) a.set_activation("quick_geglu");

  const std::pair<std::string_view, void (Architecture::*)(bool)> kBools[] = {
      {"--untie-embeddings-and-output-weights",
       &Architecture::set_untie_embeddings_and_output_weights},
      {"--add-bias-linear", &Architecture::set_add_bias_linear},
      {"--qk-layernorm", &Architecture::set_qk_layernorm},
      {"--attention-output-gate", &Architecture::set_attention_output_gate},
      {"--multi-latent-attention", &Architecture::set_multi_latent_attention},
      {"--moe-shared-expert-gate", &Architecture::set_moe_shared_expert_gate},
  };
  for (auto [flag, set] : kBools) {
    if (auto v = g.Bool(flag)) (a.*set)(*v);
  }
  if (g.Bool("--disable-bias-linear").value_or(false))
    a.set_add_bias_linear(false);

  auto softmax = g.Choice("--softmax-type", {"vanilla", "learnable"});
  if (!softmax) {
    return std::unexpected(FlagError(
        "--softmax-type", "'" + g.String("--softmax-type").value_or("") +
                              "' is not modelled (vanilla, learnable)"));
  }
  if (*softmax) a.set_learnable_softmax_offset(**softmax == "learnable");

  auto norm = g.Choice("--normalization", {"RMSNorm", "LayerNorm"});
  if (!norm) return std::unexpected(norm.error());
  if (*norm == "LayerNorm") {
    warnings.push_back(std::string(kPrefix) +
                       "--normalization LayerNorm: simulated as RMSNorm (the "
                       "norms' biases, h per norm, are not counted)");
  }
  return {};
}

// Sliding-window and linear attention, and which layers take them
// (ApplyArchitecture).
Result<void> ApplyAttentionVariants(const Given& g, Scenario& spec) {
  Architecture& a = *spec.mutable_architecture();
  // --window-size "left,right" (tuple_type): attention to `left` earlier
  // tokens and the current one; moesim's window counts left + 1 tokens.
  if (auto window = g.String("--window-size")) {
    std::string text = *window;
    std::erase_if(text,
                  [](char c) { return c == '(' || c == ')' || c == ' '; });
    const std::vector<std::string> parts = util::SplitList(text, ",");
    auto bad = [&] {
      return std::unexpected(FlagError(
          "--window-size", std::string("'").append(window->substr(0, 40)) +
                               "': expected 'left,0' (a causal window)"));
    };
    if (parts.size() != 2 || parts[1] != "0") return bad();
    auto left = ParseInt("--window-size", parts[0], 0);
    if (!left) return bad();
    a.set_window_size(static_cast<int64_t>(*left) + 1);
  }
  auto skip = FrequencyFlag(g, "--window-attn-skip-freq", spec.num_layers());
  if (!skip) return std::unexpected(skip.error());
  if (*skip) a.set_window_attn_skip_freq(**skip);

  // Linear attention: --experimental-attention-variant gated_delta_net (or
  // its older name --linear-attention-type) with --linear-attention-freq.
  std::optional<std::string> variant =
      g.String("--experimental-attention-variant");
  if (!variant) variant = g.String("--linear-attention-type");
  if (variant && *variant != "gated_delta_net" && *variant != "gdn") {
    return std::unexpected(
        FlagError(g.Has("--experimental-attention-variant")
                      ? "--experimental-attention-variant"
                      : "--linear-attention-type",
                  "'" + variant->substr(0, 40) +
                      "' is not modelled (gated_delta_net is)"));
  }
  auto linear = FrequencyFlag(g, "--linear-attention-freq", spec.num_layers());
  if (!linear) return std::unexpected(linear.error());
  if (*linear) {
    if (!variant) {
      return std::unexpected(
          FlagError("--linear-attention-freq",
                    "needs --experimental-attention-variant gated_delta_net"));
    }
    a.set_linear_attention_freq(**linear);
  } else if (variant) {
    return std::unexpected(FlagError(
        "--experimental-attention-variant",
        "needs --linear-attention-freq (which layers are linear attention)"));
  }
  return {};
}

// YaRN rotary scaling and the MoE layer pattern (ApplyArchitecture).
Result<void> ApplyRopeAndMoeLayers(const Given& g, Scenario& spec) {
  Architecture& a = *spec.mutable_architecture();
  // YaRN: MLA's config defaults to rope_type "yarn"; other attention takes
  // it with --position-embedding-type yarn (argument_utils.py
  // _apply_yarn_config_from_args). The values are argparse's: scaling 1.0,
  // mscale 1.0, mscale_all_dim 0.0, since core_transformer_config_from_args
  // copies every argument over the config's own defaults.
  const bool mla = g.Bool("--multi-latent-attention").value_or(false);
  const std::string rope =
      g.String("--rope-type").value_or(mla ? "yarn" : "rope");
  if (rope != "yarn" && rope != "rope") {
    return std::unexpected(FlagError(
        "--rope-type", "unknown '" + rope.substr(0, 40) + "' (rope, yarn)"));
  }
  const bool yarn =
      mla ? rope == "yarn" : g.String("--position-embedding-type") == "yarn";
  auto factor = g.Double("--rotary-scaling-factor", 1e-9, 1e9);
  if (!factor) return std::unexpected(factor.error());
  auto mscale = g.Double("--mscale", 0, 1e9);
  if (!mscale) return std::unexpected(mscale.error());
  auto mscale_all = g.Double("--mscale-all-dim", 0, 1e9);
  if (!mscale_all) return std::unexpected(mscale_all.error());
  if (yarn && factor->value_or(1.0) != 1.0) {
    a.set_yarn_rotary_scaling_factor(**factor);
    a.set_yarn_mscale(mscale->value_or(1.0));
    a.set_yarn_mscale_all_dim(mscale_all->value_or(0.0));
  }
  if (auto freq = g.String("--moe-layer-freq")) {
    // Checked here when the depth is known, so the error names the flag.
    if (spec.num_layers() > 0) {
      auto pattern = internal::ExpandLayerFreq(*freq, spec.num_layers());
      if (!pattern)
        return std::unexpected(
            FlagError("--moe-layer-freq", pattern.error().message));
    }
    a.set_moe_layer_freq(*freq);
  }
  return {};
}

// The architecture flags (scenario field `architecture`). Each is Megatron's
// argument of the same name; the defaults of an unset one are applied when
// the model is built (scenarios/architecture.cc).
Result<void> ApplyArchitecture(const Given& g, Scenario& spec,
                               std::vector<std::string>& warnings) {
  // --spec MODULE FUNCTION: a layer spec built by code outside Megatron
  // (slime's plugins, for one), whose layers the flags do not describe.
  if (const std::vector<std::string>* custom = g.List("--spec")) {
    return std::unexpected(FlagError(
        "--spec", "a custom layer spec (" + Join(*custom, " ").substr(0, 80) +
                      ") builds layers in code that moesim does not read; "
                      "give the architecture with Megatron's own flags"));
  }
  if (auto ok = ApplyArchitectureSizes(g, spec, warnings); !ok) return ok;
  if (auto ok = ApplyActivationAndNorms(g, spec, warnings); !ok) return ok;
  if (auto ok = ApplyAttentionVariants(g, spec); !ok) return ok;
  return ApplyRopeAndMoeLayers(g, spec);
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

Result<std::vector<std::string>> SplitShellWords(std::string_view text) {
  return Tokenize(text);
}

Result<std::vector<std::string>> ApplyMegatronArgs(std::string_view args,
                                                   Scenario& spec) {
  auto tokens = Tokenize(args);
  if (!tokens) return std::unexpected(tokens.error());
  if (auto ok = RefuseBridgeForms(*tokens); !ok)
    return std::unexpected(ok.error());
  // ${NAME[@]} left as written: an argument list the input does not set
  // (a sourced file or the environment holds it), which may hold any flag.
  for (const std::string& token : *tokens) {
    if (token.size() > 6 && token.starts_with("${") &&
        (token.ends_with("[@]}") || token.ends_with("[*]}"))) {
      const std::string name = token.substr(2, token.size() - 6);
      return std::unexpected(util::Error{
          std::string(kPrefix) + token.substr(0, 60) +
          " is an argument list the launch input does not set (a sourced "
          "file or the environment holds it); define it with --var " +
          name.substr(0, 40) + "='--flag value ...'"});
    }
  }
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
    // A shell variable that the launch input leaves unset changes what is
    // simulated, so it is refused where a modelled flag uses it.
    // --tokenizer-model is a path of which only the file name is read
    // (architecture.cc), so a variable directory is harmless.
    for (const std::string& value : arg.values) {
      if (arg.flag == "--tokenizer-model") break;
      if (value.find("$(") != std::string::npos) {
        return std::unexpected(FlagError(
            arg.flag, "'" + value.substr(0, 40) +
                          "' is shell arithmetic or a command, which moesim "
                          "does not run; write the value"));
      }
      if (auto variable = ShellVariable(value)) {
        return std::unexpected(FlagError(
            arg.flag, *variable + " is not set in the launch input (define "
                                  "it with --var NAME=VALUE, or write the "
                                  "value)"));
      }
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
  if (auto ok = ApplyArchitecture(given, spec, warnings); !ok)
    return std::unexpected(ok.error());
  // Flags that do not change a step's work are counted; every other flag
  // moesim does not model is named on its own line, since it may change
  // speed or memory.
  std::vector<std::string> named, assumed;
  size_t harmless = 0;
  for (const std::string& flag : not_modelled) {
    if (IsWithoutCost(flag)) {
      ++harmless;
    } else if (IsAssumed(flag)) {
      assumed.push_back(flag);
    } else {
      named.push_back(std::string(kPrefix) +
                      "not modelled (may change speed or memory): " + flag);
    }
  }
  if (harmless > 0) {
    named.insert(named.begin(),
                 std::string(kPrefix) + std::to_string(harmless) +
                     " flags without effect on a step's time or memory "
                     "(logging, data, checkpoints, learning rate, "
                     "initialisation) ignored");
  }
  if (!assumed.empty()) {
    named.insert(named.begin() + (harmless > 0 ? 1 : 0),
                 std::string(kPrefix) +
                     "as the replay always assumes (Megatron-Bridge recipe "
                     "settings): " +
                     Join(assumed, ", "));
  }
  warnings.insert(warnings.begin(), named.begin(), named.end());
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

std::string FormatArchitectureArgs(const models::Model& m) {
  std::vector<std::string> out;
  auto add = [&](std::string flag, std::string value = {}) {
    out.push_back(value.empty() ? std::move(flag) : flag + " " + value);
  };
  auto num = [&](std::string flag, int64_t v) { add(flag, std::to_string(v)); };
  num("--hidden-size", m.hidden_size());
  num("--ffn-hidden-size", m.ffn_hidden_size());
  num("--num-attention-heads", m.num_attention_heads());
  if (m.num_query_groups() > 0 && !m.multi_latent_attention()) {
    add("--group-query-attention");
    num("--num-query-groups", m.num_query_groups());
  }
  if (m.kv_channels() > 0) num("--kv-channels", m.kv_channels());
  num("--vocab-size", m.vocab_size());
  num("--make-vocab-size-divisible-by", m.make_vocab_size_divisible_by() > 0
                                            ? m.make_vocab_size_divisible_by()
                                            : 128);
  if (m.activation() == "swiglu") add("--swiglu");
  if (m.activation() == "quick_geglu") add("--quick-geglu");
  if (m.untie_embeddings_and_output_weights())
    add("--untie-embeddings-and-output-weights");
  add(m.add_bias_linear() ? "--add-bias-linear" : "--disable-bias-linear");
  if (m.qk_layernorm()) add("--qk-layernorm");
  if (m.attention_output_gate()) add("--attention-output-gate");
  if (m.learnable_softmax_offset()) add("--softmax-type", "learnable");
  if (m.multi_latent_attention()) {
    add("--multi-latent-attention");
    if (m.q_lora_rank() > 0) num("--q-lora-rank", m.q_lora_rank());
    num("--kv-lora-rank", m.kv_lora_rank());
    num("--qk-head-dim", m.qk_head_dim());
    num("--qk-pos-emb-head-dim", m.qk_pos_emb_head_dim());
    num("--v-head-dim", m.v_head_dim());
  }
  if (m.yarn_rotary_scaling_factor() > 1) {
    if (!m.multi_latent_attention()) add("--position-embedding-type", "yarn");
    add("--rotary-scaling-factor", Number(m.yarn_rotary_scaling_factor()));
    add("--mscale", Number(m.has_yarn_mscale() ? m.yarn_mscale() : 1.0));
    add("--mscale-all-dim",
        Number(m.has_yarn_mscale_all_dim() ? m.yarn_mscale_all_dim() : 0.0));
  } else if (m.multi_latent_attention()) {
    add("--rope-type", "rope");
  }
  if (m.window_size() > 0) {
    add("--window-size", std::to_string(m.window_size() - 1) + ",0");
    if (m.window_attn_skip_freq() > 0)
      num("--window-attn-skip-freq", m.window_attn_skip_freq());
  }
  if (m.linear_attention_freq() > 0) {
    add("--experimental-attention-variant", "gated_delta_net");
    num("--linear-attention-freq", m.linear_attention_freq());
    num("--linear-num-key-heads", m.linear_num_key_heads());
    num("--linear-key-head-dim", m.linear_key_head_dim());
    num("--linear-num-value-heads", m.linear_num_value_heads());
    num("--linear-value-head-dim", m.linear_value_head_dim());
    num("--linear-conv-kernel-dim", m.linear_conv_kernel_dim());
  }
  if (m.num_moe_experts() > 0) {
    num("--num-experts", m.num_moe_experts());
    num("--moe-router-topk", m.moe_router_topk());
    num("--moe-ffn-hidden-size", m.moe_ffn_hidden_size() > 0
                                     ? m.moe_ffn_hidden_size()
                                     : m.ffn_hidden_size());
    if (m.moe_shared_expert_intermediate_size() > 0)
      num("--moe-shared-expert-intermediate-size",
          m.moe_shared_expert_intermediate_size());
    if (m.moe_shared_expert_gate()) add("--moe-shared-expert-gate");
    if (m.moe_layer_freq_size() > 0) {
      // Runs of equal entries: "([0]*3+[1]*58)".
      std::string pattern;
      for (int i = 0; i < m.moe_layer_freq_size();) {
        int j = i;
        while (j < m.moe_layer_freq_size() &&
               m.moe_layer_freq(j) == m.moe_layer_freq(i))
          ++j;
        pattern += (pattern.empty() ? "" : "+") + std::string("[") +
                   std::to_string(m.moe_layer_freq(i)) + "]*" +
                   std::to_string(j - i);
        i = j;
      }
      add("--moe-layer-freq", "'(" + pattern + ")'");
    }
  }
  std::string joined;
  for (const std::string& item : out)
    joined += (joined.empty() ? "" : " ") + item;
  return joined;
}

namespace {

// One argument of FormatMegatronArgs: the flag, or the flag and its value.
void AddArg(std::vector<std::string>& out, std::string flag,
            std::string value = {}) {
  if (!value.empty()) {
    flag += ' ';
    flag += value;
  }
  out.push_back(std::move(flag));
}

// The dispatcher, EP overlap, routing and optimizer arguments.
void AddMoeAndOptimizerArgs(const Scenario& spec,
                            std::vector<std::string>& out) {
  // Megatron runs the fused dispatchers as flex backends of the same name.
  const auto dispatcher = ParseDispatcher(spec.dispatcher());
  if (dispatcher && models::TraitsOf(*dispatcher).fused) {
    AddArg(out, "--moe-token-dispatcher-type", "flex");
    AddArg(out, "--moe-flex-dispatcher-backend", spec.dispatcher());
  } else {
    AddArg(out, "--moe-token-dispatcher-type", "alltoall");
  }
  if (spec.overlap_moe_expert_parallel_comm())
    AddArg(out, "--overlap-moe-expert-parallel-comm");
  if (spec.delay_wgrad_compute()) AddArg(out, "--delay-wgrad-compute");
  if (spec.routing() == "force_balanced") {
    AddArg(out, "--moe-router-force-load-balancing");
  } else if (spec.routing() == "tokendrop") {
    AddArg(out, "--moe-expert-capacity-factor",
           Number(spec.moe_expert_capacity_factor()));
    if (spec.moe_pad_expert_input_to_capacity())
      AddArg(out, "--moe-pad-expert-input-to-capacity");
  }

  if (spec.moe_shared_expert_overlap())
    AddArg(out, "--moe-shared-expert-overlap");
  if (spec.fp8_param_gather()) AddArg(out, "--fp8-param-gather");
  // The optimizer, whole: a launch line that defines the run takes
  // Megatron-LM's defaults, which differ from the Bridge recipes'.
  if (spec.use_distributed_optimizer())
    AddArg(out, "--use-distributed-optimizer");
  if (spec.use_precision_aware_optimizer())
    AddArg(out, "--use-precision-aware-optimizer");
  if (!spec.main_grads_dtype().empty() && spec.main_grads_dtype() != "fp32")
    AddArg(out, "--main-grads-dtype", spec.main_grads_dtype());
  if (!spec.exp_avg_dtype().empty() && spec.exp_avg_dtype() != "fp32")
    AddArg(out, "--exp-avg-dtype", spec.exp_avg_dtype());
  if (spec.optimizer_offload_fraction() > 0) {
    AddArg(out, "--optimizer-cpu-offload");
    AddArg(out, "--optimizer-offload-fraction",
           Number(spec.optimizer_offload_fraction()));
    if (spec.overlap_cpu_optimizer_d2h_h2d())
      AddArg(out, "--overlap-cpu-optimizer-d2h-h2d");
  }
}

// The CUDA graphs, the CP exchange, GC, Megatron-FSDP and offloading.
void AddGraphCpAndOffloadArgs(const Scenario& spec,
                              std::vector<std::string>& out) {
  const std::string& graph = spec.cuda_graph();
  if (graph.starts_with("te:")) {
    std::string scopes = graph.substr(3);
    std::replace(scopes.begin(), scopes.end(), ';', ' ');
    AddArg(out, "--cuda-graph-impl", "transformer_engine");
    AddArg(out, "--cuda-graph-scope", scopes);
  } else if (graph == "full_iteration") {
    AddArg(out, "--cuda-graph-impl", "local");
    AddArg(out, "--cuda-graph-scope", "full_iteration");
  } else if (graph == "local:transformer_layer") {
    AddArg(out, "--cuda-graph-impl", "local");
  }

  if (!spec.cp_comm_type().empty() && spec.cp_comm_type() != "p2p")
    AddArg(out, "--cp-comm-type", spec.cp_comm_type());
  if (spec.hierarchical_context_parallel_sizes_size() > 0) {
    std::string sizes;
    for (int size : spec.hierarchical_context_parallel_sizes()) {
      if (!sizes.empty()) sizes += ' ';
      sizes += std::to_string(size);
    }
    AddArg(out, "--hierarchical-context-parallel-sizes", sizes);
  }
  if (spec.has_manual_gc() && spec.manual_gc()) AddArg(out, "--manual-gc");
  if (spec.use_megatron_fsdp()) {
    AddArg(out, "--use-megatron-fsdp");
    if (!spec.data_parallel_sharding_strategy().empty())
      AddArg(out, "--data-parallel-sharding-strategy",
             spec.data_parallel_sharding_strategy());
  }
  if (spec.cpu_offloading()) {
    AddArg(out, "--cpu-offloading");
    AddArg(out, "--cpu-offloading-num-layers",
           std::to_string(spec.cpu_offloading_num_layers()));
  }
  if (spec.fine_grained_activation_offloading()) {
    AddArg(out, "--fine-grained-activation-offloading");
    const std::string modules = util::JoinList(spec.offload_modules(), " ");
    if (!modules.empty()) AddArg(out, "--offload-modules", modules);
    if (spec.has_activation_offload_fraction())
      AddArg(out, "--activation-offload-fraction",
             Number(spec.activation_offload_fraction()));
    if (spec.has_min_offloaded_tensor_size())
      AddArg(out, "--min-offloaded-tensor-size",
             std::to_string(spec.min_offloaded_tensor_size()));
  }
  if (spec.offload_optimizer_states())
    AddArg(out, "--offload-optimizer-states");
}

}  // namespace

std::string FormatMegatronArgs(const Scenario& spec) {
  std::vector<std::string> out;
  auto add = [&](std::string flag, std::string value = {}) {
    AddArg(out, std::move(flag), std::move(value));
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
  if (spec.mtp_num_layers() > 0)
    add("--mtp-num-layers", std::to_string(spec.mtp_num_layers()));

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

  AddMoeAndOptimizerArgs(spec, out);
  AddGraphCpAndOffloadArgs(spec, out);

  std::string joined;
  for (const std::string& item : out)
    joined += (joined.empty() ? "" : " ") + item;
  return joined;
}

}  // namespace moesim::scenarios
