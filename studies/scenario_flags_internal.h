// The scenario flags' range checks and their application to a scenario,
// shared by studies/scenario_flags_apply.cc and studies/scenario_from_flags.cc.
// Private to the studies library.
#ifndef MOESIM_STUDIES_SCENARIO_FLAGS_INTERNAL_H_
#define MOESIM_STUDIES_SCENARIO_FLAGS_INTERNAL_H_

#include "scenarios/scenario.h"
#include "studies/scenario_flags.h"
#include "util/error.h"

namespace moesim::studies::internal {

// Every flag's range, before anything is resolved; errors name the flag.
util::Result<void> CheckRanges(const ScenarioFlags& f);

// Applies the flags that are set to `spec`; true when any was.
util::Result<bool> ApplyFlags(const ScenarioFlags& f,
                              scenarios::Scenario& spec);

}  // namespace moesim::studies::internal

#endif  // MOESIM_STUDIES_SCENARIO_FLAGS_INTERNAL_H_
