// A minimal op scheduler on the event queue: named streams executing ops in
// FIFO order, one at a time, with dependencies between ops.
//
// Design: like CUDA streams with events between them. Each op belongs to one
// stream and names the ops it waits for. An op starts at
//   max(finish of the previous op added to its stream, finish of every dep)
// and finishes at start + duration. Run() plays this out on an EventQueue:
// an op's finish is an event, and an op starts the moment its last
// predecessor (stream predecessor or dep) finishes. The queue's (time, seq)
// order makes the run deterministic: identical inputs give identical times
// and identical trace bytes.
//
// Usage: Add every op, then Run() once, then read timing(), makespan() and
// ToChromeTrace(). Deps may name ops added later (ids are dense, in Add
// order), so a graph can be wired in any order; unknown ids and cycles
// (counting the implicit edge from each op to the next on its stream) are
// reported by Validate()/Run() as errors, not crashes.
//
// Thread safety: none; an Engine is a value owned by one thread.
#ifndef MOESIM_SIM_ENGINE_H_
#define MOESIM_SIM_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"
#include "util/error.h"

namespace moesim::sim {

using OpId = int32_t;      // dense, in Add order from 0
using StreamId = int32_t;  // dense, in order of first use from 0

struct OpTiming {
  Time start;
  Time finish;
};

class Engine {
 public:
  // The stream called `name` (e.g. "rank0/compute", "rank0/ep"), created on
  // first use. Stream ids are Chrome trace thread ids.
  StreamId Stream(std::string_view name);

  // Appends an op to `stream` that waits for every op in `deps` (duplicates
  // allowed). Returns its id. Zero-duration ops are allowed as markers.
  // REQUIRES: Run() not called yet; duration >= 0.
  OpId Add(std::string_view stream, Time duration, std::vector<OpId> deps,
           std::string name);
  // REQUIRES: as above; `stream` returned by Stream().
  OpId Add(StreamId stream, Time duration, std::vector<OpId> deps,
           std::string name);

  // Error when a dep names no op or the ops cannot all run (a cycle through
  // deps and stream order); the message names the ops involved.
  [[nodiscard]] util::Result<void> Validate() const;

  // Validates, then computes every op's start and finish.
  // REQUIRES: not called before on this engine.
  [[nodiscard]] util::Result<void> Run();

  bool ran() const { return ran_; }
  size_t op_count() const { return ops_.size(); }
  size_t stream_count() const { return stream_names_.size(); }
  const std::string& stream_name(StreamId stream) const;
  const std::string& op_name(OpId op) const;

  // REQUIRES: Run() succeeded; `op` < op_count().
  const OpTiming& timing(OpId op) const;
  // The latest finish over all ops; zero without ops. REQUIRES: Run()
  // succeeded.
  Time makespan() const;

  // Chrome trace-event JSON (opens in Perfetto and chrome://tracing): one
  // "thread_name" metadata event per stream, then one complete ("X") event
  // per op in id order, ts and dur in microseconds with six decimals (exact
  // picosecond arithmetic), pid 0, tid = stream id.
  // REQUIRES: Run() succeeded.
  std::string ToChromeTrace() const;

 private:
  struct Op {
    std::string name;
    StreamId stream;
    Time duration;
    std::vector<OpId> deps;
  };
  // Successor lists: the reverse of deps, plus stream order.
  struct Graph {
    std::vector<size_t> dependents_begin;  // CSR offsets, op_count() + 1
    std::vector<OpId> dependents;
    std::vector<OpId> next_on_stream;   // -1: last on its stream
    std::vector<int32_t> predecessors;  // deps + stream predecessor
  };

  util::Result<void> CheckDepsKnown() const;
  Graph BuildGraph() const;
  util::Result<void> CheckAcyclic(const Graph& graph) const;
  std::string DescribeCycle(const std::vector<int32_t>& unresolved) const;

  std::vector<Op> ops_;
  std::vector<std::string> stream_names_;
  std::map<std::string, StreamId, std::less<>> stream_ids_;
  std::vector<OpId> last_on_stream_;  // -1: stream has no op yet
  std::vector<OpId> prev_on_stream_;  // per op; -1: first on its stream
  std::vector<OpTiming> timings_;
  bool ran_ = false;
};

}  // namespace moesim::sim

#endif  // MOESIM_SIM_ENGINE_H_
