// The scenario flags every command that takes a scenario accepts:
//   [SCENARIO.textproto] --model --system --gpus --seq --mbs --gbs --tp --cp
//   --ep --etp --pp --vpp --precision --dispatcher --recompute --cuda-graph
//   --cpu-offload --ep-overlap --pp-layout --routing --num-layers
//   --cp-comm-type --hierarchical-cp-sizes
//   --megatron-args "<Megatron-LM argument string>"
//   --megatron-args-file FILE [--var NAME=VALUE ...] (a launch script or a
//   model_config.yaml; scenarios/launch_file.h)
// Order of precedence: scenario file < --megatron-args-file <
// --megatron-args < individual flags.
// The vocabulary is that of calibration/runs/SCHEMA.md, so a runs.csv row maps
// onto flags one to one.
#ifndef MOESIM_TOOLS_SCENARIO_FLAGS_H_
#define MOESIM_TOOLS_SCENARIO_FLAGS_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "util/error.h"

namespace moesim::tools {

struct ScenarioFlags {
  std::string scenario_file;  // positional, optional
  std::optional<std::string> model, system, precision, dispatcher, recompute,
      cuda_graph, pp_layout, routing, cp_comm_type, megatron_args,
      megatron_args_file;
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

// Registers the flags above on `app` (a command), writing into `flags`.
void AddScenarioFlags(CLI::App& app, ScenarioFlags& flags);

// Registers only the flags that are not layout or knob values (no
// positional file): --model --system --pp-layout --num-layers --routing
// --routing-skew --offload-overlap --manual-gc --cp-comm-type
// --hierarchical-cp-sizes --megatron-args. `moesim sweep` takes these for
// its base and its own list-valued --tp, --precision, ...
// (tools/sweep_flags.h).
void AddScenarioBaseFlags(CLI::App& app, ScenarioFlags& flags);

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

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_SCENARIO_FLAGS_H_
