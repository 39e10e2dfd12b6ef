// calibrate fit's command-line side: its report as JSON and as text (its
// flags, AddCalibrateFitFlags, are declared in tools/calibrate_fit.h);
// tools/calibrate_fit.cc runs the fit and writes the profile.
#ifndef MOESIM_TOOLS_CALIBRATE_FIT_CLI_H_
#define MOESIM_TOOLS_CALIBRATE_FIT_CLI_H_

#include <string>
#include <vector>

#include "tools/calibrate_fit.h"

namespace moesim::tools {

// Every fit's rows and rows-weighted MAPEs (RunCalibrateFit).
struct FitTotals {
  int rows = 0, tflops_rows = 0, evaluations = 0;
  double baseline = 0, training = 0, cv = 0;
};

// "MAPE: no profile .., training .., N-fold cross-validated ..".
std::string ErrorsOf(int folds, double base, double train, double cross);

// calibrate fit --json: one fit's fields in the top object, or with
// --per-gpu one object per GPU type.
std::string FormatFitJson(const CalibrateFitFlags& f,
                          const std::string& runs_name,
                          const std::vector<studies::GpuFit>& groups,
                          const std::vector<std::string>& skipped,
                          const FitTotals& totals);

// calibrate fit's text: each fit's factors and folds; `data` names the rows.
std::string FormatFitText(const CalibrateFitFlags& f, const std::string& data,
                          const std::vector<studies::GpuFit>& groups,
                          const std::vector<std::string>& skipped,
                          const FitTotals& totals);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_CALIBRATE_FIT_CLI_H_
