// memory_bound_bench: achieved bandwidth of the memory-bound kernels of a
// training step, the memory_bound.csv table (kernel,bytes,dtype,gb_s,source;
// bytes = bytes read + written by one call, gb_s = bytes / time).
//
// The kernels are hand-written stand-ins with the byte traffic of the real
// ones (Transformer Engine / Megatron), not the real ones:
//   rmsnorm_fwd   x[r,4096] bf16 -> y bf16, rstd[r] fp32 (reads gamma)
//   rmsnorm_bwd   dy, x, rstd, gamma -> dx bf16, per-CTA dgamma partials
//                 fp32, then their column sums (a second kernel)
//   swiglu_fwd    x[r, 2x2048] (gate | up) bf16 -> silu(gate) * up [r,2048]
//   swiglu_bwd    dy[r,2048], x[r,4096] -> dx[r,4096]
//   permute       out[i] = in[idx[i]], rows of 4096 bf16 (MoE token gather)
//   unpermute     out[idx[i]] = prob[i] * in[i] (scatter)
//   fp8_quantize  bf16 [r,4096] -> e4m3 + one fp32 scale per 1x128 block
//   adam          fp32 params, grads, m, v: read 4, write 3 (AdamW)
//   copy          cudaMemcpyAsync device to device
// Each is sized so one call moves about 1 MiB .. 1 GiB (powers of 2); the
// row reports the exact traffic. By default the L2 is flushed before every
// timed run (operands come from HBM, as activations of a large model do);
// --no-flush-l2 times back-to-back runs instead.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "calibration/cuda/bench_common.h"
#include "calibration/cuda/bench_device.h"

namespace moesim::cuda_bench {
namespace {

constexpr char kTool[] = "memory_bound_bench";
constexpr char kUsage[] =
    "usage: memory_bound_bench --out memory_bound.csv [--no-flush-l2]\n"
    "                          [--max-mib 1024]";

constexpr int kHidden = 4096;  // rmsnorm, permute, quantize row width
constexpr int kFfn = 2048;     // swiglu output width (input 2 x kFfn)
constexpr int kThreads = 256;
constexpr int kVec = 8;  // bf16 per 16-byte access

using bf16 = __nv_bfloat16;

// ------------------------------------------------------------ helpers

struct Bf16x8 {
  float v[kVec];
};

__device__ __forceinline__ Bf16x8 Load8(const bf16* p) {
  uint4 raw = *reinterpret_cast<const uint4*>(p);
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
  Bf16x8 out;
  for (int i = 0; i < 4; ++i) {
    float2 f = __bfloat1622float2(h[i]);
    out.v[2 * i] = f.x;
    out.v[2 * i + 1] = f.y;
  }
  return out;
}

__device__ __forceinline__ void Store8(bf16* p, const Bf16x8& x) {
  uint4 raw;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&raw);
  for (int i = 0; i < 4; ++i)
    h[i] = __floats2bfloat162_rn(x.v[2 * i], x.v[2 * i + 1]);
  *reinterpret_cast<uint4*>(p) = raw;
}

// Sum over the block; every thread gets the result.
__device__ float BlockSum(float x) {
  __shared__ float partial[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // `partial` may still be read from the previous call
  if (lane == 0) partial[warp] = x;
  __syncthreads();
  float total = 0;
  for (int w = 0; w < kThreads / 32; ++w) total += partial[w];
  return total;
}

__device__ __forceinline__ float Sigmoid(float x) {
  return 1.0f / (1.0f + __expf(-x));
}

// ------------------------------------------------------------ kernels

constexpr int kRowVecs = kHidden / kVec / kThreads;  // 16-byte loads/thread

// One CTA per row.
__global__ void RmsNormFwd(const bf16* x, const bf16* gamma, bf16* y,
                           float* rstd, float eps) {
  const size_t row = blockIdx.x;
  Bf16x8 v[kRowVecs];
  float ss = 0;
  for (int i = 0; i < kRowVecs; ++i) {
    const int c = (threadIdx.x + i * kThreads) * kVec;
    v[i] = Load8(x + row * kHidden + c);
    for (float f : v[i].v) ss += f * f;
  }
  const float r = rsqrtf(BlockSum(ss) / kHidden + eps);
  if (threadIdx.x == 0) rstd[row] = r;
  for (int i = 0; i < kRowVecs; ++i) {
    const int c = (threadIdx.x + i * kThreads) * kVec;
    Bf16x8 g = Load8(gamma + c);
    for (int j = 0; j < kVec; ++j) v[i].v[j] *= r * g.v[j];
    Store8(y + row * kHidden + c, v[i]);
  }
}

// Persistent CTAs, each over rows blockIdx.x, blockIdx.x + gridDim.x, ...;
// dgamma accumulates in registers and lands in partial[blockIdx.x][:].
__global__ void RmsNormBwd(const bf16* dy, const bf16* x, const float* rstd,
                           const bf16* gamma, bf16* dx, float* partial,
                           size_t rows) {
  float acc[kRowVecs][kVec] = {};
  Bf16x8 g[kRowVecs];
  for (int i = 0; i < kRowVecs; ++i)
    g[i] = Load8(gamma + (threadIdx.x + i * kThreads) * kVec);
  for (size_t row = blockIdx.x; row < rows; row += gridDim.x) {
    Bf16x8 xv[kRowVecs], dyv[kRowVecs];
    float dot = 0;
    for (int i = 0; i < kRowVecs; ++i) {
      const int c = (threadIdx.x + i * kThreads) * kVec;
      xv[i] = Load8(x + row * kHidden + c);
      dyv[i] = Load8(dy + row * kHidden + c);
      for (int j = 0; j < kVec; ++j)
        dot += g[i].v[j] * dyv[i].v[j] * xv[i].v[j];
    }
    const float r = rstd[row];
    const float coef = r * r * r * BlockSum(dot) / kHidden;
    for (int i = 0; i < kRowVecs; ++i) {
      Bf16x8 out;
      for (int j = 0; j < kVec; ++j) {
        out.v[j] = r * g[i].v[j] * dyv[i].v[j] - coef * xv[i].v[j];
        acc[i][j] += dyv[i].v[j] * xv[i].v[j] * r;
      }
      Store8(dx + row * kHidden + (threadIdx.x + i * kThreads) * kVec, out);
    }
  }
  for (int i = 0; i < kRowVecs; ++i)
    for (int j = 0; j < kVec; ++j)
      partial[blockIdx.x * size_t{kHidden} +
              (threadIdx.x + i * kThreads) * kVec + j] = acc[i][j];
}

__global__ void ColumnSum(const float* partial, int parts, float* dgamma) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= kHidden) return;
  float s = 0;
  for (int p = 0; p < parts; ++p) s += partial[size_t(p) * kHidden + c];
  dgamma[c] = s;
}

// Grid-stride over 8-element vectors of the [rows, kFfn] output.
__global__ void SwigluFwd(const bf16* x, bf16* y, size_t vectors) {
  constexpr int kRow = kFfn / kVec;
  for (size_t v = blockIdx.x * size_t{blockDim.x} + threadIdx.x; v < vectors;
       v += size_t{gridDim.x} * blockDim.x) {
    const size_t r = v / kRow, c = (v % kRow) * kVec;
    Bf16x8 gate = Load8(x + r * 2 * kFfn + c);
    Bf16x8 up = Load8(x + r * 2 * kFfn + kFfn + c);
    for (int j = 0; j < kVec; ++j)
      gate.v[j] = gate.v[j] * Sigmoid(gate.v[j]) * up.v[j];
    Store8(y + r * kFfn + c, gate);
  }
}

__global__ void SwigluBwd(const bf16* dy, const bf16* x, bf16* dx,
                          size_t vectors) {
  constexpr int kRow = kFfn / kVec;
  for (size_t v = blockIdx.x * size_t{blockDim.x} + threadIdx.x; v < vectors;
       v += size_t{gridDim.x} * blockDim.x) {
    const size_t r = v / kRow, c = (v % kRow) * kVec;
    Bf16x8 d = Load8(dy + r * kFfn + c);
    Bf16x8 gate = Load8(x + r * 2 * kFfn + c);
    Bf16x8 up = Load8(x + r * 2 * kFfn + kFfn + c);
    Bf16x8 dgate, dup;
    for (int j = 0; j < kVec; ++j) {
      const float s = Sigmoid(gate.v[j]);
      dup.v[j] = d.v[j] * gate.v[j] * s;
      dgate.v[j] = d.v[j] * up.v[j] * s * (1.0f + gate.v[j] * (1.0f - s));
    }
    Store8(dx + r * 2 * kFfn + c, dgate);
    Store8(dx + r * 2 * kFfn + kFfn + c, dup);
  }
}

// One CTA per output row: out[row] = in[index[row]].
__global__ void GatherRows(const bf16* in, const int* index, bf16* out) {
  const size_t row = blockIdx.x, src = index[row];
  const uint4* from = reinterpret_cast<const uint4*>(in + src * kHidden);
  uint4* to = reinterpret_cast<uint4*>(out + row * kHidden);
  for (int i = threadIdx.x; i < kHidden / kVec; i += kThreads) to[i] = from[i];
}

// One CTA per input row: out[index[row]] = prob[row] * in[row].
__global__ void ScatterRows(const bf16* in, const int* index, const float* prob,
                            bf16* out) {
  const size_t row = blockIdx.x, dst = index[row];
  const float p = prob[row];
  for (int i = threadIdx.x; i < kHidden / kVec; i += kThreads) {
    Bf16x8 v = Load8(in + row * kHidden + i * kVec);
    for (float& f : v.v) f *= p;
    Store8(out + dst * kHidden + i * kVec, v);
  }
}

// One warp per 1x128 block: 4 values per lane, warp amax, scale to e4m3's
// range (448), write 4 fp8 per lane and the block's dequantization scale.
__global__ void QuantizeFp8(const bf16* x, uint32_t* q, float* scale_inv,
                            size_t blocks) {
  const int lane = threadIdx.x % 32;
  for (size_t b = (blockIdx.x * size_t{blockDim.x} + threadIdx.x) / 32;
       b < blocks; b += size_t{gridDim.x} * blockDim.x / 32) {
    uint2 raw = *reinterpret_cast<const uint2*>(x + b * 128 + lane * 4);
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
    float2 lo = __bfloat1622float2(h[0]), hi = __bfloat1622float2(h[1]);
    float amax =
        fmaxf(fmaxf(fabsf(lo.x), fabsf(lo.y)), fmaxf(fabsf(hi.x), fabsf(hi.y)));
    for (int o = 16; o > 0; o >>= 1)
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float s = 448.0f / fmaxf(amax, 1e-12f);
    __nv_fp8x4_e4m3 packed(make_float4(lo.x * s, lo.y * s, hi.x * s, hi.y * s));
    q[b * 32 + lane] = packed.__x;
    if (lane == 0) scale_inv[b] = 1.0f / s;
  }
}

__global__ void AdamW(float4* p, const float4* g, float4* m, float4* v,
                      size_t vectors, float lr, float b1, float b2, float eps,
                      float wd, float bc1, float bc2) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < vectors;
       i += size_t{gridDim.x} * blockDim.x) {
    float4 pp = p[i], gg = g[i], mm = m[i], vv = v[i];
    float* pf = &pp.x;
    const float* gf = &gg.x;
    float* mf = &mm.x;
    float* vf = &vv.x;
    for (int j = 0; j < 4; ++j) {
      mf[j] = b1 * mf[j] + (1 - b1) * gf[j];
      vf[j] = b2 * vf[j] + (1 - b2) * gf[j] * gf[j];
      pf[j] -= lr * ((mf[j] / bc1) / (sqrtf(vf[j] / bc2) + eps) + wd * pf[j]);
    }
    p[i] = pp;
    m[i] = mm;
    v[i] = vv;
  }
}

// ------------------------------------------------------------ the grid

// Two device pools, operands carved from the front: inputs from `in`,
// outputs from `out`. Each holds the largest call's operands.
struct Pools {
  char* in = nullptr;
  char* out = nullptr;
  size_t bytes = 0;
};

// One kernel at one size: exact traffic and how to launch it.
struct Point {
  size_t bytes = 0;
  std::function<bool()> launch;
};

int GridFor(size_t work, int sms) {
  return static_cast<int>(std::clamp<size_t>((work + kThreads - 1) / kThreads,
                                             1, size_t(sms) * 16));
}

size_t AlignUp(size_t x) { return (x + 255) / 256 * 256; }

// Sets up kernel `name` for about `target` bytes of traffic. Operands are
// (re)filled here, outside the timing.
Point Setup(const std::string& name, size_t target, const Pools& pools, int sms,
            cudaStream_t s) {
  const size_t row_bytes = size_t{kHidden} * 2;
  char* in = pools.in;
  char* out = pools.out;
  Point pt;
  if (name == "rmsnorm_fwd") {
    const size_t rows = std::max<size_t>(1, target / (2 * row_bytes));
    auto* x = reinterpret_cast<bf16*>(in);
    auto* gamma = reinterpret_cast<bf16*>(in + AlignUp(rows * row_bytes));
    auto* y = reinterpret_cast<bf16*>(out);
    auto* rstd = reinterpret_cast<float*>(out + AlignUp(rows * row_bytes));
    pt.bytes = 2 * rows * row_bytes + rows * 4 + row_bytes;
    pt.launch = [=] {
      RmsNormFwd<<<rows, kThreads, 0, s>>>(x, gamma, y, rstd, 1e-6f);
      return cudaPeekAtLastError() == cudaSuccess;
    };
  } else if (name == "rmsnorm_bwd") {
    const size_t rows = std::max<size_t>(1, target / (3 * row_bytes));
    const int parts = static_cast<int>(std::min<size_t>(rows, size_t(sms) * 4));
    auto* x = reinterpret_cast<bf16*>(in);
    auto* dy = reinterpret_cast<bf16*>(in + AlignUp(rows * row_bytes));
    auto* gamma = reinterpret_cast<bf16*>(in + 2 * AlignUp(rows * row_bytes));
    auto* rstd = reinterpret_cast<float*>(in + 2 * AlignUp(rows * row_bytes) +
                                          AlignUp(row_bytes));
    auto* dx = reinterpret_cast<bf16*>(out);
    auto* partial = reinterpret_cast<float*>(out + AlignUp(rows * row_bytes));
    auto* dgamma = partial + size_t(parts) * kHidden;
    FillFloat(rstd, rows, 7, 0.5f, 2.0f, s);
    // dy, x, dx; rstd; gamma once per CTA (from L2 after the first);
    // partials written then read; dgamma written.
    pt.bytes = 3 * rows * row_bytes + rows * 4 + row_bytes +
               2 * size_t(parts) * kHidden * 4 + size_t{kHidden} * 4;
    pt.launch = [=] {
      RmsNormBwd<<<parts, kThreads, 0, s>>>(dy, x, rstd, gamma, dx, partial,
                                            rows);
      ColumnSum<<<kHidden / kThreads, kThreads, 0, s>>>(partial, parts, dgamma);
      return cudaPeekAtLastError() == cudaSuccess;
    };
  } else if (name == "swiglu_fwd" || name == "swiglu_bwd") {
    const bool fwd = name == "swiglu_fwd";
    const size_t out_row = size_t{kFfn} * 2;  // bytes of one output row
    const size_t rows = std::max<size_t>(1, target / ((fwd ? 3 : 5) * out_row));
    const size_t vectors = rows * kFfn / kVec;
    auto* x = reinterpret_cast<bf16*>(in);
    auto* dy = reinterpret_cast<bf16*>(in + AlignUp(2 * rows * out_row));
    auto* y = reinterpret_cast<bf16*>(out);
    pt.bytes = (fwd ? 3 : 5) * rows * out_row;
    const int grid = GridFor(vectors, sms);
    pt.launch = [=] {
      if (fwd) {
        SwigluFwd<<<grid, kThreads, 0, s>>>(x, y, vectors);
      } else {
        SwigluBwd<<<grid, kThreads, 0, s>>>(dy, x, y, vectors);
      }
      return cudaPeekAtLastError() == cudaSuccess;
    };
  } else if (name == "permute" || name == "unpermute") {
    const bool gather = name == "permute";
    const size_t rows = std::max<size_t>(1, target / (2 * row_bytes));
    auto* x = reinterpret_cast<bf16*>(in);
    auto* index = reinterpret_cast<int*>(in + AlignUp(rows * row_bytes));
    auto* prob = reinterpret_cast<float*>(in + AlignUp(rows * row_bytes) +
                                          AlignUp(rows * 4));
    auto* y = reinterpret_cast<bf16*>(out);
    std::vector<int> perm(rows);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937(42));
    BENCH_CUDA_CHECK(cudaMemcpyAsync(index, perm.data(), rows * 4,
                                     cudaMemcpyHostToDevice, s));
    BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
    FillFloat(prob, rows, 9, 0.0f, 1.0f, s);
    pt.bytes = 2 * rows * row_bytes + rows * 4 + (gather ? 0 : rows * 4);
    pt.launch = [=] {
      if (gather) {
        GatherRows<<<rows, kThreads, 0, s>>>(x, index, y);
      } else {
        ScatterRows<<<rows, kThreads, 0, s>>>(x, index, prob, y);
      }
      return cudaPeekAtLastError() == cudaSuccess;
    };
  } else if (name == "fp8_quantize") {
    // Per element: 2 bytes read, 1 written, 4/128 of a scale.
    const size_t blocks = std::max<size_t>(1, target / (128 * 3 + 4));
    auto* x = reinterpret_cast<bf16*>(in);
    auto* q = reinterpret_cast<uint32_t*>(out);
    auto* scale_inv = reinterpret_cast<float*>(out + AlignUp(blocks * 128));
    pt.bytes = blocks * (128 * 3 + 4);
    const int grid = GridFor(blocks * 32, sms);
    pt.launch = [=] {
      QuantizeFp8<<<grid, kThreads, 0, s>>>(x, q, scale_inv, blocks);
      return cudaPeekAtLastError() == cudaSuccess;
    };
  } else if (name == "adam") {
    const size_t vectors = std::max<size_t>(1, target / (7 * 16));
    const size_t n = vectors * 4, array = AlignUp(n * 4);
    auto* p = reinterpret_cast<float*>(in);
    auto* g = reinterpret_cast<float*>(in + array);
    auto* m = reinterpret_cast<float*>(in + 2 * array);
    auto* v = reinterpret_cast<float*>(in + 3 * array);
    FillFloat(p, n, 11, -1.0f, 1.0f, s);
    FillFloat(g, n, 12, -1e-3f, 1e-3f, s);
    FillFloat(m, n, 13, -1e-3f, 1e-3f, s);
    FillFloat(v, n, 14, 0.0f, 1e-6f, s);
    pt.bytes = 7 * n * 4;
    const int grid = GridFor(vectors, sms);
    pt.launch = [=] {
      AdamW<<<grid, kThreads, 0, s>>>(
          reinterpret_cast<float4*>(p), reinterpret_cast<const float4*>(g),
          reinterpret_cast<float4*>(m), reinterpret_cast<float4*>(v), vectors,
          1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.5f, 0.25f);
      return cudaPeekAtLastError() == cudaSuccess;
    };
  } else if (name == "copy") {
    const size_t bytes = std::max<size_t>(256, target / 2);
    pt.bytes = 2 * bytes;
    pt.launch = [=] {
      return cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, s) ==
             cudaSuccess;
    };
  }
  BENCH_CUDA_CHECK(cudaStreamSynchronize(s));
  return pt;
}

int Run(int argc, char** argv) {
  Args args(argc, argv, kUsage, {"max-mib"}, {"no-flush-l2"});
  BENCH_CUDA_CHECK(cudaSetDevice(args.device()));
  PrintEnvLine(kTool, args.device(), "");
  int sms = 0;
  BENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                          args.device()));

  const size_t max_bytes =
      static_cast<size_t>(args.GetInt("max-mib", args.quick() ? 64 : 1024))
      << 20;
  std::vector<size_t> sizes;
  for (size_t b = size_t{1} << 20; b <= max_bytes; b *= args.quick() ? 8 : 2)
    sizes.push_back(b);
  const std::vector<std::string> kernels = {
      "rmsnorm_fwd", "rmsnorm_bwd",  "swiglu_fwd", "swiglu_bwd", "permute",
      "unpermute",   "fp8_quantize", "adam",       "copy"};

  cudaStream_t stream;
  BENCH_CUDA_CHECK(cudaStreamCreate(&stream));
  Pools pools;
  pools.bytes = max_bytes + (size_t{64} << 20);
  BENCH_CUDA_CHECK(cudaMalloc(&pools.in, pools.bytes));
  BENCH_CUDA_CHECK(cudaMalloc(&pools.out, pools.bytes));
  FillBf16(pools.in, pools.bytes / 2, 1, stream);
  FillBf16(pools.out, pools.bytes / 2, 2, stream);
  BENCH_CUDA_CHECK(cudaStreamSynchronize(stream));

  CsvWriter csv(args.out(), {"kernel", "bytes", "dtype", "gb_s", "source"},
                args.append());
  const std::string source = MeasuredSource(args.device());
  TimingPolicy policy;
  policy.flush_l2 = !args.Flag("no-flush-l2");
  Budget budget(args.budget_s());
  WarmUpGpu(0.5);

  for (const std::string& kernel : kernels) {
    for (size_t target : sizes) {
      if (budget.Exhausted()) {
        std::fprintf(stderr, "%s: budget of %.0f s spent; stopping\n", kTool,
                     args.budget_s());
        return 0;
      }
      Point pt = Setup(kernel, target, pools, sms, stream);
      Timing t = TimeOnStream(stream, pt.launch, policy);
      if (t.samples == 0) {
        std::fprintf(stderr, "%s: skip %s %zu bytes: launch failed\n", kTool,
                     kernel.c_str(), pt.bytes);
        continue;
      }
      const double gb_s = pt.bytes / t.median_s / 1e9;
      const char* dtype = kernel == "adam" ? "fp32" : "bf16";
      csv.Row(
          {kernel, std::to_string(pt.bytes), dtype, FormatValue(gb_s), source});
      std::fprintf(stderr, "%s: %s %zu bytes %.1f GB/s (%.2f us)\n", kTool,
                   kernel.c_str(), pt.bytes, gb_s, t.median_s * 1e6);
    }
  }
  std::fprintf(stderr, "%s: %d rows in %.0f s\n", kTool, csv.rows(),
               budget.elapsed_s());
  return 0;
}

}  // namespace
}  // namespace moesim::cuda_bench

int main(int argc, char** argv) { return moesim::cuda_bench::Run(argc, argv); }
