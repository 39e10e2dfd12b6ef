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

// Parses a scenario .textproto; `file` names it in errors (file:line:col).
[[nodiscard]] util::Result<Scenario> ParseScenario(std::string_view text,
                                                   std::string_view file);
[[nodiscard]] util::Result<Scenario> LoadScenario(const std::string& path);

// Fills defaults, loads model and system, checks every rule. `origin` names
// where `spec` came from ("scenarios/default.textproto", "flags"); `text`,
// when not empty, is the file's text, so errors can cite the field's line.
[[nodiscard]] util::Result<ResolvedScenario> Resolve(
    const Scenario& spec, std::string_view origin, std::string_view text = {});

}  // namespace moesim::scenarios

#endif  // MOESIM_SCENARIOS_SCENARIO_H_
