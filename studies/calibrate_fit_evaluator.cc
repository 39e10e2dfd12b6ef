// The evaluator of calibrate fit (studies/calibrate_fit_internal.h).
#include <cmath>
#include <utility>
#include <vector>

#include "studies/calibrate_fit_internal.h"

namespace moesim::studies::internal {

const std::vector<double>& Evaluator::LogPredictions(
    const Corrections& c, const std::vector<bool>& tflops) {
  auto it = cache_.find(c.values);
  if (it != cache_.end()) return it->second;
  calibration::Profile profile;
  profile.all = c;
  const std::vector<studies::RunPrediction> out =
      replayer_.Simulate(profile, jobs_, selected_);
  std::vector<double> logs(rows_.size(), 0.0);
  for (size_t k = 0; k < rows_.size(); ++k) {
    const studies::RunPrediction& p = out[rows_[k]];
    if (!p.simulated) {
      if (!error_) error_ = util::Error{p.row->id + ": " + p.reason};
      continue;
    }
    logs[k] = std::log(tflops[k] ? p.tflops : p.step_s);
  }
  return cache_.emplace(c.values, std::move(logs)).first->second;
}

}  // namespace moesim::studies::internal
