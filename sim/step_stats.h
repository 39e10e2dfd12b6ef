// What a replayed step's timeline says: per stage, the time each stream was
// busy, communication exposed beyond compute, idle time, and time by op
// class; averaged over stages into a StepResult. Interval unions, as the
// Three-Walls workflow prescribes: communication is exposed exactly where no
// compute of the same stage runs.
#ifndef MOESIM_SIM_STEP_STATS_H_
#define MOESIM_SIM_STEP_STATS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/memory.h"
#include "models/pipeline.h"
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
// class_s, communication kinds from their streams' busy time), stages and
// ops; leaves the FLOPs-derived figures to the caller.
StepResult SummarizeStep(const Engine& engine, const StepStreams& streams,
                         int num_stages);

// Which wall binds (the optimization workflow's Three Walls, with the
// compute wall split into compute and host as its profile phase does), with
// the evidence. The step's critical path (CriticalPathSeconds) says what the
// step waited on: a compute kernel, a transfer, or a host call (a launch the
// GPU had to wait for, directly or through a collective the host issued
// late). Rules, in the workflow's order (fit first):
//  - memory: out of memory, or under kMemoryHeadroom of capacity free;
//  - communication / host: the larger of the communication share of the
//    critical path (all kinds; the card's EP figure is "20-60% of step
//    time") and its host share, when it reaches its threshold (kCommShare,
//    kHostShare);
//  - compute otherwise.
// The exposed-communication share (interval unions beyond compute, the
// workflow's overlap measure) is evidence beside them: it also counts
// transfers off the critical path (a stage's exposed all-to-all while
// another stage binds the step).
struct Wall {
  std::string name;  // memory, communication, host, compute
  double exposed_comm_share = 0;
  double comm_share = 0;       // communication on the critical path / step
  double host_share = 0;       // host calls on the critical path / step
  double compute_share = 0;    // compute kernels on the critical path / step
  double memory_headroom = 0;  // free / capacity (negative: OOM)
  std::string evidence;        // one line
};
inline constexpr double kMemoryHeadroom = 0.05;
inline constexpr double kCommShare = 0.20;
inline constexpr double kHostShare = 0.10;
Wall DiagnoseWall(const StepResult& step, double peak_bytes,
                  double capacity_bytes);

// One schedule step of a stage as emitted: engine ops [begin, end) (with
// EP overlap, a merged pair's two halves share the range) and the op that
// ends it; [emitted_begin, emitted_end) adds what the step emits around
// them (the host's p2p sync before, the sends of its output after).
struct StepSpan {
  int32_t stage = 0;
  // What the step runs: a split backward's input gradient keeps the
  // micro-batch's activations, its weight gradient frees them.
  models::StepKind kind = models::StepKind::kForward;
  int chunk = 0;
  OpId begin = 0, end = 0, exit = 0;
  OpId emitted_begin = 0, emitted_end = 0;
};

// The stage's memory over the replayed step: static state and buffers
// (the accounting of models/memory.h), plus each micro-batch's stored
// activations from the start of its forward (its first compute op) to the
// end of its backward (where the schedule splits the backward, what the
// weight gradient reads until that ends: StageMemory::
// chunk_weight_grad_bytes), plus the transient working set during a
// backward or input gradient.
// Returns the peak bytes; with `counters`, adds a "memory_gib" counter track
// to the stage's trace process at every change. In the 1F1B order this peak
// is the analytic one (memory.h's in-flight replay), reached when a backward
// starts on top of the most stored forwards.
double MemoryTimeline(Engine& engine, const std::vector<StepSpan>& spans,
                      int stage, StreamId compute_stream,
                      const models::StageMemory& memory, bool counters);

// Seconds of each stream kind on the step's critical path: from the op that
// finishes last, back through the predecessor that finished last before it
// started (its stream predecessor, a dep, or, for a join member, any
// member's), adding each op's run time to its stream's kind. On a tie the
// stream predecessor wins (the stream was busy up to then). The kinds sum to
// the makespan less any wait no predecessor explains (a transfer held back
// by the network's clock).
std::array<double, kNumStreamKinds> CriticalPathSeconds(
    const Engine& engine, const StepStreams& streams);

// Length of the union of `intervals` (start, finish), any order.
Time UnionLength(std::vector<std::pair<Time, Time>> intervals);

}  // namespace moesim::sim

#endif  // MOESIM_SIM_STEP_STATS_H_
