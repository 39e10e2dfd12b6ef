// advise's walk (studies/advise.h, Advise): from the start layout, each
// step diagnoses the binding wall, replays the single-knob changes proposed
// for it (studies/advise_proposer.cc) and keeps the best.
#include <algorithm>
#include <set>
#include <utility>

#include "models/memory.h"
#include "scenarios/megatron_args.h"
#include "scenarios/pipeline_split.h"
#include "sim/step_stats.h"
#include "studies/advise.h"
#include "studies/advise_internal.h"
#include "studies/run.h"
#include "util/format.h"
#include "util/json_write.h"

namespace moesim::studies {
namespace {

using internal::Candidate;
using internal::ProposeChanges;
using util::Result;

// Resolve()'s origin for candidates.
constexpr std::string_view kOrigin = "advise";

// A layout, resolved, with its memory verdict and (when replayed) figures.
struct Measured {
  scenarios::ResolvedScenario scenario;
  double peak_bytes = 0;
  double capacity_bytes = 0;
  bool fits = false;
  bool replayed = false;
  double tokens_per_sec_per_gpu = 0;
  double tflops_per_gpu = 0;
  std::string wall;
};

// Off the memory wall: at least kMemoryHeadroom of capacity free.
bool Roomy(const Measured& m) {
  return m.fits && m.capacity_bytes - m.peak_bytes >=
                       sim::kMemoryHeadroom * m.capacity_bytes;
}

// A resolved spec as a set key; recompute modules in any order are one key.
std::string LayoutKey(scenarios::Scenario spec) {
  auto* modules = spec.mutable_recompute()->mutable_modules();
  std::sort(modules->begin(), modules->end());
  return spec.SerializeAsString();
}

Measured Judge(scenarios::ResolvedScenario r) {
  Measured m;
  const models::MemoryEstimate e =
      models::EstimateMemory(r.model, r.pipeline, r.parallel, r.training,
                             r.system.gpu().memory_gib() * models::kGiB);
  m.peak_bytes = e.peak_bytes;
  m.capacity_bytes = e.capacity_bytes;
  m.fits = e.fits;
  m.scenario = std::move(r);
  return m;
}

Result<void> Replay(Measured& m) {
  auto report = studies::BuildRunReport(m.scenario, {});
  if (!report) return std::unexpected(report.error());
  m.replayed = true;
  m.tokens_per_sec_per_gpu = report->step.tokens_per_sec_per_gpu;
  m.tflops_per_gpu = report->step.tflops_per_gpu;
  m.wall = sim::DiagnoseWall(report->step, report->memory.memory.peak_bytes,
                             report->memory.memory.capacity_bytes)
               .name;
  return {};
}

AdviseStep StepOf(const Measured& m, std::string change, std::string wall,
                  double previous_tps) {
  AdviseStep step;
  step.change = std::move(change);
  step.wall = std::move(wall);
  step.tokens_per_sec_per_gpu = m.tokens_per_sec_per_gpu;
  step.tflops_per_gpu = m.tflops_per_gpu;
  step.gain_pct = previous_tps > 0
                      ? 100 * (m.tokens_per_sec_per_gpu / previous_tps - 1)
                      : 0;
  step.peak_memory_gib = m.peak_bytes / models::kGiB;
  step.fits = m.fits;
  return step;
}

// One step: the kept candidate, or none. Counts proposals in `step`.
Result<std::optional<std::pair<std::string, Measured>>> Choose(
    const Measured& current, int max_candidates,
    const std::set<std::string>& visited, AdviseStep& step) {
  std::vector<Candidate> candidates =
      ProposeChanges(current.scenario, current.wall, current.fits);
  step.candidates = static_cast<int>(candidates.size());
  std::optional<std::pair<std::string, Measured>> best;
  // On the memory wall with nothing faster: the fastest memory fix that
  // leaves the wall, so the next step can spend the room (selective
  // recompute, a faster dispatcher) - the workflow's "fit first".
  std::optional<std::pair<std::string, Measured>> leave_wall;
  int replays = 0;
  for (Candidate& c : candidates) {
    auto resolved = scenarios::Resolve(c.spec, kOrigin);
    if (!resolved) {
      ++step.invalid;
      continue;
    }
    // Never back to a layout on the trail (a memory fix taken at a loss and
    // then undone for the gain would cycle).
    if (visited.contains(LayoutKey(resolved->spec))) continue;
    Measured m = Judge(std::move(*resolved));
    if (!current.fits) {
      // The first change that fits; else the lowest peak below the current.
      if (m.fits) {
        if (auto ok = Replay(m); !ok) return std::unexpected(ok.error());
        return std::pair{c.change, std::move(m)};
      }
      const double bar = best ? best->second.peak_bytes : current.peak_bytes;
      if (m.peak_bytes < bar) best = std::pair{c.change, std::move(m)};
      continue;
    }
    if (!m.fits) continue;
    if (max_candidates > 0 && replays >= max_candidates) break;
    ++replays;
    if (auto ok = Replay(m); !ok) {
      ++step.invalid;
      continue;
    }
    const double bar =
        best ? best->second.tokens_per_sec_per_gpu
             : current.tokens_per_sec_per_gpu * (1 + kMinGainPct / 100);
    if (c.memory_fix && Roomy(m) &&
        (!leave_wall || m.tokens_per_sec_per_gpu >
                            leave_wall->second.tokens_per_sec_per_gpu)) {
      leave_wall = std::pair{c.change, m};
    }
    if (m.tokens_per_sec_per_gpu > bar)
      best = std::pair{c.change, std::move(m)};
  }
  if (!best && current.fits && !Roomy(current)) best = std::move(leave_wall);
  if (best && !best->second.replayed) {
    if (auto ok = Replay(best->second); !ok) return std::unexpected(ok.error());
  }
  return best;
}

}  // namespace

Result<AdviseResult> Advise(const scenarios::ResolvedScenario& start,
                            int max_steps, int max_candidates) {
  Measured current = Judge(start);
  if (auto ok = Replay(current); !ok) return std::unexpected(ok.error());
  AdviseResult result;
  result.start = StepOf(current, "start", current.wall, 0);
  std::set<std::string> visited = {LayoutKey(current.scenario.spec)};
  // The final layout: the fastest fitting one on the trail (a memory fix
  // taken at a loss may be the trail's last step).
  std::optional<Measured> best;
  int best_step = 0;
  if (current.fits) best = current;
  for (int n = 0; n < max_steps; ++n) {
    AdviseStep step;
    auto chosen = Choose(current, max_candidates, visited, step);
    if (!chosen) return std::unexpected(chosen.error());
    if (!*chosen) break;
    const AdviseStep kept =
        StepOf((*chosen)->second, (*chosen)->first, current.wall,
               current.tokens_per_sec_per_gpu);
    step.change = kept.change;
    step.wall = kept.wall;
    step.tokens_per_sec_per_gpu = kept.tokens_per_sec_per_gpu;
    step.tflops_per_gpu = kept.tflops_per_gpu;
    step.gain_pct = kept.gain_pct;
    step.peak_memory_gib = kept.peak_memory_gib;
    step.fits = kept.fits;
    result.steps.push_back(step);
    current = std::move((*chosen)->second);
    visited.insert(LayoutKey(current.scenario.spec));
    if (current.fits && (!best || current.tokens_per_sec_per_gpu >
                                      best->tokens_per_sec_per_gpu)) {
      best = current;
      best_step = n + 1;
    } else if (best && n + 1 - best_step >= 2) {
      // A memory fix taken at a loss gets one step to pay off with a new
      // best; without that the search would trade memory back and forth.
      break;
    }
  }
  Measured& final = best ? *best : current;
  if (!best) best_step = static_cast<int>(result.steps.size());
  result.final_step = best_step;
  result.final_wall = final.wall;
  result.final_tokens_per_sec_per_gpu = final.tokens_per_sec_per_gpu;
  result.final_tflops_per_gpu = final.tflops_per_gpu;
  result.final_peak_memory_gib = final.peak_bytes / models::kGiB;
  result.final_fits = final.fits;
  result.final_layout = std::move(final.scenario);
  return result;
}

}  // namespace moesim::studies
