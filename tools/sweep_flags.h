// `moesim sweep` with the space given as flags instead of a spec file: the
// flags of `moesim run`, where each knob flag takes a list of values. They
// build the same scenarios::Sweep a spec file would (so one code path,
// SweepSpace::Build, checks and evaluates both):
//
//   --model --system --num-layers --pp-layout --routing --routing-skew
//   --cp-comm-type --hierarchical-cp-sizes --offload-overlap --manual-gc
//   --megatron-args          the base scenario (Sweep.base), as for `run`
//   --gpus --seq --tp --cp --ep --etp --pp --vpp --mbs --gbs
//                            integer axes: a comma list of values and at most
//                            one range; "a:b" is a, 2a, 4a, ... up to b (the
//                            powers of two from 1:b), "a:b:s" is a, a+s, ...
//                            up to b. The listed values come first, then the
//                            range (IntAxis: values, then from/to/times|step).
//   --precision --dispatcher a comma list of words
//   --cpu-offload            a comma list of fractions in [0, 1]
//   --ep-overlap             a comma list of 0 and 1
//   --recompute --cuda-graph one value per occurrence (their values hold
//                            commas: --recompute none --recompute
//                            moe_act,layernorm)
//   --constraint RULE        a Constraints.rule ("tp*cp <= 8"), repeatable
//   --max-gpus-per-replica N Constraints.max_gpus_per_model_replica
// Every axis flag may be repeated; occurrences append. A flag with one plain
// value sets the base (Sweep.base), as `moesim run` would; more values or a
// range make it the axis of that name; a knob not given keeps the base's
// value (or its default). Errors name the flag: "flags: --tp: ...".
#ifndef MOESIM_TOOLS_SWEEP_FLAGS_H_
#define MOESIM_TOOLS_SWEEP_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/sweep.pb.h"
#include "studies/scenario_flags.h"
#include "util/error.h"

namespace moesim::tools {

struct SweepSpaceFlags {
  studies::ScenarioFlags base;  // the base flags only (AddScenarioBaseFlags)
  std::vector<std::string> gpus, seq, tp, cp, ep, etp, pp, vpp, mbs, gbs,
      precision, dispatcher, recompute, cpu_offload, cuda_graph, ep_overlap,
      constraints;
  int max_gpus_per_replica = 0;
  // The options registered by AddSweepSpaceFlags, to tell which were given.
  std::vector<const CLI::Option*> options;

  // The first space flag given on the command line ("--tp"), or empty.
  std::string FirstGiven() const;
};

void AddSweepSpaceFlags(CLI::App& app, SweepSpaceFlags& flags);

// The Sweep the flags describe. Refused with the flag named: a value that
// is not a number, a 0/1 or a range of the forms above, two ranges in one
// flag, and whatever ScenarioFromFlags refuses in the base flags; the
// values themselves are checked by SweepSpace::Build.
[[nodiscard]] util::Result<scenarios::Sweep> SweepFromFlags(
    const SweepSpaceFlags& flags);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_SWEEP_FLAGS_H_
