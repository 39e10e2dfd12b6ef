// What NVML says about a GPU: driver version, clocks, power limit, PCIe
// link and NVLink state. NVML is optional: the library (libnvidia-ml.so.1,
// shipped with the driver, not the toolkit) is opened with dlopen at run
// time, so the benchmarks build without its header and run without it.
#ifndef MOESIM_CALIBRATION_CUDA_NVML_PROBE_H_
#define MOESIM_CALIBRATION_CUDA_NVML_PROBE_H_

#include <string>

namespace moesim::cuda_bench {

struct NvmlInfo {
  bool available = false;      // NVML loaded and the device was found
  std::string driver_version;  // e.g. "570.124.06"
  unsigned sm_clock_mhz = 0;   // current SM clock
  unsigned sm_clock_max_mhz = 0;
  unsigned mem_clock_mhz = 0;
  unsigned mem_clock_max_mhz = 0;
  unsigned power_limit_w = 0;  // enforced power limit
  unsigned pcie_gen_max = 0;   // link the device supports (0: unknown)
  unsigned pcie_width_max = 0;
  unsigned pcie_gen_now = 0;  // link right now (may be downshifted at idle)
  unsigned pcie_width_now = 0;
  int nvlinks_active = -1;  // active NVLink links; -1: unknown
};

// Queries NVML for CUDA device `cuda_device` (matched by PCI bus id, since
// NVML and CUDA may number devices differently). Never fails: fields NVML
// cannot give keep their defaults.
NvmlInfo QueryNvml(int cuda_device);

}  // namespace moesim::cuda_bench

#endif  // MOESIM_CALIBRATION_CUDA_NVML_PROBE_H_
