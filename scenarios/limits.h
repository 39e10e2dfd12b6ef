// What moesim can hold: the limits Resolve() checks a scenario against
// (scenarios/rules.h), public so that the command line and the sweep's
// checks name the same numbers.
#ifndef MOESIM_SCENARIOS_LIMITS_H_
#define MOESIM_SCENARIOS_LIMITS_H_

#include <cstdint>

#include "models/zoo.h"

namespace moesim::scenarios {

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

}  // namespace moesim::scenarios

#endif  // MOESIM_SCENARIOS_LIMITS_H_
