// advise's proposals (studies/advise_proposer.cc): the single-knob changes
// the optimization workflow tries for a wall, and the small text helpers
// the walk and its report share. Private to the studies library.
#ifndef MOESIM_STUDIES_ADVISE_INTERNAL_H_
#define MOESIM_STUDIES_ADVISE_INTERNAL_H_

#include <string>
#include <vector>

#include "scenarios/scenario.h"

namespace moesim::studies::internal {

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

}  // namespace moesim::studies::internal

#endif  // MOESIM_STUDIES_ADVISE_INTERNAL_H_
