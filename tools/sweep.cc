#include "tools/sweep.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>

#include "models/memory.h"
#include "scenarios/limits.h"
#include "scenarios/vocabulary.h"
#include "sim/replay.h"
#include "studies/jobs.h"
#include "studies/physical_limits.h"
#include "tools/cli_checks.h"
#include "tools/sweep_format.h"
#include "tools/text_format.h"
#include "util/output.h"
#include "util/textproto.h"
#include "util/thread_errors.h"

namespace moesim::tools {
namespace {

using util::Result;

Result<std::pair<int, int>> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  int k = -1, n = 0;
  try {
    size_t used_k = 0, used_n = 0;
    if (slash != std::string::npos) {
      k = std::stoi(text.substr(0, slash), &used_k);
      n = std::stoi(text.substr(slash + 1), &used_n);
    }
    if (slash == std::string::npos || used_k != slash ||
        used_n != text.size() - slash - 1)
      k = -1;
  } catch (const std::exception&) {
    k = -1;
  }
  if (k < 0 || n < 1 || k >= n) {
    return std::unexpected(FlagError(
        "--shard", "needs K/N with 0 <= K < N, e.g. 0/4, got '" + text + "'"));
  }
  return std::pair{k, n};
}

// Writes --csv and --html, then returns what goes on stdout.
Result<std::string> Emit(const studies::SweepOutcome& outcome,
                         const SweepOutputFlags& f) {
  if (auto ok = util::CheckOutputTargets(
          {{"--csv", f.csv_file}, {"--html", f.html_file}});
      !ok)
    return std::unexpected(ok.error());
  if (!f.csv_file.empty()) {
    if (auto ok =
            util::WriteOutputFile(f.csv_file, FormatSweepCsv(outcome), "--csv");
        !ok)
      return std::unexpected(ok.error());
  }
  if (!f.html_file.empty()) {
    if (auto ok = util::WriteOutputFile(
            f.html_file, FormatSweepHtml(outcome, f.metric), "--html");
        !ok)
      return std::unexpected(ok.error());
  }
  return f.json ? FormatSweepJson(outcome, f) : FormatSweepText(outcome, f);
}

void AddOutputFlags(CLI::App& app, SweepOutputFlags& f) {
  app.add_flag("--json", f.json,
               "Print JSON (every candidate and the Pareto fronts)");
  app.add_option("--csv", f.csv_file,
                 "Write every candidate with its verdict and reason as CSV");
  app.add_option("--html", f.html_file,
                 "Write a self-contained HTML report (inline SVG charts)");
  app.add_option("--top", f.top, "Rows of the ranked table (default 10)")
      ->check(IntInRange(1));
  app.add_option("--metric", f.metric,
                 "Rank by tokens_per_sec_per_gpu (default), tflops_per_gpu "
                 "or step_time_s")
      ->check(CLI::IsMember(
          {"tokens_per_sec_per_gpu", "tflops_per_gpu", "step_time_s"}));
  app.add_flag("--no-timing", f.no_timing,
               "Leave the wall time out, so the output is the same bytes "
               "every run");
}

}  // namespace

void AddSweepFlags(CLI::App& app, SweepFlags& f) {
  app.add_option("spec", f.spec_file,
                 "Sweep .textproto (schema scenarios/sweep.proto); or give "
                 "the space as flags");
  AddSweepSpaceFlags(app, f.space);
  AddOutputFlags(app, f.output);
  app.add_option("-j,--jobs", f.jobs,
                 "Threads (default: one per hardware thread); the output is "
                 "the same for any count")
      ->check(IntInRange(0));
  app.add_option("--shard", f.shard,
                 "K/N: evaluate only candidates with index % N == K and "
                 "print the partial result (JSON) for `sweep merge`");
}

void AddSweepMergeFlags(CLI::App& app, SweepMergeFlags& f) {
  app.add_option("parts", f.parts, "Partial results of `sweep --shard`")
      ->required();
  AddOutputFlags(app, f.output);
}

Result<studies::SweepSpace> LoadSweepSpace(const SweepFlags& f) {
  const std::string given = f.space.FirstGiven();
  if (!f.spec_file.empty()) {
    if (!given.empty()) {
      return std::unexpected(FlagError(
          given, "the space comes from '" + f.spec_file +
                     "' or from flags, not both: drop the file or the flags"));
    }
    return studies::SweepSpace::Load(f.spec_file);
  }
  if (given.empty()) {
    return std::unexpected(
        FlagError("spec",
                  "required: a sweep .textproto (scenarios/sweeps/) or the "
                  "space as flags (--model ... --tp 1,2,4)"));
  }
  auto spec = SweepFromFlags(f.space);
  if (!spec) return std::unexpected(spec.error());
  return studies::SweepSpace::Build(*spec, "flags", "", "");
}

Result<std::string> RunSweep(const SweepFlags& f, SweepGroup* group) {
  studies::SweepOptions options;
  if (!f.shard.empty()) {
    auto shard = ParseShard(f.shard);
    if (!shard) return std::unexpected(shard.error());
    if (group != nullptr && group->size() > 1) {
      return std::unexpected(FlagError(
          "--shard", "not under mpirun: the ranks divide the space already"));
    }
    if (f.output.json || !f.output.csv_file.empty() ||
        !f.output.html_file.empty()) {
      return std::unexpected(
          FlagError("--shard",
                    "prints the partial result; --json, --csv and --html "
                    "go with `moesim sweep merge`"));
    }
    options.shard = shard->first;
    options.num_shards = shard->second;
  }
  auto space = LoadSweepSpace(f);
  if (!space) return std::unexpected(space.error());
  // Outputs that would overwrite an input are refused before the work.
  if (auto ok = util::CheckOutputTargets(
          {{"--csv", f.output.csv_file}, {"--html", f.output.html_file}});
      !ok)
    return std::unexpected(ok.error());
  options.jobs = studies::JobCount(f.jobs);
  const bool grouped = group != nullptr && group->size() > 1;
  if (grouped) {
    options.shard = group->rank();
    options.num_shards = group->size();
  }
  options.progress = !grouped && isatty(STDERR_FILENO) != 0;
  studies::SweepOutcome outcome = studies::EvaluateSweep(*space, options);
  if (f.output.no_timing) outcome.seconds = 0;
  if (!f.shard.empty())
    return studies::FormatSweepShard(outcome, options.shard,
                                     options.num_shards);
  if (grouped) {
    const std::vector<std::string> parts = group->GatherToRoot(
        studies::FormatSweepShard(outcome, options.shard, options.num_shards));
    if (group->rank() != 0) return "";
    std::vector<std::string> names;
    for (size_t r = 0; r < parts.size(); ++r)
      names.push_back("rank " + std::to_string(r));
    auto merged = studies::MergeSweepTexts(names, parts);
    if (!merged) return std::unexpected(merged.error());
    return Emit(*merged, f.output);
  }
  return Emit(outcome, f.output);
}

Result<std::string> RunSweepMerge(const SweepMergeFlags& f) {
  auto outcome = studies::MergeSweepShards(f.parts);
  if (!outcome) return std::unexpected(outcome.error());
  return Emit(*outcome, f.output);
}

}  // namespace moesim::tools
