// The words a scenario's string-valued knobs accept, one owner per kind:
// precision, dispatcher, recompute (none | full | MCore modules) and CUDA
// graph scope. Scenario resolution (scenarios::Resolve), the command-line
// flags (studies/scenario_flags) and the sweep spec (studies/sweep_spec) all
// parse through these functions, so a word one accepts the others accept.
//
// Each Parse* returns the value or an Error whose message is the rule alone,
// without the field: "unknown 'fp6' (bf16, fp8-cs, ...)". The caller
// prefixes where the word came from (file:line and field, or the flag).
#ifndef MOESIM_SCENARIOS_VOCABULARY_H_
#define MOESIM_SCENARIOS_VOCABULARY_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/training.h"
#include "scenarios/scenario.pb.h"
#include "util/error.h"

namespace moesim::scenarios {

// "a, b, c": the words of a kind, for help texts and errors.
std::string JoinWords(std::span<const std::string_view> words);

// precision: bf16, fp8-cs, fp8-delayed, fp8-block, mxfp8, nvfp4.
std::span<const std::string_view> PrecisionWords();
[[nodiscard]] util::Result<models::Precision> ParsePrecision(
    std::string_view word);

// dispatcher: alltoall, deepep, hybridep.
std::span<const std::string_view> DispatcherWords();
[[nodiscard]] util::Result<models::Dispatcher> ParseDispatcher(
    std::string_view word);

// pipeline_schedule: 1f1b, zb-h1 (models/pipeline_schedules.h).
std::span<const std::string_view> PipelineScheduleWords();
[[nodiscard]] util::Result<models::PipelineScheduleKind> ParsePipelineSchedule(
    std::string_view word);

// routing: force_balanced, dropless_natural, tokendrop.
std::span<const std::string_view> RoutingWords();
[[nodiscard]] util::Result<models::Routing> ParseRouting(std::string_view word);

// Checks `word` against the vocabulary of `kind`: "precision",
// "dispatcher", "recompute" (a setting: ParseRecomputeSetting), "cuda_graph",
// "routing" or "activation_offload" (ParseActivationOffloadSetting). Error:
// that kind's parser's ("unknown 'x' (...)").
// REQUIRES: `kind` is one of these.
[[nodiscard]] util::Result<void> CheckWord(std::string_view kind,
                                           std::string_view word);

// cp_comm_type (Megatron --cp-comm-type): p2p, a2a, allgather, a2a+p2p.
std::span<const std::string_view> CpCommTypeWords();
[[nodiscard]] util::Result<models::CpCommType> ParseCpCommType(
    std::string_view word);

// cuda_graph: none | full_iteration | local:transformer_layer |
// te:<scope;scope> with the scopes below (',' also separates them).
std::span<const std::string_view> CudaGraphWords();  // all but te:
std::span<const std::string_view> CudaGraphTeScopes();
[[nodiscard]] util::Result<models::CudaGraph> ParseCudaGraph(
    std::string_view word);

// Recompute modules (MCore's names) and their aliases.
std::span<const std::string_view> RecomputeModules();
std::span<const std::string_view> RecomputeModuleAliases();  // up_proj, norm
// The canonical module for a name or alias (up_proj -> mla_up_proj,
// norm -> layernorm); empty when unknown.
std::string CanonicalRecomputeModule(std::string_view name);
// Sets the module's flag in `out`; Error "unknown module '<name>' (...)".
[[nodiscard]] util::Result<void> AddRecomputeModule(std::string_view name,
                                                    models::Recompute& out);

// A recompute setting as the flag and the sweep axis write it: "none",
// "full", or modules separated by ',' or ';' ("moe_act,layernorm").
struct RecomputeSetting {
  enum Kind { kNone, kFull, kSelective } kind = kNone;
  std::vector<std::string> modules;  // as written; kSelective only
};
// Refused: an empty value, none/full combined with modules, an unknown
// module.
[[nodiscard]] util::Result<RecomputeSetting> ParseRecomputeSetting(
    std::string_view value);
// Writes `setting` into a scenario's recompute message: none clears it;
// full keeps the method and depth already there (else uniform, 1 layer);
// selective replaces the modules.
void ApplyRecomputeSetting(const RecomputeSetting& setting,
                           Recompute& recompute);

// Fine-grained activation offloading as the sweep axis writes it: "none" or
// Megatron's --offload-modules names separated by ',' or ';'
// ("core_attn,attn_proj,expert_fc1"). Returns the modules (empty: none).
// Refused: an empty value, none combined with modules, an unknown module.
[[nodiscard]] util::Result<std::vector<std::string>>
ParseActivationOffloadSetting(std::string_view value);
// Writes the modules into a scenario: none turns the offloading off.
void ApplyActivationOffloadSetting(const std::vector<std::string>& modules,
                                   Scenario& s);
// The setting of a scenario, as ParseActivationOffloadSetting reads it.
std::string ActivationOffloadSetting(const Scenario& s);

}  // namespace moesim::scenarios

#endif  // MOESIM_SCENARIOS_VOCABULARY_H_
