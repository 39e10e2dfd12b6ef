// grouped_gemm_bench: cuBLAS grouped GEMM throughput for MoE experts, the
// grouped_gemm.csv table (impl,experts,tokens_per_expert,n,k,dtype,tflops,
// source; FLOPs = 2 x experts x tokens_per_expert x n x k; impl =
// cublas_grouped; balanced routing: every expert gets the same tokens).
//
// One cublasGemmGroupedBatchedEx call (CUDA >= 12.5) per step: one group
// per expert (group_size 1 each, the form a ragged routing needs), bf16 in
// and out, fp32 compute. Per expert e the layout is TE's: Y_e[t x n] =
// X_e[t x k] W_e^T, W_e [n x k] row-major, i.e. column-major "TN" with
// m = n, n = t. Every expert has its own weights (no sharing that would let
// a small expert's weights sit in L2); the tokens of all experts are one
// contiguous activation buffer, as after a permute.
//
// Grid: experts {4 .. 128} x tokens_per_expert {128 .. 8192} x the (n, k)
// of fc1 (n = 2 x expert ffn: gate and up fused, k = hidden) and fc2
// (n = hidden, k = expert ffn) of DeepSeek-V3 (7168, 2048), Qwen3-235B
// (4096, 1536), Qwen3-30B-A3B (2048, 768), GPT-OSS (2880, 2880) and
// Mixtral (4096, 14336). A point is skipped when experts x tokens > 131072
// rows (16k tokens per GPU x top-8: more than one GPU receives in a step)
// or its weights would not fit in a third of the device memory.
#include <cublas_v2.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "calibration/cuda/bench_common.h"
#include "calibration/cuda/bench_device.h"
#include "calibration/cuda/cublas_session.h"

namespace moesim::cuda_bench {
namespace {

constexpr char kTool[] = "grouped_gemm_bench";
constexpr char kUsage[] =
    "usage: grouped_gemm_bench --out grouped_gemm.csv [--max-rows 131072]";

struct Model {
  const char* name;
  int64_t hidden, expert_ffn;
};

const Model kModels[] = {
    {"deepseek-v3", 7168, 2048}, {"qwen3-235b", 4096, 1536},
    {"qwen3-30b", 2048, 768},    {"gpt-oss", 2880, 2880},
    {"mixtral", 4096, 14336},
};

struct Point {
  int64_t experts, tokens, n, k;
};

std::vector<Point> Grid(bool quick, int64_t max_rows) {
  std::vector<int64_t> experts = {4, 8, 16, 32, 64, 128};
  std::vector<int64_t> tokens = {128, 256, 512, 1024, 2048, 4096, 8192};
  if (quick) {
    experts = {8, 32};
    tokens = {512, 2048};
  }
  std::vector<Point> grid;
  std::vector<std::pair<int64_t, int64_t>> seen;
  for (const Model& m : kModels) {
    for (auto nk : {std::make_pair(2 * m.expert_ffn, m.hidden),
                    std::make_pair(m.hidden, m.expert_ffn)}) {
      if (std::find(seen.begin(), seen.end(), nk) != seen.end()) continue;
      seen.push_back(nk);
      for (int64_t e : experts) {
        for (int64_t t : tokens) {
          if (e * t <= max_rows) grid.push_back({e, t, nk.first, nk.second});
        }
      }
    }
  }
  return grid;
}

// Device buffers for one point, freed by the destructor.
class GroupedOperands {
 public:
  GroupedOperands(const Point& p, cudaStream_t s) : p_(p) {
    const size_t w = p.n * p.k, x = p.tokens * p.k, y = p.tokens * p.n;
    BENCH_CUDA_CHECK(cudaMalloc(&weights_, p.experts * w * 2));
    BENCH_CUDA_CHECK(cudaMalloc(&inputs_, p.experts * x * 2));
    BENCH_CUDA_CHECK(cudaMalloc(&outputs_, p.experts * y * 2));
    FillBf16(weights_, p.experts * w, 21, s);
    FillBf16(inputs_, p.experts * x, 22, s);
    std::vector<const void*> a(p.experts), b(p.experts);
    std::vector<void*> c(p.experts);
    for (int64_t e = 0; e < p.experts; ++e) {
      a[e] = static_cast<char*>(weights_) + e * w * 2;
      b[e] = static_cast<char*>(inputs_) + e * x * 2;
      c[e] = static_cast<char*>(outputs_) + e * y * 2;
    }
    BENCH_CUDA_CHECK(cudaMalloc(&a_array_, p.experts * sizeof(void*)));
    BENCH_CUDA_CHECK(cudaMalloc(&b_array_, p.experts * sizeof(void*)));
    BENCH_CUDA_CHECK(cudaMalloc(&c_array_, p.experts * sizeof(void*)));
    BENCH_CUDA_CHECK(cudaMemcpy(a_array_, a.data(), a.size() * sizeof(void*),
                                cudaMemcpyHostToDevice));
    BENCH_CUDA_CHECK(cudaMemcpy(b_array_, b.data(), b.size() * sizeof(void*),
                                cudaMemcpyHostToDevice));
    BENCH_CUDA_CHECK(cudaMemcpy(c_array_, c.data(), c.size() * sizeof(void*),
                                cudaMemcpyHostToDevice));
    // Per-group (host) parameters: one group per expert.
    const int g = static_cast<int>(p.experts);
    trans_a_.assign(g, CUBLAS_OP_T);
    trans_b_.assign(g, CUBLAS_OP_N);
    m_.assign(g, static_cast<int>(p.n));
    n_.assign(g, static_cast<int>(p.tokens));
    k_.assign(g, static_cast<int>(p.k));
    lda_.assign(g, static_cast<int>(p.k));
    ldb_.assign(g, static_cast<int>(p.k));
    ldc_.assign(g, static_cast<int>(p.n));
    alpha_.assign(g, 1.0f);
    beta_.assign(g, 0.0f);
    group_size_.assign(g, 1);
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  ~GroupedOperands() {
    cudaFree(weights_);
    cudaFree(inputs_);
    cudaFree(outputs_);
    cudaFree(a_array_);
    cudaFree(b_array_);
    cudaFree(c_array_);
  }

  GroupedOperands(const GroupedOperands&) = delete;
  GroupedOperands& operator=(const GroupedOperands&) = delete;

  cublasStatus_t Launch(cublasHandle_t handle) const {
    return cublasGemmGroupedBatchedEx(
        handle, trans_a_.data(), trans_b_.data(), m_.data(), n_.data(),
        k_.data(), alpha_.data(), a_array_, CUDA_R_16BF, lda_.data(), b_array_,
        CUDA_R_16BF, ldb_.data(), beta_.data(), c_array_, CUDA_R_16BF,
        ldc_.data(), static_cast<int>(p_.experts), group_size_.data(),
        CUBLAS_COMPUTE_32F);
  }

 private:
  Point p_;
  void* weights_ = nullptr;
  void* inputs_ = nullptr;
  void* outputs_ = nullptr;
  const void** a_array_ = nullptr;
  const void** b_array_ = nullptr;
  void** c_array_ = nullptr;
  std::vector<cublasOperation_t> trans_a_, trans_b_;
  std::vector<int> m_, n_, k_, lda_, ldb_, ldc_, group_size_;
  std::vector<float> alpha_, beta_;
};

int Run(int argc, char** argv) {
  Args args(argc, argv, kUsage, {"max-rows"}, {});
  const CublasSession session(kTool, args.device());
  cublasHandle_t handle = session.handle();
  cudaStream_t stream = session.stream();

  size_t free_bytes = 0, total_bytes = 0;
  BENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::vector<Point> grid =
      Grid(args.quick(), args.GetInt("max-rows", 131072));
  CsvWriter csv(args.out(),
                {"impl", "experts", "tokens_per_expert", "n", "k", "dtype",
                 "tflops", "source"},
                args.append());
  const std::string source = MeasuredSource(args.device());
  TimingPolicy policy;
  Budget budget(args.budget_s());
  WarmUpGpu(1.0);

  size_t done = 0;
  for (const Point& p : grid) {
    if (budget.Exhausted()) {
      std::fprintf(stderr,
                   "%s: budget of %.0f s spent; %zu of %zu points "
                   "not measured\n",
                   kTool, args.budget_s(), grid.size() - done, grid.size());
      break;
    }
    ++done;
    const size_t bytes = 2 * p.experts * (p.n * p.k + p.tokens * (p.k + p.n));
    if (bytes > total_bytes / 3) {
      std::fprintf(stderr,
                   "%s: skip experts=%ld tokens=%ld n=%ld k=%ld: %.1f GiB of "
                   "operands\n",
                   kTool, p.experts, p.tokens, p.n, p.k, bytes / 1073741824.0);
      continue;
    }
    GroupedOperands ops(p, stream);
    cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
    Timing t = TimeOnStream(
        stream,
        [&] {
          last = ops.Launch(handle);
          return last == CUBLAS_STATUS_SUCCESS;
        },
        policy);
    if (t.samples == 0) {
      std::fprintf(stderr,
                   "%s: skip experts=%ld tokens=%ld n=%ld k=%ld: cublas "
                   "status %d\n",
                   kTool, p.experts, p.tokens, p.n, p.k,
                   static_cast<int>(last));
      continue;
    }
    const double tflops =
        2.0 * p.experts * p.tokens * p.n * p.k / t.median_s / 1e12;
    csv.Row({"cublas_grouped", std::to_string(p.experts),
             std::to_string(p.tokens), std::to_string(p.n), std::to_string(p.k),
             "bf16", FormatValue(tflops), source});
    std::fprintf(stderr, "%s: experts=%ld tokens=%ld n=%ld k=%ld %.1f TFLOPS\n",
                 kTool, p.experts, p.tokens, p.n, p.k, tflops);
  }
  std::fprintf(stderr, "%s: %d rows in %.0f s\n", kTool, csv.rows(),
               budget.elapsed_s());
  return 0;
}

}  // namespace
}  // namespace moesim::cuda_bench

int main(int argc, char** argv) { return moesim::cuda_bench::Run(argc, argv); }
