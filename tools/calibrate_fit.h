// `moesim calibrate fit --runs CSV --out PROFILE.textproto [--factors a,b]
// [--folds K] [--confidence high,medium] [--loss squared|soft_l1]
// [--max-evaluations N] [-j N] [--json]`: fits a calibration profile to a
// cluster's measured runs (the fit: studies/calibrate_fit.h) and writes it.
#ifndef MOESIM_TOOLS_CALIBRATE_FIT_H_
#define MOESIM_TOOLS_CALIBRATE_FIT_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "studies/calibrate_fit.h"
#include "util/error.h"

namespace moesim::tools {

struct CalibrateFitFlags {
  std::string runs_file;  // empty: the shipped calibration/runs/runs.csv
  std::string out;        // the profile to write (required)
  std::string factors;    // comma-separated; empty: every factor
  std::string confidence = "high,medium";
  std::string name;  // the profile's name; empty: from the runs file
  std::string loss = "squared";  // or "soft_l1"
  int folds = 5;
  int jobs = 0;
  int max_evaluations = 14;  // per fit, the Jacobian's included
  bool per_gpu = false;
  bool json = false;
};
void AddCalibrateFitFlags(CLI::App& app, CalibrateFitFlags& flags);

// The whole command: load, fit, write --out, report (text or JSON).
[[nodiscard]] util::Result<std::string> RunCalibrateFit(
    const CalibrateFitFlags& flags);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_CALIBRATE_FIT_H_
