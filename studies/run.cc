#include "studies/run.h"

#include <utility>

#include "models/flops.h"
#include "sim/op_pricing.h"

namespace moesim::studies {

using models::kGiB;

MemoryReport BuildMemoryReport(const scenarios::ResolvedScenario& s) {
  MemoryReport r;
  r.params = models::CountParams(s.model);
  const double per_sequence = models::ModelFlopsPerSequence(
      s.model, s.training.seq_length, s.parallel.tp);
  r.model_flops_per_step = per_sequence * s.training.global_batch_size;
  r.model_flops_per_token = per_sequence / s.training.seq_length;
  r.memory = models::EstimateMemory(s.model, s.pipeline, s.parallel, s.training,
                                    s.system.gpu().memory_gib() * kGiB);
  return r;
}

util::Result<RunReport> BuildRunReport(const scenarios::ResolvedScenario& s,
                                       const sim::ReplayOptions& options,
                                       const calibration::Profile& profile) {
  auto platform = sim::BuildPlatform(s, profile);
  if (!platform) return std::unexpected(platform.error());
  auto step = sim::Replay(s, *platform, options);
  if (!step) return std::unexpected(step.error());
  return RunReport{std::move(*step), BuildMemoryReport(s),
                   platform->costs->tables().SustainedComputeRate()};
}

}  // namespace moesim::studies
