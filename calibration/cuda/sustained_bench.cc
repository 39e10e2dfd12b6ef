// sustained_bench: how much of its short-benchmark rate a compute-bound
// kernel keeps under the sustained load of a training step, the
// sustained.csv table (quantity,value,unit,source; quantity compute_rate,
// unit fraction). The other benchmarks time each grid point for about
// 50 ms after a warm-up, too short for the board's power limit to pull the
// SM clock down; a training step keeps the GPU busy for seconds.
//
// One cuBLAS BF16 GEMM (default 8192^3, column-major "TN" as TE's Linear),
// after --idle-s seconds of idle GPU (the clock back at boost):
//   burst     the median rate of GEMMs 2..11, each timed with its own
//             events (about 10 ms on a B200);
//   sustained the rate of the last quarter of --sustain-s seconds of the
//             same GEMM back to back (batches of --batch GEMMs).
// compute_rate = sustained / burst, at most 1. The row's source records
// both rates, the SM clock and power limit NVML reads at the end, and the
// shape. flashinfer PR 2899 saw B200's SM clock fall from 1965 to ~1580 MHz
// after about 5 ms of back-to-back compute: the default 20 s holds the GPU
// in that state for the whole last quarter.
#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "calibration/cuda/bench_common.h"
#include "calibration/cuda/bench_device.h"
#include "calibration/cuda/cublas_session.h"
#include "calibration/cuda/nvml_probe.h"

namespace moesim::cuda_bench {
namespace {

constexpr char kTool[] = "sustained_bench";
constexpr char kUsage[] =
    "usage: sustained_bench --out sustained.csv [--size 8192] "
    "[--idle-s 2] [--sustain-s 20] [--batch 50]";

// Seconds between two recorded events.
double Elapsed(cudaEvent_t start, cudaEvent_t stop) {
  float ms = 0;
  BENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms * 1e-3;
}

int Run(int argc, char** argv) {
  Args args(argc, argv, kUsage, {"size", "idle-s", "sustain-s", "batch"}, {});
  const int64_t n = args.GetInt("size", 8192);
  const double idle_s = args.GetDouble("idle-s", 2);
  const double sustain_s = args.GetDouble("sustain-s", args.quick() ? 5 : 20);
  const int64_t batch = args.GetInt("batch", 50);
  if (n < 256 || idle_s < 0 || sustain_s < 1 || batch < 1)
    Die(kTool, "--size >= 256, --idle-s >= 0, --sustain-s >= 1, --batch >= 1");

  const CublasSession session(kTool, args.device());
  cublasHandle_t handle = session.handle();
  cudaStream_t stream = session.stream();

  const size_t count = static_cast<size_t>(n) * n;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  BENCH_CUDA_CHECK(cudaMalloc(&a, 2 * count));
  BENCH_CUDA_CHECK(cudaMalloc(&b, 2 * count));
  BENCH_CUDA_CHECK(cudaMalloc(&c, 2 * count));
  FillBf16(a, count, 1, stream);
  FillBf16(b, count, 2, stream);
  const float alpha = 1, beta = 0;
  auto gemm = [&] {
    const cublasStatus_t s =
        cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, a,
                     CUDA_R_16BF, n, b, CUDA_R_16BF, n, &beta, c, CUDA_R_16BF,
                     n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
      Die(kTool, "cublasGemmEx: cublas status " + std::to_string(s));
  };
  const double flops = 2.0 * n * n * n;
  cudaEvent_t start, stop;
  BENCH_CUDA_CHECK(cudaEventCreate(&start));
  BENCH_CUDA_CHECK(cudaEventCreate(&stop));

  // One GEMM to load the kernel, then idle so the clock recovers.
  gemm();
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));

  // Burst: GEMMs 2..11 of a cold start, each timed on its own.
  std::vector<double> burst;
  for (int i = 0; i < 11; ++i) {
    BENCH_CUDA_CHECK(cudaEventRecord(start, stream));
    gemm();
    BENCH_CUDA_CHECK(cudaEventRecord(stop, stream));
    BENCH_CUDA_CHECK(cudaEventSynchronize(stop));
    if (i > 0) burst.push_back(flops / Elapsed(start, stop) / 1e12);
  }
  const double burst_tflops = Median(burst);

  // Sustained: back to back for sustain_s, timed per batch; the rate over
  // the batches of the last quarter.
  std::vector<std::pair<double, double>> batches;  // (end time s, TFLOPS)
  double t = 0;
  while (t < sustain_s) {
    BENCH_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int64_t i = 0; i < batch; ++i) gemm();
    BENCH_CUDA_CHECK(cudaEventRecord(stop, stream));
    BENCH_CUDA_CHECK(cudaEventSynchronize(stop));
    const double s = Elapsed(start, stop);
    t += s;
    batches.push_back({t, batch * flops / s / 1e12});
  }
  const NvmlInfo nvml = QueryNvml(args.device());
  double work = 0, busy = 0;
  for (size_t i = 0; i < batches.size(); ++i) {
    const auto& [end, tflops] = batches[i];
    // The last quarter, and always the last batch.
    if (end < 0.75 * t && i + 1 < batches.size()) continue;
    const double s = batch * flops / (tflops * 1e12);
    work += batch * flops;
    busy += s;
  }
  const double sustained_tflops = work / busy / 1e12;
  const double rate = std::min(1.0, sustained_tflops / burst_tflops);

  std::string note =
      MeasuredSource(args.device()) + " sustained_bench: cuBLAS BF16 " +
      std::to_string(n) + "^3 GEMM; burst (GEMMs 2-11 after " +
      FormatValue(idle_s) + " s idle; median) " + FormatValue(burst_tflops) +
      " TFLOPS; sustained (last quarter of " + FormatValue(t) +
      " s back to back) " + FormatValue(sustained_tflops) + " TFLOPS";
  if (nvml.available) {
    note += "; SM clock at the end " + std::to_string(nvml.sm_clock_mhz) +
            " of " + std::to_string(nvml.sm_clock_max_mhz) +
            " MHz; power limit " + std::to_string(nvml.power_limit_w) + " W";
  }
  CsvWriter csv(args.out(), {"quantity", "value", "unit", "source"},
                args.append());
  csv.Row({"compute_rate", FormatValue(rate), "fraction", note});
  std::fprintf(stderr, "%s: burst %.1f TFLOPS, sustained %.1f TFLOPS: %.3f\n",
               kTool, burst_tflops, sustained_tflops, rate);

  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 0;
}

}  // namespace
}  // namespace moesim::cuda_bench

int main(int argc, char** argv) { return moesim::cuda_bench::Run(argc, argv); }
