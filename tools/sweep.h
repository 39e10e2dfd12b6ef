// `moesim sweep`: every candidate of a sweep space (tools/sweep_spec.h)
// judged and, where it can run, replayed; ranked by a metric, with the
// Pareto fronts; `--shard K/N` evaluates one slice and `moesim sweep merge`
// joins the slices into what one process would have printed.
//
// Each candidate gets one verdict, checked in this order:
//   invalid   the scenario rules refuse it (scenarios::Resolve); reason =
//             the rule, "<field>: <rule>";
//   excluded  it breaks a constraint of the sweep; reason = the constraint;
//   oom       the analytic memory model (models::EstimateMemory, what
//             `moesim memory` prints) puts the busiest stage above the GPU's
//             capacity; not replayed; reason = "out of memory by X GiB";
//   failed    the replay returned an error; reason = its message;
//   ok        replayed (sim::Replay, analytical network).
//
// Determinism: candidates are judged and replayed on N threads, each result
// written into its candidate's slot, so every output is the same bytes for
// any thread count and for any split into shards. Only the `seconds` figure
// (wall time) differs between runs; `--no-timing` leaves it out.
#ifndef MOESIM_TOOLS_SWEEP_H_
#define MOESIM_TOOLS_SWEEP_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/sweep_flags.h"
#include "tools/sweep_group.h"
#include "tools/sweep_result.pb.h"
#include "tools/sweep_spec.h"
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

struct SweepOptions {
  int jobs = 1;
  int shard = 0;  // evaluate candidates with index % num_shards == shard
  int num_shards = 1;
  bool progress = false;  // a progress bar on stderr
};

// The evaluated candidates of a space (or of one shard), in index order.
struct SweepOutcome {
  std::string model, system, fingerprint;
  int64_t total = 0;  // candidates in the whole space
  double seconds = 0;
  std::vector<SweepCandidate> candidates;
};

// Judges and replays the candidates of `space` that `options` selects.
// REQUIRES: options.jobs >= 1, 0 <= shard < num_shards.
SweepOutcome EvaluateSweep(const SweepSpace& space,
                           const SweepOptions& options);

// The partial result of a shard, as JSON (tools/sweep_result.proto).
std::string FormatSweepShard(const SweepOutcome& outcome, int shard,
                             int num_shards);

// Joins shard files: every shard 0..N-1 exactly once, all of one space.
// Errors name the file and what does not match.
// The rules a candidate row of a shard obeys, as EvaluateSweep writes it:
// a known verdict; a reason exactly when not ok; replay metrics only when
// ok, positive, finite and under the physical ceilings; an analytic peak
// for ok and oom rows (the margin >= 0 when ok, < 0 when oom); layout
// sizes within what a scenario may hold and, when ok, a mesh that divides
// the GPUs; known words. Error: "<field>: <rule>" (tools/sweep_row_check.cc).
[[nodiscard]] util::Result<void> CheckCandidateRow(const SweepCandidate& c);

[[nodiscard]] util::Result<SweepOutcome> MergeSweepShards(
    const std::vector<std::string>& files);
// The same for shard texts already read; names[i] names texts[i] in errors.
[[nodiscard]] util::Result<SweepOutcome> MergeSweepTexts(
    const std::vector<std::string>& names,
    const std::vector<std::string>& texts);

// The space `flags` give: the spec file, else the space flags. A file and
// any space flag together is refused ("flags: --tp: ...").
[[nodiscard]] util::Result<SweepSpace> LoadSweepSpace(const SweepFlags& flags);

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
