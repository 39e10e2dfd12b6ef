// Lays a pipeline schedule out on the engine: every stage's order
// (models/pipeline_schedules.h: Megatron's 1F1B, ZB-H1), chained on the
// stage, each forward waiting for the activation of the previous virtual
// stage and each backward (or input gradient) for the gradient of the next;
// a weight gradient waits only for its stage's earlier steps. What a step does
// and how a tensor moves between stages are the caller's (callbacks), so the
// replay and the schedule's own tests share this one piece.
#ifndef MOESIM_SIM_PIPELINE_SCHEDULE_H_
#define MOESIM_SIM_PIPELINE_SCHEDULE_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "models/pipeline.h"
#include "models/training.h"
#include "sim/engine.h"

namespace moesim::sim {

struct PipelineCallbacks {
  // Adds the ops of `step` on stage `stage`, each first op waiting for every
  // op of `entry`; returns the op whose finish ends the step.
  std::function<OpId(int stage, const models::ScheduleStep& step,
                     const std::vector<OpId>& entry)>
      run;
  // Adds the transfer of `step`'s output (the activation after a forward,
  // the gradient after a backward or input gradient) from `stage` to stage
  // `to`, after `done`;
  // returns the op whose finish delivers it.
  std::function<OpId(int stage, int to, const models::ScheduleStep& step,
                     OpId done)>
      send;
  // Optional (EP overlap, Megatron's merged forward-backward 1F1B; only with
  // a schedule whose backwards are whole): adds the
  // steady-state forward and the backward that follows it as one merged
  // step whose two halves interleave. `entry` as for run, plus the inputs of
  // both halves. Returns the op ending each half and one that ends both.
  struct PairEnd {
    OpId forward = -1, backward = -1, both = -1;
  };
  std::function<PairEnd(int stage, const models::ScheduleStep& forward,
                        const models::ScheduleStep& backward,
                        const std::vector<OpId>& entry)>
      run_pair;
};

// Emits the steps of schedule `kind` on `pp` stages x `vpp` chunks x
// `microbatches`. `chain`:
// per stage, the op its first step waits for (-1: none); on return, the last
// op of each stage. Virtual stage v = chunk x pp + stage; its forward input
// comes from stage (stage - 1) mod pp, its backward input from (stage + 1)
// mod pp.
// REQUIRES: chain.size() == pp.
void EmitPipeline(models::PipelineScheduleKind kind, int pp, int vpp,
                  int64_t microbatches, std::vector<OpId>& chain,
                  const PipelineCallbacks& callbacks);

}  // namespace moesim::sim

#endif  // MOESIM_SIM_PIPELINE_SCHEDULE_H_
