// Per-GPU memory of a training step, per pipeline rank: static state
// (parameters, gradients, optimizer, FP8 weight copies), activations stored
// for backward by module, in-flight micro-batches of the pipeline schedule,
// transient working set and stated allowances, against the GPU's capacity.
//
// Sources, per term (details at each function in memory.cc):
//  - sharding and bytes per parameter: MLM theoretical_memory_usage.py and
//    docs/user-guide/features/dist_optimizer.md, with the refinements of
//    ../shared/reference/memory_flops.md a.2-a.3 (dense optimizer state
//    sharded over DP x CP, experts over expert-DP, MLA down-projections
//    replicated across TP);
//  - activations: memory_flops.md b.3 (TE layer specs, flash attention, SP,
//    CP), recompute modules per MCore transformer_config.py;
//  - in-flight micro-batches: MLM schedules.py (interleaved 1F1B order),
//    replayed forward/backward by forward/backward to find the peak.
// Bytes are exact integers of the model; GiB = 2^30 bytes.
#ifndef MOESIM_MODELS_MEMORY_H_
#define MOESIM_MODELS_MEMORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.pb.h"
#include "models/pipeline.h"
#include "models/training.h"

namespace moesim::models {

struct NamedBytes {
  std::string name;
  double bytes = 0;
};

struct StageMemory {
  int pp_rank = 0;
  int64_t params = 0;  // parameters held by one GPU of this stage
  double params_bytes =
      0;  // model weights (bf16, or FP8 with fp8_param_gather)
  double fp8_weight_bytes =
      0;  // cached low-precision weight copies (FP8/FP4 recipes)
  double grads_bytes = 0;           // main-gradient buffer
  double optimizer_bytes = 0;       // master weights + Adam moments on the GPU
  double optimizer_host_bytes = 0;  // the offloaded share, in host memory
  // Megatron-FSDP: the whole (unsharded) weights and gradients of the
  // layers being computed, on top of the shards above.
  double fsdp_unit_bytes = 0;
  // cpu_offloading: the stored activations of each offloaded layer of one
  // micro-batch (forward order), and what they put in host memory.
  std::vector<double> offloaded_layer_bytes;
  // Activations in host memory at the peak (cpu_offloading or fine-grained
  // offloading; pinned).
  double activation_host_bytes = 0;
  // Fine-grained activation offloading: the GPU bytes each listed module
  // saves at the peak (over the stored micro-batches), and per model chunk
  // the bytes each layer position copies to the host per micro-batch.
  std::vector<NamedBytes> offload_saved;
  std::vector<std::vector<double>> offload_layer_copy_bytes;
  // offload_optimizer_states: what the optimizer step holds (weights, FP8
  // copies, grads and the optimizer state back from the host); 0 otherwise.
  double optimizer_step_bytes = 0;
  // Activations stored at the peak, by module, summed over in-flight
  // micro-batches; `activations_bytes` is their sum.
  std::vector<NamedBytes> activations;
  double activations_bytes = 0;
  // Bytes one micro-batch's forward of each model chunk stores for its
  // backward (the replay's memory timeline allocates and frees them).
  std::vector<double> chunk_activation_bytes;
  // A schedule that splits the backward (ZB-H1): of those, what a
  // micro-batch keeps from its input gradient to its weight gradient (empty
  // otherwise).
  std::vector<double> chunk_weight_grad_bytes;
  // Stored (micro-batch, chunk) forwards at the peak, those awaiting only
  // their weight gradient included.
  int64_t peak_in_flight = 0;
  double transient_bytes = 0;  // one layer's backward working set
  // Allocations outside PyTorch's caching allocator (CUDA context, NCCL,
  // dispatcher buffers, CUDA-graph pools).
  std::vector<NamedBytes> buffers;
  double buffers_bytes = 0;
  // What torch.cuda.max_memory_allocated would report.
  double allocated_peak_bytes = 0;
  // allocated_peak_bytes + buffers_bytes: what must fit on the GPU.
  double peak_bytes = 0;
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;  // one per pipeline rank
  int busiest_rank = 0;             // the stage with the largest peak
  double peak_bytes = 0;
  double allocated_peak_bytes = 0;  // of the busiest stage
  double capacity_bytes = 0;
  bool fits = false;
  double margin_bytes = 0;  // capacity - peak (negative: out of memory)
};

// REQUIRES: `plan` matches `model` and `parallel` (scenarios::Resolve checks).
MemoryEstimate EstimateMemory(const Model& model, const PipelinePlan& plan,
                              const Parallelism& parallel,
                              const TrainingOptions& training,
                              double capacity_bytes);

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace moesim::models

#endif  // MOESIM_MODELS_MEMORY_H_
