// Which layers each pipeline stage (and virtual stage) holds.
//
// Megatron orders virtual stages rank-major inside each model chunk: virtual
// stage s runs on pipeline rank s % pp as model chunk s / pp. The layout is
// either uniform (num_layers divisible by pp * vpp; embedding on the first
// virtual stage, MTP and loss on the last) or Megatron's
// --pipeline-model-parallel-layout string, e.g. "Et*3|(tt|)*29m|L":
// E = embedding, t = decoder layer, m = MTP layer, L = loss (output layer),
// '|' = stage boundary, X*n repeats a symbol, (..)*n repeats a group.
#ifndef MOESIM_MODELS_PIPELINE_H_
#define MOESIM_MODELS_PIPELINE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace moesim::models {

struct VirtualStage {
  bool embedding = false;
  std::vector<int64_t> layers;  // 0-based decoder layer indices, in order
  int64_t mtp_layers = 0;
  bool loss = false;
};

struct PipelinePlan {
  int pp = 1;
  int vpp = 1;
  std::vector<VirtualStage>
      stages;  // pp * vpp entries, index = chunk * pp + rank

  const VirtualStage& Stage(int rank, int chunk) const {
    return stages[chunk * pp + rank];
  }
};

// The number of virtual stages (PP x VPP) a layout string describes, as
// Megatron-Core's PipelineParallelLayerLayout.get_num_stages_from_str
// counts them; errors as ParsePipelineLayout's.
util::Result<int64_t> CountLayoutStages(std::string_view layout);

// Even split. Error (naming pipeline_model_parallel_layout) when num_layers is
// not divisible by pp * vpp.
[[nodiscard]] util::Result<PipelinePlan> UniformPipeline(int64_t num_layers,
                                                         int64_t mtp_layers,
                                                         int pp, int vpp);

// Megatron's --account-for-embedding-in-pipeline-split and
// --account-for-loss-in-pipeline-split (the Megatron-Bridge recipes set both
// where num_layers does not split evenly, e.g. Llama 3.1 405B's 126 layers
// on PP8 VPP8): the embedding and the loss each count as one layer, so
// num_layers + 2 splits evenly over the pp x vpp virtual stages. Returns that
// split as a layout string ("Et*3|(t*4|)*30t*3L"), or "" when num_layers + 2
// does not divide, or the model has MTP layers.
std::string AccountedLayout(int64_t num_layers, int64_t mtp_layers, int pp,
                            int vpp);

// Parses a Megatron layout string. Errors name the rule broken: wrong number
// of stages for pp * vpp, layer count differing from num_layers, MTP count
// differing from mtp_layers, E not first, L not last, unknown symbols.
[[nodiscard]] util::Result<PipelinePlan> ParsePipelineLayout(
    std::string_view layout, int64_t num_layers, int64_t mtp_layers, int pp,
    int vpp);

// What one step of a pipeline rank's schedule runs. kBackward is a whole
// backward; a schedule that splits it (zero bubble) runs kInputGrad, the
// backward without the linear layers' weight gradients, which is what the
// previous stage waits for, and later kWeightGrad, those weight gradients.
enum class StepKind { kForward, kBackward, kInputGrad, kWeightGrad };

// One step of a pipeline rank's schedule: a pass of one micro-batch through
// one of the rank's model chunks.
struct ScheduleStep {
  StepKind kind = StepKind::kForward;
  int64_t microbatch = 0;
  int chunk = 0;
  bool forward() const { return kind == StepKind::kForward; }
  // A step whose output the neighbouring stage waits for: the forward's
  // activation goes on, the backward's (or input gradient's) gradient back.
  bool sends() const { return kind != StepKind::kWeightGrad; }
};

// A pipeline rank's order of steps. Steps are computed on demand, so a
// schedule of 10^6 micro-batches costs nothing to hold.
// models/pipeline_schedules.h lists the schedules and makes them.
class PipelineSchedule {
 public:
  virtual ~PipelineSchedule() = default;
  virtual int64_t size() const = 0;
  // The i-th step, 0 <= i < size().
  virtual ScheduleStep operator[](int64_t i) const = 0;
  // Forwards before the first backward.
  virtual int64_t warmup() const = 0;
};

// Megatron's 1F1B order for one pipeline rank (MLM
// pipeline_parallel/schedules.py: forward_backward_pipelining_with_
// interleaving when vpp > 1, _without_interleaving otherwise): `warmup()`
// forwards, then one forward and one backward alternately, then the
// cool-down backwards. Micro-batches go through the chunks in groups of pp
// (microbatch_group_size_per_vp_stage's default; get_schedule_table): the
// k-th forward takes chunk c of micro-batch mb from that table, the k-th
// backward the same entry with the chunk order reversed.
class OneFOneBSchedule final : public PipelineSchedule {
 public:
  // REQUIRES: 0 <= rank < pp; vpp >= 1; microbatches >= 1.
  OneFOneBSchedule(int rank, int pp, int vpp, int64_t microbatches);

  // Forwards before the first backward: (pp - rank - 1) for 1F1B, (pp - rank
  // - 1) x 2 + (vpp - 1) x pp interleaved; at most every forward.
  int64_t warmup() const override { return warmup_; }
  int64_t size() const override { return 2 * total_; }  // forwards + backwards
  ScheduleStep operator[](int64_t i) const override;
  ScheduleStep Forward(int64_t k) const;   // k-th forward
  ScheduleStep Backward(int64_t k) const;  // k-th backward

 private:
  int pp_, vpp_;
  int64_t microbatches_, total_, warmup_;
};

}  // namespace moesim::models

#endif  // MOESIM_MODELS_PIPELINE_H_
