// Which knobs a sweep varies, its candidates ranked by a metric, and its
// Pareto fronts (studies/sweep.h).
#include <algorithm>
#include <string_view>
#include <vector>

#include "studies/sweep.h"

namespace moesim::studies {

bool Better(double a, double b, bool higher) { return higher ? a > b : a < b; }

Varying VaryingOf(const SweepOutcome& o) {
  Varying v;
  // Invalid candidates hold their requested values (0 or empty where left
  // to the default), so only resolved ones are compared.
  const SweepCandidate* first = nullptr;
  for (const SweepCandidate& c : o.candidates) {
    if (c.verdict() != "invalid") {
      first = &c;
      break;
    }
  }
  if (!first) return v;
  const SweepCandidate& a = *first;
  for (const SweepCandidate& c : o.candidates) {
    if (c.verdict() == "invalid") continue;
    v.gpus |= c.num_gpus() != a.num_gpus();
    v.seq |= c.seq_len() != a.seq_len();
    v.mbs |= c.mbs() != a.mbs();
    v.gbs |= c.gbs() != a.gbs();
    v.recompute |= c.recompute() != a.recompute();
    v.precision |= c.precision() != a.precision();
    v.dispatcher |= c.dispatcher() != a.dispatcher();
    v.offload |= c.cpu_offload() != a.cpu_offload();
    v.graph |= c.cuda_graph() != a.cuda_graph();
    v.ep_overlap |= c.ep_overlap() != a.ep_overlap();
    v.activation_offload |= c.activation_offload() != a.activation_offload();
    v.state_offload |=
        c.offload_optimizer_states() != a.offload_optimizer_states();
  }
  return v;
}

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

}  // namespace moesim::studies
