// A thin layer over the cuDNN 9 backend graph API (cudnnBackend*): tensors
// and operations go into a CudnnGraphBuilder, which turns them into an
// executable CudnnPlan (operation graph -> heuristics -> the first engine
// configuration that finalizes -> workspace and variant pack). It does what
// cudnn_frontend's graph classes do for the few operations attention needs
// (pointwise, matmul, reduction, reshape), without cudnn_frontend.
//
// Errors: the first failing backend call is remembered (its status, what
// was being done and cuDNN's own message) and every later call becomes a
// no-op; Finalize then reports it. The engine search is the exception: a
// configuration that does not finalize is noted and the next one tried.
//
// Device-less use (cuDNN >= 9.8): a builder made with a null handle and a
// CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR compiles the plan for that GPU
// without one present; such a plan has no workspace and cannot execute.
#ifndef MOESIM_CALIBRATION_CUDA_CUDNN_GRAPH_H_
#define MOESIM_CALIBRATION_CUDA_CUDNN_GRAPH_H_

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace moesim::cuda_bench {

// A finalized tensor descriptor and its unique id; desc == nullptr means
// "no tensor" (an absent operand).
struct CudnnTensor {
  cudnnBackendDescriptor_t desc = nullptr;
  int64_t uid = 0;
};

// cuDNN kernel caches (CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR, cuDNN >= 9.5),
// one per caller-chosen key (a graph structure). Graphs built with a cache
// are dynamic-shape, so a plan for other extents of the same structure
// reuses the compiled kernel. Owns its descriptors; must outlive the plans
// built with it.
class CudnnKernelCaches {
 public:
  CudnnKernelCaches() = default;
  ~CudnnKernelCaches();
  CudnnKernelCaches(const CudnnKernelCaches&) = delete;
  CudnnKernelCaches& operator=(const CudnnKernelCaches&) = delete;

 private:
  friend class CudnnGraphBuilder;
  struct Entry {
    std::string key;
    cudnnBackendDescriptor_t cache = nullptr;
  };
  std::vector<Entry> entries_;
};

// An execution plan with its variant pack and workspace. Owns every backend
// descriptor made for it (destroyed in reverse order) and the workspace.
class CudnnPlan {
 public:
  ~CudnnPlan();
  CudnnPlan(const CudnnPlan&) = delete;
  CudnnPlan& operator=(const CudnnPlan&) = delete;

  // Enqueues one execution on the handle's stream. REQUIRES: built with a
  // handle (not device-less).
  bool Execute();

  int64_t workspace_bytes() const { return workspace_bytes_; }

 private:
  friend class CudnnGraphBuilder;
  CudnnPlan() = default;

  cudnnHandle_t handle_ = nullptr;
  std::vector<cudnnBackendDescriptor_t> descriptors_;
  cudnnBackendDescriptor_t plan_ = nullptr;
  cudnnBackendDescriptor_t variant_pack_ = nullptr;
  void* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
  // Host storage of the by-value scalars the variant pack points at.
  std::vector<std::unique_ptr<float>> scalars_;
};

class CudnnGraphBuilder {
 public:
  using Dims = std::vector<int64_t>;

  // Exactly one of `handle` (build for its GPU, executable) and
  // `device_prop` (device-less, compile only) is non-null.
  CudnnGraphBuilder(cudnnHandle_t handle, cudnnBackendDescriptor_t device_prop);
  ~CudnnGraphBuilder();
  CudnnGraphBuilder(const CudnnGraphBuilder&) = delete;
  CudnnGraphBuilder& operator=(const CudnnGraphBuilder&) = delete;

  // Build dynamic-shape with the kernel cache `key` of `caches` (made from
  // this graph if it is the first of its key).
  void UseKernelCache(CudnnKernelCaches* caches, const std::string& key);

  bool ok() const { return status_ == CUDNN_STATUS_SUCCESS; }

  // A tensor in device memory at `data`, entered into the variant pack.
  CudnnTensor Device(const Dims& dims, const Dims& strides,
                     cudnnDataType_t type, void* data);
  // An intermediate that exists only inside the fused kernel.
  CudnnTensor Virtual(const Dims& dims, const Dims& strides,
                      cudnnDataType_t type);
  // A host float passed by value.
  CudnnTensor Scalar(float value);

  // y = mode(x[, b[, t]]) computed in `math`; `axis` only for GEN_INDEX.
  void Pointwise(cudnnPointwiseMode_t mode, CudnnTensor x, CudnnTensor b,
                 CudnnTensor t, CudnnTensor y,
                 cudnnDataType_t math = CUDNN_DATA_FLOAT, int64_t axis = -1);
  // c = a @ b over the last two axes, batched over the first two (a head
  // count of b dividing a's broadcasts, as for grouped-query attention);
  // fp32 accumulation.
  void Matmul(CudnnTensor a, CudnnTensor b, CudnnTensor c);
  // y = reduce(x) over the axes where y's extent is smaller; fp32.
  void Reduction(cudnnReduceTensorOp_t mode, CudnnTensor x, CudnnTensor y);
  // y = x under a different view (a transpose through strides).
  void Reshape(CudnnTensor x, CudnnTensor y);

  // A descriptor owned by the plan, for an operation the helpers above do
  // not cover; set it with Set / Link and add it with AddOp.
  cudnnBackendDescriptor_t Create(cudnnBackendDescriptorType_t type);
  void Set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
           cudnnBackendAttributeType_t type, int64_t count, const void* value,
           const char* what);
  void Link(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
            cudnnBackendDescriptor_t value);
  // Finalizes `op` and appends it to the graph.
  void AddOp(cudnnBackendDescriptor_t op, const char* what);

  // Turns the operations into a plan: heuristics mode A, then FALLBACK;
  // for each, the first proposed configuration and, if it fails, up to
  // three more. Returns null with `why` when nothing finalizes (`why` then
  // lists each step's failure with cuDNN's messages: long, multi-line).
  // Call once.
  std::unique_ptr<CudnnPlan> Finalize(std::string* why);

 private:
  CudnnTensor NewTensor(const Dims& dims, const Dims& strides,
                        cudnnDataType_t type, bool is_virtual, bool by_value);
  void Finish(cudnnBackendDescriptor_t d, const char* what);
  bool TryHeuristics(cudnnBackendDescriptor_t graph,
                     cudnnBackendHeurMode_t mode);
  bool TryConfig(cudnnBackendDescriptor_t config);
  cudnnBackendDescriptor_t KernelCacheFor(cudnnBackendDescriptor_t graph);
  bool AllocateAndPack();
  void Check(cudnnStatus_t status, const char* what);
  void Fail(cudnnStatus_t status, const std::string& what);
  void Forgive();
  void Note(const std::string& what);

  std::unique_ptr<CudnnPlan> plan_;
  cudnnHandle_t handle_;
  cudnnBackendDescriptor_t device_prop_;
  CudnnKernelCaches* caches_ = nullptr;
  std::string cache_key_;
  cudnnBackendDescriptor_t kernel_cache_ = nullptr;
  cudnnStatus_t status_ = CUDNN_STATUS_SUCCESS;
  std::string error_;
  std::string search_log_;  // why each engine-search step failed
  int64_t next_uid_ = 1;
  std::vector<cudnnBackendDescriptor_t> ops_;
  std::vector<int64_t> uids_;
  std::vector<void*> pointers_;
};

}  // namespace moesim::cuda_bench

#endif  // MOESIM_CALIBRATION_CUDA_CUDNN_GRAPH_H_
