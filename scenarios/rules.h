// Private to moesim_scenarios: how errors name a field, and the layout rules
// Resolve() checks.
//
// Every rule failure is one line: "<where>: <rule>", where <where> names the
// origin and the field. For a file it is "<file>:<line>: <field path>"
// (the line of the field in the file, from util::FieldLine; "<file>: <field
// path>" when the field is absent from the file and took a default), e.g.
//   x.textproto:7: layout.context_parallel_size: seq_length 4096 is not
//   divisible by 2*context_parallel_size = 48
// For origin "flags" it is "flags: <flag>", the command-line flag that sets
// the field (--cp, --recompute, ...), or the Megatron argument for fields that
// only --megatron-args sets (--moe-shared-expert-overlap, ...).
#ifndef MOESIM_SCENARIOS_RULES_H_
#define MOESIM_SCENARIOS_RULES_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/training.h"
#include "models/zoo.h"
#include "scenarios/limits.h"
#include "scenarios/scenario.h"
#include "util/error.h"

namespace moesim::scenarios::internal {

// The origin spelled in errors for scenarios built from command-line flags.
inline constexpr std::string_view kFlagsOrigin = "flags";

// Names scenario fields in error messages. Holds views: `origin` and `text`
// must outlive it.
class FieldNamer {
 public:
  // `flag_paths`: the fields the command line set over the file `origin`
  // (a scenario file with flags); errors on them name the flag.
  FieldNamer(std::string_view origin, std::string_view text,
             std::span<const std::string> flag_paths = {})
      : origin_(origin), text_(text), flag_paths_(flag_paths) {}

  // "<file>:<line>: <path>", "<file>: <path>" or "flags: <flag>" (the
  // origin is the flags, or the field is one of `flag_paths`). `path` is
  // the dotted field path in Scenario, e.g. "layout.context_parallel_size".
  std::string Where(std::string_view path) const;

  // Where(path) + ": " + rule.
  util::Error Error(std::string_view path, std::string_view rule) const;

  // Prefixes a message produced by another module (model loading, pipeline
  // layout parsing) with Where(path); a leading "<leaf>: " already naming the
  // field is dropped so the field is not named twice, and only the first
  // line of `message` is kept.
  util::Error Wrap(std::string_view path, std::string_view message) const;

  bool is_flags() const { return origin_ == kFlagsOrigin; }

 private:
  std::string_view origin_;
  std::string_view text_;
  std::span<const std::string> flag_paths_;
};

// The command-line spelling of a Scenario field path ("--cp" for
// "layout.context_parallel_size").
std::string FlagName(std::string_view path);

// The limits it checks are scenarios/limits.h's.
// Checks the limits (scenarios/limits.h) that the spec's own fields break
// (num_gpus, seq_length, num_layers, parallel sizes and their meshes, batch
// sizes); runs before defaults are filled, so unset (0) fields pass.
[[nodiscard]] util::Result<void> CheckLimits(const Scenario& s,
                                             const FieldNamer& at);

// Checks the limits on the filled-in scenario: micro-batches per step and
// the step's work (kMaxMicroBatches, kMaxStepSeconds).
[[nodiscard]] util::Result<void> CheckStepLimits(const ResolvedScenario& r,
                                                 const FieldNamer& at);

// Checks every layout and feature-compatibility rule on a scenario whose
// defaults are filled, model and system loaded, and parallel / training
// filled (everything but the pipeline plan). Appends non-fatal notes to
// `warnings`. Returns the first rule broken.
[[nodiscard]] util::Result<void> CheckRules(const ResolvedScenario& r,
                                            const FieldNamer& at,
                                            std::vector<std::string>& warnings);

}  // namespace moesim::scenarios::internal

#endif  // MOESIM_SCENARIOS_RULES_H_
