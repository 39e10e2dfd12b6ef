// Runs the built `moesim` binary (MOESIM_BINARY, set by tests/CMakeLists.txt)
// with a shell argument string and captures stdout (or stderr) and the exit
// status; the end-to-end tests of tests/tools share it.
#ifndef MOESIM_TESTS_TOOLS_RUN_MOESIM_H_
#define MOESIM_TESTS_TOOLS_RUN_MOESIM_H_

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace moesim::testing {

struct Output {
  std::string out;  // stdout; stderr is discarded
  int status = -1;  // exit code, -1 when killed by a signal
};

// `redirect` is appended to the command: it picks what `out` captures.
inline Output RunMoesimCapturing(const std::string& args,
                                 const std::string& redirect) {
  Output o;
  const std::string command =
      std::string(MOESIM_BINARY) + " " + args + redirect;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return o;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    o.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

inline Output RunMoesim(const std::string& args) {
  return RunMoesimCapturing(args, " 2>/dev/null");
}

// `out` holds stderr instead of stdout.
inline Output RunMoesimStderr(const std::string& args) {
  return RunMoesimCapturing(args, " 2>&1 >/dev/null");
}

}  // namespace moesim::testing

#endif  // MOESIM_TESTS_TOOLS_RUN_MOESIM_H_
