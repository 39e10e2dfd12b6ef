// advise's proposals (tools/advise_proposer.cc): the single-knob changes
// the optimization workflow tries for a wall, and the small text helpers
// the walk and its report share. Private to the tools library.
#ifndef MOESIM_TOOLS_ADVISE_INTERNAL_H_
#define MOESIM_TOOLS_ADVISE_INTERNAL_H_

#include <string>
#include <vector>

#include "scenarios/scenario.h"

namespace moesim::tools::internal {

// One proposed change: a label ("ep 8 -> 16") and the changed spec.
struct Candidate {
  std::string change;
  scenarios::Scenario spec;
  bool memory_fix = false;  // proposed for the memory wall
};

// The candidate changes of one step of the walk from `r`, each a copy of
// its spec with one knob turned, grouped by the wall they address: the
// memory fixes (marked memory_fix) first when `wall` is memory, then,
// when the layout fits, the fixes of `wall` and of the other walls in the
// workflow's order. Each label once.
std::vector<Candidate> ProposeChanges(const scenarios::ResolvedScenario& r,
                                      const std::string& wall, bool fits);

// "full", "none" or the selective modules joined by ','.
std::string RecomputeText(const scenarios::Recompute& rc);
// `items` joined by `sep`.
std::string Join(const std::vector<std::string>& items, const char* sep);
// `v` as %g.
std::string Number(double v);

}  // namespace moesim::tools::internal

#endif  // MOESIM_TOOLS_ADVISE_INTERNAL_H_
