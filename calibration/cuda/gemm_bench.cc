// gemm_bench: cuBLASLt matmul throughput, the gemm.csv table
// (impl,m,n,k,dtype,tflops,source; FLOPs = 2 m n k; impl = cublas).
//
// The layout is the one Transformer Engine's Linear uses: Y[m x n] =
// X[m x k] W^T with W stored [n x k] row-major, i.e. cuBLAS column-major
// "TN" (op(A) = W^T, A = W; B = X). bf16 in, bf16 out, fp32 accumulate and
// scale. fp8 (sm_89+): e4m3 A and B with per-tensor scales through
// CUBLASLT_MATMUL_DESC_{A,B}_SCALE_POINTER (value 1.0), bf16 out, fp32
// accumulate; by default with split (promoted) accumulation, like TE's
// wgrad/dgrad GEMMs; --fp8-fast-accum switches to TE's fprop setting. The
// algorithm is cuBLASLt's first heuristic choice for a 32 MiB workspace,
// what TE gets; no autotuning.
//
// Grid: m in {1024 .. 32768} x (n, k) pairs of real projections: fc1
// (n = ffn, k = hidden) and fc2 (n = hidden, k = ffn) over hidden sizes
// {2048, 4096, 5120, 7168, 8192} and ffn / expert sizes {768, 1536, 2048,
// 4096, 14336, 18432, 29568}, plus squares 1024 .. 16384.
#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "calibration/cuda/bench_common.h"
#include "calibration/cuda/bench_device.h"

namespace moesim::cuda_bench {
namespace {

constexpr char kTool[] = "gemm_bench";
constexpr char kUsage[] =
    "usage: gemm_bench --out gemm.csv [--dtypes bf16,fp8] [--flush-l2]\n"
    "                  [--fp8-fast-accum] [--workspace-mib 32]";

struct Shape {
  int64_t m, n, k;
};

enum class Dtype { kBf16, kFp8 };

const char* Name(Dtype d) { return d == Dtype::kBf16 ? "bf16" : "fp8"; }

std::vector<int64_t> Ms(bool quick) {
  if (quick) return {2048, 8192};
  return {1024, 2048, 4096, 8192, 16384, 32768};
}

// (n, k) pairs, each once (a hidden size equal to an ffn size, or to a
// square, would otherwise repeat a grid point).
std::vector<std::pair<int64_t, int64_t>> NkPairs(bool quick) {
  std::vector<int64_t> hidden = {2048, 4096, 5120, 7168, 8192};
  std::vector<int64_t> ffn = {768, 1536, 2048, 4096, 14336, 18432, 29568};
  std::vector<int64_t> squares = {1024, 2048, 4096, 8192, 16384};
  if (quick) {
    hidden = {4096, 7168};
    ffn = {2048, 14336};
    squares = {4096};
  }
  std::set<std::pair<int64_t, int64_t>> pairs;
  for (int64_t h : hidden) {
    for (int64_t f : ffn) {
      pairs.insert({f, h});  // fc1: n = ffn, k = hidden
      pairs.insert({h, f});  // fc2: n = hidden, k = ffn
    }
  }
  for (int64_t s : squares) pairs.insert({s, s});
  return {pairs.begin(), pairs.end()};
}

bool LtOk(cublasStatus_t status, const char* what, std::string* why) {
  if (status == CUBLAS_STATUS_SUCCESS) return true;
  *why = std::string(what) + ": cublas status " + std::to_string(status);
  return false;
}

// Device operands shared by all grid points, sized for the largest.
struct Operands {
  void* a16 = nullptr;  // weights [n x k], bf16
  void* b16 = nullptr;  // activations [m x k], bf16
  void* a8 = nullptr;   // the same in fp8 e4m3 (when measured)
  void* b8 = nullptr;
  void* d = nullptr;        // output [m x n], bf16
  float* scales = nullptr;  // two device floats, 1.0: the fp8 A and B scales
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// One configured cuBLASLt matmul: descriptors plus the heuristic's
// algorithm. Owns its descriptors.
class LtMatmul {
 public:
  // Returns null with `why` set when a descriptor cannot be made or the
  // heuristic offers no algorithm (an unsupported layout or type).
  static std::unique_ptr<LtMatmul> Create(cublasLtHandle_t lt, const Shape& s,
                                          Dtype dtype, const Operands& ops,
                                          bool fp8_fast_accum,
                                          std::string* why) {
    auto g = std::unique_ptr<LtMatmul>(new LtMatmul(lt, ops));
    const bool fp8 = dtype == Dtype::kFp8;
    const cudaDataType_t in_type = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    g->a_ = fp8 ? ops.a8 : ops.a16;
    g->b_ = fp8 ? ops.b8 : ops.b16;
    if (!LtOk(cublasLtMatmulDescCreate(&g->op_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
              "MatmulDescCreate", why))
      return nullptr;
    const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(g->op_, CUBLASLT_MATMUL_DESC_TRANSA,
                                   &trans_a, sizeof(trans_a));
    cublasLtMatmulDescSetAttribute(g->op_, CUBLASLT_MATMUL_DESC_TRANSB,
                                   &trans_b, sizeof(trans_b));
    if (fp8) {
      const void* a_scale = ops.scales;
      const void* b_scale = ops.scales + 1;
      const int8_t fast = fp8_fast_accum ? 1 : 0;
      if (!LtOk(cublasLtMatmulDescSetAttribute(
                    g->op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale,
                    sizeof(a_scale)),
                "A_SCALE_POINTER", why) ||
          !LtOk(cublasLtMatmulDescSetAttribute(
                    g->op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale,
                    sizeof(b_scale)),
                "B_SCALE_POINTER", why) ||
          !LtOk(
              cublasLtMatmulDescSetAttribute(
                  g->op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)),
              "FAST_ACCUM", why))
        return nullptr;
    }
    // Column-major: A = W as k x n (ld k), B = X as k x m (ld k),
    // C = D = Y^T as n x m (ld n).
    if (!LtOk(cublasLtMatrixLayoutCreate(&g->a_layout_, in_type, s.k, s.n, s.k),
              "layout A", why) ||
        !LtOk(cublasLtMatrixLayoutCreate(&g->b_layout_, in_type, s.k, s.m, s.k),
              "layout B", why) ||
        !LtOk(cublasLtMatrixLayoutCreate(&g->d_layout_, CUDA_R_16BF, s.n, s.m,
                                         s.n),
              "layout D", why) ||
        !LtOk(cublasLtMatmulPreferenceCreate(&g->pref_), "preference", why))
      return nullptr;
    const uint64_t ws = ops.workspace_bytes;
    cublasLtMatmulPreferenceSetAttribute(
        g->pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    int returned = 0;
    cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        lt, g->op_, g->a_layout_, g->b_layout_, g->d_layout_, g->d_layout_,
        g->pref_, 1, &g->heuristic_, &returned);
    if (!LtOk(status, "AlgoGetHeuristic", why)) return nullptr;
    if (returned == 0) {
      *why = "no cuBLASLt algorithm for this layout and type";
      return nullptr;
    }
    return g;
  }

  ~LtMatmul() {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    if (d_layout_) cublasLtMatrixLayoutDestroy(d_layout_);
    if (b_layout_) cublasLtMatrixLayoutDestroy(b_layout_);
    if (a_layout_) cublasLtMatrixLayoutDestroy(a_layout_);
    if (op_) cublasLtMatmulDescDestroy(op_);
  }

  bool Launch(cudaStream_t stream) {
    const float alpha = 1.0f, beta = 0.0f;
    return cublasLtMatmul(
               lt_, op_, &alpha, a_, a_layout_, b_, b_layout_, &beta, ops_.d,
               d_layout_, ops_.d, d_layout_, &heuristic_.algo, ops_.workspace,
               ops_.workspace_bytes, stream) == CUBLAS_STATUS_SUCCESS;
  }

 private:
  LtMatmul(cublasLtHandle_t lt, const Operands& ops) : lt_(lt), ops_(ops) {}

  cublasLtHandle_t lt_;
  Operands ops_;
  const void* a_ = nullptr;
  const void* b_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr,
                         d_layout_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

std::vector<Dtype> ParseDtypes(const std::string& list, bool fp8_capable) {
  std::vector<Dtype> out;
  if (list.find("bf16") != std::string::npos) out.push_back(Dtype::kBf16);
  if (list.find("fp8") != std::string::npos) {
    if (fp8_capable) {
      out.push_back(Dtype::kFp8);
    } else {
      std::fprintf(stderr, "%s: fp8 needs sm_89 or newer; skipping fp8\n",
                   kTool);
    }
  }
  return out;
}

int Run(int argc, char** argv) {
  Args args(argc, argv, kUsage, {"dtypes", "workspace-mib"},
            {"flush-l2", "fp8-fast-accum"});
  BENCH_CUDA_CHECK(cudaSetDevice(args.device()));
  cudaDeviceProp prop{};
  BENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, args.device()));
  PrintEnvLine(kTool, args.device(),
               "cublasLt=" + std::to_string(cublasLtGetVersion()));

  const bool fp8_capable = prop.major * 10 + prop.minor >= 89;
  const std::vector<Dtype> dtypes =
      ParseDtypes(args.Get("dtypes", "bf16,fp8"), fp8_capable);
  const std::vector<int64_t> ms = Ms(args.quick());
  const auto pairs = NkPairs(args.quick());
  int64_t max_m = *std::max_element(ms.begin(), ms.end()), max_nk = 0,
          max_n = 0, max_k = 0;
  for (auto [n, k] : pairs) {
    max_nk = std::max(max_nk, n * k);
    max_n = std::max(max_n, n);
    max_k = std::max(max_k, k);
  }

  cudaStream_t stream;
  BENCH_CUDA_CHECK(cudaStreamCreate(&stream));
  Operands ops;
  ops.workspace_bytes = static_cast<size_t>(args.GetInt("workspace-mib", 32))
                        << 20;
  const size_t a_elems = max_nk, b_elems = max_m * max_k,
               d_elems = max_m * max_n;
  BENCH_CUDA_CHECK(cudaMalloc(&ops.a16, a_elems * 2));
  BENCH_CUDA_CHECK(cudaMalloc(&ops.b16, b_elems * 2));
  BENCH_CUDA_CHECK(cudaMalloc(&ops.d, d_elems * 2));
  BENCH_CUDA_CHECK(cudaMalloc(&ops.workspace, ops.workspace_bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&ops.scales, 2 * sizeof(float)));
  FillBf16(ops.a16, a_elems, 1, stream);
  FillBf16(ops.b16, b_elems, 2, stream);
  FillFloat(ops.scales, 2, 3, 1.0f, 1.0f, stream);
  if (std::find(dtypes.begin(), dtypes.end(), Dtype::kFp8) != dtypes.end()) {
    BENCH_CUDA_CHECK(cudaMalloc(&ops.a8, a_elems));
    BENCH_CUDA_CHECK(cudaMalloc(&ops.b8, b_elems));
    FillFp8E4m3(ops.a8, a_elems, 4, stream);
    FillFp8E4m3(ops.b8, b_elems, 5, stream);
  }
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));

  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS)
    Die(kTool, "cublasLtCreate");
  CsvWriter csv(args.out(),
                {"impl", "m", "n", "k", "dtype", "tflops", "source"},
                args.append());
  const std::string source = MeasuredSource(args.device());
  TimingPolicy policy;
  policy.flush_l2 = args.Flag("flush-l2");
  Budget budget(args.budget_s());
  WarmUpGpu(1.0);

  const size_t total = ms.size() * pairs.size() * dtypes.size();
  size_t done = 0;
  for (int64_t m : ms) {
    for (auto [n, k] : pairs) {
      for (Dtype dtype : dtypes) {
        if (budget.Exhausted()) {
          std::fprintf(stderr,
                       "%s: budget of %.0f s spent; %zu of %zu points "
                       "not measured\n",
                       kTool, args.budget_s(), total - done, total);
          return 0;
        }
        ++done;
        const Shape s{m, n, k};
        std::string why;
        auto gemm = LtMatmul::Create(lt, s, dtype, ops,
                                     args.Flag("fp8-fast-accum"), &why);
        Timing t;
        if (gemm)
          t = TimeOnStream(
              stream, [&] { return gemm->Launch(stream); }, policy);
        if (t.samples == 0) {
          std::fprintf(stderr, "%s: skip %s m=%ld n=%ld k=%ld: %s\n", kTool,
                       Name(dtype), m, n, k,
                       why.empty() ? "cublasLtMatmul failed" : why.c_str());
          continue;
        }
        const double tflops = 2.0 * m * n * k / t.median_s / 1e12;
        csv.Row({"cublas", std::to_string(m), std::to_string(n),
                 std::to_string(k), Name(dtype), FormatValue(tflops), source});
        std::fprintf(stderr, "%s: %s m=%ld n=%ld k=%ld %.1f TFLOPS (%d x %d)\n",
                     kTool, Name(dtype), m, n, k, tflops, t.samples,
                     t.runs_per_sample);
      }
    }
  }
  cublasLtDestroy(lt);
  std::fprintf(stderr, "%s: %d rows in %.0f s\n", kTool, csv.rows(),
               budget.elapsed_s());
  return 0;
}

}  // namespace
}  // namespace moesim::cuda_bench

int main(int argc, char** argv) { return moesim::cuda_bench::Run(argc, argv); }
