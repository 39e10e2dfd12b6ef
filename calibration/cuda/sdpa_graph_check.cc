// sdpa_graph_check: builds attention_bench's cuDNN graphs for a target GPU
// without a GPU present (cuDNN >= 9.8 device-less compilation: a
// CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR deserialized from the JSON below) and
// reports, per shape and pass, whether a cuDNN engine takes the graph. A
// machine with only the CUDA toolkit can so tell whether attention_bench
// will find plans on the real GPU; nothing is executed. Without a driver
// (no libcuda.so.1) the runtime-compiled engines stop right after accepting
// the graph ("accepted"); with the toolkit's stub libcuda on
// LD_LIBRARY_PATH they also compile the kernel and fail only to load it
// ("compiled"); with a driver and GPU the plan finalizes ("ok").
//
// usage: sdpa_graph_check [--gpu h100|h200|b200] [--graph composite|unified]
//                         [--all] [--kernel-cache]
// Default: the representative shapes (each head configuration at seq 4096,
// causal and not, forward and backward). --all: the whole attention grid.
// --kernel-cache: build as attention_bench --kernel-cache does (forward
// graphs dynamic-shape, sharing one kernel cache per structure; cuDNN 9.19
// refuses dynamic shapes for the SM90 backward, which stays static).
// Exit status 0 when no graph FAILs, 1 otherwise, 77 when this cuDNN cannot
// compile device-less (< 9.8; ctest counts that as skipped).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "calibration/cuda/attention_grid.h"
#include "calibration/cuda/cudnn_sdpa.h"

namespace moesim::cuda_bench {
namespace {

// The fields cuDNN 9.19 reads from a device-property JSON (found by its
// error messages; the values are the GPUs' cudaDeviceProp).
std::string DevicePropJson(const std::string& gpu) {
  const bool blackwell = gpu == "b200";
  const int sms = blackwell ? 148 : 132;
  const int version = blackwell ? 1000 : 900;
  const long long l2 = blackwell ? 132120576LL : 52428800LL;
  const long long memory = blackwell       ? 191501303808LL
                           : gpu == "h100" ? 85029158912LL
                                           : 150754820096LL;
  char json[1024];
  std::snprintf(
      json, sizeof(json),
      "{\"deviceName\":\"NVIDIA %s\",\"cudnnVersion\":%zu,\"schemaVersion\":4,"
      "\"regsPerBlock\":65536,\"multiProcessorCount\":%d,\"warpSize\":32,"
      "\"maxSharedMemoryPerBlock\":49152,"
      "\"maxSharedMemoryPerBlockOptin\":232448,"
      "\"reservedSharedMemoryPerBlock\":1024,\"maxRegistersPerSM\":65536,"
      "\"maxCtasPerSM\":32,\"maxThreadsPerBlock\":1024,"
      "\"maxThreadsPerSM\":%d,\"pciDeviceId\":0,\"isTccDriver\":0,"
      "\"supportCoopLaunch\":1,\"totalGlobalMem\":%lld,"
      "\"smClockRateKHz\":1980000,\"memClockRateKHz\":3201000,"
      "\"l2CacheSize\":%lld,\"cudaDeviceId\":0,\"deviceVer\":%d,"
      "\"driverVer\":13000,\"maxGridSize\":[2147483647,65535,65535],"
      "\"maxBlockSize\":[1024,1024,64]}",
      gpu == "h100"   ? "H100 80GB HBM3"
      : gpu == "h200" ? "H200"
                      : "B200",
      cudnnGetVersion(), sms, blackwell ? 1536 : 2048, memory, l2, version);
  return json;
}

// ok: a plan finalized (a driver is present). compiled: the kernel was
// built and only loading it failed (a stub libcuda). accepted: an engine
// took the graph and stopped where it needs the driver (no libcuda at all).
// FAIL: no engine supports the graph.
const char* Verdict(bool built, const std::string& why) {
  if (built) return "ok";
  if (why.find("cuLibraryLoadData") != std::string::npos) return "compiled";
  if (why.find("libcuda == nullptr") != std::string::npos) return "accepted";
  return "FAIL";
}

int Run(int argc, char** argv) {
  std::string gpu = "h200", graph = "composite";
  bool all = false, use_cache = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--gpu") && i + 1 < argc) {
      gpu = argv[++i];
    } else if (!std::strcmp(argv[i], "--graph") && i + 1 < argc) {
      graph = argv[++i];
    } else if (!std::strcmp(argv[i], "--all")) {
      all = true;
    } else if (!std::strcmp(argv[i], "--kernel-cache")) {
      use_cache = true;
    } else {
      std::fprintf(stderr,
                   "usage: sdpa_graph_check [--gpu h100|h200|b200] [--graph "
                   "composite|unified] [--all] [--kernel-cache]\n");
      return 2;
    }
  }
  if (gpu != "h100" && gpu != "h200" && gpu != "b200") {
    std::fprintf(stderr, "sdpa_graph_check: --gpu is h100, h200 or b200\n");
    return 2;
  }
  const std::string json = DevicePropJson(gpu);
  cudnnBackendDescriptor_t prop = nullptr;
  cudnnStatus_t status =
      cudnnBackendCreateDescriptor(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, &prop);
  if (status == CUDNN_STATUS_SUCCESS)
    status = cudnnBackendSetAttribute(
        prop, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
        static_cast<int64_t>(json.size()), json.data());
  if (status == CUDNN_STATUS_SUCCESS) status = cudnnBackendFinalize(prop);
  if (status != CUDNN_STATUS_SUCCESS) {
    char last[1024] = {0};
    cudnnGetLastErrorString(last, sizeof(last));
    std::fprintf(stderr,
                 "sdpa_graph_check: cuDNN %zu cannot make a device "
                 "description (%s: %s); device-less compilation needs cuDNN "
                 ">= 9.8\n",
                 cudnnGetVersion(), cudnnGetErrorString(status), last);
    return 77;
  }

  // Plans are never executed: any distinct, aligned, non-null addresses do.
  SdpaBuffers fake;
  uintptr_t next = 0x100000;
  for (void** p : {&fake.q, &fake.k, &fake.v, &fake.o, &fake.d_o, &fake.d_q,
                   &fake.d_k, &fake.d_v}) {
    *p = reinterpret_cast<void*>(next);
    next += 0x100000;
  }
  for (float** p : {&fake.stats, &fake.softmax_sum, &fake.dq_accum}) {
    *p = reinterpret_cast<float*>(next);
    next += 0x100000;
  }

  const std::vector<SdpaShape> shapes =
      all ? AttentionGrid(false, 131072) : AttentionCheckShapes();
  const SdpaGraph form =
      graph == "unified" ? SdpaGraph::kUnified : SdpaGraph::kComposite;
  int failed = 0;
  CudnnKernelCaches caches;
  std::printf("cuDNN %zu, device-less target %s, %s graphs\n",
              cudnnGetVersion(), gpu.c_str(), graph.c_str());
  for (const SdpaShape& s : shapes) {
    if (form == SdpaGraph::kUnified && s.causal) continue;
    for (bool backward : {false, true}) {
      if (form == SdpaGraph::kUnified && backward) continue;
      std::string why;
      auto plan =
          BuildSdpaPlan(nullptr, prop, s, backward, form, fake,
                        use_cache && !backward ? &caches : nullptr, &why);
      const char* verdict = Verdict(plan != nullptr, why);
      if (std::strcmp(verdict, "FAIL") == 0) ++failed;
      std::string reason = plan ? "" : ": " + why.substr(0, 300);
      for (char& c : reason)
        if (c == '\n') c = ' ';
      std::printf("%-8s %s%s\n", verdict, DescribeShape(s, backward).c_str(),
                  reason.c_str());
      std::fflush(stdout);
    }
  }
  cudnnBackendDestroyDescriptor(prop);
  std::printf("%d of the graphs failed\n", failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace moesim::cuda_bench

int main(int argc, char** argv) { return moesim::cuda_bench::Run(argc, argv); }
