#include "calibration/cuda/nvml_probe.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

namespace moesim::cuda_bench {
namespace {

// The few NVML entry points used, declared by hand (no nvml.h in the
// toolkit). nvmlReturn_t is an int enum (0 = success); nvmlDevice_t an
// opaque pointer; nvmlClockType_t and nvmlEnableState_t int enums.
using NvmlDevice = void*;
using InitFn = int (*)();
using ShutdownFn = int (*)();
using DriverVersionFn = int (*)(char*, unsigned);
using HandleByBusIdFn = int (*)(const char*, NvmlDevice*);
using ClockFn = int (*)(NvmlDevice, int, unsigned*);
using UintFn = int (*)(NvmlDevice, unsigned*);
using NvLinkStateFn = int (*)(NvmlDevice, unsigned, int*);

constexpr int kClockSm = 1;           // NVML_CLOCK_SM
constexpr int kClockMem = 2;          // NVML_CLOCK_MEM
constexpr unsigned kMaxNvLinks = 18;  // NVML_NVLINK_MAX_LINKS

template <typename Fn>
Fn Symbol(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

}  // namespace

NvmlInfo QueryNvml(int cuda_device) {
  NvmlInfo info;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return info;
  auto init = Symbol<InitFn>(lib, "nvmlInit_v2");
  auto shutdown = Symbol<ShutdownFn>(lib, "nvmlShutdown");
  auto by_bus_id =
      Symbol<HandleByBusIdFn>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  if (init == nullptr || shutdown == nullptr || by_bus_id == nullptr ||
      init() != 0) {
    dlclose(lib);
    return info;
  }
  char bus_id[32] = {0};
  NvmlDevice dev = nullptr;
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device) ==
          cudaSuccess &&
      by_bus_id(bus_id, &dev) == 0) {
    info.available = true;
    if (auto f = Symbol<DriverVersionFn>(lib, "nvmlSystemGetDriverVersion")) {
      char version[96] = {0};
      if (f(version, sizeof(version)) == 0) info.driver_version = version;
    }
    if (auto f = Symbol<ClockFn>(lib, "nvmlDeviceGetClockInfo")) {
      f(dev, kClockSm, &info.sm_clock_mhz);
      f(dev, kClockMem, &info.mem_clock_mhz);
    }
    if (auto f = Symbol<ClockFn>(lib, "nvmlDeviceGetMaxClockInfo")) {
      f(dev, kClockSm, &info.sm_clock_max_mhz);
      f(dev, kClockMem, &info.mem_clock_max_mhz);
    }
    if (auto f = Symbol<UintFn>(lib, "nvmlDeviceGetEnforcedPowerLimit")) {
      unsigned mw = 0;
      if (f(dev, &mw) == 0) info.power_limit_w = mw / 1000;
    }
    auto uint_query = [&](const char* name, unsigned* out) {
      if (auto f = Symbol<UintFn>(lib, name)) f(dev, out);
    };
    uint_query("nvmlDeviceGetMaxPcieLinkGeneration", &info.pcie_gen_max);
    uint_query("nvmlDeviceGetMaxPcieLinkWidth", &info.pcie_width_max);
    uint_query("nvmlDeviceGetCurrPcieLinkGeneration", &info.pcie_gen_now);
    uint_query("nvmlDeviceGetCurrPcieLinkWidth", &info.pcie_width_now);
    if (auto f = Symbol<NvLinkStateFn>(lib, "nvmlDeviceGetNvLinkState")) {
      int active_links = 0;
      bool any_answer = false;
      for (unsigned link = 0; link < kMaxNvLinks; ++link) {
        int state = 0;
        if (f(dev, link, &state) != 0) continue;  // no such link
        any_answer = true;
        if (state != 0) ++active_links;
      }
      if (any_answer) info.nvlinks_active = active_links;
    }
  }
  shutdown();
  dlclose(lib);
  return info;
}

}  // namespace moesim::cuda_bench
