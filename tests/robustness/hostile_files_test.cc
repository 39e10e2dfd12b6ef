// Files that are not what they seem (issue 29): FIFOs and pipes as inputs,
// outputs that name the command's own input or each other, a full disk or a
// closed stdout, a signal in the middle of a long command. The real binary
// runs as a child under the catalogue's limits; each case builds its files
// in a fresh folder, since a FIFO cannot be checked in.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"

namespace {

namespace fs = std::filesystem;
using moesim::testing_util::ChildLimits;
using moesim::testing_util::ChildResult;
using moesim::testing_util::RunChild;

const std::string kDefaultScenario =
    std::string(MOESIM_SOURCE_DIR) + "/scenarios/default.textproto";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class HostileFilesTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("moesim_hostile_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    scenario_ = (dir_ / "s.textproto").string();
    fs::copy_file(kDefaultScenario, scenario_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ChildResult Moesim(std::vector<std::string> args) {
    args.insert(args.begin(), MOESIM_BINARY);
    ChildLimits limits;
    limits.address_space_bytes = uint64_t{1} << 30;
    limits.wall = std::chrono::milliseconds(30'000);
    return RunChild(args, limits);
  }

  // Files in the folder other than `keep` (a temporary output left behind).
  std::vector<std::string> Leftovers(const std::vector<std::string>& keep) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string name = e.path().filename().string();
      if (std::find(keep.begin(), keep.end(), name) == keep.end())
        out.push_back(name);
    }
    return out;
  }

  fs::path dir_;
  std::string scenario_;
};

// A FIFO nobody writes to used to block forever at open(); it now reads as
// empty at once, and the scenario parser says what is missing.
TEST_F(HostileFilesTest, FifoWithoutWriterIsReadAsEmptyAtOnce) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", fifo},
        {"run", "--model", fifo, "--system", "dgx-h100", "--gpus", "8"},
        {"validate", fifo},
        {"calibrate", "import-nccl-tests", fifo}}) {
    const ChildResult r = Moesim(args);
    ASSERT_TRUE(r.exited) << args[0] << ": signal " << r.signal;
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_LT(r.elapsed.count(), 5000) << args[0];
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

// A FIFO whose writer never closes it: refused after ReadFile's 3 s bound
// (util/textproto.h kMaxInputReadSeconds), not a hang.
TEST_F(HostileFilesTest, PipeThatNeverEndsIsRefusedInBoundedTime) {
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // This process holds the FIFO open for writing (O_RDWR opens a FIFO at
  // once on Linux) before moesim starts, and writes nothing: a writer that
  // is there, not one that may come later.
  const int writer = ::open(fifo.c_str(), O_RDWR);
  ASSERT_GE(writer, 0);
  const ChildResult r = Moesim({"run", fifo});
  ::close(writer);
  ASSERT_TRUE(r.exited) << "signal " << r.signal;
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(fifo + ": cannot read file: no end of input within 3 s"),
            std::string::npos)
      << r.err;
  EXPECT_LT(r.elapsed.count(), 5000);
}

// --trace naming the scenario it reads, under another spelling: refused
// before anything is written, and the scenario is intact.
TEST_F(HostileFilesTest, OutputThatIsTheInputIsRefusedAndInputKept) {
  const std::string before = Slurp(scenario_);
  const std::string other_spelling =
      (dir_ / "." / ".." / dir_.filename() / "s.textproto").string();
  const ChildResult r = Moesim({"run", scenario_, "--trace", other_spelling});
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("flags: --trace: '" + other_spelling +
                       "' is the input file read as '" + scenario_ + "'"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(Slurp(scenario_), before);
}

// --csv and --html to one file would clobber each other.
TEST_F(HostileFilesTest, TwoOutputsToOneFileAreRefused) {
  const std::string out = (dir_ / "out").string();
  const ChildResult r =
      Moesim({"sweep", "--model", "llama3-8b", "--system", "dgx-h100", "--gpus",
              "8", "--tp", "1,2", "--csv", out, "--html", out});
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("flags: --html: '" + out + "' is also the --csv output"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// A full disk: the report does not reach stdout, so no exit 0; an output
// file on a full device fails with the reason.
// A reader that has closed the pipe: the write fails with EPIPE and moesim
// exits 1 with the reason, not killed by SIGPIPE (exit status 141 in sh).
// The reader closes its end at once and moesim starts a second later, so
// the pipe is closed before moesim writes (moesim's `topo` answers in
// milliseconds: started at once, it could fill the pipe first and exit 0).
TEST_F(HostileFilesTest, ClosedPipeIsAnErrorNotASignal) {
  // moesim's stdout is a pipe whose reader has closed it; its status and
  // stderr come back on the shell's stderr.
  const std::vector<std::string> sh = {
      "/bin/bash", "-c",
      std::string("{ sleep 1; '") + MOESIM_BINARY +
          "' topo dgx-h100 --gpus 8 --json; echo \"status $?\" >&2; } | "
          "(exec 0<&-; sleep 3)"};
  ChildLimits limits;
  limits.wall = std::chrono::milliseconds(30'000);
  ChildResult r = RunChild(sh, limits);
  ASSERT_TRUE(r.exited);
  EXPECT_NE(r.err.find("status 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("moesim: stdout: cannot write: Broken pipe"),
            std::string::npos)
      << r.err;
}

// An output path that is a symbolic link is written through: the file it
// names gets the output (a dangling link's target is made), the link stays.
// /dev/stdout (a link to this process's descriptor) is written in place and
// never replaced, whatever the user's rights.
TEST_F(HostileFilesTest, OutputLinksAreWrittenThroughNotReplaced) {
  const fs::path target = dir_ / "target.dot", link = dir_ / "link.dot";
  const fs::path dangling = dir_ / "dangling.dot";
  { std::ofstream(target) << "old"; }
  fs::create_symlink("target.dot", link);
  fs::create_symlink("made.dot", dangling);
  for (const fs::path& out : {link, dangling}) {
    ChildResult r =
        Moesim({"topo", "dgx-h100", "--gpus", "8", "--dot", out.string()});
    ASSERT_TRUE(r.exited);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(out)) << out;
  }
  std::ifstream written(target), made(dir_ / "made.dot");
  std::string first, second;
  std::getline(written, first);
  std::getline(made, second);
  EXPECT_EQ(first, "digraph cluster {");
  EXPECT_EQ(second, "digraph cluster {");

  const fs::path redirected = dir_ / "redirected.dot";
  const std::vector<std::string> sh = {
      "/bin/sh", "-c",
      std::string("exec '") + MOESIM_BINARY +
          "' topo dgx-h100 --gpus 8 --dot /dev/stdout > '" +
          redirected.string() + "'"};
  ChildLimits limits;
  limits.wall = std::chrono::milliseconds(30'000);
  ChildResult r = RunChild(sh, limits);
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink("/dev/stdout"));
  EXPECT_GT(fs::file_size(redirected), 100u);
}

// Out of memory (an address-space limit the traced default replay does not
// fit in) is one line and exit 1, not an uncaught std::bad_alloc (abort).
TEST_F(HostileFilesTest, OutOfMemoryIsOneLineNotAnAbort) {
  if (moesim::testing_util::BuiltWithAsan())
    GTEST_SKIP() << "ASan reserves terabytes of address space";
  ChildLimits limits;
  limits.address_space_bytes = uint64_t{150} << 20;
  limits.wall = std::chrono::milliseconds(30'000);
  ChildResult r = RunChild(
      {MOESIM_BINARY, "run", scenario_, "--trace", (dir_ / "t.json").string()},
      limits);
  ASSERT_TRUE(r.exited) << "signal " << r.signal << ": " << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(r.err.starts_with("moesim: out of memory:")) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST_F(HostileFilesTest, FullDiskIsAnErrorNotASuccess) {
  // A small layout: the replay's seconds (tens under ASan on a loaded
  // machine, with the default scenario) are not what is tested.
  const std::vector<std::string> small = {"--model",  "llama3-8b", "--system",
                                          "dgx-h100", "--gpus",    "8"};
  std::vector<std::string> sh = {
      "/bin/sh", "-c",
      std::string("exec '") + MOESIM_BINARY +
          "' run --model llama3-8b --system dgx-h100 --gpus 8 > /dev/full"};
  ChildLimits limits;
  limits.wall = std::chrono::milliseconds(30'000);
  ChildResult r = RunChild(sh, limits);
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("moesim: stdout: cannot write: No space left on device"),
            std::string::npos)
      << r.err;
  std::vector<std::string> traced = {"run"};
  traced.insert(traced.end(), small.begin(), small.end());
  traced.insert(traced.end(), {"--trace", "/dev/full"});
  r = Moesim(traced);
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("flags: --trace: cannot write '/dev/full': No space "
                       "left on device"),
            std::string::npos)
      << r.err;
}

// A long sweep killed midway (SIGTERM, as a batch scheduler does, then
// SIGINT, as Ctrl-C does) leaves either no --csv file or a complete one,
// and no temporary file beside it. A complete CSV ends with a newline after
// its last candidate row.
TEST_F(HostileFilesTest, KilledSweepLeavesNoHalfWrittenOutput) {
  for (int sig : {SIGTERM, SIGINT}) {
    const std::string csv = (dir_ / "sweep.csv").string();
    fs::remove(csv);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      const int null_fd = ::open("/dev/null", O_WRONLY);
      ::dup2(null_fd, 1);
      ::dup2(null_fd, 2);
      ::execl(MOESIM_BINARY, MOESIM_BINARY, "sweep", "--model", "deepseek-v3",
              "--system", "dgx-h100", "--gpus", "256:1024", "--tp", "1:8",
              "--ep", "8:64", "--pp", "4:16", "--seq", "4096:16384", "--csv",
              csv.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    ::kill(child, sig);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (fs::exists(csv)) {
      // The sweep finished before the signal: the file must be whole.
      const std::string text = Slurp(csv);
      ASSERT_FALSE(text.empty());
      EXPECT_EQ(text.back(), '\n');
    } else {
      EXPECT_TRUE(WIFSIGNALED(status)) << "status " << status;
    }
    EXPECT_EQ(Leftovers({"s.textproto", "sweep.csv"}),
              std::vector<std::string>{})
        << "signal " << sig;
  }
}

// advise prints its final layout as flags; a model path holding shell
// syntax (a ';' command, a quote) must come out quoted, so pasting the line
// runs moesim on that path and nothing else.
TEST_F(HostileFilesTest, AdvisePrintedFlagsRerunUnderShWithHostilePath) {
  const fs::path folder = dir_ / "a;touch PWNED;b'c";
  fs::create_directories(folder);
  fs::copy_file(std::string(MOESIM_SOURCE_DIR) +
                    "/tests/data/hf/qwen3-30b-a3b/config.json",
                folder / "config.json");
  ChildResult r =
      Moesim({"advise", "--model", (folder / "config.json").string(),
              "--system", "dgx-h100", "--gpus", "8"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.err;
  const std::string marker = "moesim flags:  ";
  const size_t at = r.out.find(marker);
  ASSERT_NE(at, std::string::npos) << r.out;
  const size_t end = r.out.find('\n', at);
  const std::string flags =
      r.out.substr(at + marker.size(), end - at - marker.size());
  ChildLimits limits;
  limits.wall = std::chrono::milliseconds(30'000);
  r = RunChild({"/bin/sh", "-c",
                "cd '" + dir_.string() + "' && exec '" + MOESIM_BINARY +
                    "' memory " + flags},
               limits);
  EXPECT_TRUE(r.exited && r.exit_code == 0) << flags << "\n" << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "PWNED")) << flags;
  // The model takes its folder's name: the whole hostile path arrived.
  EXPECT_TRUE(r.out.starts_with("model a;touch PWNED;b'c on 8 x dgx-h100"))
      << r.out.substr(0, 200);
}

// validate --commands prints a `moesim run` line per row; a runs CSV whose
// `extra` holds shell syntax (a quote, backquotes, a $(...)) must come out
// quoted: the line re-runs under sh -c, runs nothing else, and moesim
// receives the value with its quote.
TEST_F(HostileFilesTest, ValidateCommandsRerunUnderShWithHostileValue) {
  std::ifstream in(std::string(MOESIM_SOURCE_DIR) +
                   "/calibration/runs/runs.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  // The first row's `extra` (column 24) gains a hostile offload count.
  // (`extra` splits at ';', so the value has none.)
  const std::string hostile =
      "activation_cpu_offloading_layers=2'`touch PWNED`$(touch PWNED2)";
  size_t field = 0, at = 0;
  for (bool quoted = false; at < row.size() && field < 23; ++at) {
    if (row[at] == '"') quoted = !quoted;
    if (row[at] == ',' && !quoted) ++field;
  }
  ASSERT_EQ(field, 23u);
  row.insert(at, hostile + ";");
  const fs::path runs = dir_ / "runs.csv";
  std::ofstream(runs) << header << "\n" << row << "\n";

  ChildResult r = Moesim({"validate", runs.string(), "--commands"});
  ASSERT_TRUE(r.exited && r.exit_code == 0) << r.err;
  const size_t tab = r.out.find('\t');
  ASSERT_NE(tab, std::string::npos) << r.out;
  const std::string command = r.out.substr(tab + 1, r.out.find('\n') - tab - 1);
  ASSERT_TRUE(command.starts_with("moesim run ")) << command;
  ChildLimits limits;
  limits.wall = std::chrono::milliseconds(60'000);
  r = RunChild({"/bin/sh", "-c",
                "cd '" + dir_.string() + "' && exec '" + MOESIM_BINARY + "' " +
                    command.substr(std::string("moesim ").size())},
               limits);
  EXPECT_FALSE(fs::exists(dir_ / "PWNED")) << command;
  EXPECT_FALSE(fs::exists(dir_ / "PWNED2")) << command;
  // The value reached moesim with its lone quote, which --megatron-args'
  // own shell-like parser then refuses.
  EXPECT_TRUE(r.exited && r.exit_code == 2) << command << "\n" << r.err;
  EXPECT_EQ(r.err,
            "moesim: flags: --megatron-args: unterminated single quote\n")
      << command;
}

}  // namespace
