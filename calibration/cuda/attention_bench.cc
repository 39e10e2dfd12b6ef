// attention_bench: cuDNN flash-attention throughput, forward and backward,
// the attention.csv table (impl,direction,batch,seq_q,seq_kv,heads_q,
// heads_kv,head_dim_qk,head_dim_v,causal,window,dtype,tflops,source; impl =
// cudnn, window = 0, dtype = bf16). FLOPs by the FlashAttention convention
// of tables/README.md: forward = 2 b h_q s_q s_kv (d_qk + d_v), halved when
// causal (s_q = s_kv here); backward = 2.5 x forward.
//
// Graphs: cudnn_sdpa.h (backend API, no cudnn_frontend). --graph auto (the
// default) builds the composite graph and, for a non-causal forward pass
// it fails on, the single SDPA operation. Every plan is built for its
// static shape, as Transformer Engine builds them; the runtime-compiled
// engines compile each (~0.5 s, printed per point). --kernel-cache makes
// forward graphs dynamic-shape with a kernel cache per structure (fewer
// compiles, possibly other kernels than TE's). If the first builds all fail,
// the run stops early: attention_bench.py measures the same grid through
// PyTorch.
//
// Grid: attention_grid.h.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "calibration/cuda/attention_grid.h"
#include "calibration/cuda/bench_common.h"
#include "calibration/cuda/cudnn_sdpa.h"

namespace moesim::cuda_bench {
namespace {

constexpr char kTool[] = "attention_bench";
constexpr char kUsage[] =
    "usage: attention_bench --out attention.csv [--graph auto|composite|"
    "unified]\n                       [--max-seq 131072] [--kernel-cache]";

// Builds a plan with the requested graph form(s), with the kernel cache
// first (when given) and without it if that fails; null with `why` when
// nothing works.
std::unique_ptr<CudnnPlan> BuildPlan(cudnnHandle_t handle, const SdpaShape& s,
                                     bool backward, const std::string& graph,
                                     const SdpaBuffers& buffers,
                                     CudnnKernelCaches* caches,
                                     std::string* why) {
  std::vector<SdpaGraph> forms;
  if (graph != "unified") forms.push_back(SdpaGraph::kComposite);
  if (graph != "composite" && !s.causal && !backward)
    forms.push_back(SdpaGraph::kUnified);
  std::vector<CudnnKernelCaches*> cache_choices = {caches};
  if (caches != nullptr) cache_choices.push_back(nullptr);
  for (SdpaGraph form : forms) {
    for (CudnnKernelCaches* cache : cache_choices) {
      std::string attempt;
      auto plan = BuildSdpaPlan(handle, nullptr, s, backward, form, buffers,
                                cache, &attempt);
      if (plan) return plan;
      *why += (why->empty() ? "" : " || ") + attempt;
    }
  }
  return nullptr;
}

// The first `n` characters of a (multi-line) cuDNN message, on one line.
std::string OneLine(const std::string& text, size_t n = 400) {
  std::string line = text.substr(0, n);
  for (char& c : line)
    if (c == '\n') c = ' ';
  return line + (text.size() > n ? " ..." : "");
}

int Run(int argc, char** argv) {
  Args args(argc, argv, kUsage, {"graph", "max-seq"}, {"kernel-cache"});
  const bool use_cache = args.Flag("kernel-cache");
  const std::string graph = args.Get("graph", "auto");
  if (graph != "auto" && graph != "composite" && graph != "unified")
    Die(kTool, "--graph is auto, composite or unified");
  BENCH_CUDA_CHECK(cudaSetDevice(args.device()));
  PrintEnvLine(kTool, args.device(),
               "cudnn=" + std::to_string(cudnnGetVersion()));
  cudaStream_t stream;
  BENCH_CUDA_CHECK(cudaStreamCreate(&stream));
  cudnnHandle_t handle;
  if (cudnnCreate(&handle) != CUDNN_STATUS_SUCCESS)
    Die(kTool, "cudnnCreate failed");
  cudnnSetStream(handle, stream);

  const std::vector<SdpaShape> grid =
      AttentionGrid(args.quick(), args.GetInt("max-seq", 131072));
  CsvWriter csv(args.out(),
                {"impl", "direction", "batch", "seq_q", "seq_kv", "heads_q",
                 "heads_kv", "head_dim_qk", "head_dim_v", "causal", "window",
                 "dtype", "tflops", "source"},
                args.append());
  const std::string source = MeasuredSource(args.device());
  TimingPolicy policy;
  policy.min_samples_if_slow = 2;
  Budget budget(args.budget_s());

  int built = 0, failed = 0;
  CudnnKernelCaches caches;  // outlives every plan (declared first)
  std::unique_ptr<SdpaTensors> tensors;
  for (size_t i = 0; i < grid.size(); ++i) {
    const SdpaShape& s = grid[i];
    if (budget.Exhausted()) {
      std::fprintf(stderr,
                   "%s: budget of %.0f s spent; %zu of %zu shapes "
                   "not measured\n",
                   kTool, args.budget_s(), grid.size() - i, grid.size());
      break;
    }
    if (built == 0 && failed >= 6) {
      std::fprintf(stderr,
                   "%s: no cuDNN plan could be built for the first %d graphs; "
                   "giving up (run attention_bench.py instead, README.md)\n",
                   kTool, failed);
      break;
    }
    // Causal and non-causal share operands: allocate on the first of a pair.
    if (!s.causal || !tensors) {
      tensors.reset();
      tensors = std::make_unique<SdpaTensors>(s, stream);
    }
    if (!tensors->ok()) {
      std::fprintf(stderr, "%s: skip %s: out of device memory\n", kTool,
                   DescribeShape(s, false).c_str());
      continue;
    }
    for (bool backward : {false, true}) {
      std::string why;
      const auto build_start = std::chrono::steady_clock::now();
      // cuDNN 9.19's SM90 backward engine refuses dynamic shapes, so only
      // forward plans share compiled kernels.
      auto plan = BuildPlan(handle, s, backward, graph, tensors->buffers(),
                            use_cache && !backward ? &caches : nullptr, &why);
      const double build_s = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - build_start)
                                 .count();
      if (!plan) {
        ++failed;
        std::fprintf(stderr, "%s: skip %s: %s\n", kTool,
                     DescribeShape(s, backward).c_str(), OneLine(why).c_str());
        continue;
      }
      ++built;
      Timing t = TimeOnStream(
          stream, [&] { return plan->Execute(); }, policy);
      if (t.samples == 0) {
        std::fprintf(stderr, "%s: skip %s: cudnnBackendExecute failed\n", kTool,
                     DescribeShape(s, backward).c_str());
        continue;
      }
      const double flops = AttentionForwardFlops(s) * (backward ? 2.5 : 1.0);
      const double tflops = flops / t.median_s / 1e12;
      csv.Row({"cudnn", backward ? "bwd" : "fwd", std::to_string(s.batch),
               std::to_string(s.seq_q), std::to_string(s.seq_kv),
               std::to_string(s.heads_q), std::to_string(s.heads_kv),
               std::to_string(s.dim_qk), std::to_string(s.dim_v),
               s.causal ? "1" : "0", "0", "bf16", FormatValue(tflops), source});
      std::fprintf(stderr,
                   "%s: %s %.1f TFLOPS (%.3f ms; plan built in %.2f s, "
                   "workspace %lld B)\n",
                   kTool, DescribeShape(s, backward).c_str(), tflops,
                   t.median_s * 1e3, build_s,
                   static_cast<long long>(plan->workspace_bytes()));
    }
  }
  tensors.reset();
  cudnnDestroy(handle);
  std::fprintf(stderr, "%s: %d rows in %.0f s\n", kTool, csv.rows(),
               budget.elapsed_s());
  return csv.rows() > 0 ? 0 : 3;
}

}  // namespace
}  // namespace moesim::cuda_bench

int main(int argc, char** argv) { return moesim::cuda_bench::Run(argc, argv); }
