// The scenario flags' range checks and their application to a scenario,
// shared by tools/scenario_flags_apply.cc and tools/scenario_from_flags.cc.
// Private to the tools library.
#ifndef MOESIM_TOOLS_SCENARIO_FLAGS_INTERNAL_H_
#define MOESIM_TOOLS_SCENARIO_FLAGS_INTERNAL_H_

#include "scenarios/scenario.h"
#include "tools/scenario_flags.h"
#include "util/error.h"

namespace moesim::tools::internal {

// Every flag's range, before anything is resolved; errors name the flag.
util::Result<void> CheckRanges(const ScenarioFlags& f);

// Applies the flags that are set to `spec`; true when any was.
util::Result<bool> ApplyFlags(const ScenarioFlags& f,
                              scenarios::Scenario& spec);

}  // namespace moesim::tools::internal

#endif  // MOESIM_TOOLS_SCENARIO_FLAGS_INTERNAL_H_
