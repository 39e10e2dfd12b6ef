// The calibration fit behind `moesim calibrate fit` (tools/calibrate_fit.h):
// a calibration profile (calibration/profile.h) fitted to a cluster's
// measured runs.
//
// Design. The runs (calibration/runs/SCHEMA.md) of the chosen confidence
// that the replay can simulate are the data. A row's error is
// e = log(predicted) - log(measured) of TFLOPS/GPU, or of step time where
// TFLOPS is not measured. Its residual is e itself (least squares on the
// log error, the default) or, with --loss soft_l1, sign(e) sqrt(2 s^2
// (sqrt(1 + e^2/s^2) - 1)) with s = kSoftL1Scale: quadratic within ~10%,
// linear beyond, as MAPE is, so rows missed by 2x weigh less. (On the
// shipped runs at the default budget, squared cross-validated better:
// 26.0% against 29.1% MAPE.) The parameters are the log factors, bounded to
// [log 0.25, log 4], and calibration::BoundedLeastSquares fits them; an
// evaluation replays every row with the trial factors (RunReplayer), and
// evaluations are kept by factor values, so the Jacobian at the identity is
// computed once and shared by every fit. Only factors that move some row's
// prediction (|d log prediction / d log factor| >= kMinSensitivity at the
// identity) are fitted; the others stay 1 and are listed.
//
// The error reported beside the training MAPE is k-fold cross-validated: a
// row's fold is a hash of its id (FNV-1a, mod K), each fold is predicted by
// factors fitted on the other folds, from the identity. MAPE is over the
// same rows and metric as the residuals, and the no-profile baseline is
// reported too. The written factors are rounded to 4 decimals and the
// training MAPE is that of the written profile. Same input, same bytes, at
// any thread count.
#ifndef MOESIM_STUDIES_CALIBRATE_FIT_H_
#define MOESIM_STUDIES_CALIBRATE_FIT_H_

#include <string>
#include <vector>

#include "calibration/profile.h"
#include "studies/measured_runs.h"
#include "util/error.h"

namespace moesim::studies {

// A factor must change some row's log prediction by at least this much per
// unit of log factor (at the identity) to be fitted.
inline constexpr double kMinSensitivity = 0.01;
// Where the soft-L1 loss turns from quadratic to linear, in log error.
inline constexpr double kSoftL1Scale = 0.1;

enum class Loss { kSquared, kSoftL1 };

struct FitOptions {
  std::vector<calibration::Factor> factors;  // candidates; empty: all
  int folds = 5;                             // 0 or 1: no cross-validation
  int jobs = 0;
  Loss loss = Loss::kSquared;
  int max_evaluations = 14;  // per fit (calibration::LeastSquaresOptions)
};

struct FoldResult {
  int rows = 0;  // held out
  calibration::Corrections factors;
  double mape_pct = 0;  // of the held-out rows
};

struct FitResult {
  std::vector<calibration::Factor> fitted;
  std::vector<calibration::Factor> not_fitted;  // no row moves with them
  calibration::Corrections factors;             // rounded to 4 decimals
  int rows = 0;                                 // rows fitted
  int tflops_rows = 0;  // of them, fitted on TFLOPS (the rest: step time)
  double baseline_mape_pct = 0;  // no profile
  double training_mape_pct = 0;  // the written factors, every row
  double cv_mape_pct = 0;        // each row predicted without its fold
  std::vector<FoldResult> folds;
  int evaluations = 0;  // replays of every row, all fits together
};

// Fits `runs` (every row with measurements that the replay can simulate;
// filter by confidence before). Error when no row can be simulated.
[[nodiscard]] util::Result<FitResult> FitCalibration(
    const std::vector<MeasuredRun>& runs, const FitOptions& options);

// One GPU type's fit (--per-gpu).
struct GpuFit {
  std::string gpu;  // a calibration table folder
  FitResult result;
};
struct PerGpuFit {
  std::vector<GpuFit> fits;          // in calibration::TableGpus() order
  std::vector<std::string> skipped;  // "gpu: why no row of it simulates"
};
// Fits each table GPU type's rows of `runs` on their own. Error when no
// type has a row that simulates.
[[nodiscard]] util::Result<PerGpuFit> FitCalibrationPerGpu(
    const std::vector<MeasuredRun>& runs, const FitOptions& options);

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_CALIBRATE_FIT_H_
