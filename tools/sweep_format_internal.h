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

// A metric's column title ("tok/s/GPU").
std::string Short(std::string_view metric);

// "TP4 CP4 EP32 ETP1 PP4 VPP12" plus the knobs that vary.
std::string LayoutText(const studies::SweepCandidate& candidate,
                       const studies::Varying& v);

// Candidates per verdict (every verdict present, 0 when none).
std::map<std::string, int> Counts(const studies::SweepOutcome& outcome);
// "3 ok, 1 oom, 0 invalid, 0 excluded, 0 failed".
std::string CountsLine(const studies::SweepOutcome& outcome);

// Whether the candidate has an analytic peak to report (ok, oom, and a
// failed replay that got as far as the memory estimate).
bool HasMemory(const studies::SweepCandidate& c);

// `s` with <, >, & and " as HTML entities.
std::string Escape(std::string_view s);

// The best `metric` over TP x CP as an inline SVG heatmap (the HTML report).
std::string Heatmap(const studies::SweepOutcome& outcome,
                    std::string_view metric);

}  // namespace moesim::tools::sweep_internal

#endif  // MOESIM_TOOLS_SWEEP_FORMAT_INTERNAL_H_
