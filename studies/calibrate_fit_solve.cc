// The calibration fit (studies/calibrate_fit.h: FitCalibration and
// FitCalibrationPerGpu): which factors move some row, a bounded least
// squares on the log errors, and the cross-validation over folds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>

#include "calibration/fit.h"
#include "calibration/tables.h"
#include "studies/calibrate_fit.h"
#include "studies/calibrate_fit_internal.h"
#include "util/csv.h"
#include "util/fnv.h"
#include "util/format.h"
#include "util/output.h"

namespace moesim::studies {

namespace {

using calibration::Corrections;
using calibration::Factor;
using internal::Evaluator;

double Round4(double v) { return std::round(v * 1e4) / 1e4; }

// Mean |predicted / measured - 1| in percent over `which` (indices into the
// fitted rows), from log predictions and log measurements.
double Mape(const std::vector<double>& log_predicted,
            const std::vector<double>& log_measured,
            const std::vector<size_t>& which) {
  if (which.empty()) return 0;
  double sum = 0;
  for (size_t k : which) {
    sum += std::abs(std::exp(log_predicted[k] - log_measured[k]) - 1) * 100;
  }
  return sum / which.size();
}

// The residual of a log error under `loss` (calibrate_fit.h).
double Residual(double error, Loss loss) {
  if (loss == Loss::kSquared) return error;
  const double s = kSoftL1Scale;
  const double rho = 2 * s * s * (std::sqrt(1 + (error / s) * (error / s)) - 1);
  return std::copysign(std::sqrt(rho), error);
}

// result.fitted: the factors (options.factors, or every one) that move some
// row's prediction by at least kMinSensitivity per unit of log factor at
// the identity; the rest go to result.not_fitted.
void ScreenFactors(Evaluator& evaluator, const std::vector<double>& identity,
                   const std::vector<bool>& on_tflops,
                   const FitOptions& options, double step, FitResult& result) {
  const std::vector<Factor> candidates =
      options.factors.empty()
          ? std::vector<Factor>(std::begin(calibration::kFactors),
                                std::end(calibration::kFactors))
          : options.factors;
  for (Factor f : candidates) {
    Corrections c;
    c.at(f) = std::exp(step);
    const std::vector<double>& moved = evaluator.LogPredictions(c, on_tflops);
    double sensitivity = 0;
    for (size_t k = 0; k < identity.size(); ++k) {
      sensitivity =
          std::max(sensitivity, std::abs(moved[k] - identity[k]) / step);
    }
    (sensitivity >= kMinSensitivity ? result.fitted : result.not_fitted)
        .push_back(f);
  }
}

}  // namespace

util::Result<FitResult> FitCalibration(
    const std::vector<studies::MeasuredRun>& runs, const FitOptions& options) {
  const studies::RunReplayer replayer(runs);
  // The identity replay of every row decides which rows are fitted.
  const std::vector<studies::RunPrediction> base =
      replayer.Simulate(calibration::Profile{}, options.jobs);
  std::vector<size_t> rows;
  std::vector<bool> on_tflops;
  std::vector<double> log_measured;
  for (size_t i = 0; i < runs.size(); ++i) {
    const studies::MeasuredRun& run = runs[i];
    if (!base[i].simulated || !(run.tflops || run.step_s)) continue;
    const double measured = run.tflops ? *run.tflops : *run.step_s;
    if (!(measured > 0)) continue;
    rows.push_back(i);
    on_tflops.push_back(run.tflops.has_value());
    log_measured.push_back(std::log(measured));
  }
  if (rows.empty()) {
    return util::Fail(
        "calibrate fit: no row with a measured TFLOPS/GPU or step time can "
        "be simulated");
  }
  FitResult result;
  result.rows = static_cast<int>(rows.size());
  result.tflops_rows =
      static_cast<int>(std::count(on_tflops.begin(), on_tflops.end(), true));
  Evaluator evaluator(replayer, rows, runs.size(), options.jobs);
  const std::vector<double> identity =
      evaluator.LogPredictions(Corrections{}, on_tflops);
  std::vector<size_t> all(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) all[k] = k;
  result.baseline_mape_pct = Mape(identity, log_measured, all);

  // Factors some row moves with, from the same points the solver's
  // Jacobian at the identity takes (so they are replayed once).
  calibration::LeastSquaresOptions ls;
  ls.max_evaluations = options.max_evaluations;
  ScreenFactors(evaluator, identity, on_tflops, options, ls.jacobian_step,
                result);

  const size_t n = result.fitted.size();
  auto corrections_of = [&](const std::vector<double>& x) {
    Corrections c;
    for (size_t j = 0; j < n; ++j) c.at(result.fitted[j]) = std::exp(x[j]);
    return c;
  };
  // Factors fitted on the rows `train` (indices into `rows`).
  auto fit = [&](const std::vector<size_t>& train) {
    if (n == 0) return Corrections{};
    const calibration::Residuals residuals = [&](const std::vector<double>& x) {
      const std::vector<double>& logs =
          evaluator.LogPredictions(corrections_of(x), on_tflops);
      std::vector<double> r;
      r.reserve(train.size());
      for (size_t k : train) {
        r.push_back(Residual(logs[k] - log_measured[k], options.loss));
      }
      return r;
    };
    const calibration::LeastSquaresResult solved =
        calibration::BoundedLeastSquares(
            residuals, std::vector<double>(n, 0.0),
            std::vector<double>(n, std::log(calibration::kMinFactor)),
            std::vector<double>(n, std::log(calibration::kMaxFactor)), ls);
    return corrections_of(solved.x);
  };

  // Cross-validation: each fold predicted by factors fitted on the others.
  if (options.folds >= 2) {
    std::vector<std::vector<size_t>> held_out(options.folds);
    for (size_t k = 0; k < rows.size(); ++k) {
      held_out[util::Fnv1a(runs[rows[k]].id) % options.folds].push_back(k);
    }
    double error_sum = 0;
    int predicted = 0;
    for (int fold = 0; fold < options.folds; ++fold) {
      FoldResult fr;
      fr.rows = static_cast<int>(held_out[fold].size());
      if (fr.rows == 0) {
        result.folds.push_back(fr);
        continue;
      }
      std::vector<size_t> train;
      for (size_t k = 0; k < rows.size(); ++k) {
        if (util::Fnv1a(runs[rows[k]].id) % options.folds !=
            static_cast<uint64_t>(fold)) {
          train.push_back(k);
        }
      }
      if (train.empty()) {
        return util::Fail(
            "calibrate fit: every row falls in one fold; use fewer --folds or "
            "more rows");
      }
      fr.factors = fit(train);
      const std::vector<double>& logs =
          evaluator.LogPredictions(fr.factors, on_tflops);
      fr.mape_pct = Mape(logs, log_measured, held_out[fold]);
      error_sum += fr.mape_pct * fr.rows;
      predicted += fr.rows;
      result.folds.push_back(fr);
    }
    result.cv_mape_pct = predicted > 0 ? error_sum / predicted : 0;
  } else {
    result.cv_mape_pct = std::numeric_limits<double>::quiet_NaN();
  }

  // The profile: every row, rounded as written.
  Corrections fitted = fit(all);
  for (double& v : fitted.values) v = Round4(v);
  result.factors = fitted;
  result.training_mape_pct =
      Mape(evaluator.LogPredictions(fitted, on_tflops), log_measured, all);
  result.evaluations = evaluator.evaluations();
  if (evaluator.error()) return std::unexpected(*evaluator.error());
  return result;
}

util::Result<PerGpuFit> FitCalibrationPerGpu(
    const std::vector<studies::MeasuredRun>& runs, const FitOptions& options) {
  PerGpuFit out;
  for (const std::string& gpu : calibration::TableGpus()) {
    std::vector<studies::MeasuredRun> rows;
    for (const studies::MeasuredRun& run : runs) {
      if (run.gpu == gpu) rows.push_back(run);
    }
    if (rows.empty()) continue;
    auto fitted = FitCalibration(rows, options);
    if (fitted) {
      out.fits.push_back({gpu, std::move(*fitted)});
    } else {
      out.skipped.push_back(gpu + ": " + fitted.error().message);
    }
  }
  if (out.fits.empty()) {
    return util::Fail(
        "calibrate fit --per-gpu: no row of a calibration table GPU can be "
        "simulated");
  }
  return out;
}

}  // namespace moesim::studies
