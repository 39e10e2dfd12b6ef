// collectives_bench: NCCL collectives inside one NVLink domain (one node),
// the collectives.csv table (collective,algorithm,tier,group_size,bytes,
// bus_gb_s,latency_us,source; tier = nvlink).
//
// One process drives every visible GPU (ncclCommInitAll), one stream each;
// a call is one ncclGroupStart/End around the per-rank calls. Timing is
// nccl-tests': host time of `iters` back-to-back calls, all streams
// synchronized before and after, divided by iters (5 warm-up calls first).
// bytes is nccl-tests' size (all_gather: the gathered buffer, reduce_scatter:
// the input, alltoall: what one rank sends in all, sendrecv: one message),
// latency_us the time of one call, bus_gb_s = bytes / time x the nccl-tests
// bus factor: all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall
// (n-1)/n; sendrecv 1. all_reduce and reduce_scatter sum floats, the
// others move bytes.
//
// all_reduce, all_gather, reduce_scatter, alltoall (ncclSend/ncclRecv to
// every peer in one group) over all GPUs; sendrecv between GPUs 0 and 1
// (each sends to the other, as nccl-tests' sendrecv with 2 GPUs). Sizes
// 8 B .. 8 GiB in x4 steps (capped by device memory). --algo ring|tree|nvls
// sets NCCL_ALGO before NCCL initializes (run once per algorithm; rows say
// which); auto leaves NCCL's choice. A collective the forced algorithm
// cannot run (NCCL returns an error) is skipped with a note. With fewer
// than 2 GPUs the table keeps only its header.
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/cuda/bench_common.h"
#include "calibration/cuda/nvml_probe.h"

namespace moesim::cuda_bench {
namespace {

constexpr char kTool[] = "collectives_bench";
constexpr char kUsage[] =
    "usage: collectives_bench --out collectives.csv [--algo auto|ring|tree|"
    "nvls]\n"
    "                         [--collectives all_reduce,all_gather,"
    "reduce_scatter,alltoall,sendrecv]\n"
    "                         [--max-bytes 8589934592]";

using Clock = std::chrono::steady_clock;

// One communicator per GPU of a group, with its streams and buffers.
struct Group {
  std::vector<int> devices;
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<char*> send, recv;
  size_t buffer_bytes = 0;
  bool failed = false;  // a call failed: abort, not destroy, the comms
};

bool NcclOk(ncclResult_t r, const std::string& what, std::string* why) {
  if (r == ncclSuccess) return true;
  *why = what + ": " + ncclGetErrorString(r);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && last[0] != '\0')
    *why += std::string(" (") + last + ")";
  return false;
}

// Creates the communicators, streams and buffers; false with `why` when NCCL
// cannot make the communicators (e.g. a forced algorithm it cannot use).
bool OpenGroup(Group& g, const std::vector<int>& devices, size_t bytes,
               std::string* why) {
  g.devices = devices;
  const int n = static_cast<int>(devices.size());
  g.comms.resize(n);
  if (!NcclOk(ncclCommInitAll(g.comms.data(), n, devices.data()),
              "ncclCommInitAll", why)) {
    g = Group();
    return false;
  }
  g.streams.resize(n);
  g.send.resize(n);
  g.recv.resize(n);
  g.buffer_bytes = bytes;
  for (int r = 0; r < n; ++r) {
    BENCH_CUDA_CHECK(cudaSetDevice(devices[r]));
    BENCH_CUDA_CHECK(
        cudaStreamCreateWithFlags(&g.streams[r], cudaStreamNonBlocking));
    BENCH_CUDA_CHECK(cudaMalloc(&g.send[r], bytes));
    BENCH_CUDA_CHECK(cudaMalloc(&g.recv[r], bytes));
    BENCH_CUDA_CHECK(cudaMemset(g.send[r], 1, bytes));
  }
  return true;
}

void CloseGroup(Group& g) {
  for (size_t r = 0; r < g.devices.size(); ++r) {
    cudaSetDevice(g.devices[r]);
    if (g.failed) {
      ncclCommAbort(g.comms[r]);
    } else {
      cudaStreamSynchronize(g.streams[r]);
      ncclCommDestroy(g.comms[r]);
    }
    cudaFree(g.send[r]);
    cudaFree(g.recv[r]);
    cudaStreamDestroy(g.streams[r]);
  }
  g = Group();
}

// Sizes in nccl-tests' sense for `collective` over n ranks: the per-rank
// element count the calls take and the size the row reports. count == 0:
// the size is too small to split.
struct Size {
  size_t count = 0;  // elements per call argument (per peer for alltoall)
  size_t bytes = 0;  // reported size
};

Size SizeFor(const std::string& collective, size_t bytes, int n) {
  Size s;
  if (collective == "all_reduce") {
    s.count = bytes / 4;
    s.bytes = s.count * 4;
  } else if (collective == "all_gather" || collective == "reduce_scatter") {
    const size_t word = collective == "all_gather" ? 1 : 4;
    s.count = bytes / (word * n);  // per-rank part
    s.bytes = s.count * word * n;
  } else if (collective == "alltoall") {
    s.count = bytes / n;  // bytes to each peer
    s.bytes = s.count * n;
  } else {  // sendrecv
    s.count = bytes;
    s.bytes = bytes;
  }
  return s;
}

double BusFactor(const std::string& collective, int n) {
  if (collective == "all_reduce") return 2.0 * (n - 1) / n;
  if (collective == "sendrecv") return 1.0;
  return static_cast<double>(n - 1) / n;
}

// Enqueues one call of `collective` on every rank.
bool Launch(const std::string& c, Group& g, size_t count, std::string* why) {
  const int n = static_cast<int>(g.devices.size());
  if (!NcclOk(ncclGroupStart(), "ncclGroupStart", why)) return false;
  for (int r = 0; r < n; ++r) {
    ncclComm_t comm = g.comms[r];
    cudaStream_t s = g.streams[r];
    ncclResult_t res = ncclSuccess;
    if (c == "all_reduce") {
      res = ncclAllReduce(g.send[r], g.recv[r], count, ncclFloat, ncclSum, comm,
                          s);
    } else if (c == "all_gather") {
      res = ncclAllGather(g.send[r], g.recv[r], count, ncclChar, comm, s);
    } else if (c == "reduce_scatter") {
      res = ncclReduceScatter(g.send[r], g.recv[r], count, ncclFloat, ncclSum,
                              comm, s);
    } else if (c == "alltoall") {
      for (int p = 0; p < n && res == ncclSuccess; ++p) {
        res = ncclSend(g.send[r] + p * count, count, ncclChar, p, comm, s);
        if (res == ncclSuccess)
          res = ncclRecv(g.recv[r] + p * count, count, ncclChar, p, comm, s);
      }
    } else {  // sendrecv: to the next rank, from the previous
      res = ncclSend(g.send[r], count, ncclChar, (r + 1) % n, comm, s);
      if (res == ncclSuccess)
        res = ncclRecv(g.recv[r], count, ncclChar, (r + n - 1) % n, comm, s);
    }
    if (res != ncclSuccess) {
      ncclGroupEnd();
      return NcclOk(res, c, why);
    }
  }
  return NcclOk(ncclGroupEnd(), "ncclGroupEnd(" + c + ")", why);
}

bool SyncAll(Group& g, std::string* why) {
  for (size_t r = 0; r < g.devices.size(); ++r) {
    BENCH_CUDA_CHECK(cudaSetDevice(g.devices[r]));
    if (cudaStreamSynchronize(g.streams[r]) != cudaSuccess) {
      *why = "stream error on GPU " + std::to_string(g.devices[r]);
      return false;
    }
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(g.comms[r], &async);
    if (!NcclOk(async, "async", why)) return false;
  }
  return true;
}

// Seconds per call (nccl-tests timing); 0 with `why` on failure.
double TimeCall(const std::string& c, Group& g, size_t count,
                std::string* why) {
  auto run = [&](int iters) -> double {
    if (!SyncAll(g, why)) return 0;
    const auto start = Clock::now();
    for (int i = 0; i < iters; ++i)
      if (!Launch(c, g, count, why)) return 0;
    if (!SyncAll(g, why)) return 0;
    return std::chrono::duration<double>(Clock::now() - start).count() / iters;
  };
  // The first call also sets up NCCL's connections: time the warm-up
  // instead to size the measured run (about 0.1 s, 5 to 100 calls).
  if (run(1) <= 0) return 0;
  const double warm = run(5);
  if (warm <= 0) return 0;
  const int iters = std::clamp(static_cast<int>(0.1 / warm), 5, 100);
  return run(iters);
}

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int Run(int argc, char** argv) {
  Args args(argc, argv, kUsage, {"algo", "collectives", "max-bytes"}, {});
  const std::string algo = args.Get("algo", "auto");
  const char* nccl_algo = algo == "ring"   ? "Ring"
                          : algo == "tree" ? "Tree"
                          : algo == "nvls" ? "NVLS"
                                           : nullptr;
  if (algo != "auto" && nccl_algo == nullptr)
    Die(kTool, "--algo is auto, ring, tree or nvls");
  if (nccl_algo != nullptr) setenv("NCCL_ALGO", nccl_algo, 1);
  const std::vector<std::string> collectives = Split(args.Get(
      "collectives", "all_reduce,all_gather,reduce_scatter,alltoall,sendrecv"));

  int version = 0;
  ncclGetVersion(&version);
  int gpus = 0;
  BENCH_CUDA_CHECK(cudaGetDeviceCount(&gpus));
  PrintEnvLine(kTool, 0,
               "nccl=" + std::to_string(version) +
                   " nccl_algo=" + (nccl_algo ? nccl_algo : "auto"));
  CsvWriter csv(args.out(),
                {"collective", "algorithm", "tier", "group_size", "bytes",
                 "bus_gb_s", "latency_us", "source"},
                args.append());
  if (gpus < 2) {
    std::fprintf(stderr,
                 "%s: %d GPU visible; collectives need 2 or more, skipping "
                 "(header only)\n",
                 kTool, gpus);
    return 0;
  }
  NvmlInfo nvml = QueryNvml(0);
  if (nvml.nvlinks_active == 0) {
    std::fprintf(stderr,
                 "%s: WARNING: NVML reports no active NVLink on GPU 0; rows "
                 "say tier nvlink but the GPUs may talk over PCIe\n",
                 kTool);
  }
  const std::string source = MeasuredSource(0);

  // Buffers: the largest size, within a third of GPU 0's free memory each.
  size_t free_bytes = 0, total_bytes = 0;
  BENCH_CUDA_CHECK(cudaSetDevice(0));
  BENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  size_t max_bytes = static_cast<size_t>(args.GetInt(
      "max-bytes", args.quick() ? (int64_t{64} << 20) : (int64_t{8} << 30)));
  while (max_bytes > 8 && 2 * max_bytes > free_bytes * 2 / 3) max_bytes /= 4;
  std::vector<size_t> sizes;
  for (size_t b = 8; b <= max_bytes; b *= args.quick() ? 64 : 4)
    sizes.push_back(b);

  std::vector<int> all(gpus);
  for (int i = 0; i < gpus; ++i) all[i] = i;
  Budget budget(args.budget_s());
  for (const std::string& c : collectives) {
    if (budget.Exhausted()) break;
    const std::vector<int> devices =
        c == "sendrecv" ? std::vector<int>{0, 1} : all;
    const int n = static_cast<int>(devices.size());
    Group group;
    std::string open_why;
    if (!OpenGroup(group, devices, max_bytes, &open_why)) {
      if (nccl_algo == nullptr) Die(kTool, open_why);
      std::fprintf(stderr, "%s: skip %s (algo %s): %s\n", kTool, c.c_str(),
                   algo.c_str(), open_why.c_str());
      continue;
    }
    for (size_t bytes : sizes) {
      if (budget.Exhausted()) {
        std::fprintf(stderr, "%s: budget of %.0f s spent; stopping\n", kTool,
                     args.budget_s());
        break;
      }
      const Size size = SizeFor(c, bytes, n);
      if (size.count == 0) continue;
      std::string why;
      const double t = TimeCall(c, group, size.count, &why);
      if (t <= 0) {
        group.failed = true;
        std::fprintf(stderr, "%s: skip %s (algo %s) from %zu bytes on: %s\n",
                     kTool, c.c_str(), algo.c_str(), size.bytes, why.c_str());
        break;
      }
      const double bus = size.bytes / t / 1e9 * BusFactor(c, n);
      csv.Row({c, algo, "nvlink", std::to_string(n), std::to_string(size.bytes),
               FormatValue(bus), FormatValue(t * 1e6), source});
      std::fprintf(stderr, "%s: %s %s n=%d %zu bytes %.2f us busbw %.1f GB/s\n",
                   kTool, c.c_str(), algo.c_str(), n, size.bytes, t * 1e6, bus);
    }
    CloseGroup(group);
  }
  std::fprintf(stderr, "%s: %d rows in %.0f s\n", kTool, csv.rows(),
               budget.elapsed_s());
  return 0;
}

}  // namespace
}  // namespace moesim::cuda_bench

int main(int argc, char** argv) { return moesim::cuda_bench::Run(argc, argv); }
