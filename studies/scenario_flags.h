// The scenario flags every command that takes a scenario accepts:
//   [SCENARIO.textproto] --model --system --gpus --seq --mbs --gbs --tp --cp
//   --ep --etp --pp --vpp --precision --dispatcher --recompute --cuda-graph
//   --cpu-offload --ep-overlap --pp-layout --routing --num-layers
//   --cp-comm-type --hierarchical-cp-sizes --pipeline-schedule
//   --megatron-args "<Megatron-LM argument string>"
//   --megatron-args-file FILE [--var NAME=VALUE ...] (a launch script or a
//   model_config.yaml; scenarios/launch_file.h)
// The flags' values, the Scenario they build and the command line that sets
// them; tools/scenario_flags.h registers them on a command.
// Order of precedence: scenario file < --megatron-args-file <
// --megatron-args < individual flags.
// The vocabulary is that of calibration/runs/SCHEMA.md, so a runs.csv row maps
// onto flags one to one.
#ifndef MOESIM_STUDIES_SCENARIO_FLAGS_H_
#define MOESIM_STUDIES_SCENARIO_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "util/error.h"

namespace moesim::studies {

struct ScenarioFlags {
  std::string scenario_file;  // positional, optional
  std::optional<std::string> model, system, precision, dispatcher, recompute,
      cuda_graph, pp_layout, routing, cp_comm_type, pipeline_schedule,
      megatron_args, megatron_args_file;
  // --var NAME=VALUE: shell variables of the launch file, over its own.
  std::vector<std::string> vars;
  // --hierarchical-cp-sizes: comma-separated ints, inner first ("8,4").
  std::optional<std::string> hierarchical_cp_sizes;
  // --routing-histogram: a file of tokens per expert (ReadRoutingHistogram).
  std::optional<std::string> routing_histogram;
  std::optional<int> gpus, seq, mbs, gbs, tp, cp, ep, etp, pp, vpp, num_layers,
      ep_overlap;
  std::optional<double> cpu_offload, routing_skew;
  std::optional<int> offload_overlap, manual_gc, batch_p2p_sync;
};

// The Scenario the flags describe, before resolving: the file, then
// --megatron-args, then the individual flags. `text` is the file's text;
// `any_flag` is true when --megatron-args or any flag was given.
struct FlagScenario {
  scenarios::Scenario spec;
  std::string text;
  bool any_flag = false;
  // With a scenario file: the fields (dotted Scenario paths) the flags and
  // --megatron-args changed from the file's values.
  std::vector<std::string> flag_paths;
  std::vector<std::string> warnings;  // of --megatron-args
};
[[nodiscard]] util::Result<FlagScenario> ScenarioFromFlags(
    const ScenarioFlags& flags);

// Builds the Scenario (file, then --megatron-args, then flags) and resolves
// it. Errors on a field the scenario file set read "<file>:<line>: <field>:
// <rule>"; on a field a flag or --megatron-args set (or without a file)
// they name the flag: "flags: --tp: <rule>" (fields only Megatron arguments
// set are named by their Megatron flag, e.g. "flags:
// --moe-shared-expert-overlap: ...").
// Flag values out of range (--tp 0, --cpu-offload 1.5,
// --hierarchical-cp-sizes 8,x) fail before resolving.
// Warnings of --megatron-args come first in ResolvedScenario::warnings.
[[nodiscard]] util::Result<scenarios::ResolvedScenario> ResolveFlags(
    const ScenarioFlags& flags);

// Tokens routed to each expert, from a text file: numbers in expert order
// separated by commas, spaces or newlines; '#' starts a comment. Errors:
// "<file>: cannot read file", "<file>:<line>: moe_routing_histogram:
// '<text>' is not a number", "<file>: moe_routing_histogram: no values".
[[nodiscard]] util::Result<std::vector<double>> ReadRoutingHistogram(
    const std::string& file);

// The `moesim run` arguments that set exactly the given flags (scenario
// file first, then the flags in AddScenarioFlags's order), each value
// single-quoted where the shell would split or expand it; `moesim run
// <result>` resolves to the same scenario.
[[nodiscard]] std::string FlagsCommandLine(const ScenarioFlags& flags);

// `value` as one POSIX shell word: bare when it holds only characters no
// shell treats specially, else single-quoted ('\'' for a quote inside), so
// a printed command line re-runs unchanged under sh -c whatever a path holds.
[[nodiscard]] std::string ShellWord(const std::string& value);

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_SCENARIO_FLAGS_H_
