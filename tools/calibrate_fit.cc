#include "tools/calibrate_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>

#include "calibration/fit.h"
#include "calibration/tables.h"
#include "tools/calibrate_fit_cli.h"
#include "tools/cli_checks.h"
#include "tools/text_format.h"
#include "util/csv.h"
#include "util/fnv.h"
#include "util/output.h"

namespace moesim::tools {

namespace {

using calibration::Corrections;
using calibration::Factor;

double Round4(double v) { return std::round(v * 1e4) / 1e4; }

// Replays the fitted rows under trial corrections, each distinct set once.
class Evaluator {
 public:
  Evaluator(const RunReplayer& replayer, std::vector<size_t> rows,
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
                                            const std::vector<bool>& tflops) {
    auto it = cache_.find(c.values);
    if (it != cache_.end()) return it->second;
    calibration::Profile profile;
    profile.all = c;
    const std::vector<RunPrediction> out =
        replayer_.Simulate(profile, jobs_, selected_);
    std::vector<double> logs(rows_.size(), 0.0);
    for (size_t k = 0; k < rows_.size(); ++k) {
      const RunPrediction& p = out[rows_[k]];
      if (!p.simulated) {
        if (!error_) error_ = util::Error{p.row->id + ": " + p.reason};
        continue;
      }
      logs[k] = std::log(tflops[k] ? p.tflops : p.step_s);
    }
    return cache_.emplace(c.values, std::move(logs)).first->second;
  }

  int evaluations() const { return static_cast<int>(cache_.size()); }
  const std::optional<util::Error>& error() const { return error_; }

 private:
  const RunReplayer& replayer_;
  std::vector<size_t> rows_;
  std::vector<bool> selected_;
  int jobs_;
  std::map<std::array<double, calibration::kNumFactors>, std::vector<double>>
      cache_;
  std::optional<util::Error> error_;
};

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

std::string FactorList(const std::vector<Factor>& factors) {
  std::string out;
  for (Factor f : factors) {
    out += (out.empty() ? "" : ", ") + std::string(calibration::FactorName(f));
  }
  return out.empty() ? "none" : out;
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

util::Result<FitResult> FitCalibration(const std::vector<MeasuredRun>& runs,
                                       const FitOptions& options) {
  const RunReplayer replayer(runs);
  // The identity replay of every row decides which rows are fitted.
  const std::vector<RunPrediction> base =
      replayer.Simulate(calibration::Profile{}, options.jobs);
  std::vector<size_t> rows;
  std::vector<bool> on_tflops;
  std::vector<double> log_measured;
  for (size_t i = 0; i < runs.size(); ++i) {
    const MeasuredRun& run = runs[i];
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
    const std::vector<MeasuredRun>& runs, const FitOptions& options) {
  PerGpuFit out;
  for (const std::string& gpu : calibration::TableGpus()) {
    std::vector<MeasuredRun> rows;
    for (const MeasuredRun& run : runs) {
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

namespace {

// The fit's options from the flags; the --confidence levels in `levels`.
util::Result<FitOptions> FitOptionsOf(const CalibrateFitFlags& f,
                                      std::vector<std::string>& levels) {
  FitOptions options;
  options.folds = f.folds;
  options.jobs = f.jobs;
  options.loss = f.loss == "soft_l1" ? Loss::kSoftL1 : Loss::kSquared;
  options.max_evaluations = f.max_evaluations;
  for (const std::string& name : util::SplitList(f.factors, ",")) {
    auto factor = calibration::ParseFactor(name);
    if (!factor)
      return std::unexpected(FlagError("--factors", factor.error().message));
    if (std::find(options.factors.begin(), options.factors.end(), *factor) ==
        options.factors.end()) {
      options.factors.push_back(*factor);
    }
  }
  levels = util::SplitList(f.confidence, ",");
  for (const std::string& level : levels) {
    if (level != "high" && level != "medium" && level != "low") {
      return std::unexpected(FlagError(
          "--confidence", "unknown level '" + level + "' (high, medium, low)"));
    }
  }
  return options;
}

}  // namespace

util::Result<std::string> RunCalibrateFit(const CalibrateFitFlags& f) {
  std::vector<std::string> levels;
  auto options = FitOptionsOf(f, levels);
  if (!options) return std::unexpected(options.error());
  auto runs = LoadMeasuredRuns(f.runs_file, "--runs");
  // The profile's target, checked before the fit's minutes of work: its
  // folder takes files and it is not one of the inputs.
  if (runs) {
    if (auto ok = util::CheckOutputTargets({{"--out", f.out}}); !ok)
      return std::unexpected(ok.error());
  }
  if (!runs) return std::unexpected(runs.error());
  std::vector<MeasuredRun> chosen;
  for (const MeasuredRun& run : runs->rows) {
    if (std::find(levels.begin(), levels.end(), run.confidence) !=
        levels.end()) {
      chosen.push_back(run);
    }
  }
  // One fit of every chosen row, or one per GPU type.
  std::vector<GpuFit> groups;  // gpu empty: every GPU
  std::vector<std::string> skipped;
  if (f.per_gpu) {
    auto fitted = FitCalibrationPerGpu(chosen, *options);
    if (!fitted) return std::unexpected(fitted.error());
    groups = std::move(fitted->fits);
    skipped = std::move(fitted->skipped);
  } else {
    auto fitted = FitCalibration(chosen, *options);
    if (!fitted) return std::unexpected(fitted.error());
    groups.push_back({"", std::move(*fitted)});
  }

  calibration::Profile profile;
  profile.name = f.name.empty() ? "fit to " + runs->name : f.name;
  FitTotals t;  // rows-weighted sums, then means
  for (const GpuFit& g : groups) {
    const FitResult& r = g.result;
    if (g.gpu.empty()) {
      profile.all = r.factors;
    } else {
      profile.by_gpu.emplace_back(g.gpu, r.factors);
    }
    t.rows += r.rows;
    t.tflops_rows += r.tflops_rows;
    t.evaluations += r.evaluations;
    t.baseline += r.baseline_mape_pct * r.rows;
    t.training += r.training_mape_pct * r.rows;
    t.cv += r.cv_mape_pct * r.rows;
  }
  t.baseline /= t.rows;
  t.training /= t.rows;
  t.cv /= t.rows;
  const std::string data =
      Format("%s, confidence %s: %d rows (%d on TFLOPS/GPU, %d on step time)",
             runs->name.c_str(), f.confidence.c_str(), t.rows, t.tflops_rows,
             t.rows - t.tflops_rows);
  const std::string errors = ErrorsOf(f.folds, t.baseline, t.training, t.cv);
  std::vector<std::string> header = {
      "Calibration profile written by `moesim calibrate fit`.",
      "data: " + data};
  for (const GpuFit& g : groups) {
    const FitResult& r = g.result;
    const std::string who =
        g.gpu.empty() ? "" : g.gpu + " (" + std::to_string(r.rows) + " rows): ";
    header.push_back(who + "fitted: " + FactorList(r.fitted) + " (loss " +
                     f.loss + ")");
    header.push_back(who +
                     "not fitted (no row's prediction moves with "
                     "them): " +
                     FactorList(r.not_fitted));
    if (!g.gpu.empty()) {
      header.push_back(who + ErrorsOf(f.folds, r.baseline_mape_pct,
                                      r.training_mape_pct, r.cv_mape_pct));
    }
  }
  header.push_back(
      errors + " (of TFLOPS/GPU, or step time where TFLOPS is not measured)");
  header.push_back(
      Format("folds: FNV-1a hash of the row id mod %d; each fold predicted by "
             "factors fitted on the others%s",
             f.folds, f.per_gpu ? " of its GPU type" : ""));
  header.push_back("");
  if (auto ok = util::WriteOutputFile(
          f.out, calibration::FormatProfile(profile, header), "--out");
      !ok)
    return std::unexpected(ok.error());

  if (f.json) return FormatFitJson(f, runs->name, groups, skipped, t);
  return FormatFitText(f, data, groups, skipped, t);
}

}  // namespace moesim::tools
