// `moesim validate-kernels` (leave-one-out prediction of every measured kernel
// row, MAPE per GPU and kernel kind) and `moesim calibrate import-nccl-tests`
// (nccl-tests logs to collectives.csv rows).
#ifndef MOESIM_TOOLS_CALIBRATE_REPORT_H_
#define MOESIM_TOOLS_CALIBRATE_REPORT_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "util/error.h"

namespace moesim::tools {

struct ValidateKernelsFlags {
  std::string gpu;         // empty: every shipped GPU
  std::string tables_dir;  // a user's folder instead of the shipped tables
  bool json = false;
};
void AddValidateKernelsFlags(CLI::App& app, ValidateKernelsFlags& flags);
[[nodiscard]] util::Result<std::string> RunValidateKernels(
    const ValidateKernelsFlags& flags);

struct ImportNcclFlags {
  std::vector<std::string> logs;
  std::string system;
  std::string tier;
  std::string out;                // empty: stdout
  std::optional<int> group_size;  // --group-size
};
void AddImportNcclFlags(CLI::App& app, ImportNcclFlags& flags);
[[nodiscard]] util::Result<std::string> RunImportNccl(
    const ImportNcclFlags& flags);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_CALIBRATE_REPORT_H_
