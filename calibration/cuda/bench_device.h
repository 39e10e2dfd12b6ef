// Device-side helpers shared by the benchmarks: random operand fills and a
// warm-up that brings the GPU to its sustained clock before the first
// measurement. Implemented in bench_device.cu; callable from host code
// compiled by g++.
#ifndef MOESIM_CALIBRATION_CUDA_BENCH_DEVICE_H_
#define MOESIM_CALIBRATION_CUDA_BENCH_DEVICE_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace moesim::cuda_bench {

// Fills `count` bf16 values at `data` with a hash of (`seed`, index) mapped
// uniformly to [-1, 1). Random operands, not zeros: tensor-core power (and
// so the clock a GEMM sustains) depends on the bits toggled.
void FillBf16(void* data, size_t count, uint64_t seed, cudaStream_t stream);

// Same for fp8 e4m3 (values in [-1, 1), exactly representable steps).
void FillFp8E4m3(void* data, size_t count, uint64_t seed, cudaStream_t stream);

// Fills `count` floats uniformly in [lo, hi).
void FillFloat(float* data, size_t count, uint64_t seed, float lo, float hi,
               cudaStream_t stream);

// Runs FMA-heavy kernels on the current device for about `seconds`
// (host-timed), then synchronizes. Call once before measuring.
void WarmUpGpu(double seconds);

}  // namespace moesim::cuda_bench

#endif  // MOESIM_CALIBRATION_CUDA_BENCH_DEVICE_H_
