// moesim._moesim: the command line (tools/command_line.h) as a Python
// function, so that every call of the moesim package runs the bytes the
// moesim binary runs. The interpreter lock is released while it works:
// replays and sweeps run on their own threads meanwhile.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "tools/command_line.h"
#include "util/allocator.h"

namespace {

// (status, stdout, stderr) of `moesim ARGS...`.
std::tuple<int, std::string, std::string> Main(
    const std::vector<std::string>& args) {
  std::vector<std::string> owned = {"moesim"};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  moesim::tools::CommandResult r = moesim::tools::RunCommandLine(
      static_cast<int>(owned.size()), argv.data(), /*join_mpi=*/false);
  return {r.status, std::move(r.out), std::move(r.err)};
}

}  // namespace

PYBIND11_MODULE(_moesim, m) {
  m.doc() = "moesim's command line, in process (use the moesim package)";
  m.def("main", &Main, pybind11::arg("args"),
        pybind11::call_guard<pybind11::gil_scoped_release>(),
        "Runs `moesim ARGS...`; returns (status, stdout, stderr).");
}
