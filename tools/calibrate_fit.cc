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

std::string FactorList(const std::vector<Factor>& factors) {
  std::string out;
  for (Factor f : factors) {
    out += (out.empty() ? "" : ", ") + std::string(calibration::FactorName(f));
  }
  return out.empty() ? "none" : out;
}

}  // namespace

namespace {

// The fit's options from the flags; the --confidence levels in `levels`.
util::Result<studies::FitOptions> FitOptionsOf(
    const CalibrateFitFlags& f, std::vector<std::string>& levels) {
  studies::FitOptions options;
  options.folds = f.folds;
  options.jobs = f.jobs;
  options.loss =
      f.loss == "soft_l1" ? studies::Loss::kSoftL1 : studies::Loss::kSquared;
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
  auto runs = studies::LoadMeasuredRuns(f.runs_file, "--runs");
  // The profile's target, checked before the fit's minutes of work: its
  // folder takes files and it is not one of the inputs.
  if (runs) {
    if (auto ok = util::CheckOutputTargets({{"--out", f.out}}); !ok)
      return std::unexpected(ok.error());
  }
  if (!runs) return std::unexpected(runs.error());
  std::vector<studies::MeasuredRun> chosen;
  for (const studies::MeasuredRun& run : runs->rows) {
    if (std::find(levels.begin(), levels.end(), run.confidence) !=
        levels.end()) {
      chosen.push_back(run);
    }
  }
  // One fit of every chosen row, or one per GPU type.
  std::vector<studies::GpuFit> groups;  // gpu empty: every GPU
  std::vector<std::string> skipped;
  if (f.per_gpu) {
    auto fitted = studies::FitCalibrationPerGpu(chosen, *options);
    if (!fitted) return std::unexpected(fitted.error());
    groups = std::move(fitted->fits);
    skipped = std::move(fitted->skipped);
  } else {
    auto fitted = studies::FitCalibration(chosen, *options);
    if (!fitted) return std::unexpected(fitted.error());
    groups.push_back({"", std::move(*fitted)});
  }

  calibration::Profile profile;
  profile.name = f.name.empty() ? "fit to " + runs->name : f.name;
  FitTotals t;  // rows-weighted sums, then means
  for (const studies::GpuFit& g : groups) {
    const studies::FitResult& r = g.result;
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
  for (const studies::GpuFit& g : groups) {
    const studies::FitResult& r = g.result;
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
