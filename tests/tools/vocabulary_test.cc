// One vocabulary (scenarios/vocabulary.h): every word a scenario knob
// accepts is accepted by the scenario file, the command-line flags and the
// sweep spec alike, and every word one refuses the others refuse with the
// same rule. Guards against a copy of a word list drifting (the sweep spec
// kept its own lists until they were folded into scenarios/vocabulary).
#include "scenarios/vocabulary.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "studies/scenario_flags.h"
#include "studies/sweep_spec.h"

namespace moesim::tools {
namespace {

// The rule of an error "<where>: <field>: <rule>" (the text after the
// field's name), or "" for success.
std::string RuleAfter(const util::Result<void>& r, const std::string& field) {
  if (r) return "";
  const std::string& m = r.error().message;
  const size_t at = m.find(field + ": ");
  return at == std::string::npos ? m : m.substr(at + field.size() + 2);
}

template <typename T>
util::Result<void> Void(const util::Result<T>& r) {
  if (r) return {};
  return std::unexpected(r.error());
}

// Qwen3-30B-A3B trimmed to 2 layers on one 8-GPU H100 node with EP8: every
// knob's words resolve or break a layout rule, never a vocabulary one.
scenarios::Scenario Base() {
  scenarios::Scenario s;
  s.set_model("qwen3-30b-a3b");
  s.set_system("dgx-h100");
  s.set_num_gpus(8);
  s.set_num_layers(2);
  s.mutable_layout()->set_expert_model_parallel_size(8);
  return s;
}

// The sweep's verdict on `word` as the only value of axis `field`.
std::string SweepRule(const std::string& field, const std::string& word) {
  scenarios::Sweep spec;
  *spec.mutable_base() = Base();
  if (field == "precision") spec.add_precision(word);
  if (field == "dispatcher") spec.add_dispatcher(word);
  if (field == "cuda_graph") spec.add_cuda_graph(word);
  if (field == "recompute") spec.add_recompute(word);
  return RuleAfter(Void(studies::SweepSpace::Build(spec, "sweep", "", "")),
                   field);
}

// The flags' verdict: a vocabulary error, or "" when Resolve got past the
// word (it may still break a layout rule, which is not the vocabulary's).
std::string FlagsRule(const std::string& flag, const std::string& word) {
  studies::ScenarioFlags f;
  f.model = "qwen3-30b-a3b";
  f.system = "dgx-h100";
  f.gpus = 8;
  f.num_layers = 2;
  f.ep = 8;
  if (flag == "--precision") f.precision = word;
  if (flag == "--dispatcher") f.dispatcher = word;
  if (flag == "--cuda-graph") f.cuda_graph = word;
  if (flag == "--recompute") f.recompute = word;
  const std::string rule = RuleAfter(Void(studies::ResolveFlags(f)), flag);
  return rule.starts_with("unknown") || rule.starts_with("te:") ||
                 rule.starts_with("needs") ||
                 rule.find("cannot be combined") != std::string::npos
             ? rule
             : "";
}

// The scenario file's verdict, as FlagsRule.
std::string FileRule(const std::string& field, const std::string& word) {
  const std::string text =
      "model: \"qwen3-30b-a3b\" system: \"dgx-h100\" "
      "num_gpus: 8 num_layers: 2 "
      "layout { expert_model_parallel_size: 8 } " +
      field + ": \"" + word + "\"";
  auto spec = scenarios::ParseScenario(text, "x.textproto");
  EXPECT_TRUE(spec.has_value());
  const std::string rule =
      RuleAfter(Void(scenarios::Resolve(*spec, "x.textproto", text)), field);
  return rule.starts_with("unknown") || rule.starts_with("te:") ? rule : "";
}

std::vector<std::string> Words(std::span<const std::string_view> words) {
  return {words.begin(), words.end()};
}

// Each accepted word, an upper-case spelling (refused: the words are case
// sensitive, as in Megatron) and the `extra` words.
std::vector<std::string> Walk(std::span<const std::string_view> words,
                              std::vector<std::string> extra) {
  std::vector<std::string> out = Words(words);
  for (std::string_view w : words) {
    std::string upper(w);
    for (char& c : upper) c = static_cast<char>(std::toupper(c));
    out.push_back(upper);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

// For each word: the sweep, the flags and (where given) the scenario file
// give the same verdict, and the vocabulary's parser accepts exactly the
// words the sweep accepts.
template <typename Parse>
void ExpectAgreement(const std::vector<std::string>& words,
                     const std::string& field, const std::string& flag,
                     bool file, Parse parse) {
  for (const std::string& w : words) {
    const std::string sweep = SweepRule(field, w);
    EXPECT_EQ(sweep, FlagsRule(flag, w)) << w;
    if (file) {
      EXPECT_EQ(sweep, FileRule(field, w)) << w;
    }
    EXPECT_EQ(sweep.empty(), parse(w).has_value()) << w;
  }
}

TEST(Vocabulary, PrecisionAgrees) {
  ExpectAgreement(Walk(scenarios::PrecisionWords(), {"fp6"}), "precision",
                  "--precision", true, scenarios::ParsePrecision);
  EXPECT_EQ(SweepRule("precision", "fp6"),
            "unknown 'fp6' (bf16, fp8-cs, fp8-delayed, fp8-block, mxfp8, "
            "nvfp4)");
}

TEST(Vocabulary, DispatcherAgrees) {
  ExpectAgreement(Walk(scenarios::DispatcherWords(), {"nccl"}), "dispatcher",
                  "--dispatcher", true, scenarios::ParseDispatcher);
}

TEST(Vocabulary, CudaGraphAgrees) {
  std::vector<std::string> extra = {"te:", "te:router", "local", "te:attn;moe"};
  std::string all = "te:";
  for (std::string_view scope : scenarios::CudaGraphTeScopes()) {
    extra.push_back("te:" + std::string(scope));
    all += std::string(scope) + ";";
  }
  extra.push_back(all);
  ExpectAgreement(Walk(scenarios::CudaGraphWords(), extra), "cuda_graph",
                  "--cuda-graph", true, scenarios::ParseCudaGraph);
  EXPECT_EQ(SweepRule("cuda_graph", "te:router"),
            "unknown TE scope 'router' (attn, mlp, moe, moe_router, "
            "moe_preprocess)");
}

TEST(Vocabulary, RecomputeAgrees) {
  std::vector<std::string> extra = {
      "none",     "full", "moe_act,layernorm", "up_proj;norm", "full,mlp",
      "mlp,none", "attn"};
  for (std::string_view alias : scenarios::RecomputeModuleAliases())
    extra.emplace_back(alias);
  ExpectAgreement(Walk(scenarios::RecomputeModules(), extra), "recompute",
                  "--recompute", false, scenarios::ParseRecomputeSetting);
  // The scenario file writes modules one by one; each module and alias is
  // accepted there, and an unknown one refused with the same rule.
  for (const std::string& m :
       Walk(scenarios::RecomputeModules(), {"up_proj", "norm", "attn"})) {
    const std::string text =
        "model: \"qwen3-30b-a3b\" system: \"dgx-h100\" num_gpus: 8 "
        "num_layers: 2 layout { expert_model_parallel_size: 8 } "
        "recompute { granularity: \"selective\" modules: \"" +
        m + "\" }";
    auto spec = scenarios::ParseScenario(text, "x.textproto");
    ASSERT_TRUE(spec.has_value());
    std::string rule =
        RuleAfter(Void(scenarios::Resolve(*spec, "x.textproto", text)),
                  "recompute.modules");
    if (!rule.starts_with("unknown")) rule = "";
    EXPECT_EQ(rule, SweepRule("recompute", m)) << m;
  }
}

}  // namespace
}  // namespace moesim::tools
