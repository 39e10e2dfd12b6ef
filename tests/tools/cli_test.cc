// End-to-end checks of `moesim run`, `moesim memory`, `moesim topo`,
// `moesim validate` and `moesim calibrate fit` through the real binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/tools/json_value.h"
#include "tests/tools/run_moesim.h"

namespace {

using moesim::testing::JsonAt;
using moesim::testing::JsonNumberAt;
using moesim::testing::Output;
using moesim::testing::ParseJsonObject;
using moesim::testing::RunMoesim;

const std::string kDefault =
    std::string(MOESIM_SOURCE_DIR) + "/scenarios/default.textproto";

TEST(MemoryCommand, JsonHasTheContractKeys) {
  const Output o = RunMoesim("memory " + kDefault + " --json");
  ASSERT_EQ(o.status, 0);
  const auto root = ParseJsonObject(o.out);
  for (const char* key :
       {"params_total", "params_active", "model_flops_per_step",
        "model_flops_per_token", "stages", "peak_memory_gib", "capacity_gib",
        "fits"}) {
    EXPECT_NE(JsonAt(root, key), nullptr) << key;
  }
  // DeepSeek-V3 without MTP: 671,026M params (models.md); the default has PP8.
  EXPECT_NEAR(JsonNumberAt(root, "params_total"), 671026e6, 1e6);
  const auto* stages = JsonAt(root, "stages");
  ASSERT_NE(stages, nullptr);
  ASSERT_EQ(stages->list_value().values_size(), 8);
  // Each stage's peak under run --json's key; the top-level peak is the
  // busiest stage's.
  double busiest = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string at = "stages." + std::to_string(i) + ".";
    EXPECT_EQ(JsonNumberAt(root, at + "pp_rank"), i);
    for (const char* key : {"params_gib", "grads_gib", "optimizer_gib",
                            "activations_gib", "buffers_gib"}) {
      EXPECT_GE(JsonNumberAt(root, at + key), 0) << at << key;
    }
    busiest = std::max(busiest, JsonNumberAt(root, at + "peak_memory_gib"));
  }
  EXPECT_EQ(JsonNumberAt(root, "peak_memory_gib"), busiest);
}

// `moesim run --json`: the keys the replay issue promises, with the five
// communication kinds, and byte-identical output for the same input.
TEST(RunCommand, JsonHasTheContractKeysAndIsDeterministic) {
  const std::string args =
      "run --model qwen3-30b-a3b --system dgx-h100 --gpus 16 --pp 2 --ep 8 "
      "--gbs 64 --json";
  const Output o = RunMoesim(args);
  ASSERT_EQ(o.status, 0);
  const auto root = ParseJsonObject(o.out);
  for (const char* key :
       {"step_time_s", "tflops_per_gpu", "tokens_per_sec_per_gpu", "mfu",
        "peak_memory_gib", "fits", "bubble_fraction", "exposed_comm_s",
        "time_by_op_class_s", "stages"}) {
    EXPECT_NE(JsonAt(root, key), nullptr) << key;
  }
  const auto* exposed = JsonAt(root, "exposed_comm_s");
  ASSERT_NE(exposed, nullptr);
  EXPECT_EQ(exposed->struct_value().fields_size(), 5);
  for (const char* kind : {"tp", "cp", "ep", "dp", "pp"}) {
    EXPECT_GE(JsonNumberAt(root, std::string("exposed_comm_s.") + kind), 0)
        << kind;
  }
  EXPECT_EQ(RunMoesim(args).out, o.out);
}

// `moesim run` says when the GPU's sustained-load share applies: B200's
// calibration/tables/b200/sustained.csv row (0.853, flashinfer PR 2899) in
// the text and in --json; H100 has no row (1, no text line).
TEST(RunCommand, ReportsTheSustainedComputeRate) {
  const std::string b200 = "run --model llama3-8b --system dgx-b200 --gpus 8";
  const Output text = RunMoesim(b200);
  ASSERT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("sustained load       GEMM and attention at 85.3 % "
                          "of their benchmarked rate "
                          "(calibration/tables/b200/sustained.csv)"),
            std::string::npos)
      << text.out;
  const Output json = RunMoesim(b200 + " --json");
  EXPECT_EQ(JsonNumberAt(ParseJsonObject(json.out), "sustained_compute_rate"),
            0.853);
  const Output h100 =
      RunMoesim("run --model llama3-8b --system dgx-h100 --gpus 8 --json");
  EXPECT_EQ(JsonNumberAt(ParseJsonObject(h100.out), "sustained_compute_rate"),
            1);
  EXPECT_EQ(RunMoesim("run --model llama3-8b --system dgx-h100 --gpus 8")
                .out.find("sustained load"),
            std::string::npos);
}

// `moesim run --full --json`: the mode keys, the same step as the symmetric
// replay on this balanced layout (tests/sim/full_replay_test.cc says why),
// and byte-identical output for the same input, straggler included.
TEST(RunCommand, FullModeJsonIsDeterministicAndNamesTheMode) {
  const std::string base =
      "run --model qwen3-30b-a3b --system dgx-h100 --gpus 16 --pp 2 --ep 8 "
      "--gbs 64 --json";
  const Output symmetric = RunMoesim(base);
  const Output o = RunMoesim(base + " --full --straggler 5:1.2");
  ASSERT_EQ(o.status, 0);
  const auto full = ParseJsonObject(o.out);
  const auto* mode = JsonAt(full, "mode");
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ(mode->string_value(), "full");
  EXPECT_EQ(JsonNumberAt(full, "ranks_simulated"), 16);
  EXPECT_EQ(JsonNumberAt(full, "slowest_rank"), 5);
  EXPECT_GT(JsonNumberAt(full, "slowest_rank_compute_s"), 0);
  const auto sym = ParseJsonObject(symmetric.out);
  EXPECT_EQ(JsonAt(sym, "mode"), nullptr);
  EXPECT_EQ(RunMoesim(base + " --full --straggler 5:1.2").out, o.out);
  const Output balanced = RunMoesim(base + " --full");
  EXPECT_EQ(JsonNumberAt(ParseJsonObject(balanced.out), "step_time_s"),
            JsonNumberAt(sym, "step_time_s"));
}

// The value of `"key": ` in `block` (up to the next comma or brace).
std::string JsonField(const std::string& block, const std::string& key) {
  const size_t at = block.find("\"" + key + "\": ");
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 4;
  return block.substr(begin, block.find_first_of(",}", begin) - begin);
}

// One full validation of the shipped runs and pairs (the most expensive
// command the suite runs, so it runs once) checks the --json contract, every
// compared pair's direction, the memory rows within 10% MAPE (issue 7's bar)
// and the accuracy guard: TFLOPS/GPU MAPE up to 8K tokens and from 16K up,
// and memory MAPE, may not rise above the figures recorded in
// calibration/runs/accuracy.txt (rounded to 0.1, so the test allows the 0.05
// of rounding). Thread independence of the same output
// is DeterminismTest.ValidateJsonDoesNotDependOnThreads. Every pair the
// replay compares must have its direction right (15 of 15; host.csv's
// python_call_factor is fitted over the shipped runs themselves, so the
// rows' MAPE is in-sample for that one constant, the pairs' ratios are not
// part of the fit).
TEST(ValidateCommand, ShippedRunsJsonContractAndAccuracyGuard) {
  std::ifstream in(std::string(MOESIM_SOURCE_DIR) +
                   "/calibration/runs/accuracy.txt");
  ASSERT_TRUE(in);
  std::map<std::string, double> recorded;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string key;
    double value = 0;
    if (fields >> key >> value) recorded[key] = value;
  }
  ASSERT_TRUE(recorded.contains("tflops_mape_pct"));
  ASSERT_TRUE(recorded.contains("memory_mape_pct"));
  ASSERT_TRUE(recorded.contains("long_context_tflops_mape_pct"));

  const Output o = RunMoesim("validate --json --pairs shipped");
  ASSERT_EQ(o.status, 0);
  for (const char* key :
       {"\"rows\"", "\"predicted_tflops_per_gpu\"",
        "\"measured_tflops_per_gpu\"", "\"error_pct\"",
        "\"predicted_step_time_s\"", "\"measured_step_time_s\"",
        "\"predicted_peak_mem_gib\"", "\"measured_peak_mem_gib\"",
        "\"defaults_used\"", "\"mape_pct\"", "\"median_abs_error_pct\"",
        "\"skipped\"", "\"pairs\"", "\"direction_right\""}) {
    EXPECT_NE(o.out.find(key), std::string::npos) << key;
  }
  for (size_t at = o.out.find("\"pair_id\""); at != std::string::npos;) {
    const size_t next = o.out.find("\"pair_id\"", at + 1);
    const std::string pair = o.out.substr(at, next - at);
    if (!JsonField(pair, "predicted_a").empty()) {
      EXPECT_EQ(JsonField(pair, "direction_right"), "true") << pair;
    }
    at = next;
  }
  auto figure = [&](const std::string& key) {
    const size_t at = o.out.find("\"" + key + "\": ");
    EXPECT_NE(at, std::string::npos) << key;
    return at == std::string::npos
               ? 1e9
               : std::stod(o.out.substr(at + key.size() + 4));
  };
  // The short- and long-context figures: "mape_pct" inside the block.
  auto block_figure = [&](const std::string& block) {
    const size_t at = o.out.find("\"" + block + "\": {");
    EXPECT_NE(at, std::string::npos) << block;
    const std::string key = "\"mape_pct\": ";
    const size_t value = o.out.find(key, at);
    return at == std::string::npos || value == std::string::npos
               ? 1e9
               : std::stod(o.out.substr(value + key.size()));
  };
  EXPECT_LE(figure("memory_mape_pct"), 10.0);
  EXPECT_LE(block_figure("short_context"), recorded["tflops_mape_pct"] + 0.05);
  EXPECT_LE(block_figure("long_context"),
            recorded["long_context_tflops_mape_pct"] + 0.05);
  EXPECT_LE(figure("memory_mape_pct"), recorded["memory_mape_pct"] + 0.05);
}

// The line of calibration/runs/runs.csv whose id is `id` ("" if none), and
// the file's header line in `header`.
std::string ShippedRunsRow(const std::string& id, std::string& header) {
  std::ifstream in(std::string(MOESIM_SOURCE_DIR) +
                   "/calibration/runs/runs.csv");
  std::string line;
  std::getline(in, header);
  while (std::getline(in, line)) {
    if (line.starts_with(id + ",")) return line;
  }
  return "";
}

// One runs row through `moesim validate`: whether its --commands line
// carries `flag`, and the TFLOPS/GPU its --json predicts (0 when missing).
std::pair<bool, double> ValidateOneRow(const std::string& header,
                                       const std::string& row,
                                       const std::string& name,
                                       const std::string& flag) {
  const std::string csv = ::testing::TempDir() + "/" + name + ".csv";
  std::ofstream(csv) << header << "\n" << row << "\n";
  const Output listed = RunMoesim("validate " + csv + " --commands");
  EXPECT_EQ(listed.status, 0) << listed.out;
  const Output validated = RunMoesim("validate " + csv + " --json");
  EXPECT_EQ(validated.status, 0) << validated.out;
  const std::string tflops =
      JsonField(validated.out, "predicted_tflops_per_gpu");
  EXPECT_FALSE(tflops.empty()) << validated.out;
  return {listed.out.find(flag) != std::string::npos,
          tflops.empty() ? 0.0 : std::stod(tflops)};
}

// `moesim validate --commands` gives each row the `moesim run` command that
// replays it: run through the shell as printed, it predicts the TFLOPS/GPU
// `moesim validate --json` reports for the row (a one-row runs CSV, so the
// check stays cheap). The row is a shipped H100 row whose extras travel as
// Megatron arguments (--fp8-param-gather) and whose layout uses VPP.
TEST(ValidateCommand, CommandsReplayEachRowsPrediction) {
  std::string header;
  const std::string row =
      ShippedRunsRow("ps2604-llama3-70b-h100-64g-fp8-cs", header);
  ASSERT_FALSE(row.empty());
  const std::string csv = ::testing::TempDir() + "/commands_one_row.csv";
  std::ofstream(csv) << header << "\n" << row << "\n";

  const Output listed = RunMoesim("validate " + csv + " --commands");
  ASSERT_EQ(listed.status, 0) << listed.out;
  const std::string prefix = "ps2604-llama3-70b-h100-64g-fp8-cs\tmoesim run ";
  ASSERT_TRUE(listed.out.starts_with(prefix)) << listed.out;
  const std::string args =
      listed.out.substr(prefix.size(), listed.out.find('\n') - prefix.size());
  EXPECT_NE(args.find("--megatron-args"), std::string::npos) << args;

  const Output replayed = RunMoesim("run " + args + " --json");
  ASSERT_EQ(replayed.status, 0) << args;
  const Output validated = RunMoesim("validate " + csv + " --json");
  ASSERT_EQ(validated.status, 0);
  const std::string run_tflops = JsonField(replayed.out, "tflops_per_gpu");
  const std::string row_tflops =
      JsonField(validated.out, "moesim_count_tflops_per_gpu");
  ASSERT_FALSE(run_tflops.empty());
  EXPECT_NEAR(std::stod(run_tflops), std::stod(row_tflops), 0.05);
  EXPECT_NEAR(
      std::stod(JsonField(replayed.out, "tokens_per_sec_per_gpu")),
      std::stod(JsonField(validated.out, "predicted_tokens_per_sec_per_gpu")),
      0.05);
}

// A row that publishes tokens/s is compared in its own FLOPs count. The
// shipped GPT-OSS-120B GB300 BF16 row of container 26.04 logs 524 TFLOPS at
// 19,275 tokens/s/GPU: 27.19 GF/token, Bridge's formula of that time
// (experts non-gated, sliding window ignored), against moesim's 32.63
// (today's formula, tests/models/flops_test.cc). Its predicted TFLOPS is
// then the predicted tokens/s times 27.19 GF, so the error is the tokens/s
// error; with the tokens/s cell blanked the row falls back to moesim's
// count, 32.63 / 27.19 = 1.20 times higher.
// A row without tokens/s whose flops_formula is nemo-2024 (NeMo's
// long-sequence tables) is compared in NeMo's count: predicted tokens/s x
// s L h^2 (12 + 12 g/a + 18 f/h + 12 s/h + 6 V/(L h)) / s, here Llama3-8B
// at 128K (L 32, h 4096, a 32, g 8, f 14336, V 128256: the 2024 formula
// models/flops.h cites). --group-by takes seq_len, cp and cp_comm_type.
TEST(ValidateCommand, NemoRowsAreComparedInNemosCountAndGroupByContext) {
  std::string header;
  const std::string row =
      ShippedRunsRow("nemo2504-llama3-8b-b200-128k", header);
  ASSERT_FALSE(row.empty());
  const std::string csv = ::testing::TempDir() + "/nemo_row.csv";
  std::ofstream(csv) << header << "\n" << row << "\n";
  const Output o = RunMoesim("validate " + csv + " --json");
  ASSERT_EQ(o.status, 0) << o.out;
  EXPECT_EQ(JsonField(o.out, "flops_count"), "\"nemo-2024\"");
  const double tokens =
      std::stod(JsonField(o.out, "predicted_tokens_per_sec_per_gpu"));
  const double s = 131072, L = 32, h = 4096;
  const double per_token =
      L * h * h *
      (12 + 12 * 8.0 / 32 + 18 * 14336 / h + 12 * s / h + 6 * 128256 / (L * h));
  EXPECT_NEAR(std::stod(JsonField(o.out, "predicted_tflops_per_gpu")),
              tokens * per_token / 1e12, 0.01);
  const Output grouped = RunMoesim(
      "validate " + csv + " --markdown --group-by seq_len,cp,cp_comm_type");
  ASSERT_EQ(grouped.status, 0) << grouped.out;
  EXPECT_NE(grouped.out.find("| 131072 | 4 | p2p | 1 |"), std::string::npos)
      << grouped.out;
  // --min-seq-len / --max-seq-len select rows by tokens: the 128K row is
  // long context, and a bound above it leaves none.
  const Output json =
      RunMoesim("validate " + csv + " --json --max-seq-len 8192");
  ASSERT_EQ(json.status, 0) << json.out;
  EXPECT_NE(json.out.find("\"long_context\": {\"rows\": 0,"), std::string::npos)
      << json.out;
  const Output kept =
      RunMoesim("validate " + csv + " --json --min-seq-len 16384");
  EXPECT_NE(kept.out.find("\"long_context\": {\"rows\": 1,"), std::string::npos)
      << kept.out;
}

TEST(ValidateCommand, RowsWithTokensPerSecondAreComparedInTheirOwnFlopsCount) {
  std::string header;
  const std::string row =
      ShippedRunsRow("ps2604-gpt-oss-120b-gb300-64g-bf16", header);
  ASSERT_FALSE(row.empty());
  const std::string with_tokens = ::testing::TempDir() + "/flops_row.csv";
  std::ofstream(with_tokens) << header << "\n" << row << "\n";
  // Blank the tokens/s cell (measured_tokens_per_sec_per_gpu; its index in
  // the header, which has no quoted cells).
  size_t column = 0;
  {
    std::istringstream names(header);
    std::string name;
    while (std::getline(names, name, ',') &&
           name != "measured_tokens_per_sec_per_gpu") {
      ++column;
    }
  }
  std::vector<std::string> cells;
  {
    std::string cell;
    bool quoted = false;
    for (char c : row) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) {
        cells.push_back(cell);
        cell.clear();
      } else {
        cell += c;
      }
    }
    cells.push_back(cell);
  }
  ASSERT_EQ(cells[column], "19275");
  cells[column].clear();
  std::string blanked;
  for (size_t i = 0; i < cells.size(); ++i) {
    blanked += (i ? "," : "") + cells[i];
  }
  const std::string without_tokens =
      ::testing::TempDir() + "/flops_row_no_tokens.csv";
  std::ofstream(without_tokens) << header << "\n" << blanked << "\n";

  const Output own = RunMoesim("validate " + with_tokens + " --json");
  ASSERT_EQ(own.status, 0) << own.out;
  EXPECT_EQ(JsonField(own.out, "flops_count"), "\"row\"");
  const double tokens =
      std::stod(JsonField(own.out, "predicted_tokens_per_sec_per_gpu"));
  const double predicted =
      std::stod(JsonField(own.out, "predicted_tflops_per_gpu"));
  EXPECT_NEAR(predicted, tokens * 524.0 / 19275.0, 0.01);
  EXPECT_NEAR(std::stod(JsonField(own.out, "error_pct")),
              (tokens / 19275.0 - 1) * 100, 0.01);

  const Output moesim = RunMoesim("validate " + without_tokens + " --json");
  ASSERT_EQ(moesim.status, 0) << moesim.out;
  EXPECT_EQ(JsonField(moesim.out, "flops_count"), "\"moesim\"");
  EXPECT_NEAR(
      std::stod(JsonField(moesim.out, "predicted_tflops_per_gpu")) / predicted,
      32.63 / (524.0 * 1e3 / 19275.0), 0.01);
}

// --group-by also takes what the replay says of a row. Three shipped rows:
// Llama3-70B on DGX H100 (dense: 0 local experts), Qwen3-30B-A3B on GB200
// EP8 (128 experts / 8 = 16) and DeepSeek-V3 on GB200 EP64 (256 / 64 = 4).
// The hosts are the systems' HostLink.cpu (topology/systems/dgx-h100 and
// gb200-nvl72.textproto); the local-expert groups list in numeric order (4
// before 16); each row's JSON wall is the one `moesim run` reports for its
// command.
TEST(ValidateCommand, GroupsByHostWallAndLocalExperts) {
  std::string header, rows;
  for (const char* id : {"ps2604-llama3-70b-h100-64g-fp8-cs",
                         "ps2606-qwen3-30b-a3b-gb200-8g-mxfp8",
                         "ps2606-deepseek-v3-gb200-256g-mxfp8"}) {
    const std::string row = ShippedRunsRow(id, header);
    ASSERT_FALSE(row.empty()) << id;
    rows += row + "\n";
  }
  const std::string csv = ::testing::TempDir() + "/group_rows.csv";
  std::ofstream(csv) << header << "\n" << rows;

  const Output by_host = RunMoesim("validate " + csv + " --group-by host");
  ASSERT_EQ(by_host.status, 0) << by_host.out;
  auto group_rows = [](const std::string& out, const std::string& key) {
    const size_t at = out.find("\n" + key + " ");
    if (at == std::string::npos) return -1;
    std::istringstream rest(out.substr(at + key.size() + 2));
    int n = -1;
    rest >> n;
    return n;
  };
  EXPECT_EQ(group_rows(by_host.out, "Intel Xeon Platinum 8480C"), 1)
      << by_host.out;
  EXPECT_EQ(group_rows(by_host.out, "NVIDIA Grace"), 2) << by_host.out;

  const Output by_experts =
      RunMoesim("validate " + csv + " --group-by local_experts");
  ASSERT_EQ(by_experts.status, 0) << by_experts.out;
  EXPECT_EQ(group_rows(by_experts.out, "0"), 1) << by_experts.out;
  EXPECT_EQ(group_rows(by_experts.out, "4"), 1) << by_experts.out;
  EXPECT_EQ(group_rows(by_experts.out, "16"), 1) << by_experts.out;
  EXPECT_LT(by_experts.out.find("\n4 "), by_experts.out.find("\n16 "));

  const Output json = RunMoesim("validate " + csv + " --json");
  ASSERT_EQ(json.status, 0);
  const Output commands = RunMoesim("validate " + csv + " --commands");
  ASSERT_EQ(commands.status, 0);
  std::istringstream lines(commands.out);
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    const std::string id = line.substr(0, line.find('\t'));
    const std::string args = line.substr(line.find("moesim run ") + 11);
    const Output run = RunMoesim("run " + args + " --json");
    ASSERT_EQ(run.status, 0) << args;
    const std::string wall = JsonField(run.out, "wall");
    ASSERT_FALSE(wall.empty());
    const std::string row = json.out.substr(json.out.find("\"" + id + "\""));
    EXPECT_EQ(JsonField(row, "wall"), wall) << id;
    ++checked;
  }
  EXPECT_EQ(checked, 3);

  const Output bad =
      moesim::testing::RunMoesimStderr("validate " + csv + " --group-by gpus");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("unknown key 'gpus' (model, gpu, precision, "
                         "confidence, container, cuda_graph, seq_len, cp, "
                         "cp_comm_type, wall, host, local_experts)"),
            std::string::npos)
      << bad.out;
}

// A row's batch_p2p_sync=False (the runs' `extra`; Megatron-LM has no flag
// for it) travels as moesim's --batch-p2p-sync 0 and lets the host run
// ahead across the exchanges of the shipped DeepSeek-V3 B200 PP16 row (no
// virtual stages): the prediction is faster than with the default sync.
TEST(ValidateCommand, BatchP2pSyncKeyReachesTheReplay) {
  std::string header;
  const std::string row =
      ShippedRunsRow("ps2604-deepseek-v3-b200-256g-mxfp8", header);
  ASSERT_FALSE(row.empty());
  const std::string key = "manual_gc=True";
  ASSERT_NE(row.find(key), std::string::npos);
  std::string off = row;
  off.replace(off.find(key), key.size(), key + ";batch_p2p_sync=False");
  const char* flag = "--batch-p2p-sync 0";
  const auto [synced_flag, synced_tflops] =
      ValidateOneRow(header, row, "p2p_sync_default", flag);
  const auto [free_flag, free_tflops] =
      ValidateOneRow(header, off, "p2p_sync_off", flag);
  EXPECT_FALSE(synced_flag);
  EXPECT_TRUE(free_flag);
  EXPECT_GT(free_tflops, synced_tflops * 1.01);
}

// A row's fp8_dot_product_attention=True (the runs' `extra`) travels as
// --fp8-dot-product-attention and prices core attention from the MXFP8
// attention rows: the shipped Qwen3-30B GB300 card row predicts more
// TFLOPS/GPU than the same row with the key set False (GB300's MXFP8 cuDNN
// attention runs 1.2-1.5x its BF16, calibration/tables/gb300/attention.csv).
TEST(ValidateCommand, Fp8DotProductAttentionReachesTheReplay) {
  std::string header;
  const std::string row =
      ShippedRunsRow("card-qwen3-30b-a3b-gb300-8g-mxfp8", header);
  ASSERT_FALSE(row.empty());
  const std::string key = "fp8_dot_product_attention=True";
  ASSERT_NE(row.find(key), std::string::npos);
  std::string off = row;
  off.replace(off.find(key), key.size(), "fp8_dot_product_attention=False");
  const char* flag = "--fp8-dot-product-attention";
  const auto [on_flag, on_tflops] =
      ValidateOneRow(header, row, "fp8_attention_on", flag);
  const auto [off_flag, off_tflops] =
      ValidateOneRow(header, off, "fp8_attention_off", flag);
  EXPECT_TRUE(on_flag);
  EXPECT_FALSE(off_flag);
  EXPECT_GT(on_tflops, off_tflops * 1.01);
}

// --routing-histogram reaches the replay: equal counts for Moonlight's 64
// experts replay exactly as uniform dropless routing; two hot experts on
// EP rank 0 (800 and 400 tokens against 100 for the others, 7,500 in all:
// rank 0 holds 8 experts, 1,800 tokens, 1.92x the mean 937.5) slow the
// step, since that rank's exchanges and grouped GEMMs gate every layer.
TEST(RunCommand, RoutingHistogramSetsTheBusiestRank) {
  const std::string uniform = ::testing::TempDir() + "/histogram_equal.txt";
  const std::string hot = ::testing::TempDir() + "/histogram_hot.txt";
  {
    std::ofstream u(uniform), h(hot);
    u << "# tokens per expert\n";
    for (int e = 0; e < 64; ++e) {
      u << 100 << (e % 8 == 7 ? "\n" : ", ");
      h << (e == 0 ? 800 : e == 1 ? 400 : 100) << "\n";
    }
  }
  const std::string base =
      "run --model moonlight-16b-a3b --system dgx-h100 --gpus 16 --ep 8 "
      "--gbs 64 --routing dropless_natural --json";
  const Output plain = RunMoesim(base);
  const Output equal = RunMoesim(base + " --routing-histogram " + uniform);
  const Output skewed = RunMoesim(base + " --routing-histogram " + hot);
  ASSERT_EQ(plain.status, 0);
  ASSERT_EQ(equal.status, 0) << equal.out;
  ASSERT_EQ(skewed.status, 0) << skewed.out;
  EXPECT_EQ(JsonField(equal.out, "step_time_s"),
            JsonField(plain.out, "step_time_s"));
  EXPECT_GT(std::stod(JsonField(skewed.out, "step_time_s")),
            std::stod(JsonField(plain.out, "step_time_s")));
}

TEST(MemoryCommand, SameInputGivesByteIdenticalOutput) {
  const Output a = RunMoesim("memory " + kDefault);
  const Output b = RunMoesim("memory " + kDefault);
  ASSERT_EQ(a.status, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST(MemoryCommand, OutOfMemoryIsAVerdictNotAnError) {
  // Qwen3-235B on 8 H100s with no model parallelism: ~235B params x 18 B
  // cannot fit in 80 GB; a valid layout, so exit 0 and an OOM verdict.
  const Output o = RunMoesim(
      "memory --model qwen3-235b-a22b --system dgx-h100 --gpus 8 --json");
  ASSERT_EQ(o.status, 0);
  EXPECT_NE(o.out.find("\"fits\": false"), std::string::npos);
}

TEST(MemoryCommand, FlagsOverrideTheScenarioFile) {
  const Output base = RunMoesim("memory " + kDefault + " --json");
  const Output more_cp =
      RunMoesim("memory " + kDefault +
                " --json --gpus 512 --cp 64 --hierarchical-cp-sizes 8,8");
  ASSERT_EQ(more_cp.status, 0);
  EXPECT_NE(base.out, more_cp.out);
}

}  // namespace

namespace {

// `moesim topo` on the DeepSeek-V3 seed layout (256 H100, TP1 CP32 EP32 PP8):
// the keys the issue names, and the CP span derived in placement_test.cc
// (4 domains, 8 members each, across the spine).
TEST(TopoCommand, JsonHasTheContractKeysAndGroups) {
  const Output o = RunMoesim(
      "topo dgx-h100 --gpus 256 --tp 1 --cp 32 --ep 32 --pp 8 --json");
  ASSERT_EQ(o.status, 0) << o.out;
  for (const char* key :
       {"\"gpus\": 256", "\"nvlink_domains\": 32", "\"nics\": 256",
        "\"switches\"", "\"leaf\": 8", "\"spine\": 4",
        "\"bisection_gbps\": 6400", "\"groups\""}) {
    EXPECT_NE(o.out.find(key), std::string::npos) << key << "\n" << o.out;
  }
  EXPECT_NE(o.out.find("{\"kind\": \"cp\", \"size\": 32, \"groups\": 8, "
                       "\"domains_spanned\": 4, \"members_per_domain\": 8, "
                       "\"tier\": \"spine\""),
            std::string::npos)
      << o.out;
}

TEST(TopoCommand, SameInputGivesByteIdenticalOutputAndDot) {
  const std::string dot_a = ::testing::TempDir() + "/topo_a.dot";
  const std::string dot_b = ::testing::TempDir() + "/topo_b.dot";
  const Output a =
      RunMoesim("topo gb200-nvl72 --gpus 144 --tp 4 --dot " + dot_a);
  const Output b =
      RunMoesim("topo gb200-nvl72 --gpus 144 --tp 4 --dot " + dot_b);
  ASSERT_EQ(a.status, 0);
  EXPECT_EQ(a.out, b.out);
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const std::string da = read(dot_a);
  EXPECT_FALSE(da.empty());
  EXPECT_EQ(da, read(dot_b));
  EXPECT_NE(da.find("digraph"), std::string::npos);
}

// The published-NCCL table passes (every row within 15%: exit 0).
TEST(TopoCommand, CheckPasses) {
  const Output o = RunMoesim("topo --check");
  EXPECT_EQ(o.status, 0) << o.out;
  EXPECT_NE(o.out.find("ok: every row within 15%"), std::string::npos);
}

// ---- Calibration profiles ------------------------------------------------

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A runs CSV (calibration/runs/SCHEMA.md columns) of small steps: a dense
// and a MoE step on 8 H100s, two short-sequence MoE steps on 8 B200s where
// the host's launches matter, with made-up measured TFLOPS/GPU.
std::string SmallRunsCsv(const std::string& name) {
  std::string csv =
      "id,model,gpu,num_gpus,seq_len,mbs,gbs,tp,cp,ep,etp,pp,vpp,precision,"
      "dispatcher,recompute,cuda_graph,ep_overlap,cpu_offload,routing,"
      "mtp_layers,pp_layout,extra,measured_tflops_per_gpu,"
      "measured_step_time_s,measured_peak_mem_gib,confidence\n";
  const char* rows[] = {
      "dense,llama3-8b,h100,8,4096,1,16,1,1,1,1,1,,,,,,,,,,,,380,,,high",
      "moe,qwen3-30b-a3b,h100,8,4096,1,16,1,1,8,1,1,,,,,,,,,,,,120,,,high",
      "moe-1k,qwen3-30b-a3b,b200,8,1024,1,16,1,1,8,1,1,,,,,,,,,,,,90,,,medium",
      "moon-512,moonlight-16b-a3b,b200,8,512,1,16,1,1,8,1,1,,,,,,,,,,,,,0.06,,"
      "high"};
  for (const char* row : rows) csv += std::string(row) + "\n";
  return WriteTemp(name, csv);
}

// The identity profile gives the same bytes as no profile, for `run` and
// `validate`; gemm_efficiency 0.5 changes them.
TEST(Calibration, IdentityProfileGivesTheSameBytes) {
  const std::string identity =
      WriteTemp("identity.textproto", "name: \"identity\"\nfactors { }\n");
  const std::string half =
      WriteTemp("half_gemm.textproto", "factors { gemm_efficiency: 0.5 }\n");
  const std::string run =
      "run --model qwen3-30b-a3b --system dgx-h100 --gpus 16 --pp 2 --ep 8 "
      "--gbs 64 --json";
  const Output plain = RunMoesim(run);
  ASSERT_EQ(plain.status, 0);
  EXPECT_EQ(RunMoesim(run + " --calibration " + identity).out, plain.out);
  EXPECT_NE(RunMoesim(run + " --calibration " + half).out, plain.out);
  const std::string validate =
      "validate --json -j 2 " + SmallRunsCsv("identity_runs.csv");
  const Output base = RunMoesim(validate);
  ASSERT_EQ(base.status, 0);
  EXPECT_EQ(RunMoesim(validate + " --calibration " + identity).out, base.out);
  EXPECT_NE(RunMoesim(validate + " --calibration " + half).out, base.out);
}

// `calibrate fit`: the profile written parses back (validate takes it), its
// header reports cross-validated error beside the training error and the
// baseline, and the bytes do not depend on the thread count.
TEST(Calibration, FitWritesAProfileWithCrossValidatedErrorDeterministically) {
  const std::string runs = SmallRunsCsv("fit_runs.csv");
  const std::string out1 = ::testing::TempDir() + "/fit_j1.textproto";
  const std::string out2 = ::testing::TempDir() + "/fit_j2.textproto";
  const std::string fit =
      "calibrate fit --runs " + runs +
      " --factors gemm_efficiency,host_overhead_scale --folds 2 --json";
  const Output a = RunMoesim(fit + " -j 1 --out " + out1);
  const Output b = RunMoesim(fit + " -j 2 --out " + out2);
  ASSERT_EQ(a.status, 0);
  ASSERT_EQ(b.status, 0);
  const std::string profile = ReadText(out1);
  EXPECT_EQ(ReadText(out2), profile);
  const std::string json_without_out = a.out.substr(0, a.out.find("\"out\""));
  EXPECT_EQ(b.out.substr(0, b.out.find("\"out\"")), json_without_out);
  for (const char* key :
       {"\"rows\": 4", "\"tflops_rows\": 3", "\"baseline_mape_pct\"",
        "\"training_mape_pct\"", "\"cv_mape_pct\"", "\"folds\"", "\"factors\"",
        "\"evaluations\""}) {
    EXPECT_NE(a.out.find(key), std::string::npos) << key << "\n" << a.out;
  }
  EXPECT_NE(profile.find("2-fold cross-validated"), std::string::npos)
      << profile;
  EXPECT_NE(profile.find("no profile"), std::string::npos);
  EXPECT_NE(profile.find("gemm_efficiency: "), std::string::npos) << profile;
  EXPECT_EQ(
      RunMoesim("validate -j 2 " + runs + " --calibration " + out1).status, 0);
}

}  // namespace

namespace {

// The Megatron-MoE model zoo's Kimi-K2 128K recipe on 128 GB200s
// (tests/data/megatron_args/moezoo_bp__kimi_k2_gb200_128k.sh): the model
// YAML (moezoo__kimi_k2.yaml) with the script's variables, the script's own
// arguments, and what the zoo's sbatch_benchmarking.sh appends for
// DISPATCHER=hybridep, PR=mxfp8 and OPTIMIZER_OFFLOAD=0
// (yanring/Megatron-MoE-ModelZoo@78930f0c1a sbatch_benchmarking.sh).
std::string KimiK2Gb200Recipe(const std::string& drop = "") {
  const std::string data =
      std::string(MOESIM_SOURCE_DIR) + "/tests/data/megatron_args/";
  std::string script_args =
      "--recompute-granularity selective --recompute-modules mla_up_proj mlp "
      "layernorm moe_act --pipeline-model-parallel-layout 'Et|t|(tt|)*29tL' "
      "--fine-grained-activation-offloading --offload-modules expert_fc1 "
      "--te-rng-tracker --offload-optimizer-states "
      "--moe-permute-fusion-into-hybridep --moe-router-force-load-balancing "
      "--mock-data --tokenizer-type NullTokenizer --vocab-size 163840";
  if (!drop.empty()) script_args.erase(script_args.find(drop), drop.size());
  const std::string sbatch_args =
      "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend "
      "hybridep --moe-hybridep-num-sms 32 --fp8-recipe mxfp8 --fp8-format "
      "e4m3 --fp8-param-gather --reuse-grad-buf-for-mxfp8-param-ag "
      "--overlap-grad-reduce --overlap-param-gather "
      "--use-precision-aware-optimizer --main-grads-dtype fp32 "
      "--main-params-dtype fp32 --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 "
      "--moe-router-padding-for-quantization";
  return "--megatron-args-file " + data +
         "moezoo__kimi_k2.yaml --var TP=16 --var PP=2 --var EP=64 --var CP=1 "
         "--var MBS=1 --var GBS=128 --var SEQ_LEN=131072 --var VPP=16 "
         "--system gb200-nvl72 --gpus 128 --megatron-args \"" +
         script_args + " " + sbatch_args + "\"";
}

// It fits with its offloading, and is out of memory without it (by 23 GiB,
// as issue 43 found when moesim ignored the two flags). The saving is
// linear_fc1's MXFP8 input per stored MoE layer: 131,072 / TP 16 = 8,192
// tokens x top-8 = 65,536 rows x 7,168 x 1 B = 0.4375 GiB, so a whole
// number of layers; the host holds it and the optimizer state, per GPU and
// per 4-GPU GB200 tray.
TEST(MemoryCommand, KimiK2RecipeFitsWithItsOffloading) {
  const Output with = RunMoesim("memory " + KimiK2Gb200Recipe() + " --json");
  ASSERT_EQ(with.status, 0);
  EXPECT_NE(with.out.find("\"fits\": true"), std::string::npos);
  const Output text = RunMoesim("memory " + KimiK2Gb200Recipe());
  ASSERT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("activation offload expert_fc1, optimizer states "
                          "offloaded"),
            std::string::npos)
      << text.out;
  const size_t saved = text.out.find("expert_fc1 ", text.out.find("saved on"));
  ASSERT_NE(saved, std::string::npos) << text.out;
  const double gib = std::stod(text.out.substr(saved + 11));
  const double layers = gib / 0.4375;
  EXPECT_NEAR(layers, std::round(layers), 0.25) << gib;
  EXPECT_GT(layers, 30);
  EXPECT_NE(text.out.find("per node of 4 GPUs"), std::string::npos);
  const Output without =
      RunMoesim("memory " +
                KimiK2Gb200Recipe(
                    "--fine-grained-activation-offloading --offload-modules "
                    "expert_fc1 --te-rng-tracker --offload-optimizer-states"));
  ASSERT_EQ(without.status, 0);
  EXPECT_NE(without.out.find("OUT OF MEMORY"), std::string::npos);
}

}  // namespace
