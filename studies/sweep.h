// A sweep (what `moesim sweep` runs, tools/sweep.h): every candidate of a
// sweep space (studies/sweep_spec.h) judged and, where it can run,
// replayed; ranked by a metric, with the Pareto fronts; a shard evaluates
// one slice, and merging the shards gives what one process would have.
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
#ifndef MOESIM_STUDIES_SWEEP_H_
#define MOESIM_STUDIES_SWEEP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "studies/sweep_result.pb.h"
#include "studies/sweep_spec.h"
#include "util/error.h"

namespace moesim::studies {

// How EvaluateSweep runs: threads, the shard, a progress bar.
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

// The partial result of a shard, as JSON (studies/sweep_result.proto).
std::string FormatSweepShard(const SweepOutcome& outcome, int shard,
                             int num_shards);

// The rules a candidate row of a shard obeys, as EvaluateSweep writes it:
// a known verdict; a reason exactly when not ok; replay metrics only when
// ok, positive, finite and under the physical ceilings; an analytic peak
// for ok and oom rows (the margin >= 0 when ok, < 0 when oom); layout
// sizes within what a scenario may hold and, when ok, a mesh that divides
// the GPUs; known words. Error: "<field>: <rule>" (studies/sweep_row_check.cc).
[[nodiscard]] util::Result<void> CheckCandidateRow(const SweepCandidate& c);

// Joins shard files: every shard 0..N-1 exactly once, all of one space.
// Errors name the file and what does not match.
[[nodiscard]] util::Result<SweepOutcome> MergeSweepShards(
    const std::vector<std::string>& files);
// The same for shard texts already read; names[i] names texts[i] in errors.
[[nodiscard]] util::Result<SweepOutcome> MergeSweepTexts(
    const std::vector<std::string>& names,
    const std::vector<std::string>& texts);

// a better than b: larger when `higher`, else smaller.
bool Better(double a, double b, bool higher);

// The knobs besides the parallel sizes that differ between the resolved
// (not invalid) candidates.
struct Varying {
  bool gpus = false, seq = false, mbs = false, gbs = false, recompute = false,
       precision = false, dispatcher = false, offload = false, graph = false,
       ep_overlap = false, activation_offload = false, state_offload = false;
};
Varying VaryingOf(const SweepOutcome& outcome);

// The metric's value of a candidate, and whether larger is better
// (tokens_per_sec_per_gpu, tflops_per_gpu) or smaller (step_time_s).
double MetricOf(const SweepCandidate& c, std::string_view metric);
bool HigherIsBetter(std::string_view metric);

// The `ok` candidates, best first by `metric`; ties by index.
std::vector<const SweepCandidate*> RankSweep(const SweepOutcome& outcome,
                                             std::string_view metric);

struct ParetoPoint {
  // "memory_headroom": the metric against margin_gib (both the more the
  // better, step time the less). "num_gpus": fewer GPUs against more total
  // throughput (metric x num_gpus; step time the less), only when the
  // candidates' GPU counts differ.
  std::string front;
  const SweepCandidate* candidate = nullptr;
  double value = 0;  // the metric, or the total for "num_gpus"
};

// Non-dominated `ok` candidates of each front; ordered by the metric, best
// first ("num_gpus": by GPU count, fewest first).
std::vector<ParetoPoint> SweepPareto(const SweepOutcome& outcome,
                                     std::string_view metric);

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_SWEEP_H_
