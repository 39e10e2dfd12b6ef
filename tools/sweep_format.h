// The outputs of `moesim sweep`: ranking, Pareto fronts, and the text, JSON,
// CSV and HTML forms. Pure functions of a SweepOutcome: the same outcome
// gives the same bytes (the wall time aside, which SweepOutputFlags::
// no_timing leaves out of text and JSON).
#ifndef MOESIM_TOOLS_SWEEP_FORMAT_H_
#define MOESIM_TOOLS_SWEEP_FORMAT_H_

#include <string>
#include <string_view>
#include <vector>

#include "tools/sweep.h"

namespace moesim::tools {

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

std::string FormatSweepText(const SweepOutcome& outcome,
                            const SweepOutputFlags& flags);

// {"evaluated", "seconds" (unless no_timing), "model", "system", "metric",
//  "counts" {verdict: n}, "layouts" [every candidate in index order: index,
//  rank (among ok, 1 = best; null otherwise), tp, cp, ep, etp, pp, vpp, mbs,
//  gbs, recompute, precision, dispatcher, num_gpus, seq_len, cpu_offload,
//  cuda_graph, ep_overlap, tokens_per_sec_per_gpu, tflops_per_gpu,
//  step_time_s, peak_memory_gib, margin_gib, verdict, reason], "pareto"
//  [{front, index, metric, value, num_gpus, margin_gib}]}. Values a verdict
// does not have (metrics of an invalid candidate) are null.
std::string FormatSweepJson(const SweepOutcome& outcome,
                            const SweepOutputFlags& flags);

// One row per candidate, index order; empty cells where a value is absent.
std::string FormatSweepCsv(const SweepOutcome& outcome);

// A self-contained HTML page (inline SVG and CSS, no script, no network):
// a heatmap of the best metric over TP x CP (id "heatmap"; cells of class
// "cell ok", "cell oom" (none fits) or "cell invalid" (none valid)), and when
// the sequence length varies, the best metric against it, one line per CP
// (id "seq-chart").
std::string FormatSweepHtml(const SweepOutcome& outcome,
                            std::string_view metric);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_SWEEP_FORMAT_H_
