// Determinism: the same input gives byte-identical output. `moesim run` is
// a deterministic discrete-event replay (event order by time, then insertion
// sequence), so repeated runs must agree byte for byte, in its JSON report
// and its Chrome trace; `moesim validate` replays rows on -j threads into
// per-row slots, so its output may not depend on the thread count.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "child_process.h"

namespace {

namespace fs = std::filesystem;
using moesim::testing_util::ChildLimits;
using moesim::testing_util::ChildResult;
using moesim::testing_util::RunChild;

const std::string kSource = MOESIM_SOURCE_DIR;

ChildResult Moesim(std::vector<std::string> args) {
  return moesim::testing_util::RunMoesim(std::move(args),
                                         std::chrono::minutes(5));
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class DeterminismTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("moesim_determinism_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  fs::path dir_;
};

// The default scenario (DeepSeek-V3, 256 H100s, every feature the README
// lists) three times: one JSON report.
TEST_F(DeterminismTest, RunJsonIsByteIdenticalAcrossRuns) {
  std::string first;
  for (int i = 0; i < 3; ++i) {
    const ChildResult r =
        Moesim({"run", kSource + "/scenarios/default.textproto", "--json"});
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.err;
    ASSERT_FALSE(r.out.empty());
    if (i == 0) {
      first = r.out;
    } else {
      EXPECT_EQ(r.out, first) << "run " << i << " differs from run 0";
    }
  }
}

// A pipelined MoE layout (EP8, PP2, VPP2: interleaved 1F1B, all-to-alls on
// the EP stream) with the flow network model: the Chrome trace, every event
// of every stream, twice.
TEST_F(DeterminismTest, RunTraceIsByteIdenticalAcrossRuns) {
  std::vector<std::string> traces;
  for (int i = 0; i < 2; ++i) {
    const fs::path trace = dir_ / ("trace" + std::to_string(i) + ".json");
    const ChildResult r =
        Moesim({"run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100",
                "--gpus", "16", "--ep", "8", "--pp", "2", "--vpp", "2",
                "--network", "flow", "--json", "--trace", trace.string()});
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.err;
    traces.push_back(Slurp(trace));
    ASSERT_GT(traces.back().size(), 1000u);
  }
  EXPECT_TRUE(traces[0] == traces[1]) << "the two traces differ";
}

// `validate -j1` and `-j2` on the first eight shipped runs of at most 64
// GPUs (several models and GPUs, a few seconds of replay): the same JSON.
TEST_F(DeterminismTest, ValidateJsonDoesNotDependOnThreads) {
  std::ifstream in(kSource + "/calibration/runs/runs.csv");
  std::string header, line, subset;
  std::getline(in, header);
  subset = header + "\n";
  const size_t gpus_column = [&] {
    size_t column = 0;
    for (size_t at = 0; header.compare(at, 9, "num_gpus,") != 0; ++column)
      at = header.find(',', at) + 1;
    return column;
  }();
  int kept = 0;
  while (kept < 8 && std::getline(in, line)) {
    // Rows quote free text only after num_gpus, so the first commas split.
    size_t at = 0;
    for (size_t c = 0; c < gpus_column; ++c) at = line.find(',', at) + 1;
    const int gpus = std::atoi(line.c_str() + at);
    if (gpus > 0 && gpus <= 64) {
      subset += line + "\n";
      ++kept;
    }
  }
  ASSERT_EQ(kept, 8);
  const fs::path runs = dir_ / "runs.csv";
  std::ofstream(runs) << subset;
  const ChildResult one =
      Moesim({"validate", runs.string(), "--json", "-j", "1"});
  const ChildResult two =
      Moesim({"validate", runs.string(), "--json", "-j", "2"});
  ASSERT_TRUE(one.exited && one.exit_code == 0) << one.err;
  ASSERT_TRUE(two.exited && two.exit_code == 0) << two.err;
  ASSERT_NE(one.out.find("\"rows\""), std::string::npos) << one.out;
  EXPECT_EQ(one.out, two.out);
}

}  // namespace
