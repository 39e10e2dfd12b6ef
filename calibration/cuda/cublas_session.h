// A cuBLAS handle on its own stream with a 32 MiB workspace of its own (what
// Transformer Engine gives cuBLAS), for the benchmarks that link cuBLAS
// (grouped_gemm_bench, sustained_bench). Header-only: moesim_cuda_bench_common
// does not link cuBLAS.
#ifndef MOESIM_CALIBRATION_CUDA_CUBLAS_SESSION_H_
#define MOESIM_CALIBRATION_CUDA_CUBLAS_SESSION_H_

#include <cublas_v2.h>

#include <string>
#include <string_view>

#include "calibration/cuda/bench_common.h"

namespace moesim::cuda_bench {

class CublasSession {
 public:
  // Selects `device`, creates the stream, handle and workspace (exits with
  // `tool`'s message on failure) and prints the environment line with the
  // cuBLAS version.
  CublasSession(std::string_view tool, int device) {
    BENCH_CUDA_CHECK(cudaSetDevice(device));
    BENCH_CUDA_CHECK(cudaStreamCreate(&stream_));
    if (cublasCreate(&handle_) != CUBLAS_STATUS_SUCCESS)
      Die(tool, "cublasCreate failed");
    cublasSetStream(handle_, stream_);
    BENCH_CUDA_CHECK(cudaMalloc(&workspace_, kWorkspaceBytes));
    cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes);
    int version = 0;
    cublasGetVersion(handle_, &version);
    PrintEnvLine(tool, device, "cublas=" + std::to_string(version));
  }
  ~CublasSession() {
    cublasDestroy(handle_);
    cudaFree(workspace_);
    cudaStreamDestroy(stream_);
  }
  CublasSession(const CublasSession&) = delete;
  CublasSession& operator=(const CublasSession&) = delete;

  cublasHandle_t handle() const { return handle_; }
  cudaStream_t stream() const { return stream_; }

 private:
  static constexpr size_t kWorkspaceBytes = size_t{32} << 20;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
};

}  // namespace moesim::cuda_bench

#endif  // MOESIM_CALIBRATION_CUDA_CUBLAS_SESSION_H_
