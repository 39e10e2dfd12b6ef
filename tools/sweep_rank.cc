// A sweep's candidates ranked by a metric and its Pareto fronts
// (tools/sweep_format.h).
#include <algorithm>
#include <string_view>
#include <vector>

#include "tools/sweep_format.h"
#include "tools/sweep_format_internal.h"

namespace moesim::tools {

using sweep_internal::Better;
using sweep_internal::VaryingOf;

double MetricOf(const SweepCandidate& c, std::string_view metric) {
  if (metric == "tflops_per_gpu") return c.tflops_per_gpu();
  if (metric == "step_time_s") return c.step_time_s();
  return c.tokens_per_sec_per_gpu();
}

bool HigherIsBetter(std::string_view metric) { return metric != "step_time_s"; }

std::vector<const SweepCandidate*> RankSweep(const SweepOutcome& o,
                                             std::string_view metric) {
  std::vector<const SweepCandidate*> ok;
  for (const SweepCandidate& c : o.candidates) {
    if (c.verdict() == "ok") ok.push_back(&c);
  }
  const bool higher = HigherIsBetter(metric);
  std::stable_sort(ok.begin(), ok.end(), [&](const auto* a, const auto* b) {
    return Better(MetricOf(*a, metric), MetricOf(*b, metric), higher);
  });
  return ok;
}

std::vector<ParetoPoint> SweepPareto(const SweepOutcome& o,
                                     std::string_view metric) {
  const bool higher = HigherIsBetter(metric);
  std::vector<ParetoPoint> out;
  // Metric best first, then more headroom first: a point is on the front
  // when it has more headroom than every point at least as good.
  std::vector<const SweepCandidate*> ranked = RankSweep(o, metric);
  std::stable_sort(
      ranked.begin(), ranked.end(), [&](const auto* a, const auto* b) {
        const double ma = MetricOf(*a, metric), mb = MetricOf(*b, metric);
        if (ma != mb) return Better(ma, mb, higher);
        return a->margin_gib() > b->margin_gib();
      });
  bool first = true;
  double best_margin = 0;
  for (const SweepCandidate* c : ranked) {
    if (first || c->margin_gib() > best_margin) {
      out.push_back({"memory_headroom", c, MetricOf(*c, metric)});
      best_margin = c->margin_gib();
      first = false;
    }
  }
  if (!VaryingOf(o).gpus) return out;
  // Fewest GPUs first, then the best total: on the front when its total
  // beats every point with no more GPUs.
  auto total = [&](const SweepCandidate* c) {
    return higher ? MetricOf(*c, metric) * c->num_gpus() : MetricOf(*c, metric);
  };
  ranked = RankSweep(o, metric);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const auto* a, const auto* b) {
                     if (a->num_gpus() != b->num_gpus())
                       return a->num_gpus() < b->num_gpus();
                     return Better(total(a), total(b), higher);
                   });
  first = true;
  double best_total = 0;
  for (const SweepCandidate* c : ranked) {
    if (first || Better(total(c), best_total, higher)) {
      out.push_back({"num_gpus", c, total(c)});
      best_total = total(c);
      first = false;
    }
  }
  return out;
}

}  // namespace moesim::tools
