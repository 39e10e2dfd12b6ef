// Scenarios: loading, Megatron-Bridge defaults, layout rules, resolution.
//
// A `Scenario` message (from a .textproto, CLI flags or a Megatron argument
// string) names a model, a system, a GPU count and a layout. Resolve() checks
// every layout rule (parallel folding, divisibility, recompute modules,
// feature incompatibilities) and returns an immutable ResolvedScenario with
// the model, the system and the plain values models/ computes with. A rule
// broken is an Error whose one-line message names the origin (file:line or
// flag), the field and the rule. A valid layout that does not fit in memory
// is not an error here: memory is a verdict (models/memory.h).
#ifndef MOESIM_SCENARIOS_SCENARIO_H_
#define MOESIM_SCENARIOS_SCENARIO_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/model.pb.h"
#include "models/pipeline.h"
#include "models/training.h"
#include "scenarios/scenario.pb.h"
#include "topology/system.pb.h"
#include "util/error.h"

namespace moesim::scenarios {

struct ResolvedScenario {
  Scenario spec;        // as given, with every default filled in
  models::Model model;  // after the num_layers / mtp_num_layers overrides
  topology::System system;
  models::Parallelism parallel;
  models::TrainingOptions training;
  models::PipelinePlan pipeline;
  // Fields left unset that took the Megatron-Bridge recipe default, e.g.
  // "micro_batch_size=1".
  std::vector<std::string> defaults_used;
  std::vector<std::string> warnings;
};

// Makes the relative file paths a scenario names (model, system) relative
// to `dir`, the folder of the file that names them; zoo and shipped names,
// absolute paths and an empty `dir` are left alone.
void ResolvePathsAgainst(Scenario& scenario, std::string_view dir);

// Parses a scenario .textproto; `file` names it in errors (file:line:col).
// Its model and system paths resolve relative to `file`'s folder.
[[nodiscard]] util::Result<Scenario> ParseScenario(std::string_view text,
                                                   std::string_view file);
[[nodiscard]] util::Result<Scenario> LoadScenario(const std::string& path);

// Fills defaults, loads model and system, checks every rule. `origin` names
// where `spec` came from ("scenarios/default.textproto", "flags"); `text`,
// when not empty, is the file's text, so errors can cite the field's line;
// `flag_paths`, the fields the command line set over that file, whose
// errors name their flag instead.
[[nodiscard]] util::Result<ResolvedScenario> Resolve(
    const Scenario& spec, std::string_view origin, std::string_view text = {},
    std::span<const std::string> flag_paths = {});

// A layout rule broken: the scenario field it names (a Scenario field name,
// e.g. "cp_comm_type") and the rule, without where the value came from.
struct FieldRule {
  std::string field, rule;
};

// Transformer Engine's rules for the context-parallel exchange
// (--cp-comm-type, --hierarchical-context-parallel-sizes) on `model` at
// tensor-parallel size `tp` and context-parallel size `cp`: a2a scatters
// each TP rank's query heads and query groups over CP, so both must
// divide; a2a+p2p needs exactly two hierarchical sizes whose product is
// CP, the inner one dividing the heads; the sizes are only for a2a+p2p;
// Gated DeltaNet layers scatter their key and value heads over CP with any
// exchange (field layout.context_parallel_size).
// `type_word` is the type as written, for the message. nullopt: no rule
// broken. Resolve and the measured-runs loader both check through it.
std::optional<FieldRule> CpExchangeRule(const models::Model& model, int tp,
                                        int cp, models::CpCommType type,
                                        std::string_view type_word,
                                        std::span<const int> sizes);

}  // namespace moesim::scenarios

#endif  // MOESIM_SCENARIOS_SCENARIO_H_
