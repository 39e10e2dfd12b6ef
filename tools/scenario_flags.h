// Registers the scenario flags (studies/scenario_flags.h) on a command.
#ifndef MOESIM_TOOLS_SCENARIO_FLAGS_H_
#define MOESIM_TOOLS_SCENARIO_FLAGS_H_

#include <CLI/CLI.hpp>

#include "studies/scenario_flags.h"

namespace moesim::tools {

// Registers the flags above on `app` (a command), writing into `flags`.
void AddScenarioFlags(CLI::App& app, studies::ScenarioFlags& flags);

// Registers only the flags that are not layout or knob values (no
// positional file): --model --system --pp-layout --num-layers --routing
// --routing-skew --offload-overlap --manual-gc --cp-comm-type
// --hierarchical-cp-sizes --megatron-args. `moesim sweep` takes these for
// its base and its own list-valued --tp, --precision, ...
// (tools/sweep_flags.h).
void AddScenarioBaseFlags(CLI::App& app, studies::ScenarioFlags& flags);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_SCENARIO_FLAGS_H_
