// moesim: the command line (tools/command_line.h). A report that cannot be
// written to stdout (a closed pipe, a full disk) exits 1 with the reason.
#include <cstdio>
#include <iostream>
#include <new>

#include "tools/command_line.h"
#include "util/allocator.h"
#include "util/output.h"

namespace {

// stdout could not take the report (a closed pipe, a full disk), or memory
// ran out: not an input error, but no success either.
constexpr int kOutputError = 1;

int Main(int argc, char** argv) {
  moesim::util::InstallOutputSignalHandlers();
  const moesim::tools::CommandResult result =
      moesim::tools::RunCommandLine(argc, argv, /*join_mpi=*/true);
  std::cerr << result.err;
  if (!result.out.empty()) {
    if (auto ok = moesim::util::WriteStdout(result.out); !ok) {
      std::cerr << "moesim: " << ok.error().message << "\n";
      return kOutputError;
    }
  }
  return result.status;
}

}  // namespace

// Out of memory (a machine or `ulimit -v` smaller than the run needs) is one
// line and exit 1, not an uncaught std::bad_alloc; worker threads carry it
// here (util/thread_errors.h).
int main(int argc, char** argv) {
  moesim::util::TuneAllocator();
  try {
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    // Not an input error (exit 2): the same input runs on a larger machine.
    std::fputs(
        "moesim: out of memory: the run needs more than this process may "
        "allocate (ulimit -v, the machine); try a smaller step (--gbs), "
        "fewer threads (-j) or no --trace\n",
        stderr);
    return kOutputError;
  }
}
