// Machine-readable output (issue 29): every command's --json output is one
// RFC 8259 value (util::CheckStrictJson, the strict checker moesim applies
// to HF configs), integers print exactly (no %g exponent for 10^6 and
// more), and what moesim prints does not depend on the user's locale.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <clocale>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "child_process.h"
#include "util/json_check.h"

namespace {

namespace fs = std::filesystem;
using moesim::testing_util::ChildResult;

const std::string kSource = MOESIM_SOURCE_DIR;

ChildResult Moesim(std::vector<std::string> args) {
  return moesim::testing_util::RunMoesim(std::move(args),
                                         std::chrono::minutes(5));
}

class JsonOutputTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("moesim_json_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  // Runs `args` and checks exit 0 and strict JSON on stdout.
  std::string StrictJson(const std::vector<std::string>& args) {
    const ChildResult r = Moesim(args);
    EXPECT_TRUE(r.exited && r.exit_code == 0) << args[0] << ": " << r.err;
    const auto ok = moesim::util::CheckStrictJson(r.out, args[0], 64);
    EXPECT_TRUE(ok) << args[0] << ": " << (ok ? "" : ok.error().message);
    EXPECT_FALSE(r.out.empty()) << args[0];
    return r.out;
  }
  fs::path dir_;
};

const std::vector<std::string> kQwen = {"--model",  "qwen3-30b-a3b", "--system",
                                        "dgx-h100", "--gpus",        "8"};

std::vector<std::string> With(std::vector<std::string> head,
                              const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

TEST_F(JsonOutputTest, EveryCommandPrintsStrictJson) {
  StrictJson({"run", kSource + "/scenarios/default.textproto", "--json"});
  StrictJson(With({"run"}, With(kQwen, {"--full", "--json"})));
  StrictJson(With({"memory"}, With(kQwen, {"--json"})));
  StrictJson({"topo", "gb200-nvl72", "--gpus", "144", "--tp", "4", "--json"});
  StrictJson({"topo", "--check", "--json"});
  StrictJson(With({"advise"}, With(kQwen, {"--json", "--max-steps", "2"})));
  StrictJson({"validate-kernels", "--gpu", "h100", "--json"});
  StrictJson({"validate", "--json"});
  StrictJson(With({"sweep"}, With(kQwen, {"--tp", "1,2", "--json"})));

  // sweep merge of the two shards of a small space.
  std::vector<std::string> parts;
  for (const char* shard : {"0/2", "1/2"}) {
    const ChildResult r = Moesim(
        With({"sweep"},
             With(kQwen, {"--tp", "1,2", "--ep", "1,8", "--shard", shard})));
    ASSERT_TRUE(r.exited && r.exit_code == 0) << r.err;
    parts.push_back(
        (dir_ / (std::string("part") + shard[0] + ".json")).string());
    std::ofstream(parts.back()) << r.out;
  }
  StrictJson({"sweep", "merge", parts[0], parts[1], "--json"});

  // validate on the first four shipped runs of at most 8 GPUs.
  std::ifstream in(kSource + "/calibration/runs/runs.csv");
  std::string line, subset;
  std::getline(in, line);
  subset = line + "\n";
  int kept = 0;
  while (kept < 4 && std::getline(in, line)) {
    if (line.find(",8,") == std::string::npos) continue;
    subset += line + "\n";
    ++kept;
  }
  const fs::path runs = dir_ / "runs.csv";
  std::ofstream(runs) << subset;
  StrictJson({"validate", runs.string(), "--json", "-j", "1"});
}

// Integers of 10^6 and more print whole: the sweep's seq_len of 2^20 was
// "1.04858e+06" through %.6g.
TEST_F(JsonOutputTest, LargeIntegersAreExact) {
  const std::string out = StrictJson(With(
      {"sweep"}, With(kQwen, {"--seq", "1048576", "--json", "--no-timing"})));
  EXPECT_NE(out.find("\"seq_len\": 1048576"), std::string::npos) << out;
  EXPECT_EQ(out.find("e+06"), std::string::npos) << out;
}

// A locale whose decimal point is a comma (de_DE, compiled with localedef
// into the test's folder, as Debian's `locales` package allows) set in
// every LC_ variable: moesim's output must be byte-identical to its output
// under LC_ALL=C. The test first shows, in its own process, that the
// locale is real (printf then writes 1,5), so a pass is not vacuous.
TEST_F(JsonOutputTest, OutputDoesNotDependOnTheLocale) {
  if (!fs::exists("/usr/share/i18n/locales/de_DE") ||
      std::system("command -v localedef >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no localedef or de_DE source (Debian package locales)";
  }
  const fs::path locales = dir_ / "locales";
  fs::create_directories(locales);
  const std::string make = "localedef -i de_DE -f UTF-8 '" +
                           (locales / "de_DE.UTF-8").string() +
                           "' >/dev/null 2>&1";
  ASSERT_EQ(std::system(make.c_str()), 0) << make;

  ::setenv("LOCPATH", locales.c_str(), 1);
  ASSERT_NE(std::setlocale(LC_ALL, "de_DE.UTF-8"), nullptr);
  char text[16];
  std::snprintf(text, sizeof(text), "%.1f", 1.5);
  std::setlocale(LC_ALL, "C");
  ASSERT_STREQ(text, "1,5") << "the de_DE locale did not take effect";

  const std::vector<std::vector<std::string>> commands = {
      {"run", kSource + "/scenarios/default.textproto", "--json"},
      With({"memory"}, kQwen),
      With({"sweep"}, With(kQwen, {"--tp", "1,2", "--no-timing"})),
  };
  std::vector<std::string> in_c;
  ::setenv("LC_ALL", "C", 1);
  for (const auto& args : commands) in_c.push_back(Moesim(args).out);
  ::setenv("LC_ALL", "de_DE.UTF-8", 1);
  ::setenv("LANG", "de_DE.UTF-8", 1);
  ::setenv("LC_NUMERIC", "de_DE.UTF-8", 1);
  for (size_t i = 0; i < commands.size(); ++i) {
    const ChildResult r = Moesim(commands[i]);
    EXPECT_TRUE(r.exited && r.exit_code == 0) << r.err;
    EXPECT_FALSE(r.out.empty());
    EXPECT_EQ(r.out, in_c[i]) << commands[i][0] << " differs under de_DE";
  }
  ::unsetenv("LC_ALL");
  ::unsetenv("LANG");
  ::unsetenv("LC_NUMERIC");
  ::unsetenv("LOCPATH");
}

}  // namespace
