// `moesim sweep`: enumeration, verdicts, ranking, determinism across thread
// counts and shards, the HTML report. The spaces are small and the models
// trimmed to a few layers so the whole file runs in a few seconds.
#include "tools/sweep.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "studies/scenario_flags.h"
#include "tools/memory_report.h"
#include "tools/sweep_format.h"

namespace moesim::tools {
namespace {

namespace fs = std::filesystem;

// A scratch folder per test binary run, removed at exit.
struct ScratchDir {
  fs::path path;
  ScratchDir()
      : path(fs::temp_directory_path() /
             ("moesim_sweep_test_" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

fs::path Scratch() {
  static const ScratchDir dir;
  return dir.path;
}

fs::path WriteFile(const std::string& name, const std::string& text) {
  const fs::path path = Scratch() / name;
  std::ofstream(path) << text;
  return path;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Qwen3-30B-A3B (128 experts, 4 query groups) trimmed to 4 layers on one
// 8-GPU H100 node, GBS 8. 4 TP x 4 EP x 2 PP = 32 candidates.
constexpr const char* kSmall = R"(base {
  model: "qwen3-30b-a3b"
  system: "dgx-h100"
  num_gpus: 8
  seq_length: 4096
  num_layers: 4
  layout { global_batch_size: 8 }
}
tp { values: [1, 2, 4, 8] }
ep { values: [1, 2, 8, 16] }
pp { values: [1, 2] }
)";

studies::SweepSpace LoadSpace(const std::string& name,
                              const std::string& text) {
  auto space = studies::SweepSpace::Load(WriteFile(name, text).string());
  EXPECT_TRUE(space.has_value()) << space.error().message;
  return std::move(*space);
}

studies::SweepOutcome Evaluate(const studies::SweepSpace& space, int jobs = 2,
                               int shard = 0, int num_shards = 1) {
  studies::SweepOptions options;
  options.jobs = jobs;
  options.shard = shard;
  options.num_shards = num_shards;
  return studies::EvaluateSweep(space, options);
}

std::map<std::string, int> CountVerdicts(const studies::SweepOutcome& o) {
  std::map<std::string, int> counts;
  for (const studies::SweepCandidate& c : o.candidates) ++counts[c.verdict()];
  return counts;
}

SweepOutputFlags NoTiming() {
  SweepOutputFlags f;
  f.no_timing = true;
  return f;
}

TEST(SweepSpace, EnumeratesTheProductInAFixedOrder) {
  const studies::SweepSpace space = LoadSpace("order.textproto", kSmall);
  ASSERT_EQ(space.size(), 32);  // 4 x 4 x 2
  // pp varies fastest (the last swept axis), then ep, then tp:
  // index = (tp_pos * 4 + ep_pos) * 2 + pp_pos.
  // 13 = (1 * 4 + 2) * 2 + 1: TP2 EP8 PP2.
  const scenarios::Scenario c = space.Candidate(13);
  EXPECT_EQ(c.layout().tensor_model_parallel_size(), 2);
  EXPECT_EQ(c.layout().expert_model_parallel_size(), 8);
  EXPECT_EQ(c.layout().pipeline_model_parallel_size(), 2);
  EXPECT_EQ(c.num_layers(), 4);  // the base is kept
}

TEST(Sweep, CountsVerdictsOfASmallSpace) {
  const studies::SweepOutcome o =
      Evaluate(LoadSpace("counts.textproto", kSmall));
  ASSERT_EQ(o.candidates.size(), 32u);
  // Invalid, 17 of 32:
  //  TP8 (8): PP1 breaks num_query_groups 4 % TP; PP2 makes the attention
  //    mesh TPxCPxPP = 16 > 8 GPUs;
  //  TP1, 2, 4 (9): EP16 x PP (16, 32) does not divide 8 GPUs (6); EP8 x
  //    PP2 = 16 neither (3).
  // Valid, 15 = 3 TP x (3 EP at PP1 + 2 EP at PP2); 4 layers of a 30B model
  // fit easily, so all 15 run.
  const auto counts = CountVerdicts(o);
  EXPECT_EQ(counts.at("invalid"), 17);
  EXPECT_EQ(counts.at("ok"), 15);
  EXPECT_EQ(counts.count("oom"), 0u);
}

// The offload axes: fine-grained activation offloading and optimizer-state
// offloading, each candidate's scenario as the axis writes it, the last axis
// varying fastest. Offloading expert_fc1 saves each MoE layer's grouped-GEMM
// input, the state offload the whole optimizer state
// (tests/models/fine_grained_offload_test.cc): each lowers the peak; with
// both, the optimizer step's own peak (weights, gradients and the states
// back, no activations) binds, as with the state offload alone. An unknown
// module is refused when the spec loads.
TEST(Sweep, OffloadAxesLowerThePeak) {
  const studies::SweepOutcome o = Evaluate(LoadSpace("offload.textproto", R"(
base { model: "qwen3-30b-a3b" system: "dgx-h100" num_gpus: 8 num_layers: 12
       layout { expert_model_parallel_size: 8 global_batch_size: 8 } }
activation_offload: ["none", "expert_fc1"]
offload_optimizer_states: [false, true]
)"));
  ASSERT_EQ(o.candidates.size(), 4u);
  for (const studies::SweepCandidate& c : o.candidates)
    ASSERT_EQ(c.verdict(), "ok") << c.reason();
  EXPECT_EQ(o.candidates[0].activation_offload(), "none");
  EXPECT_FALSE(o.candidates[0].offload_optimizer_states());
  EXPECT_TRUE(o.candidates[1].offload_optimizer_states());
  EXPECT_EQ(o.candidates[2].activation_offload(), "expert_fc1");
  EXPECT_LT(o.candidates[1].peak_memory_gib(),
            o.candidates[0].peak_memory_gib());
  EXPECT_LT(o.candidates[2].peak_memory_gib(),
            o.candidates[0].peak_memory_gib());
  EXPECT_DOUBLE_EQ(o.candidates[3].peak_memory_gib(),
                   o.candidates[1].peak_memory_gib());
  const std::string csv = FormatSweepCsv(o);
  EXPECT_NE(csv.find(",activation_offload,offload_optimizer_states,"),
            std::string::npos);
  auto bad = studies::SweepSpace::Load(WriteFile("bad_offload.textproto", R"(
base { model: "qwen3-30b-a3b" system: "dgx-h100" num_gpus: 8 }
activation_offload: ["expert_fc2"]
)")
                                           .string());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unknown module 'expert_fc2'"),
            std::string::npos)
      << bad.error().message;
}

TEST(Sweep, InvalidCandidateCarriesTheRule) {
  const studies::SweepOutcome o =
      Evaluate(LoadSpace("invalid.textproto", kSmall));
  // Index 24 = (3 * 4 + 0) * 2 + 0: TP8 EP1 PP1.
  const studies::SweepCandidate& c = o.candidates[24];
  EXPECT_EQ(c.tp(), 8);
  EXPECT_EQ(c.verdict(), "invalid");
  EXPECT_EQ(c.reason(),
            "layout.tensor_model_parallel_size: num_query_groups 4 is not "
            "divisible by tensor_model_parallel_size 8");
}

TEST(Sweep, OutOfMemoryMarginMatchesMemoryCommand) {
  // DeepSeek-V3 (671B parameters) on 8 H100s cannot fit: pruned, not
  // replayed, with the margin `moesim memory` prints for the same layout.
  const studies::SweepOutcome o = Evaluate(LoadSpace("oom.textproto", R"(
base { model: "deepseek-v3" system: "dgx-h100" num_gpus: 8 }
ep { values: [8] }
)"));
  ASSERT_EQ(o.candidates.size(), 1u);
  const studies::SweepCandidate& c = o.candidates[0];
  EXPECT_EQ(c.verdict(), "oom");
  studies::ScenarioFlags flags;
  flags.model = "deepseek-v3";
  flags.system = "dgx-h100";
  flags.gpus = 8;
  flags.ep = 8;
  auto scenario = studies::ResolveFlags(flags);
  ASSERT_TRUE(scenario.has_value()) << scenario.error().message;
  const studies::MemoryReport memory = studies::BuildMemoryReport(*scenario);
  EXPECT_DOUBLE_EQ(c.margin_gib(), memory.memory.margin_bytes / models::kGiB);
  EXPECT_LT(c.margin_gib(), 0);
  EXPECT_TRUE(c.reason().starts_with("out of memory by ")) << c.reason();
  EXPECT_EQ(c.step_time_s(), 0);  // not replayed
}

TEST(Sweep, ConstraintsExcludeWithTheRuleText) {
  std::string text = kSmall;
  text += "constraints { rule: \"tp*pp <= 2\" }\n";
  const studies::SweepOutcome o =
      Evaluate(LoadSpace("constraint.textproto", text));
  // Of the 15 valid: TP4 (5) and TP2 PP2 (2) have tp*pp > 2: 7 excluded,
  // 8 run.
  const auto counts = CountVerdicts(o);
  EXPECT_EQ(counts.at("excluded"), 7);
  EXPECT_EQ(counts.at("ok"), 8);
  // Index 16 = (2 * 4 + 0) * 2 + 0: TP4 EP1 PP1, tp*pp = 4.
  EXPECT_EQ(o.candidates[16].reason(),
            "constraint tp*pp <= 2: 4 <= 2 is false");
}

TEST(Sweep, RanksByTheMetric) {
  const studies::SweepOutcome o = Evaluate(LoadSpace("rank.textproto", kSmall));
  for (const char* metric :
       {"tokens_per_sec_per_gpu", "tflops_per_gpu", "step_time_s"}) {
    const auto ranked = studies::RankSweep(o, metric);
    ASSERT_EQ(ranked.size(), 15u);
    for (size_t i = 1; i < ranked.size(); ++i) {
      if (studies::HigherIsBetter(metric)) {
        EXPECT_GE(studies::MetricOf(*ranked[i - 1], metric),
                  studies::MetricOf(*ranked[i], metric));
      } else {
        EXPECT_LE(studies::MetricOf(*ranked[i - 1], metric),
                  studies::MetricOf(*ranked[i], metric));
      }
    }
  }
  // The text table's first row is the JSON's rank 1.
  const std::string json = FormatSweepJson(o, NoTiming());
  const std::string best =
      "{\"index\": " +
      std::to_string(
          studies::RankSweep(o, "tokens_per_sec_per_gpu").front()->index()) +
      ", \"rank\": 1,";
  EXPECT_NE(json.find(best), std::string::npos) << json;
}

TEST(Sweep, ParetoFrontIsNotDominated) {
  const studies::SweepOutcome o =
      Evaluate(LoadSpace("pareto.textproto", kSmall));
  const auto front = studies::SweepPareto(o, "tokens_per_sec_per_gpu");
  ASSERT_FALSE(front.empty());
  for (const studies::ParetoPoint& p : front) {
    EXPECT_EQ(p.front, "memory_headroom");  // one GPU count only
    for (const studies::SweepCandidate& c : o.candidates) {
      if (c.verdict() != "ok") continue;
      const bool dominates =
          c.tokens_per_sec_per_gpu() >= p.candidate->tokens_per_sec_per_gpu() &&
          c.margin_gib() >= p.candidate->margin_gib() &&
          (c.tokens_per_sec_per_gpu() > p.candidate->tokens_per_sec_per_gpu() ||
           c.margin_gib() > p.candidate->margin_gib());
      EXPECT_FALSE(dominates)
          << c.index() << " dominates " << p.candidate->index();
    }
  }
}

// A text cell that a spreadsheet would read as a formula (=, +, -, @ first:
// OWASP "CSV Injection") is written behind a ', numbers are not.
TEST(Sweep, CsvTextCellsCannotBeFormulas) {
  studies::SweepOutcome outcome;
  studies::SweepCandidate& c = outcome.candidates.emplace_back();
  c.set_index(0);
  c.set_recompute("=HYPERLINK(\"x\")");
  c.set_precision("+bf16");
  c.set_dispatcher("@alltoall");
  c.set_cuda_graph("-none");
  c.set_verdict("invalid");
  c.set_reason("=1+1");
  const std::string csv = FormatSweepCsv(outcome);
  EXPECT_NE(csv.find(",\"'=HYPERLINK(\"\"x\"\")\",'+bf16,'@alltoall,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",'-none,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",invalid,'=1+1,"), std::string::npos) << csv;
}

TEST(Sweep, SameBytesForAnyThreadCount) {
  const studies::SweepSpace space = LoadSpace("threads.textproto", kSmall);
  const studies::SweepOutcome one = Evaluate(space, 1),
                              two = Evaluate(space, 2);
  EXPECT_EQ(FormatSweepJson(one, NoTiming()), FormatSweepJson(two, NoTiming()));
  EXPECT_EQ(FormatSweepCsv(one), FormatSweepCsv(two));
  EXPECT_EQ(FormatSweepText(one, NoTiming()), FormatSweepText(two, NoTiming()));
}

TEST(Sweep, ShardsMergeIntoTheSingleRun) {
  const studies::SweepSpace space = LoadSpace("shards.textproto", kSmall);
  const studies::SweepOutcome single = Evaluate(space);
  std::vector<std::string> files;
  // Given out of order: the merge orders by candidate index.
  for (int k : {2, 0, 1}) {
    const studies::SweepOutcome part = Evaluate(space, 1, k, 3);
    files.push_back(WriteFile("part" + std::to_string(k) + ".json",
                              studies::FormatSweepShard(part, k, 3))
                        .string());
  }
  auto merged = studies::MergeSweepShards(files);
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  EXPECT_EQ(FormatSweepJson(*merged, NoTiming()),
            FormatSweepJson(single, NoTiming()));
  EXPECT_EQ(FormatSweepCsv(*merged), FormatSweepCsv(single));
  EXPECT_EQ(FormatSweepText(*merged, NoTiming()),
            FormatSweepText(single, NoTiming()));
  EXPECT_EQ(FormatSweepHtml(*merged, "tokens_per_sec_per_gpu"),
            FormatSweepHtml(single, "tokens_per_sec_per_gpu"));

  // A shard missing, or given twice, is refused. files: shards 2, 0, 1.
  auto missing = studies::MergeSweepShards({files[0], files[1]});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("shard 1/3 is missing"),
            std::string::npos)
      << missing.error().message;
  auto twice = studies::MergeSweepShards({files[0], files[0], files[1]});
  ASSERT_FALSE(twice.has_value());
  EXPECT_NE(twice.error().message.find("given twice"), std::string::npos);
}

TEST(Sweep, CommandLineShardAndMergeMatchTheSingleRun) {
  // End to end through the binary: moesim sweep vs --shard + sweep merge.
  const fs::path spec = WriteFile("cli.textproto", kSmall);
  const std::string bin = MOESIM_BINARY;
  const fs::path dir = Scratch();
  auto run = [&](const std::string& args, const fs::path& out) {
    const std::string command =
        bin + " " + args + " > " + out.string() + " 2>/dev/null";
    return std::system(command.c_str());
  };
  ASSERT_EQ(run("sweep " + spec.string() + " --json --no-timing -j 2",
                dir / "single.json"),
            0);
  ASSERT_EQ(
      run("sweep " + spec.string() + " --shard 0/2 -j 1", dir / "s0.json"), 0);
  ASSERT_EQ(
      run("sweep " + spec.string() + " --shard 1/2 -j 1", dir / "s1.json"), 0);
  ASSERT_EQ(run("sweep merge " + (dir / "s1.json").string() + " " +
                    (dir / "s0.json").string() + " --json --no-timing",
                dir / "merged.json"),
            0);
  const std::string single = ReadFile(dir / "single.json");
  EXPECT_FALSE(single.empty());
  EXPECT_EQ(single.find("\"seconds\""), std::string::npos);
  EXPECT_EQ(ReadFile(dir / "merged.json"), single);
}

TEST(Sweep, HtmlHasTheCharts) {
  // Two sequence lengths, so the chart against sequence length is drawn;
  // CP 4 at 4096 tokens is valid, CP 3 is not (4096 % 6 != 0).
  const studies::SweepOutcome o = Evaluate(LoadSpace("html.textproto", R"(
base { model: "qwen3-30b-a3b" system: "dgx-h100" num_gpus: 8 num_layers: 4
       layout { global_batch_size: 8 } }
seq_len { values: [4096, 8192] }
cp { values: [1, 2, 3] }
ep { values: [8] }
)"));
  const std::string html = FormatSweepHtml(o, "tokens_per_sec_per_gpu");
  EXPECT_NE(html.find("<svg id=\"heatmap\""), std::string::npos);
  EXPECT_NE(html.find("class=\"cell ok\""), std::string::npos);
  EXPECT_NE(html.find("class=\"cell invalid\""), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"seq-chart\""), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"))
      << "only the SVG namespace, no network reference";

  // Rendered by a headless browser when one is installed (optional).
  const char* chromium = "/usr/bin/chromium";
  if (!fs::exists(chromium)) GTEST_SKIP() << "no " << chromium;
  const fs::path page = WriteFile("report.html", html);
  const fs::path dom = Scratch() / "dom.html";
  const std::string command = std::string(chromium) +
                              " --headless --disable-gpu --no-sandbox "
                              "--dump-dom file://" +
                              page.string() + " > " + dom.string() +
                              " 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string rendered = ReadFile(dom);
  EXPECT_NE(rendered.find("id=\"heatmap\""), std::string::npos);
  EXPECT_NE(rendered.find("id=\"seq-chart\""), std::string::npos);
  EXPECT_NE(rendered.find("<rect class=\"cell ok\""), std::string::npos);
  EXPECT_NE(rendered.find("<polyline class=\"series\""), std::string::npos);
}

}  // namespace
}  // namespace moesim::tools
