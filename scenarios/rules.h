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

// What moesim can hold. A scenario beyond these is refused up front with the
// limit, before anything is sized from it (a vector per layer, per
// micro-batch, per GPU) or timed in int64 picoseconds.
//
// kMaxGpus: the cluster graph's limit (topology/cluster.cc); the largest
//   training clusters announced hold some 200,000 GPUs.
inline constexpr int64_t kMaxGpus = 1'000'000;
// kMaxSeqLength: 2^24 tokens, 16 times the longest published long-context
//   training (1M tokens); attention work grows with its square.
inline constexpr int64_t kMaxSeqLength = int64_t{1} << 24;
// kMaxLayers: models::kMaxModelLayers (1,024, eight times the deepest
//   published model, Llama 3.1 405B's 126 layers); also bounds virtual
//   pipeline stages.
inline constexpr int64_t kMaxLayers = models::kMaxModelLayers;
// kMaxMtpLayers: models::kMaxMtpLayers (16), for a model's and a
//   scenario's mtp_num_layers alike.
inline constexpr int64_t kMaxMtpLayers = models::kMaxMtpLayers;
// kMaxGlobalBatch: 2^20 sequences, some seventy times the largest published
//   global batch (DeepSeek-V3's 15,360); bounds micro_batch_size too.
inline constexpr int64_t kMaxGlobalBatch = int64_t{1} << 20;
// kMaxScenarioFieldValue: the bound of every number of a scenario before
//   its own rule (util::FindOutOfRange): int32's range, 2^31 - 1.
inline constexpr double kMaxScenarioFieldValue = 2147483647.0;
// kMaxMicroBatches: 2^14 micro-batches per pipeline per step. The replay
//   simulates each one: 16,384 take seconds and some 300 MiB (Llama 3 8B;
//   2^16 took 17 s and 1.2 GiB); real runs use at most a few thousand.
inline constexpr int64_t kMaxMicroBatches = int64_t{1} << 14;
// kMaxStepSeconds: 10^5 s (28 hours) of model FLOPs per GPU at the GPU's
//   dense peak, a lower bound on the step time. int64 picoseconds hold
//   9.2 * 10^6 s, so a replay at 1% of peak still fits; real steps take
//   seconds to minutes.
inline constexpr double kMaxStepSeconds = 1e5;

// kMaxStragglerFactor: 10, a GPU ten times slower than its peers; measured
//   stragglers run 1.05-1.5x slower, and a larger factor, applied to a step
//   near kMaxStepSeconds, could overflow int64 picoseconds.
inline constexpr double kMaxStragglerFactor = 10;

// Checks the limits above that the spec's own fields can break (num_gpus,
// seq_length, num_layers, parallel sizes and their meshes, batch sizes);
// runs before defaults are filled, so unset (0) fields pass.
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
