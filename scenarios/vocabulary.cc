#include "scenarios/vocabulary.h"

#include <utility>
#include <vector>

#include "models/dispatchers.h"
#include "models/pipeline_schedules.h"
#include "util/check.h"
#include "util/csv.h"
#include "util/message.h"

namespace moesim::scenarios {
namespace {

using util::Result;

constexpr std::string_view kPrecisionWords[] = {
    "bf16", "fp8-cs", "fp8-delayed", "fp8-block", "mxfp8", "nvfp4"};
constexpr models::Precision kPrecisions[] = {
    models::Precision::kBf16,       models::Precision::kFp8CurrentScaling,
    models::Precision::kFp8Delayed, models::Precision::kFp8Blockwise,
    models::Precision::kMxfp8,      models::Precision::kNvfp4};

constexpr std::string_view kRoutingWords[] = {"force_balanced",
                                              "dropless_natural", "tokendrop"};
constexpr models::Routing kRoutings[] = {models::Routing::kForceBalanced,
                                         models::Routing::kDroplessNatural,
                                         models::Routing::kTokenDrop};

constexpr std::string_view kCpCommWords[] = {"p2p", "a2a", "allgather",
                                             "a2a+p2p"};
constexpr models::CpCommType kCpComms[] = {
    models::CpCommType::kP2p, models::CpCommType::kA2a,
    models::CpCommType::kAllGather, models::CpCommType::kA2aP2p};

constexpr std::string_view kCudaGraphWords[] = {"none", "full_iteration",
                                                "local:transformer_layer"};
constexpr std::string_view kTeScopes[] = {"attn", "mlp", "moe", "moe_router",
                                          "moe_preprocess"};

constexpr std::string_view kModules[] = {
    "core_attn", "mla_up_proj", "layernorm",     "moe_act",
    "mlp",       "moe",         "shared_experts"};
// Alias -> canonical module.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"up_proj", "mla_up_proj"}, {"norm", "layernorm"}};
constexpr std::string_view kAliasWords[] = {"up_proj", "norm"};

// The index of `word` in `words`, or -1.
int Find(std::span<const std::string_view> words, std::string_view word) {
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == word) return static_cast<int>(i);
  }
  return -1;
}

std::string Unknown(std::string_view word, std::string_view choices) {
  return "unknown '" + util::Excerpt(word) + "' (" + std::string(choices) + ")";
}

}  // namespace

std::string JoinWords(std::span<const std::string_view> words) {
  return util::JoinList(words);
}

std::span<const std::string_view> PrecisionWords() { return kPrecisionWords; }

Result<models::Precision> ParsePrecision(std::string_view word) {
  const int i = Find(kPrecisionWords, word);
  if (i < 0) return util::Fail(Unknown(word, JoinWords(kPrecisionWords)));
  return kPrecisions[i];
}

namespace {

// A registry's scenario words (each row's `word`), in its order.
template <typename Row>
std::vector<std::string_view> RegistryWords(std::span<const Row> rows) {
  std::vector<std::string_view> out;
  for (const Row& row : rows) out.push_back(row.word);
  return out;
}

// The id of the registry row whose word is `word`; else the error listing
// `words`.
template <typename Row>
Result<decltype(Row::id)> ParseRegistryWord(
    std::span<const Row> rows, std::span<const std::string_view> words,
    std::string_view word) {
  for (const Row& row : rows) {
    if (row.word == word) return row.id;
  }
  return util::Fail(Unknown(word, JoinWords(words)));
}

}  // namespace

// The words are the dispatcher registry's (models/dispatchers.h).
std::span<const std::string_view> DispatcherWords() {
  static const std::vector<std::string_view> words =
      RegistryWords(models::Dispatchers());
  return words;
}

Result<models::Dispatcher> ParseDispatcher(std::string_view word) {
  return ParseRegistryWord(models::Dispatchers(), DispatcherWords(), word);
}

// The words are the schedule registry's (models/pipeline_schedules.h).
std::span<const std::string_view> PipelineScheduleWords() {
  static const std::vector<std::string_view> words =
      RegistryWords(models::PipelineSchedules());
  return words;
}

Result<models::PipelineScheduleKind> ParsePipelineSchedule(
    std::string_view word) {
  return ParseRegistryWord(models::PipelineSchedules(), PipelineScheduleWords(),
                           word);
}

std::span<const std::string_view> RoutingWords() { return kRoutingWords; }

Result<models::Routing> ParseRouting(std::string_view word) {
  const int i = Find(kRoutingWords, word);
  if (i < 0) return util::Fail(Unknown(word, JoinWords(kRoutingWords)));
  return kRoutings[i];
}

std::span<const std::string_view> CpCommTypeWords() { return kCpCommWords; }

Result<models::CpCommType> ParseCpCommType(std::string_view word) {
  const int i = Find(kCpCommWords, word);
  if (i < 0) return util::Fail(Unknown(word, JoinWords(kCpCommWords)));
  return kCpComms[i];
}

std::span<const std::string_view> CudaGraphWords() { return kCudaGraphWords; }
std::span<const std::string_view> CudaGraphTeScopes() { return kTeScopes; }

Result<models::CudaGraph> ParseCudaGraph(std::string_view word) {
  models::CudaGraph graph;
  if (word == "none") return graph;
  if (word == "full_iteration") {
    graph.full_iteration = true;
    return graph;
  }
  if (word == "local:transformer_layer") {
    graph.local_transformer_layer = true;
    return graph;
  }
  if (!word.starts_with("te:")) {
    return util::Fail(Unknown(word,
                              "none, full_iteration, te:<scope;scope>, "
                              "local:transformer_layer"));
  }
  const std::vector<std::string> scopes = util::SplitList(word.substr(3), ",;");
  if (scopes.empty()) {
    return util::Fail("te: needs at least one scope (" + JoinWords(kTeScopes) +
                      ")");
  }
  bool* flags[] = {&graph.attn, &graph.mlp, &graph.moe, &graph.moe_router,
                   &graph.moe_preprocess};
  for (const std::string& scope : scopes) {
    const int i = Find(kTeScopes, scope);
    if (i < 0) {
      return util::Fail("unknown TE scope '" + scope + "' (" +
                        JoinWords(kTeScopes) + ")");
    }
    *flags[i] = true;
  }
  return graph;
}

std::span<const std::string_view> RecomputeModules() { return kModules; }
std::span<const std::string_view> RecomputeModuleAliases() {
  return kAliasWords;
}

std::string CanonicalRecomputeModule(std::string_view name) {
  for (auto [alias, module] : kAliases) {
    if (name == alias) return std::string(module);
  }
  return Find(kModules, name) < 0 ? "" : std::string(name);
}

Result<void> AddRecomputeModule(std::string_view name, models::Recompute& out) {
  bool* flags[] = {&out.core_attn,     &out.mla_up_proj, &out.layernorm,
                   &out.moe_act,       &out.mlp,         &out.moe,
                   &out.shared_experts};
  const int i = Find(kModules, CanonicalRecomputeModule(name));
  if (i < 0) {
    return util::Fail("unknown module '" + std::string(name) + "' (" +
                      JoinWords(kModules) + "; aliases " +
                      JoinWords(kAliasWords) + ")");
  }
  *flags[i] = true;
  return {};
}

Result<RecomputeSetting> ParseRecomputeSetting(std::string_view value) {
  std::vector<std::string> items = util::SplitList(value, ",;");
  if (items.empty()) return util::Fail("needs none, full or a list of modules");
  RecomputeSetting out;
  for (const std::string& item : items) {
    if ((item == "none" || item == "full") && items.size() > 1)
      return util::Fail("'" + item + "' cannot be combined with modules");
  }
  if (items[0] == "none") return out;
  if (items[0] == "full") {
    out.kind = RecomputeSetting::kFull;
    return out;
  }
  models::Recompute check;
  for (const std::string& item : items) {
    if (auto ok = AddRecomputeModule(item, check); !ok)
      return std::unexpected(ok.error());
  }
  out.kind = RecomputeSetting::kSelective;
  out.modules = std::move(items);
  return out;
}

void ApplyRecomputeSetting(const RecomputeSetting& setting, Recompute& rc) {
  switch (setting.kind) {
    case RecomputeSetting::kNone:
      rc.Clear();
      return;
    case RecomputeSetting::kFull:
      rc.set_granularity("full");
      rc.clear_modules();
      if (rc.method().empty()) rc.set_method("uniform");
      if (rc.num_layers() == 0) rc.set_num_layers(1);
      return;
    case RecomputeSetting::kSelective:
      rc.Clear();
      rc.set_granularity("selective");
      for (const std::string& m : setting.modules) rc.add_modules(m);
      return;
  }
}

Result<std::vector<std::string>> ParseActivationOffloadSetting(
    std::string_view value) {
  std::vector<std::string> items = util::SplitList(value, ",;");
  if (items.empty()) return util::Fail("needs none or a list of modules");
  if (items[0] == "none" && items.size() == 1)
    return std::vector<std::string>{};
  for (const std::string& item : items) {
    if (item == "none")
      return util::Fail("'none' cannot be combined with modules");
    if (models::OffloadModuleIndex(item) < 0) {
      return util::Fail("unknown module '" + item + "' (" +
                        models::OffloadModuleList() + ")");
    }
  }
  return items;
}

void ApplyActivationOffloadSetting(const std::vector<std::string>& modules,
                                   Scenario& s) {
  s.clear_offload_modules();
  s.set_fine_grained_activation_offloading(!modules.empty());
  for (const std::string& m : modules) s.add_offload_modules(m);
  if (modules.empty()) {
    s.clear_activation_offload_fraction();
    s.clear_min_offloaded_tensor_size();
  }
}

std::string ActivationOffloadSetting(const Scenario& s) {
  if (!s.fine_grained_activation_offloading()) return "none";
  std::string out;
  for (const std::string& m : s.offload_modules()) {
    if (!out.empty()) out += ',';
    out += m;
  }
  return out.empty() ? "none" : out;
}

Result<void> CheckWord(std::string_view kind, std::string_view word) {
  auto check = [](const auto& parsed) -> Result<void> {
    if (!parsed) return std::unexpected(parsed.error());
    return {};
  };
  if (kind == "precision") return check(ParsePrecision(word));
  if (kind == "dispatcher") return check(ParseDispatcher(word));
  if (kind == "recompute") return check(ParseRecomputeSetting(word));
  if (kind == "cuda_graph") return check(ParseCudaGraph(word));
  if (kind == "activation_offload")
    return check(ParseActivationOffloadSetting(word));
  util::CheckOrDie(kind == "routing", "CheckWord: unknown kind");
  return check(ParseRouting(word));
}

}  // namespace moesim::scenarios
