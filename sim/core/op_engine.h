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
// Two kinds of op: a fixed op (Add) knows its duration up front; a transfer
// (AddTransfer) takes what the TransferModel given to Run() says
// (sim/core/transfer_model.h), so transfers that overlap on shared links
// slow each other under a flow network. The engine names a transfer to the
// model by its index (the order of AddTransfer calls); what it moves is the
// caller's (sim::Engine keeps a collective request per transfer). The model
// keeps time in double seconds; the engine keeps integer picoseconds and
// meets it at one pending "poll" event at
// Time::FromSecondsCeil(NextEventTime()). Fixed ops never touch the model.
//
// The event core (sim/core/: time, the event queue, this engine and its
// trace writer, the transfer-model seam) knows nothing of topology.
//
// Joint ops (Join): a collective among a group's members is one op on each
// member's stream, tied into a join. Each member waits for its own
// predecessors as usual ("arrives" when they are done), but none starts
// before the last member arrives; then all start together and all finish
// together. This is how a collective cannot finish before every member has
// reached it, at O(members) cost (no all-to-all dependency edges).
//
// Streams are named "<process>/<thread>" ("stage0/compute", "stage3/ep"):
// the text before the first '/' names a process (a Chrome trace pid; ""
// for a name without '/'), the stream is one of its threads.
//
// Usage: Add every op, then Run() once, then read timing(), makespan() and
// ToChromeTrace(). Deps may name ops added later (ids are dense, in Add
// order), so a graph can be wired in any order; unknown ids and cycles
// (counting the implicit edge from each op to the next on its stream) are
// reported by Validate()/Run() as errors, not crashes.
//
// Thread safety: none; an OpEngine is a value owned by one thread.
#ifndef MOESIM_SIM_CORE_OP_ENGINE_H_
#define MOESIM_SIM_CORE_OP_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/time.h"
#include "sim/core/transfer_model.h"
#include "util/check.h"
#include "util/error.h"
#include "util/huge_pages.h"

namespace moesim::sim {

using OpId = int32_t;
using NameId = int32_t;    // an interned op name (Engine::Name)       // dense,
                           // in Add order from 0
using StreamId = int32_t;  // dense, in order of first use from 0
using ProcessId = int32_t;  // dense, in order of first use from 0
using JoinId = int32_t;     // dense, in Join order from 0

struct OpTiming {
  Time start;
  Time finish;
};

class OpEngine {
 public:
  // The stream called `name` (e.g. "rank0/compute", "rank0/ep"), created on
  // first use, with its process (the text before the first '/'; "" when
  // there is none) if that is new. Stream ids are Chrome trace thread ids;
  // process ids are Chrome trace pids.
  StreamId Stream(std::string_view name);

  // The id of op name `name`, interned on first use. Builders that add many
  // ops of few names intern once and pass the id (no string per op).
  NameId Name(std::string_view name);

  // Room for `ops` ops with `deps` dependencies in all, so a large graph is
  // built without reallocating.
  void Reserve(size_t ops, size_t deps);

  // Drops every op, join, counter and time, keeping the streams, processes,
  // names and categories (and the memory reserved): the engine as before its
  // first Add, ready for another graph on the same streams.
  void ClearOps();

  // Appends an op to `stream` that waits for every op in `deps` (duplicates
  // allowed). Returns its id. Zero-duration ops are allowed as markers.
  // REQUIRES: Run() not called yet; duration >= 0.
  OpId Add(std::string_view stream, Time duration, std::vector<OpId> deps,
           std::string_view name);
  // REQUIRES: as above; `stream` returned by Stream().
  OpId Add(StreamId stream, Time duration, const std::vector<OpId>& deps,
           std::string_view name);
  // REQUIRES: as above; `name` returned by Name().
  OpId Add(StreamId stream, Time duration, std::span<const OpId> deps,
           NameId name);

  // Appends a transfer to `stream`: an op whose duration the network model
  // decides. Let t be the time its last predecessor finishes. Run() then
  // advances the model through its events up to t (AdvanceTo each
  // NextEventTime() that rounds up to t or earlier), and calls
  // Start(s, request) with s = t.seconds(), held within [the model's clock
  // (the last time given to AdvanceTo or Start), NextEventTime()]; when the
  // model has something running it is first advanced to s, so running flows
  // have the right bytes left. The op finishes at
  // Time::FromSecondsCeil(the NextEventTime() at which AdvanceTo reports
  // it), and at least 1 ps after its start; finishing releases dependents
  // like a fixed op. So a transfer under an AnalyticalNetwork ends at
  // FromSecondsCeil(s + EstimateCollective(...).seconds). `request` is not
  // checked here: its GPUs must exist on the model's cluster.
  // REQUIRES: Run() not called yet; for the StreamId overload, `stream`
  // returned by Stream().
  OpId AddTransfer(StreamId stream, const std::vector<OpId>& deps,
                   std::string_view name);
  // REQUIRES: as above; `name` returned by Name().
  OpId AddTransfer(StreamId stream, std::span<const OpId> deps, NameId name);
  OpId AddTransfer(std::string_view stream, std::vector<OpId> deps,
                   std::string_view name);
  // Transfers added so far; the next one's index.
  int32_t transfer_count() const { return transfer_count_; }
  // The index of transfer `op`. REQUIRES: `op` a transfer.
  int32_t transfer_of(OpId op) const;

  // Ties `ops` into one joint op. Each member still waits for its deps and
  // its stream predecessor; let t be the time the last of them is done
  // waiting. Every member starts at t, and every member finishes at
  // t + the longest member's duration (fixed ops), or, for transfers, when
  // the network model finishes the first member's transfer (issued once
  // for the whole join, at t; the other members' requests are not used).
  // So a join of one op is that op. Returns the join's id.
  // REQUIRES: Run() not called yet; `ops` not empty, every op added, none in
  // another join, and all fixed ops or all transfers.
  JoinId Join(std::span<const OpId> ops);
  size_t join_count() const { return join_begin_.size() - 1; }
  // The join `op` belongs to; -1: none. REQUIRES: `op` < op_count().
  JoinId op_join(OpId op) const {
    util::CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
                     "Engine::op_join: unknown op id");
    return ops_[op].join;
  }
  // The members of `join`, in the order given to Join().
  // REQUIRES: `join` < join_count().
  std::span<const OpId> join_members(JoinId join) const;

  // A sample of counter `name` (a track of `stream`'s process in the trace,
  // e.g. memory in GiB): value `value` from time `at` on. Only the trace
  // reads it. REQUIRES: `stream` returned by Stream(); at >= 0.
  void AddCounter(StreamId stream, std::string_view name, Time at,
                  double value);

  // Tags `op` with a Chrome trace category ("cat": "gemm", "attention",
  // "tp", "ep", ...); an empty category removes the tag. Only the trace
  // reads it. REQUIRES: `op` < op_count().
  void SetCategory(OpId op, std::string_view category);

  // Error when a dep names no op or the ops cannot all run (a cycle through
  // deps and stream order); the message names the ops involved.
  [[nodiscard]] util::Result<void> Validate() const;

  // Validates, then computes every op's start and finish. Transfers run on
  // `network`, which may be null when there are none (an error naming the
  // first transfer otherwise). It is an error, too, when the model never
  // finishes a started transfer, reports an id it did not issue, or stops
  // making progress. A failed run leaves the engine as before (`network`
  // may have started transfers).
  // REQUIRES: no Run() succeeded on this engine before; `network` has
  // started nothing and was advanced to no time > 0; it is used only during
  // the call.
  [[nodiscard]] util::Result<void> Run(TransferModel* network);
  // Run(nullptr): for graphs of fixed ops only.
  [[nodiscard]] util::Result<void> Run() { return Run(nullptr); }

  bool ran() const { return ran_; }
  size_t op_count() const { return ops_.size(); }
  size_t stream_count() const { return stream_names_.size(); }
  size_t process_count() const { return process_names_.size(); }
  const std::string& stream_name(StreamId stream) const;
  // The process `stream` belongs to, and its name ("stage0" for
  // "stage0/compute").
  ProcessId stream_process(StreamId stream) const;
  const std::string& process_name(ProcessId process) const;
  const std::string& op_name(OpId op) const;
  StreamId op_stream(OpId op) const {
    util::CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
                     "Engine::op_stream: unknown op id");
    return ops_[op].stream;
  }
  // "" when none was set.
  const std::string& op_category(OpId op) const;
  bool is_transfer(OpId op) const;
  // The ops `op` waits for (as given to Add), and the op before it on its
  // stream (-1: first). REQUIRES: `op` < op_count().
  std::span<const OpId> deps(OpId op) const {
    util::CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
                     "Engine::deps: unknown op id");
    return Deps(op);
  }
  OpId stream_predecessor(OpId op) const {
    util::CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
                     "Engine::stream_predecessor: unknown op id");
    return prev_on_stream_[op];
  }
  // A fixed op's duration as given to Add (a join member may run longer:
  // the join's longest member); a transfer's finish - start.
  // REQUIRES: `op` < op_count(); Run() succeeded when `op` is a transfer.
  Time duration(OpId op) const;

  // REQUIRES: Run() succeeded; `op` < op_count().
  OpTiming timing(OpId op) const {
    util::CheckOrDie(ran_, "Engine::timing before a successful Run");
    util::CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
                     "Engine::timing: unknown op id");
    const Op& o = ops_[op];
    const Time finish = finish_[op];
    if (const int32_t transfer = o.transfer(); transfer >= 0) {
      return {transfer_start_[transfer], finish};
    }
    return {finish - (o.join >= 0 ? join_longest_[o.join] : o.duration()),
            finish};
  }
  // The latest finish over all ops; zero without ops. REQUIRES: Run()
  // succeeded.
  Time makespan() const;

  // Chrome trace-event JSON (opens in Perfetto and chrome://tracing), one
  // event per line:
  //  - per process in id order: "process_name" (args.name = its name) and
  //    "process_sort_index" (args.sort_index = pid) metadata, pid = id,
  //    tid 0;
  //  - per stream in id order: "thread_name" (args.name = the text after
  //    the first '/', or the whole name) and "thread_sort_index"
  //    (args.sort_index = tid), tid = stream id, pid = its process;
  //  - per op in id order: a complete ("X") event with "cat" when the op has
  //    a category, ts and dur in microseconds with six decimals (exact
  //    picosecond arithmetic), its stream's pid and tid;
  //  - per counter sample in order added: a counter ("C") event, tid 0.
  // The bytes depend only on the inputs. REQUIRES: Run() succeeded.
  std::string ToChromeTrace() const { return ToChromeTrace({}); }
  // The same, keeping only the processes p with keep[p] (all when `keep` is
  // empty): their metadata, streams, ops and counters, with the same ids.
  std::string ToChromeTrace(const std::vector<bool>& keep) const;

 private:
  // Compact: a step of a large layout has millions of ops.
  // 24 bytes: a fixed op's duration and a transfer's index share a field;
  // an op's deps end where the next op's begin (deps_ is in op order); the
  // trace's categories live beside (categories_).
  struct Op {
    int64_t length;       // >= 0: duration (ps); < 0: -(transfer index + 1)
    uint32_t deps_begin;  // into deps_
    StreamId stream;
    NameId name;  // index into names_
    JoinId join;  // -1: none
    // Zero for transfers.
    Time duration() const {
      return length < 0 ? Time::Zero() : Time::Picos(length);
    }
    // The transfer's index; -1: a fixed op.
    int32_t transfer() const {
      return length < 0 ? static_cast<int32_t>(-(length + 1)) : -1;
    }
  };
  static_assert(sizeof(Op) == 24);
  std::span<const OpId> Deps(size_t op) const {
    const size_t end =
        op + 1 < ops_.size() ? ops_[op + 1].deps_begin : deps_.size();
    return {deps_.data() + ops_[op].deps_begin, end - ops_[op].deps_begin};
  }
  // Index into category_names_ of op `op` (0: none).
  int32_t CategoryOf(size_t op) const {
    return op < categories_.size() ? categories_[op] : 0;
  }
  // Successor lists: the reverse of deps, plus stream order.
  struct Graph {
    util::LargeVector<size_t> dependents_begin;  // CSR offsets, ops + 1
    util::LargeVector<OpId> dependents;
    util::LargeVector<OpId> next_on_stream;   // -1: last on its stream
    util::LargeVector<int32_t> predecessors;  // deps + stream predecessor
  };

  struct Playout;  // Run()'s state (engine.cc)

  // Run() for a graph of fixed ops only: every op's start is the max() in
  // the header, so the times follow from one pass in topological order,
  // without an event queue. Identical to playing it out. False when some op
  // cannot start (a cycle); `timings` is then incomplete.
  bool TimeFixedOps(const Graph& graph,
                    util::LargeVector<OpTiming>& timings) const;
  // The same without building the graph, for the common case where every
  // op's predecessors come before it in id order (and a join's members
  // before any op that waits for one of them): one pass in id order. False
  // when the ids are not in such an order (or on a cycle); the caller then
  // uses the graph.
  // Writes only each op's finish (`finish`, < 0: not timed) and each
  // join's longest member (`join_longest`): a fixed op's start follows.
  bool TimeFixedOpsInIdOrder(util::LargeVector<Time>& finish,
                             std::vector<Time>& join_longest) const;
  // Keeps `timings` as finish_, join_longest_ and transfer_start_.
  void KeepTimings(const util::LargeVector<OpTiming>& timings);

  OpId Append(StreamId stream, Time duration, int32_t transfer,
              std::span<const OpId> deps, NameId name);
  util::Result<void> CheckDepsKnown() const;
  Graph BuildGraph() const;
  util::Result<void> CheckAcyclic(const Graph& graph) const;
  // REQUIRES: some op not `resolved`; `unresolved` counts each op's
  // predecessors not resolved.
  std::string DescribeCycle(const util::LargeVector<int32_t>& unresolved,
                            const std::vector<char>& resolved) const;
  std::span<const OpId> JoinMembers(JoinId join) const {
    return {join_members_.data() + join_begin_[join],
            join_begin_[join + 1] - join_begin_[join]};
  }

  util::LargeVector<Op> ops_;
  util::LargeVector<OpId> deps_;  // every op's deps, in op order
  std::vector<std::string> names_;
  std::map<std::string, NameId, std::less<>> name_ids_;
  std::vector<std::string> stream_names_;
  std::map<std::string, StreamId, std::less<>> stream_ids_;
  std::vector<OpId> last_on_stream_;        // -1: stream has no op yet
  util::LargeVector<OpId> prev_on_stream_;  // per op; -1: first on its stream
  std::vector<ProcessId> process_of_stream_;
  std::vector<std::string> process_names_;
  std::map<std::string, ProcessId, std::less<>> process_ids_;
  int32_t transfer_count_ = 0;
  std::vector<OpId> join_members_;     // every join's members, in order
  std::vector<size_t> join_begin_{0};  // into join_members_; joins + 1
  std::vector<std::string> category_names_{std::string()};  // [0]: none
  std::map<std::string, int32_t, std::less<>> category_ids_;
  // Per op, up to the last op given one (SetCategory; the trace's).
  std::vector<int32_t> categories_;
  struct CounterSample {
    ProcessId process;
    NameId name;
    Time at;
    double value;
  };
  std::vector<CounterSample> counters_;
  // After Run(), compactly (a step of a large layout has millions of ops):
  // each op's finish; a fixed op starts its duration earlier (a join
  // member: its join's longest member's), a transfer at transfer_start_.
  util::LargeVector<Time> finish_;
  std::vector<Time> join_longest_;    // per join
  std::vector<Time> transfer_start_;  // per transfer
  bool ran_ = false;
};

}  // namespace moesim::sim

#endif  // MOESIM_SIM_CORE_OP_ENGINE_H_
