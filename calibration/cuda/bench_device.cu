#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <chrono>

#include "calibration/cuda/bench_common.h"
#include "calibration/cuda/bench_device.h"

namespace moesim::cuda_bench {
namespace {

__device__ __forceinline__ uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from the top 24 bits of the hash.
__device__ __forceinline__ float Uniform(uint64_t seed, size_t i) {
  return (SplitMix64(seed ^ (i * 0xD1B54A32D192ED03ull)) >> 40) *
         (1.0f / 16777216.0f);
}

__global__ void FillBf16Kernel(__nv_bfloat16* data, size_t count,
                               uint64_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    data[i] = __float2bfloat16(2.0f * Uniform(seed, i) - 1.0f);
  }
}

__global__ void FillFp8Kernel(__nv_fp8_e4m3* data, size_t count,
                              uint64_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    data[i] = __nv_fp8_e4m3(2.0f * Uniform(seed, i) - 1.0f);
  }
}

__global__ void FillFloatKernel(float* data, size_t count, uint64_t seed,
                                float lo, float hi) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    data[i] = lo + (hi - lo) * Uniform(seed, i);
  }
}

// Dependent FMA chains in registers; `sink` keeps the compiler honest.
__global__ void BurnKernel(float* sink, int iterations) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f, d = blockIdx.x;
  for (int i = 0; i < iterations; ++i) {
    a = fmaf(a, b, c);
    d = fmaf(d, c, b);
    b = fmaf(b, c, a * 1e-7f);
    c = fmaf(c, b, d * 1e-7f);
  }
  if (a + b + c + d == 0.123f) sink[threadIdx.x] = a;
}

constexpr int kFillThreads = 256;

int FillBlocks(size_t count) {
  size_t blocks = (count + kFillThreads - 1) / kFillThreads;
  return static_cast<int>(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

}  // namespace

void FillBf16(void* data, size_t count, uint64_t seed, cudaStream_t stream) {
  FillBf16Kernel<<<FillBlocks(count), kFillThreads, 0, stream>>>(
      static_cast<__nv_bfloat16*>(data), count, seed);
  BENCH_CUDA_CHECK(cudaGetLastError());
}

void FillFp8E4m3(void* data, size_t count, uint64_t seed, cudaStream_t stream) {
  FillFp8Kernel<<<FillBlocks(count), kFillThreads, 0, stream>>>(
      static_cast<__nv_fp8_e4m3*>(data), count, seed);
  BENCH_CUDA_CHECK(cudaGetLastError());
}

void FillFloat(float* data, size_t count, uint64_t seed, float lo, float hi,
               cudaStream_t stream) {
  FillFloatKernel<<<FillBlocks(count), kFillThreads, 0, stream>>>(data, count,
                                                                  seed, lo, hi);
  BENCH_CUDA_CHECK(cudaGetLastError());
}

void WarmUpGpu(double seconds) {
  int device = 0, sms = 0;
  BENCH_CUDA_CHECK(cudaGetDevice(&device));
  BENCH_CUDA_CHECK(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  float* sink = nullptr;
  BENCH_CUDA_CHECK(cudaMalloc(&sink, 1024 * sizeof(float)));
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count() < seconds) {
    for (int i = 0; i < 4; ++i) BurnKernel<<<sms * 8, 256>>>(sink, 1 << 14);
    BENCH_CUDA_CHECK(cudaDeviceSynchronize());
  }
  BENCH_CUDA_CHECK(cudaFree(sink));
}

}  // namespace moesim::cuda_bench
