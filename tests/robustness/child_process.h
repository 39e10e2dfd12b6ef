// Runs a command as a child process under resource limits, for tests that
// feed bad input to the real `moesim` binary.
#ifndef MOESIM_TESTS_ROBUSTNESS_CHILD_PROCESS_H_
#define MOESIM_TESTS_ROBUSTNESS_CHILD_PROCESS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace moesim::testing_util {

struct ChildLimits {
  // Address space of the child (RLIMIT_AS), bytes; 0: no limit. Ignored in
  // AddressSanitizer builds, whose shadow memory reserves terabytes.
  uint64_t address_space_bytes = 0;
  // Wall-clock limit; the child is killed (SIGKILL) when it runs longer.
  std::chrono::milliseconds wall{10'000};
};

struct ChildResult {
  bool exited = false;     // exited normally (not by a signal or timeout)
  int exit_code = -1;      // when exited
  int signal = 0;          // when killed by a signal (SIGKILL on timeout)
  bool timed_out = false;  // ran past ChildLimits::wall
  std::string out;         // stdout
  std::string err;         // stderr
  std::chrono::milliseconds elapsed{0};
};

// Runs `argv` (argv[0] is the program path; no shell) with stdin closed,
// capturing stdout and stderr, under `limits`.
ChildResult RunChild(const std::vector<std::string>& argv,
                     const ChildLimits& limits);

// True in AddressSanitizer builds (GCC or clang).
bool BuiltWithAsan();

#ifdef MOESIM_BINARY
// Runs the `moesim` binary under test with `args` (after the program name)
// within `wall`, with no address-space limit.
inline ChildResult RunMoesim(std::vector<std::string> args,
                             std::chrono::milliseconds wall) {
  args.insert(args.begin(), MOESIM_BINARY);
  ChildLimits limits;
  limits.wall = wall;
  return RunChild(args, limits);
}
#endif

}  // namespace moesim::testing_util

#endif  // MOESIM_TESTS_ROBUSTNESS_CHILD_PROCESS_H_
