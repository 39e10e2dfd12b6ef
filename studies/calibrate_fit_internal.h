// calibrate fit's evaluator (studies/calibrate_fit_evaluator.cc), shared by
// the fit (studies/calibrate_fit_solve.cc). Private to the studies library.
#ifndef MOESIM_STUDIES_CALIBRATE_FIT_INTERNAL_H_
#define MOESIM_STUDIES_CALIBRATE_FIT_INTERNAL_H_

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "calibration/profile.h"
#include "studies/measured_runs.h"
#include "util/error.h"

namespace moesim::studies::internal {

using calibration::Corrections;

// Replays the fitted rows under trial corrections, each distinct set once.
class Evaluator {
 public:
  Evaluator(const studies::RunReplayer& replayer, std::vector<size_t> rows,
            size_t num_runs, int jobs)
      : replayer_(replayer), rows_(std::move(rows)), jobs_(jobs) {
    selected_.assign(num_runs, false);
    for (size_t i : rows_) selected_[i] = true;
  }

  // log of the predicted metric of each fitted row (TFLOPS/GPU where
  // measured, else step time), in `rows` order. A replay that fails leaves
  // the first error in error() and the row's prediction at its measured
  // value's log of 0.
  const std::vector<double>& LogPredictions(const Corrections& c,
                                            const std::vector<bool>& tflops);

  int evaluations() const { return static_cast<int>(cache_.size()); }
  const std::optional<util::Error>& error() const { return error_; }

 private:
  const studies::RunReplayer& replayer_;
  std::vector<size_t> rows_;
  std::vector<bool> selected_;
  int jobs_;
  std::map<std::array<double, calibration::kNumFactors>, std::vector<double>>
      cache_;
  std::optional<util::Error> error_;
};

}  // namespace moesim::studies::internal

#endif  // MOESIM_STUDIES_CALIBRATE_FIT_INTERNAL_H_
