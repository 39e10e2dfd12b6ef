// Private to the sweep formatters (sweep_format.cc, sweep_html.cc): how a
// candidate's layout is spelled and which knobs differ across a sweep.
#ifndef MOESIM_TOOLS_SWEEP_FORMAT_INTERNAL_H_
#define MOESIM_TOOLS_SWEEP_FORMAT_INTERNAL_H_

#include <map>
#include <string>
#include <string_view>

#include "tools/sweep.h"

namespace moesim::tools::sweep_internal {

// The verdicts in the order reports list them.
extern const char* const kVerdicts[5];

// a better than b: larger when `higher`, else smaller.
bool Better(double a, double b, bool higher);

// A metric's column title ("tok/s/GPU").
std::string Short(std::string_view metric);

// The knobs besides the parallel sizes that differ between the resolved
// (not invalid) candidates.
struct Varying {
  bool gpus = false, seq = false, mbs = false, gbs = false, recompute = false,
       precision = false, dispatcher = false, offload = false, graph = false,
       ep_overlap = false, activation_offload = false, state_offload = false;
};
Varying VaryingOf(const SweepOutcome& outcome);

// "TP4 CP4 EP32 ETP1 PP4 VPP12" plus the knobs that vary.
std::string LayoutText(const SweepCandidate& candidate, const Varying& v);

// Candidates per verdict (every verdict present, 0 when none).
std::map<std::string, int> Counts(const SweepOutcome& outcome);
// "3 ok, 1 oom, 0 invalid, 0 excluded, 0 failed".
std::string CountsLine(const SweepOutcome& outcome);

// Whether the candidate has an analytic peak to report (ok, oom, and a
// failed replay that got as far as the memory estimate).
bool HasMemory(const SweepCandidate& c);

// `s` with <, >, & and " as HTML entities.
std::string Escape(std::string_view s);

// The best `metric` over TP x CP as an inline SVG heatmap (the HTML report).
std::string Heatmap(const SweepOutcome& outcome, std::string_view metric);

}  // namespace moesim::tools::sweep_internal

#endif  // MOESIM_TOOLS_SWEEP_FORMAT_INTERNAL_H_
