// What a replayed step's timeline says: per stage, the time each stream was
// busy, communication exposed beyond compute, idle time, and time by op
// class; averaged over stages into a StepResult. Interval unions, as the
// Three-Walls workflow prescribes: communication is exposed exactly where no
// compute of the same stage runs.
#ifndef MOESIM_SIM_STEP_STATS_H_
#define MOESIM_SIM_STEP_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/op_pricing.h"
#include "sim/replay.h"

namespace moesim::sim {

// What the replay knows of each engine stream and the busy time of each op
// class it added, per stage.
struct StepStreams {
  struct Stream {
    int32_t stage = 0;
    StreamKind kind = StreamKind::kCompute;
  };
  std::vector<Stream> streams;  // by engine StreamId
  // Per stage: seconds of compute-stream work by op class (gemm, attention,
  // memory_bound, ...), summed by the builder from the priced ops.
  std::vector<std::map<std::string, double>> class_s;
};

// REQUIRES: engine.Run() succeeded; `streams.streams` covers every engine
// stream; class_s has num_stages entries. Fills step_time_s,
// bubble_fraction, comm_s, time_by_op_class_s (compute classes from
// class_s, communication kinds from their streams' busy time), stages, ops,
// events; leaves the FLOPs-derived figures to the caller.
StepResult SummarizeStep(const Engine& engine, const StepStreams& streams,
                         int num_stages);

// Length of the union of `intervals` (start, finish), any order.
Time UnionLength(std::vector<std::pair<Time, Time>> intervals);

}  // namespace moesim::sim

#endif  // MOESIM_SIM_STEP_STATS_H_
