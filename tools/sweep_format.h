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

std::string FormatSweepText(const studies::SweepOutcome& outcome,
                            const SweepOutputFlags& flags);

// {"evaluated", "seconds" (unless no_timing), "model", "system", "metric",
//  "counts" {verdict: n}, "layouts" [every candidate in index order: index,
//  rank (among ok, 1 = best; null otherwise), tp, cp, ep, etp, pp, vpp, mbs,
//  gbs, recompute, precision, dispatcher, num_gpus, seq_len, cpu_offload,
//  cuda_graph, ep_overlap, tokens_per_sec_per_gpu, tflops_per_gpu,
//  step_time_s, peak_memory_gib, margin_gib, verdict, reason], "pareto"
//  [{front, index, metric, value, num_gpus, margin_gib}]}. Values a verdict
// does not have (metrics of an invalid candidate) are null.
std::string FormatSweepJson(const studies::SweepOutcome& outcome,
                            const SweepOutputFlags& flags);

// One row per candidate, index order; empty cells where a value is absent.
std::string FormatSweepCsv(const studies::SweepOutcome& outcome);

// A self-contained HTML page (inline SVG and CSS, no script, no network):
// a heatmap of the best metric over TP x CP (id "heatmap"; cells of class
// "cell ok", "cell oom" (none fits) or "cell invalid" (none valid)), and when
// the sequence length varies, the best metric against it, one line per CP
// (id "seq-chart").
std::string FormatSweepHtml(const studies::SweepOutcome& outcome,
                            std::string_view metric);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_SWEEP_FORMAT_H_
