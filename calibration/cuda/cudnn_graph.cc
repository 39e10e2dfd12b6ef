#include "calibration/cuda/cudnn_graph.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

namespace moesim::cuda_bench {
namespace {

// Configurations tried per heuristics mode: the first, then up to this many.
constexpr int64_t kMaxConfigsPerMode = 4;

// cuDNN's message for the last failure in this thread (may be long: for a
// refused graph it lists every candidate engine config with its reasons).
std::string LastCudnnError() {
  std::string last(1 << 16, '\0');
  cudnnGetLastErrorString(last.data(), last.size());
  last.resize(std::strlen(last.c_str()));
  return last;
}

}  // namespace

// ------------------------------------------------------- CudnnKernelCaches

CudnnKernelCaches::~CudnnKernelCaches() {
  for (const Entry& e : entries_) cudnnBackendDestroyDescriptor(e.cache);
}

// --------------------------------------------------------------- CudnnPlan

CudnnPlan::~CudnnPlan() {
  if (workspace_ != nullptr) cudaFree(workspace_);
  for (auto it = descriptors_.rbegin(); it != descriptors_.rend(); ++it)
    cudnnBackendDestroyDescriptor(*it);
}

bool CudnnPlan::Execute() {
  return cudnnBackendExecute(handle_, plan_, variant_pack_) ==
         CUDNN_STATUS_SUCCESS;
}

// ------------------------------------------------------- CudnnGraphBuilder

CudnnGraphBuilder::CudnnGraphBuilder(cudnnHandle_t handle,
                                     cudnnBackendDescriptor_t device_prop)
    : plan_(new CudnnPlan()), handle_(handle), device_prop_(device_prop) {
  plan_->handle_ = handle;
}

CudnnGraphBuilder::~CudnnGraphBuilder() = default;

void CudnnGraphBuilder::UseKernelCache(CudnnKernelCaches* caches,
                                       const std::string& key) {
  caches_ = caches;
  cache_key_ = key;
}

CudnnTensor CudnnGraphBuilder::Device(const Dims& dims, const Dims& strides,
                                      cudnnDataType_t type, void* data) {
  CudnnTensor t = NewTensor(dims, strides, type, false, false);
  uids_.push_back(t.uid);
  pointers_.push_back(data);
  return t;
}

CudnnTensor CudnnGraphBuilder::Virtual(const Dims& dims, const Dims& strides,
                                       cudnnDataType_t type) {
  return NewTensor(dims, strides, type, true, false);
}

CudnnTensor CudnnGraphBuilder::Scalar(float value) {
  CudnnTensor t =
      NewTensor({1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true);
  plan_->scalars_.push_back(std::make_unique<float>(value));
  uids_.push_back(t.uid);
  pointers_.push_back(plan_->scalars_.back().get());
  return t;
}

void CudnnGraphBuilder::Pointwise(cudnnPointwiseMode_t mode, CudnnTensor x,
                                  CudnnTensor b, CudnnTensor t, CudnnTensor y,
                                  cudnnDataType_t math, int64_t axis) {
  cudnnBackendDescriptor_t pw = Create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  Set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode,
      "pointwise mode");
  Set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math,
      "pointwise math");
  if (axis >= 0)
    Set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis,
        "pointwise axis");
  Finish(pw, "pointwise descriptor");
  cudnnBackendDescriptor_t op =
      Create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  Link(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
  Link(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x.desc);
  if (b.desc) Link(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b.desc);
  if (t.desc) Link(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t.desc);
  Link(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y.desc);
  AddOp(op, "pointwise operation");
}

void CudnnGraphBuilder::Matmul(CudnnTensor a, CudnnTensor b, CudnnTensor c) {
  const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t mm = Create(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  Set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32,
      "matmul compute type");
  Finish(mm, "matmul descriptor");
  cudnnBackendDescriptor_t op =
      Create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  Link(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a.desc);
  Link(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b.desc);
  Link(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c.desc);
  Link(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
  AddOp(op, "matmul operation");
}

void CudnnGraphBuilder::Reduction(cudnnReduceTensorOp_t mode, CudnnTensor x,
                                  CudnnTensor y) {
  const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
  cudnnBackendDescriptor_t red = Create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  Set(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1,
      &mode, "reduction operator");
  Set(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32,
      "reduction compute type");
  Finish(red, "reduction descriptor");
  cudnnBackendDescriptor_t op =
      Create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  Link(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x.desc);
  Link(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y.desc);
  Link(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, red);
  AddOp(op, "reduction operation");
}

void CudnnGraphBuilder::Reshape(CudnnTensor x, CudnnTensor y) {
  cudnnBackendDescriptor_t op =
      Create(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  Link(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x.desc);
  Link(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y.desc);
  AddOp(op, "reshape operation");
}

cudnnBackendDescriptor_t CudnnGraphBuilder::Create(
    cudnnBackendDescriptorType_t type) {
  if (!ok()) return nullptr;
  cudnnBackendDescriptor_t d = nullptr;
  Check(cudnnBackendCreateDescriptor(type, &d), "create descriptor");
  if (d != nullptr) plan_->descriptors_.push_back(d);
  return d;
}

void CudnnGraphBuilder::Set(cudnnBackendDescriptor_t d,
                            cudnnBackendAttributeName_t name,
                            cudnnBackendAttributeType_t type, int64_t count,
                            const void* value, const char* what) {
  if (!ok()) return;
  Check(cudnnBackendSetAttribute(d, name, type, count, value), what);
}

void CudnnGraphBuilder::Link(cudnnBackendDescriptor_t d,
                             cudnnBackendAttributeName_t name,
                             cudnnBackendDescriptor_t value) {
  Set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value, "link descriptor");
}

void CudnnGraphBuilder::AddOp(cudnnBackendDescriptor_t op, const char* what) {
  Finish(op, what);
  if (ok()) ops_.push_back(op);
}

std::unique_ptr<CudnnPlan> CudnnGraphBuilder::Finalize(std::string* why) {
  cudnnBackendDescriptor_t graph =
      Create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  if (handle_ != nullptr)
    Set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_,
        "graph handle");
  Set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
      static_cast<int64_t>(ops_.size()), ops_.data(), "graph operations");
  if (caches_ != nullptr) {
    const bool dynamic = true;
    Set(graph, CUDNN_ATTR_OPERATIONGRAPH_IS_DYNAMIC_SHAPE_ENABLED,
        CUDNN_TYPE_BOOLEAN, 1, &dynamic, "graph dynamic shape");
  }
  Finish(graph, "operation graph");
  if (ok() && caches_ != nullptr) kernel_cache_ = KernelCacheFor(graph);
  if (ok()) {
    for (cudnnBackendHeurMode_t mode :
         {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
      if (TryHeuristics(graph, mode)) break;
    }
    if (plan_->plan_ == nullptr) {
      status_ = CUDNN_STATUS_NOT_SUPPORTED;
      error_ = "no engine config finalized: " + search_log_;
    }
  }
  if (ok()) {
    int64_t count = 0;
    Check(cudnnBackendGetAttribute(
              plan_->plan_, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
              CUDNN_TYPE_INT64, 1, &count, &plan_->workspace_bytes_),
          "workspace size");
  }
  // Device-less plans stop here: compiled, not executable.
  if (ok() && handle_ != nullptr) AllocateAndPack();
  if (!ok()) {
    *why = error_;
    return nullptr;
  }
  return std::move(plan_);
}

CudnnTensor CudnnGraphBuilder::NewTensor(const Dims& dims, const Dims& strides,
                                         cudnnDataType_t type, bool is_virtual,
                                         bool by_value) {
  CudnnTensor t;
  t.uid = next_uid_++;
  t.desc = Create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const int64_t alignment = 16;
  const int64_t rank = static_cast<int64_t>(dims.size());
  Set(t.desc, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type,
      "tensor type");
  Set(t.desc, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, rank, dims.data(),
      "tensor dims");
  Set(t.desc, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, rank, strides.data(),
      "tensor strides");
  Set(t.desc, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &t.uid,
      "tensor uid");
  Set(t.desc, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment,
      "tensor alignment");
  Set(t.desc, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual,
      "tensor virtual");
  if (by_value)
    Set(t.desc, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value,
        "tensor by value");
  Finish(t.desc, "tensor");
  return t;
}

void CudnnGraphBuilder::Finish(cudnnBackendDescriptor_t d, const char* what) {
  if (!ok()) return;
  Check(cudnnBackendFinalize(d), what);
}

// True when a configuration `mode` proposes finalized into plan_->plan_.
// Failures here are noted, not kept.
bool CudnnGraphBuilder::TryHeuristics(cudnnBackendDescriptor_t graph,
                                      cudnnBackendHeurMode_t mode) {
  const std::string label =
      mode == CUDNN_HEUR_MODE_A ? "[heuristics A] " : "[heuristics FALLBACK] ";
  cudnnBackendDescriptor_t heur = Create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  Link(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
  Set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode,
      "heuristics mode");
  if (device_prop_ != nullptr)
    Link(heur, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, device_prop_);
  Finish(heur, "heuristics");
  int64_t available = 0;
  if (ok())
    Check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &available,
                                   nullptr),
          "heuristics result count");
  if (!ok()) {
    Note(label + error_);
    Forgive();
    return false;
  }
  if (available == 0) {
    Note(label + "no engine config (" + LastCudnnError() + ")");
    return false;
  }
  // cuDNN 9 checks (the runtime-compiled engines: compiles) every config it
  // returns, so ask for the first alone, and for more only if it fails.
  int64_t asked = 0, tried = 0;
  for (int64_t wanted : {int64_t{1}, kMaxConfigsPerMode}) {
    wanted = std::min(wanted, available);
    if (wanted <= asked) break;
    asked = wanted;
    std::vector<cudnnBackendDescriptor_t> configs(wanted);
    for (auto& c : configs) c = Create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    int64_t returned = 0;
    Check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, wanted,
                                   &returned, configs.data()),
          "heuristics results");
    if (!ok()) {
      Note(label + error_);
      Forgive();
      return false;
    }
    if (returned == 0) {
      // cuDNN's message says why none of these candidates is viable.
      Note(label + "no viable engine config among the first " +
           std::to_string(wanted) + " (" + LastCudnnError() + ")");
      continue;
    }
    for (int64_t i = tried; i < returned; ++i) {
      if (TryConfig(configs[i])) return true;
      Note(label + "config " + std::to_string(i) + ": " + error_);
      Forgive();
    }
    tried = returned;
  }
  return false;
}

// Finalizes an execution plan for `config`: true (plan_->plan_ set), or
// false with the failure pending.
bool CudnnGraphBuilder::TryConfig(cudnnBackendDescriptor_t config) {
  cudnnBackendDescriptor_t plan =
      Create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  if (handle_ != nullptr) {
    Set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle_,
        "plan handle");
  } else {
    Link(plan, CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, device_prop_);
  }
  Link(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
  if (kernel_cache_ != nullptr)
    Link(plan, CUDNN_ATTR_EXECUTION_PLAN_KERNEL_CACHE, kernel_cache_);
  Finish(plan, "execution plan");
  if (!ok()) return false;
  plan_->plan_ = plan;
  return true;
}

// The cache for cache_key_, made from `graph` (the first graph of that key)
// on first use. Owned by caches_, which outlives the plans.
cudnnBackendDescriptor_t CudnnGraphBuilder::KernelCacheFor(
    cudnnBackendDescriptor_t graph) {
  for (const auto& e : caches_->entries_)
    if (e.key == cache_key_) return e.cache;
  cudnnBackendDescriptor_t cache = nullptr;
  Check(cudnnBackendCreateDescriptor(CUDNN_BACKEND_KERNEL_CACHE_DESCRIPTOR,
                                     &cache),
        "create kernel cache");
  if (!ok()) return nullptr;
  Set(cache, CUDNN_ATTR_KERNEL_CACHE_OPERATION_GRAPH,
      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph, "kernel cache graph");
  Finish(cache, "kernel cache");
  if (!ok()) {
    cudnnBackendDestroyDescriptor(cache);
    return nullptr;
  }
  caches_->entries_.push_back({cache_key_, cache});
  return cache;
}

// The workspace and the variant pack (device and by-value tensors).
bool CudnnGraphBuilder::AllocateAndPack() {
  if (plan_->workspace_bytes_ > 0 &&
      cudaMalloc(&plan_->workspace_, plan_->workspace_bytes_) != cudaSuccess) {
    cudaGetLastError();
    plan_->workspace_ = nullptr;
    status_ = CUDNN_STATUS_NOT_SUPPORTED;
    error_ = "cannot allocate " + std::to_string(plan_->workspace_bytes_) +
             " bytes of workspace";
    return false;
  }
  cudnnBackendDescriptor_t pack = Create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  Set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
      static_cast<int64_t>(uids_.size()), uids_.data(), "pack ids");
  Set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
      static_cast<int64_t>(pointers_.size()), pointers_.data(),
      "pack pointers");
  Set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
      &plan_->workspace_, "pack workspace");
  Finish(pack, "variant pack");
  plan_->variant_pack_ = pack;
  return ok();
}

void CudnnGraphBuilder::Check(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS && ok()) Fail(status, what);
}

void CudnnGraphBuilder::Fail(cudnnStatus_t status, const std::string& what) {
  const std::string last = LastCudnnError();
  status_ = status;
  error_ = what + ": " + cudnnGetErrorString(status) +
           (last.empty() ? "" : " (" + last + ")");
}

// Clears a failure so the engine search goes on (its message was noted).
void CudnnGraphBuilder::Forgive() {
  status_ = CUDNN_STATUS_SUCCESS;
  error_.clear();
}

void CudnnGraphBuilder::Note(const std::string& what) {
  if (!search_log_.empty()) search_log_ += " | ";
  search_log_ += what;
}

}  // namespace moesim::cuda_bench
