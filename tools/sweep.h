// `moesim sweep` and `moesim sweep merge`: the flags, and the commands that
// load a space (a spec file or flags), run the study (studies/sweep.h) and
// print its ranking, Pareto fronts and files.
#ifndef MOESIM_TOOLS_SWEEP_H_
#define MOESIM_TOOLS_SWEEP_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "studies/sweep.h"
#include "tools/sweep_flags.h"
#include "tools/sweep_group.h"
#include "util/error.h"

namespace moesim::tools {

// What the output flags ask for; shared by `sweep` and `sweep merge`.
struct SweepOutputFlags {
  bool json = false;
  std::string csv_file;   // empty: none
  std::string html_file;  // empty: none
  int top = 10;
  std::string metric = "tokens_per_sec_per_gpu";
  bool no_timing = false;
};

// The space: a spec file, or flags (tools/sweep_flags.h), not both.
struct SweepFlags {
  std::string spec_file;
  SweepSpaceFlags space;
  SweepOutputFlags output;
  int jobs = 0;       // 0: one per hardware thread
  std::string shard;  // "K/N"; empty: the whole space
};

struct SweepMergeFlags {
  std::vector<std::string> parts;
  SweepOutputFlags output;
};

void AddSweepFlags(CLI::App& app, SweepFlags& flags);
void AddSweepMergeFlags(CLI::App& app, SweepMergeFlags& flags);

// The space `flags` give: the spec file, else the space flags. A file and
// any space flag together is refused ("flags: --tp: ...").
[[nodiscard]] util::Result<studies::SweepSpace> LoadSweepSpace(
    const SweepFlags& flags);

// The commands: stdout text (or JSON), --csv / --html files written. With a
// `group` of N > 1 processes (mpirun), every rank evaluates its shard, rank 0
// merges and returns (and writes) what one process would, and the other
// ranks return "" and write nothing; --shard is then refused.
[[nodiscard]] util::Result<std::string> RunSweep(const SweepFlags& flags,
                                                 SweepGroup* group = nullptr);
[[nodiscard]] util::Result<std::string> RunSweepMerge(
    const SweepMergeFlags& flags);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_SWEEP_H_
