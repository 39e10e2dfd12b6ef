// bench_env: the environment the calibration benchmarks ran in, as
// key: value lines on stdout (run_all.sh saves it as env.txt next to the
// tables), or with --slug only the GPU's folder name ("nvidia-h200", the
// GPU part of every row's measured:<gpu>:<date> source).
//
// Lists every visible GPU (name, compute capability, SMs, memory, L2, peak
// clocks, and from NVML when available: current and max clocks, power
// limit, PCIe link, active NVLinks), the driver, the CUDA runtime, and the
// cuBLAS / cuBLASLt / cuDNN / NCCL versions of the libraries the benchmarks
// were linked against.
#include <cublasLt.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "calibration/cuda/bench_common.h"
#include "calibration/cuda/nvml_probe.h"

#ifdef MOESIM_HAVE_CUDNN
#include <cudnn.h>
#endif
#ifdef MOESIM_HAVE_NCCL
#include <nccl.h>
#endif

namespace moesim::cuda_bench {
namespace {

int Run(int argc, char** argv) {
  const bool slug_only = argc > 1 && std::strcmp(argv[1], "--slug") == 0;
  if (argc > 1 && !slug_only) {
    std::fprintf(stderr, "usage: bench_env [--slug]\n");
    return 2;
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    std::fprintf(
        stderr,
        "bench_env: no CUDA device usable (%s); the benchmarks use "
        "CUDA runtime %d, whose driver must be at least as new\n",
        status == cudaSuccess ? "0 devices" : cudaGetErrorString(status),
        runtime);
    return 1;
  }
  cudaDeviceProp prop{};
  BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (slug_only) {
    std::printf("%s\n", GpuSlug(prop.name).c_str());
    return 0;
  }

  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &utc);
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("date_utc: %s\nhost: %s\nsource: %s\ngpus: %d\n", when, host,
              MeasuredSource(0).c_str(), count);
  std::printf("cuda_driver_api: %d\ncuda_runtime: %d\n", driver, runtime);
  std::printf("cublasLt: %zu\n", cublasLtGetVersion());
#ifdef MOESIM_HAVE_CUDNN
  std::printf("cudnn: %zu\n", cudnnGetVersion());
#else
  std::printf("cudnn: not built\n");
#endif
#ifdef MOESIM_HAVE_NCCL
  int nccl = 0;
  ncclGetVersion(&nccl);
  std::printf("nccl: %d\n", nccl);
#else
  std::printf("nccl: not built\n");
#endif
  for (int d = 0; d < count; ++d) {
    BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    int sm_khz = 0, mem_khz = 0, atomics = 0, page_tables = 0;
    cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, d);
    cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, d);
    cudaDeviceGetAttribute(&atomics, cudaDevAttrHostNativeAtomicSupported, d);
    cudaDeviceGetAttribute(
        &page_tables, cudaDevAttrPageableMemoryAccessUsesHostPageTables, d);
    char bus[32] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof(bus), d);
    std::printf(
        "gpu%d: name=\"%s\" pci=%s cc=%d.%d sms=%d mem_gib=%.1f l2_mib=%.1f "
        "sm_clock_peak_mhz=%d mem_clock_peak_mhz=%d host_native_atomics=%d "
        "host_page_tables=%d\n",
        d, prop.name, bus, prop.major, prop.minor, prop.multiProcessorCount,
        prop.totalGlobalMem / 1073741824.0, prop.l2CacheSize / 1048576.0,
        sm_khz / 1000, mem_khz / 1000, atomics, page_tables);
    NvmlInfo nvml = QueryNvml(d);
    if (!nvml.available) {
      std::printf("gpu%d_nvml: unavailable\n", d);
      continue;
    }
    std::printf(
        "gpu%d_nvml: driver=%s sm_clock_now_mhz=%u sm_clock_max_mhz=%u "
        "mem_clock_now_mhz=%u mem_clock_max_mhz=%u power_limit_w=%u "
        "pcie_max=gen%u_x%u pcie_now=gen%u_x%u nvlinks_active=%d\n",
        d, nvml.driver_version.c_str(), nvml.sm_clock_mhz,
        nvml.sm_clock_max_mhz, nvml.mem_clock_mhz, nvml.mem_clock_max_mhz,
        nvml.power_limit_w, nvml.pcie_gen_max, nvml.pcie_width_max,
        nvml.pcie_gen_now, nvml.pcie_width_now, nvml.nvlinks_active);
  }
  return 0;
}

}  // namespace
}  // namespace moesim::cuda_bench

int main(int argc, char** argv) { return moesim::cuda_bench::Run(argc, argv); }
