// GPU systems: the shipped ones (topology/systems/*.textproto, compiled into
// the binary) or a .textproto path.
#ifndef MOESIM_TOPOLOGY_SYSTEM_H_
#define MOESIM_TOPOLOGY_SYSTEM_H_

#include <string>
#include <string_view>
#include <vector>

#include "topology/system.pb.h"
#include "util/error.h"

namespace moesim::topology {

// Names of the shipped systems, sorted.
std::vector<std::string> SystemNames();

// Loads a shipped system name ("dgx-h100") or a .textproto path. Errors:
// unknown name (listing the shipped ones), parse errors with file:line,
// missing fields (memory_gib, bf16_dense_tflops, gpus_per_node, ...).
[[nodiscard]] util::Result<System> LoadSystem(std::string_view name_or_path);

// The GPUs of the shipped systems (each one's gpu.calibration, the table
// folder): Hopper before Blackwell, by name within each, i.e. h100, h200,
// b200, b300, gb200, gb300. A new system file adds its GPU here.
const std::vector<std::string>& ShippedGpus();

// The shipped system of a runs.csv `gpu` value (a ShippedGpus() entry): the
// one whose gpu.calibration it is, e.g. "h100" -> "dgx-h100". Error for an
// unknown GPU.
[[nodiscard]] util::Result<std::string> SystemForGpu(std::string_view gpu);

}  // namespace moesim::topology

#endif  // MOESIM_TOPOLOGY_SYSTEM_H_
