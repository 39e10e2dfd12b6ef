// The calibration studies behind `moesim validate-kernels` and `moesim
// calibrate import-nccl` (tools/calibrate_report.h prints them): each
// measured kernel row predicted from the others, grouped by GPU and kind;
// and nccl-tests logs read into collective rows once each is shown to come
// from the system and tier it is imported for.
#ifndef MOESIM_STUDIES_CALIBRATION_CHECKS_H_
#define MOESIM_STUDIES_CALIBRATION_CHECKS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "calibration/cost_model.h"
#include "calibration/nccl_tests.h"
#include "calibration/tables.h"
#include "topology/system.h"
#include "util/error.h"

namespace moesim::studies {

// Rows and mean |error| of one (GPU, kind) group.
struct KernelGroup {
  int points = 0;
  double sum_abs = 0;
  double mape_pct() const { return sum_abs / points; }
};

struct KernelValidation {
  std::vector<calibration::KernelCheck> checks;  // GPU by GPU, table order
  std::map<std::pair<std::string, std::string>, KernelGroup> groups;
};

// Leave-one-out over the tables of each GPU in `gpus` (calibration folder
// names; empty: every shipped one), the shipped tables or, with
// `tables_dir`, a user's folder (then exactly one GPU). Errors: an
// unknown GPU ("flags: --gpu: unknown GPU ..."), a table that does not load.
[[nodiscard]] util::Result<KernelValidation> ValidateKernels(
    std::vector<std::string> gpus, const std::string& tables_dir);

// The collective rows of nccl-tests logs (file paths) measured on `system`
// at `tier` ("nvlink": one NVLink domain; "net": across domains);
// `group_size` (0: from the log) for a log without rank lines. A log whose
// GPU is not the system's, or whose ranks do not sit where the tier says,
// is an error naming the file.
[[nodiscard]] util::Result<std::vector<calibration::CollectiveRow>>
ImportNcclLogs(const std::vector<std::string>& files,
               const topology::System& system, const std::string& tier,
               int group_size);

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_CALIBRATION_CHECKS_H_
