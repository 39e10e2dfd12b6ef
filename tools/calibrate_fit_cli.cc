#include "tools/calibrate_fit_cli.h"

#include <utility>

#include "calibration/fit.h"
#include "tools/cli_checks.h"
#include "tools/text_format.h"
#include "util/json_write.h"

namespace moesim::tools {

using calibration::Corrections;
using calibration::Factor;

std::string ErrorsOf(int folds, double base, double train, double cross) {
  return Format(
      "MAPE: no profile %.1f%%, training %.1f%%, %d-fold cross-validated "
      "%.1f%%",
      base, train, folds, cross);
}

std::string FormatFitJson(const CalibrateFitFlags& f,
                          const std::string& runs_name,
                          const std::vector<studies::GpuFit>& groups,
                          const std::vector<std::string>& skipped,
                          const FitTotals& t) {
  using Layout = util::JsonWriter::Layout;
  util::JsonWriter w;
  auto names = [](const std::vector<Factor>& factors) {
    std::vector<std::string> out;
    for (Factor fa : factors) out.push_back(calibration::FactorName(fa));
    return out;
  };
  auto factors = [&w](const Corrections& c, const std::vector<Factor>& which) {
    w.Key("factors").BeginObject();
    for (Factor fa : which) w.Key(calibration::FactorName(fa)).Number(c.at(fa));
    w.EndObject();
  };
  auto fit = [&](const studies::FitResult& r) {
    w.Key("rows").Number(r.rows).Key("tflops_rows").Number(r.tflops_rows);
    w.Key("fitted").Strings(names(r.fitted));
    w.Key("not_fitted").Strings(names(r.not_fitted));
    factors(r.factors, r.fitted);
    w.Key("baseline_mape_pct").Number(r.baseline_mape_pct);
    w.Key("training_mape_pct").Number(r.training_mape_pct);
    w.Key("cv_mape_pct").Number(r.cv_mape_pct);
    w.Key("folds").BeginArray(Layout::kLines);
    for (const studies::FoldResult& fr : r.folds) {
      w.BeginObject().Key("rows").Number(fr.rows);
      w.Key("mape_pct").Number(fr.mape_pct);
      factors(fr.factors, r.fitted);
      w.EndObject();
    }
    w.EndArray().Key("evaluations").Number(r.evaluations);
  };
  w.BeginObject(Layout::kLines).Key("runs").String(runs_name);
  w.Key("confidence").String(f.confidence).Key("loss").String(f.loss);
  if (f.per_gpu) {
    w.Key("rows").Number(t.rows).Key("baseline_mape_pct").Number(t.baseline);
    w.Key("training_mape_pct").Number(t.training);
    w.Key("cv_mape_pct").Number(t.cv);
    w.Key("per_gpu").BeginArray(Layout::kLines);
    for (const studies::GpuFit& g : groups) {
      w.BeginObject(Layout::kLines).Key("gpu").String(g.gpu);
      fit(g.result);
      w.EndObject();
    }
    w.EndArray().Key("skipped").Strings(skipped);
  } else {
    fit(groups[0].result);
  }
  w.Key("out").String(f.out).EndObject();
  return std::move(w).Take();
}

std::string FormatFitText(const CalibrateFitFlags& f, const std::string& data,
                          const std::vector<studies::GpuFit>& groups,
                          const std::vector<std::string>& skipped,
                          const FitTotals& t) {
  const std::string errors = ErrorsOf(f.folds, t.baseline, t.training, t.cv);
  std::string s = "calibrate fit: " + data + "\n";
  s += Format("%d replays of every row\n", t.evaluations);
  for (const studies::GpuFit& g : groups) {
    const studies::FitResult& r = g.result;
    if (!g.gpu.empty()) {
      s += Format("\n%s: %d rows, ", g.gpu.c_str(), r.rows) +
           ErrorsOf(f.folds, r.baseline_mape_pct, r.training_mape_pct,
                    r.cv_mape_pct) +
           "\n";
    }
    s += "\nfactor                        fitted\n";
    for (Factor fa : r.fitted) {
      s += Format("  %-27s %7.4f\n", calibration::FactorName(fa),
                  r.factors.at(fa));
    }
    for (Factor fa : r.not_fitted) {
      s += Format("  %-27s       - (no row moves with it)\n",
                  calibration::FactorName(fa));
    }
    if (g.gpu.empty()) s += "\n" + errors + "\n";
    s += "\nfold  held-out rows  MAPE     factors fitted on the other folds\n";
    for (size_t i = 0; i < r.folds.size(); ++i) {
      const studies::FoldResult& fr = r.folds[i];
      std::string factors;
      for (Factor fa : r.fitted) factors += Format(" %.3f", fr.factors.at(fa));
      s += Format("  %-3zu %13d %6.1f%%   %s\n", i, fr.rows, fr.mape_pct,
                  factors.c_str());
    }
  }
  if (f.per_gpu) s += "\nall GPU types: " + errors + "\n";
  for (const std::string& why : skipped) s += "not fitted: " + why + "\n";
  s += "\nwrote " + f.out + "\n";
  return s;
}

void AddCalibrateFitFlags(CLI::App& app, CalibrateFitFlags& f) {
  app.add_option("--runs", f.runs_file,
                 "Measured runs CSV (calibration/runs/SCHEMA.md; default: the "
                 "shipped calibration/runs/runs.csv)");
  app.add_option("--out", f.out, "Profile to write (.textproto)")->required();
  app.add_option("--factors", f.factors,
                 "Comma-separated factors to fit (default: every factor some "
                 "row's prediction moves with)");
  app.add_option("--folds", f.folds,
                 "Cross-validation folds (rows assigned by a hash of their id)")
      ->check(IntInRange(2, 100));
  app.add_option("--confidence", f.confidence,
                 "Comma-separated confidence levels of the rows to fit: high, "
                 "medium, low");
  app.add_option("--name", f.name, "The profile's name");
  app.add_option("--loss", f.loss,
                 "squared (default: least squares on the log error) or "
                 "soft_l1 (quadratic within ~10%, linear beyond, like MAPE)")
      ->check(CLI::IsMember({"squared", "soft_l1"}));
  app.add_option("--max-evaluations", f.max_evaluations,
                 "Replays of every row one fit may take, its Jacobian's "
                 "included (default 14; each fold is a fit)")
      ->check(IntInRange(2, 1000));
  app.add_option("-j,--jobs", f.jobs,
                 "Replay threads (default: one per hardware thread); the "
                 "output does not depend on it")
      ->check(IntInRange(0));
  app.add_flag("--per-gpu", f.per_gpu,
               "Fit each GPU type's rows on their own and write one gpu "
               "entry per type");
  app.add_flag("--json", f.json, "Print the report as JSON");
}

}  // namespace moesim::tools
