// Importing a Megatron-LM / Megatron-Bridge argument string into a Scenario.
//
// The string is what one would pass to pretrain_gpt.py, e.g.
//   --tensor-model-parallel-size 1 --context-parallel-size 32
//   --expert-model-parallel-size 32 --pipeline-model-parallel-size 8
//   --pipeline-model-parallel-layout "Et|(tt|)*30mL" --fp8-format e4m3
//   --fp8-recipe blockwise --moe-token-dispatcher-type flex ...
// Tokens split at blanks; single and double quotes group, a backslash
// escapes the next character and backslash-newline joins lines. Both
// `--flag value` and `--flag=value` work; list flags (--recompute-modules,
// --cuda-graph-scope, --cp-comm-type, --hierarchical-context-parallel-sizes)
// take every value up to the next `--flag`; a flag given twice keeps the last
// value, as argparse does.
//
// Only the flags that change the scenario are applied (see megatron_args.cc
// for the table). Flags absent from the string leave the scenario's field as
// it was, so Megatron-Bridge defaults still apply at Resolve() (e.g. without
// --sequence-parallel the field stays unset and resolves to TP > 1).
// Routing changes only on --moe-router-force-load-balancing (force_balanced)
// or --moe-expert-capacity-factor (tokendrop).
#ifndef MOESIM_SCENARIOS_MEGATRON_ARGS_H_
#define MOESIM_SCENARIOS_MEGATRON_ARGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "models/model.pb.h"
#include "scenarios/scenario.pb.h"
#include "util/error.h"

namespace moesim::scenarios {

// Applies `args` to `spec`. Returns warnings: one line listing every flag that
// is not modelled ("--megatron-args: not modelled: --lr, --manual-gc"), plus
// notes on flags that had no effect. Errors (spec is then partly updated):
// a flag that needs a value but has none, a bad number or choice, an
// unterminated quote; each reads "--megatron-args: <flag>: <rule>".
[[nodiscard]] util::Result<std::vector<std::string>> ApplyMegatronArgs(
    std::string_view args, Scenario& spec);

// The words of `text` as the importer splits them (quotes, backslashes,
// '#' comments; see above). Error: an unterminated quote.
[[nodiscard]] util::Result<std::vector<std::string>> SplitShellWords(
    std::string_view text);

// The reverse, for a resolved scenario's spec (every default filled in): a
// Megatron-LM argument string for the layout, batch, recompute, precision,
// dispatcher, optimizer offload, CUDA graph, EP overlap and CP fields, which
// ApplyMegatronArgs maps back onto the same fields. Model and system are not
// Megatron arguments and are left out. Values with blanks or '|' are quoted.
std::string FormatMegatronArgs(const Scenario& spec);

// The architecture flags of `model` (--hidden-size ... with --vocab-size,
// --moe-layer-freq as a list expression, MLA, GQA, window, Gated DeltaNet,
// YaRN), which ApplyMegatronArgs and Resolve build back into a model with
// the same parameters and layer kinds. Depth and MTP come from
// FormatMegatronArgs (--num-layers, --mtp-num-layers): the two together are
// a launch line that defines the whole run without --model.
std::string FormatArchitectureArgs(const models::Model& model);

}  // namespace moesim::scenarios

#endif  // MOESIM_SCENARIOS_MEGATRON_ARGS_H_
