#include "models/pipeline_schedules.h"

#include "util/check.h"

namespace moesim::models {

// Each schedule's file defines its maker.
std::unique_ptr<PipelineSchedule> MakeZeroBubbleH1(int rank, int pp, int vpp,
                                                   int64_t microbatches);

namespace {

std::unique_ptr<PipelineSchedule> MakeOneFOneB(int rank, int pp, int vpp,
                                               int64_t microbatches) {
  return std::make_unique<OneFOneBSchedule>(rank, pp, vpp, microbatches);
}

// Fields in declaration order, every one set.
constexpr PipelineScheduleTraits kSchedules[] = {
    {.id = PipelineScheduleKind::kOneFOneB,
     .word = "1f1b",
     .splits_backward = false,
     .interleaved = true,
     .periodic_shortcut = true,
     .source = "Megatron-LM pipeline_parallel/schedules.py",
     .make = MakeOneFOneB},
    {.id = PipelineScheduleKind::kZeroBubbleH1,
     .word = "zb-h1",
     .splits_backward = true,
     .interleaved = false,
     .periodic_shortcut = false,
     .source = "Qi et al., Zero Bubble Pipeline Parallelism, ICLR 2024, "
               "sec. 3.1 (ZB-H1)",
     .make = MakeZeroBubbleH1},
};

}  // namespace

std::span<const PipelineScheduleTraits> PipelineSchedules() {
  return kSchedules;
}

const PipelineScheduleTraits& TraitsOf(PipelineScheduleKind kind) {
  for (const PipelineScheduleTraits& t : kSchedules) {
    if (t.id == kind) return t;
  }
  util::CheckOrDie(false, "TraitsOf: a PipelineScheduleKind without a row");
  return kSchedules[0];
}

std::unique_ptr<PipelineSchedule> MakeSchedule(PipelineScheduleKind kind,
                                               int rank, int pp, int vpp,
                                               int64_t microbatches) {
  return TraitsOf(kind).make(rank, pp, vpp, microbatches);
}

}  // namespace moesim::models
