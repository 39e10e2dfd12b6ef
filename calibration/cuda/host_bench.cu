// host_bench: launch overheads and host<->device copy bandwidth, the
// host.csv (quantity,value,unit,source) and host_copy.csv
// (link,direction,bytes,gb_s,source) tables.
//
// host.csv:
//   kernel_launch_us  host time to enqueue one empty kernel (<<<1,1>>>),
//                     averaged over 10,000 back-to-back launches (no sync
//                     inside the timed loop); median of 5 repeats.
//   graph_launch_us   host time of one cudaGraphLaunch of a 1-kernel graph,
//                     averaged over 2,000 launches; median of 5.
//   graph_node_us     device time per kernel node of a 100-node graph of
//                     empty kernels: event time of 200 back-to-back launches
//                     / 200 / 100 (the GPU, not the host, is the bottleneck
//                     at that size, so this is the per-node device cost).
// host_copy.csv: pinned (cudaMallocHost) buffers, cudaMemcpyAsync, 1 MiB ..
// 1 GiB. h2d and d2h alone; bidir = both at once on two streams, reported
// per direction (bytes of one direction / time both take).
// The link is nvlink-c2c when the device says host memory is reached
// coherently with native atomics through the host's page tables
// (cudaDevAttrHostNativeAtomicSupported and
// cudaDevAttrPageableMemoryAccessUsesHostPageTables, true on Grace-Hopper /
// Grace-Blackwell), else pcie-gen5-x16; NVML's PCIe generation and width
// are printed, with a warning when they are not Gen5 x16.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "calibration/cuda/bench_common.h"
#include "calibration/cuda/nvml_probe.h"

namespace moesim::cuda_bench {
namespace {

constexpr char kTool[] = "host_bench";
constexpr char kUsage[] =
    "usage: host_bench --out host.csv --copy-out host_copy.csv [--max-mib "
    "1024]";

__global__ void EmptyKernel() {}

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double KernelLaunchUs(cudaStream_t s) {
  constexpr int kLaunches = 10000;
  for (int i = 0; i < 1000; ++i) EmptyKernel<<<1, 1, 0, s>>>();
  BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<double> us;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = Clock::now();
    for (int i = 0; i < kLaunches; ++i) EmptyKernel<<<1, 1, 0, s>>>();
    us.push_back(SecondsSince(start) * 1e6 / kLaunches);
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  BENCH_CUDA_CHECK(cudaGetLastError());
  return Median(us);
}

// A graph of `nodes` empty kernels in a chain, captured from `s`.
cudaGraphExec_t EmptyGraph(cudaStream_t s, int nodes) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  BENCH_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < nodes; ++i) EmptyKernel<<<1, 1, 0, s>>>();
  BENCH_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  BENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  BENCH_CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

double GraphLaunchUs(cudaStream_t s) {
  constexpr int kLaunches = 2000;
  cudaGraphExec_t exec = EmptyGraph(s, 1);
  for (int i = 0; i < 100; ++i) BENCH_CUDA_CHECK(cudaGraphLaunch(exec, s));
  BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<double> us;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = Clock::now();
    for (int i = 0; i < kLaunches; ++i) cudaGraphLaunch(exec, s);
    us.push_back(SecondsSince(start) * 1e6 / kLaunches);
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  BENCH_CUDA_CHECK(cudaGraphExecDestroy(exec));
  return Median(us);
}

double GraphNodeUs(cudaStream_t s) {
  constexpr int kNodes = 100, kLaunches = 200;
  cudaGraphExec_t exec = EmptyGraph(s, kNodes);
  cudaEvent_t start, stop;
  BENCH_CUDA_CHECK(cudaEventCreate(&start));
  BENCH_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 10; ++i) BENCH_CUDA_CHECK(cudaGraphLaunch(exec, s));
  std::vector<double> us;
  for (int rep = 0; rep < 5; ++rep) {
    BENCH_CUDA_CHECK(cudaEventRecord(start, s));
    for (int i = 0; i < kLaunches; ++i) cudaGraphLaunch(exec, s);
    BENCH_CUDA_CHECK(cudaEventRecord(stop, s));
    BENCH_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(ms * 1e3 / kLaunches / kNodes);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  BENCH_CUDA_CHECK(cudaGraphExecDestroy(exec));
  return Median(us);
}

// "nvlink-c2c" or "pcie-gen5-x16" (see the file comment).
std::string HostLink(int device) {
  int atomics = 0, host_page_tables = 0;
  cudaDeviceGetAttribute(&atomics, cudaDevAttrHostNativeAtomicSupported,
                         device);
  cudaDeviceGetAttribute(&host_page_tables,
                         cudaDevAttrPageableMemoryAccessUsesHostPageTables,
                         device);
  NvmlInfo nvml = QueryNvml(device);
  std::fprintf(stderr,
               "%s: host link hints: native_atomics=%d host_page_tables=%d "
               "pcie_max=gen%u x%u pcie_now=gen%u x%u\n",
               kTool, atomics, host_page_tables, nvml.pcie_gen_max,
               nvml.pcie_width_max, nvml.pcie_gen_now, nvml.pcie_width_now);
  if (atomics && host_page_tables) return "nvlink-c2c";
  if (nvml.pcie_gen_max != 0 &&
      (nvml.pcie_gen_max != 5 || nvml.pcie_width_max != 16)) {
    std::fprintf(stderr,
                 "%s: WARNING: the link reports PCIe gen%u x%u, but the "
                 "table only knows pcie-gen5-x16; rows are labelled "
                 "pcie-gen5-x16 anyway\n",
                 kTool, nvml.pcie_gen_max, nvml.pcie_width_max);
  }
  return "pcie-gen5-x16";
}

// Times host<->device copies of `bytes`; returns GB/s per direction.
double CopyGbS(const std::string& direction, size_t bytes, void* host_src,
               void* host_dst, void* dev_src, void* dev_dst, cudaStream_t s1,
               cudaStream_t s2) {
  cudaEvent_t fork, join;
  BENCH_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  BENCH_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  auto launch = [&] {
    if (direction == "h2d") {
      return cudaMemcpyAsync(dev_dst, host_src, bytes, cudaMemcpyHostToDevice,
                             s1) == cudaSuccess;
    }
    if (direction == "d2h") {
      return cudaMemcpyAsync(host_dst, dev_src, bytes, cudaMemcpyDeviceToHost,
                             s1) == cudaSuccess;
    }
    // bidir: s2 joins s1's timeline so one event pair brackets both.
    cudaEventRecord(fork, s1);
    cudaStreamWaitEvent(s2, fork, 0);
    bool ok = cudaMemcpyAsync(dev_dst, host_src, bytes, cudaMemcpyHostToDevice,
                              s1) == cudaSuccess &&
              cudaMemcpyAsync(host_dst, dev_src, bytes, cudaMemcpyDeviceToHost,
                              s2) == cudaSuccess;
    cudaEventRecord(join, s2);
    cudaStreamWaitEvent(s1, join, 0);
    return ok;
  };
  TimingPolicy policy;
  policy.warmup_runs = 3;
  policy.target_sample_s = 0;  // one copy per sample
  Timing t = TimeOnStream(s1, launch, policy);
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  return t.samples ? bytes / t.median_s / 1e9 : 0;
}

int Run(int argc, char** argv) {
  Args args(argc, argv, kUsage, {"copy-out", "max-mib"}, {});
  const std::string copy_out = args.Get("copy-out", "");
  if (copy_out.empty()) Die(kTool, "--copy-out FILE is required");
  BENCH_CUDA_CHECK(cudaSetDevice(args.device()));
  PrintEnvLine(kTool, args.device(), "");
  const std::string source = MeasuredSource(args.device());

  cudaStream_t s1, s2;
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  BENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));

  {
    CsvWriter host(args.out(), {"quantity", "value", "unit", "source"},
                   args.append());
    const double launch_us = KernelLaunchUs(s1);
    const double graph_us = GraphLaunchUs(s1);
    const double node_us = GraphNodeUs(s1);
    host.Row({"kernel_launch_us", FormatValue(launch_us), "us", source});
    host.Row({"graph_launch_us", FormatValue(graph_us), "us", source});
    host.Row({"graph_node_us", FormatValue(node_us), "us", source});
    std::fprintf(stderr,
                 "%s: kernel launch %.2f us, graph launch %.2f us, graph "
                 "node %.3f us\n",
                 kTool, launch_us, graph_us, node_us);
  }

  const size_t max_bytes =
      static_cast<size_t>(args.GetInt("max-mib", args.quick() ? 64 : 1024))
      << 20;
  void *host_src, *host_dst, *dev_src, *dev_dst;
  BENCH_CUDA_CHECK(cudaMallocHost(&host_src, max_bytes));
  BENCH_CUDA_CHECK(cudaMallocHost(&host_dst, max_bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&dev_src, max_bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&dev_dst, max_bytes));
  std::fill_n(static_cast<char*>(host_src), max_bytes, 1);
  BENCH_CUDA_CHECK(cudaMemset(dev_src, 2, max_bytes));

  const std::string link = HostLink(args.device());
  CsvWriter copies(copy_out, {"link", "direction", "bytes", "gb_s", "source"},
                   args.append());
  Budget budget(args.budget_s());
  for (const std::string direction : {"h2d", "d2h", "bidir"}) {
    for (size_t bytes = size_t{1} << 20; bytes <= max_bytes;
         bytes *= args.quick() ? 8 : 2) {
      if (budget.Exhausted()) break;
      const double gb_s = CopyGbS(direction, bytes, host_src, host_dst, dev_src,
                                  dev_dst, s1, s2);
      if (gb_s <= 0) {
        std::fprintf(stderr, "%s: skip %s %zu bytes: copy failed\n", kTool,
                     direction.c_str(), bytes);
        continue;
      }
      copies.Row(
          {link, direction, std::to_string(bytes), FormatValue(gb_s), source});
      std::fprintf(stderr, "%s: %s %s %zu bytes %.2f GB/s\n", kTool,
                   link.c_str(), direction.c_str(), bytes, gb_s);
    }
  }
  cudaFreeHost(host_src);
  cudaFreeHost(host_dst);
  cudaFree(dev_src);
  cudaFree(dev_dst);
  return 0;
}

}  // namespace
}  // namespace moesim::cuda_bench

int main(int argc, char** argv) { return moesim::cuda_bench::Run(argc, argv); }
