// models::PipelineSchedules: the pipeline schedules moesim replays, one row
// each with the traits the rest of the code reads (the scenario word, whether
// it splits the backward into input and weight gradients, whether it runs
// interleaved chunks, whether the replay's periodic shortcut applies) and the
// function that makes a rank's schedule. A new schedule is an enumerator in
// training.h (PipelineScheduleKind), a file with its order, and its row in
// pipeline_schedules.cc.
#ifndef MOESIM_MODELS_PIPELINE_SCHEDULES_H_
#define MOESIM_MODELS_PIPELINE_SCHEDULES_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "models/pipeline.h"
#include "models/training.h"

namespace moesim::models {

struct PipelineScheduleTraits {
  PipelineScheduleKind id = PipelineScheduleKind::kOneFOneB;
  // The scenario's `pipeline_schedule` word.
  std::string_view word;
  // Runs StepKind::kInputGrad and kWeightGrad steps instead of kBackward:
  // the TE linears' weight gradients (sim TimedOp::wgrad) leave the
  // backward for a step of their own.
  bool splits_backward = false;
  // Runs VPP > 1 (interleaved model chunks).
  bool interleaved = false;
  // The replay's periodic steady-state shortcut (sim/periodic.h) knows its
  // steady phase.
  bool periodic_shortcut = false;
  // Where the order comes from.
  std::string_view source;
  // Rank `rank`'s schedule. REQUIRES: 0 <= rank < pp, vpp >= 1 (1 unless
  // interleaved), microbatches >= 1.
  std::unique_ptr<PipelineSchedule> (*make)(int rank, int pp, int vpp,
                                            int64_t microbatches) = nullptr;
};

// Every schedule, in the order the scenario words are listed.
std::span<const PipelineScheduleTraits> PipelineSchedules();

// The row of `kind`.
const PipelineScheduleTraits& TraitsOf(PipelineScheduleKind kind);

// Rank `rank`'s schedule of `kind`.
std::unique_ptr<PipelineSchedule> MakeSchedule(PipelineScheduleKind kind,
                                               int rank, int pp, int vpp,
                                               int64_t microbatches);

}  // namespace moesim::models

#endif  // MOESIM_MODELS_PIPELINE_SCHEDULES_H_
