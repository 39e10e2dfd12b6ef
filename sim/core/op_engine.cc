#include "sim/core/op_engine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "sim/core/event_queue.h"
#include "util/json_write.h"

namespace moesim::sim {

namespace {

std::string Quoted(std::string_view name) {
  // Appends rather than "'" + std::string(name), which trips GCC 12's
  // -Wrestrict false positive.
  std::string out;
  out.reserve(name.size() + 2);
  out += '\'';
  out += name;
  out += '\'';
  return out;
}

// "op 'name' (id N)".
std::string DescribeOp(std::string_view name, size_t id) {
  return "op " + Quoted(name) + " (id " + std::to_string(id) + ")";
}

// Playout::op_of_transfer entries other than op ids.
constexpr OpId kUnissued = -1;
constexpr OpId kReported = -2;

// The thread part of a stream name: after the first '/', or all of it.
std::string_view ThreadName(std::string_view stream) {
  const size_t slash = stream.find('/');
  return slash == std::string_view::npos ? stream : stream.substr(slash + 1);
}

// Exact microseconds with six decimals, from integer picoseconds.
// REQUIRES: time >= 0.
std::string JsonMicros(Time time) {
  char text[32];
  std::snprintf(text, sizeof(text), "%lld.%06lld",
                static_cast<long long>(time.picos() / 1'000'000),
                static_cast<long long>(time.picos() % 1'000'000));
  return text;
}

}  // namespace

StreamId OpEngine::Stream(std::string_view name) {
  if (auto it = stream_ids_.find(name); it != stream_ids_.end()) {
    return it->second;
  }
  CheckOrDie(stream_names_.size() < static_cast<size_t>(INT32_MAX),
             "OpEngine::Stream: too many streams");
  const size_t slash = name.find('/');
  const std::string_view process = slash == std::string_view::npos
                                       ? std::string_view()
                                       : name.substr(0, slash);
  ProcessId pid;
  if (auto it = process_ids_.find(process); it != process_ids_.end()) {
    pid = it->second;
  } else {
    pid = static_cast<ProcessId>(process_names_.size());
    process_names_.emplace_back(process);
    process_ids_.emplace(std::string(process), pid);
  }
  const auto id = static_cast<StreamId>(stream_names_.size());
  stream_names_.emplace_back(name);
  stream_ids_.emplace(std::string(name), id);
  process_of_stream_.push_back(pid);
  last_on_stream_.push_back(-1);
  return id;
}

NameId OpEngine::Name(std::string_view name) {
  if (auto it = name_ids_.find(name); it != name_ids_.end()) {
    return it->second;
  }
  CheckOrDie(names_.size() < static_cast<size_t>(INT32_MAX),
             "OpEngine::Name: too many names");
  const auto id = static_cast<NameId>(names_.size());
  names_.emplace_back(name);
  name_ids_.emplace(std::string(name), id);
  return id;
}

void OpEngine::Reserve(size_t ops, size_t deps) {
  ops_.reserve(ops);
  prev_on_stream_.reserve(ops);
  deps_.reserve(deps);
}

void OpEngine::ClearOps() {
  ops_.clear();
  deps_.clear();
  categories_.clear();
  prev_on_stream_.clear();
  std::fill(last_on_stream_.begin(), last_on_stream_.end(), -1);
  transfer_count_ = 0;
  join_members_.clear();
  join_begin_.assign(1, 0);
  counters_.clear();
  finish_.clear();
  join_longest_.clear();
  transfer_start_.clear();
  ran_ = false;
}

OpId OpEngine::Add(std::string_view stream, Time duration,
                   std::vector<OpId> deps, std::string_view name) {
  return Add(Stream(stream), duration, deps, Name(name));
}

OpId OpEngine::Add(StreamId stream, Time duration,
                   const std::vector<OpId>& deps, std::string_view name) {
  return Add(stream, duration, std::span<const OpId>(deps), Name(name));
}

OpId OpEngine::Add(StreamId stream, Time duration, std::span<const OpId> deps,
                   NameId name) {
  CheckOrDie(duration >= Time::Zero(), "OpEngine::Add: negative duration");
  return Append(stream, duration, -1, deps, name);
}

OpId OpEngine::AddTransfer(std::string_view stream, std::vector<OpId> deps,
                           std::string_view name) {
  return AddTransfer(Stream(stream), std::span<const OpId>(deps), Name(name));
}

OpId OpEngine::AddTransfer(StreamId stream, const std::vector<OpId>& deps,
                           std::string_view name) {
  return AddTransfer(stream, std::span<const OpId>(deps), Name(name));
}

OpId OpEngine::AddTransfer(StreamId stream, std::span<const OpId> deps,
                           NameId name) {
  CheckOrDie(transfer_count_ < INT32_MAX,
             "OpEngine::AddTransfer: too many transfers");
  return Append(stream, Time::Zero(), transfer_count_++, deps, name);
}

int32_t OpEngine::transfer_of(OpId op) const {
  CheckOrDie(is_transfer(op), "OpEngine::transfer_of: not a transfer");
  return ops_[op].transfer();
}

OpId OpEngine::Append(StreamId stream, Time duration, int32_t transfer,
                      std::span<const OpId> deps, NameId name) {
  CheckOrDie(!ran_, "OpEngine::Add after Run");
  CheckOrDie(stream >= 0 && static_cast<size_t>(stream) < stream_count(),
             "OpEngine::Add: unknown stream id");
  CheckOrDie(name >= 0 && static_cast<size_t>(name) < names_.size(),
             "OpEngine::Add: unknown name id");
  CheckOrDie(ops_.size() < static_cast<size_t>(INT32_MAX),
             "OpEngine::Add: too many ops");
  CheckOrDie(deps_.size() + deps.size() <= UINT32_MAX,
             "OpEngine::Add: more than 2^32 dependencies in all");
  const auto id = static_cast<OpId>(ops_.size());
  ops_.push_back({transfer >= 0 ? -(int64_t{transfer} + 1) : duration.picos(),
                  static_cast<uint32_t>(deps_.size()), stream, name, -1});
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  prev_on_stream_.push_back(last_on_stream_[stream]);
  last_on_stream_[stream] = id;
  return id;
}

JoinId OpEngine::Join(std::span<const OpId> ops) {
  CheckOrDie(!ran_, "OpEngine::Join after Run");
  CheckOrDie(!ops.empty(), "OpEngine::Join: no ops");
  CheckOrDie(join_count() < static_cast<size_t>(INT32_MAX),
             "OpEngine::Join: too many joins");
  const auto id = static_cast<JoinId>(join_count());
  const bool transfer = is_transfer(ops.front());
  for (const OpId op : ops) {
    CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
               "OpEngine::Join: unknown op id");
    CheckOrDie(ops_[op].join < 0, "OpEngine::Join: op already in a join");
    CheckOrDie((ops_[op].transfer() >= 0) == transfer,
               "OpEngine::Join: fixed ops and transfers mixed");
    ops_[op].join = id;
  }
  join_members_.insert(join_members_.end(), ops.begin(), ops.end());
  join_begin_.push_back(join_members_.size());
  return id;
}

std::span<const OpId> OpEngine::join_members(JoinId join) const {
  CheckOrDie(join >= 0 && static_cast<size_t>(join) < join_count(),
             "OpEngine::join_members: unknown join id");
  return JoinMembers(join);
}

void OpEngine::AddCounter(StreamId stream, std::string_view name, Time at,
                          double value) {
  CheckOrDie(stream >= 0 && static_cast<size_t>(stream) < stream_count(),
             "OpEngine::AddCounter: unknown stream id");
  CheckOrDie(at >= Time::Zero(), "OpEngine::AddCounter: negative time");
  counters_.push_back({process_of_stream_[stream], Name(name), at, value});
}

void OpEngine::SetCategory(OpId op, std::string_view category) {
  CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
             "OpEngine::SetCategory: unknown op id");
  if (categories_.size() <= static_cast<size_t>(op)) {
    categories_.resize(op + 1, 0);
  }
  if (category.empty()) {
    categories_[op] = 0;
    return;
  }
  if (auto it = category_ids_.find(category); it != category_ids_.end()) {
    categories_[op] = it->second;
    return;
  }
  const auto id = static_cast<int32_t>(category_names_.size());
  category_names_.emplace_back(category);
  category_ids_.emplace(std::string(category), id);
  categories_[op] = id;
}

const std::string& OpEngine::stream_name(StreamId stream) const {
  CheckOrDie(stream >= 0 && static_cast<size_t>(stream) < stream_count(),
             "OpEngine::stream_name: unknown stream id");
  return stream_names_[stream];
}

ProcessId OpEngine::stream_process(StreamId stream) const {
  CheckOrDie(stream >= 0 && static_cast<size_t>(stream) < stream_count(),
             "OpEngine::stream_process: unknown stream id");
  return process_of_stream_[stream];
}

const std::string& OpEngine::process_name(ProcessId process) const {
  CheckOrDie(process >= 0 && static_cast<size_t>(process) < process_count(),
             "OpEngine::process_name: unknown process id");
  return process_names_[process];
}

const std::string& OpEngine::op_name(OpId op) const {
  CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
             "OpEngine::op_name: unknown op id");
  return names_[ops_[op].name];
}

const std::string& OpEngine::op_category(OpId op) const {
  CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
             "OpEngine::op_category: unknown op id");
  return category_names_[CategoryOf(op)];
}

bool OpEngine::is_transfer(OpId op) const {
  CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
             "OpEngine::is_transfer: unknown op id");
  return ops_[op].transfer() >= 0;
}

Time OpEngine::duration(OpId op) const {
  CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
             "OpEngine::duration: unknown op id");
  if (ops_[op].transfer() < 0) return ops_[op].duration();
  CheckOrDie(ran_, "OpEngine::duration of a transfer before a successful Run");
  return finish_[op] - transfer_start_[ops_[op].transfer()];
}

Time OpEngine::makespan() const {
  CheckOrDie(ran_, "OpEngine::makespan before a successful Run");
  Time latest;
  for (const Time finish : finish_) latest = std::max(latest, finish);
  return latest;
}

util::Result<void> OpEngine::CheckDepsKnown() const {
  for (size_t i = 0; i < ops_.size(); ++i) {
    for (const OpId dep : Deps(i)) {
      if (dep < 0 || static_cast<size_t>(dep) >= ops_.size()) {
        return util::Fail("op " + Quoted(names_[ops_[i].name]) + " (id " +
                          std::to_string(i) + "): unknown dependency id " +
                          std::to_string(dep) + " (" +
                          std::to_string(ops_.size()) + " ops)");
      }
    }
  }
  return {};
}

OpEngine::Graph OpEngine::BuildGraph() const {
  const size_t n = ops_.size();
  Graph g;
  g.dependents_begin.assign(n + 1, 0);
  g.next_on_stream.assign(n, -1);
  g.predecessors.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const OpId dep : Deps(i)) ++g.dependents_begin[dep + 1];
    g.predecessors[i] = static_cast<int32_t>(Deps(i).size());
    if (prev_on_stream_[i] >= 0) {
      g.next_on_stream[prev_on_stream_[i]] = static_cast<OpId>(i);
      ++g.predecessors[i];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    g.dependents_begin[i + 1] += g.dependents_begin[i];
  }
  g.dependents.resize(g.dependents_begin[n]);
  util::LargeVector<size_t> fill(g.dependents_begin.begin(),
                                 g.dependents_begin.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    for (const OpId dep : Deps(i)) {
      g.dependents[fill[dep]++] = static_cast<OpId>(i);
    }
  }
  return g;
}

util::Result<void> OpEngine::CheckAcyclic(const Graph& g) const {
  // Kahn's algorithm; an op whose predecessors are resolved arrives, and a
  // join's members resolve together once all have arrived. Ops left
  // unresolved lie on or behind a cycle (through a join: its members count
  // as waiting for each other).
  util::LargeVector<int32_t> unresolved = g.predecessors;
  std::vector<char> resolved(ops_.size(), 0);
  std::vector<int32_t> arrived(join_count(), 0);
  std::vector<OpId> ready;
  auto arrive = [&](OpId op) {
    const JoinId j = ops_[op].join;
    if (j < 0) {
      ready.push_back(op);
      return;
    }
    const std::span<const OpId> members = JoinMembers(j);
    if (++arrived[j] == static_cast<int32_t>(members.size())) {
      ready.insert(ready.end(), members.begin(), members.end());
    }
  };
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (unresolved[i] == 0) arrive(static_cast<OpId>(i));
  }
  size_t count = 0;
  auto release = [&](OpId op) {
    if (--unresolved[op] == 0) arrive(op);
  };
  while (!ready.empty()) {
    const OpId op = ready.back();
    ready.pop_back();
    resolved[op] = 1;
    ++count;
    for (size_t k = g.dependents_begin[op]; k < g.dependents_begin[op + 1];
         ++k) {
      release(g.dependents[k]);
    }
    if (g.next_on_stream[op] >= 0) release(g.next_on_stream[op]);
  }
  if (count == ops_.size()) return {};
  return util::Fail(DescribeCycle(unresolved, resolved));
}

std::string OpEngine::DescribeCycle(
    const util::LargeVector<int32_t>& unresolved,
    const std::vector<char>& resolved) const {
  // Every unresolved op waits for an unresolved predecessor, or has arrived
  // at a join one of whose members still waits for one; so walking
  // backwards from one must revisit an op, and the revisited stretch is a
  // cycle.
  OpId op = 0;
  while (resolved[op]) ++op;
  std::vector<int32_t> step_of(ops_.size(), -1);
  std::vector<OpId> walk;
  std::vector<char> via_join;  // walk[i] was reached through a join
  bool joined = false;
  while (step_of[op] < 0) {
    step_of[op] = static_cast<int32_t>(walk.size());
    walk.push_back(op);
    via_join.push_back(joined);
    joined = false;
    const OpId prev = prev_on_stream_[op];
    if (prev >= 0 && !resolved[prev]) {
      op = prev;
      continue;
    }
    bool found = false;
    for (const OpId dep : Deps(op)) {
      if (!resolved[dep]) {
        op = dep;
        found = true;
        break;
      }
    }
    if (found) continue;
    CheckOrDie(ops_[op].join >= 0, "OpEngine::DescribeCycle: op not waiting");
    for (const OpId member : JoinMembers(ops_[op].join)) {
      if (unresolved[member] > 0) {
        op = member;
        joined = true;
        break;
      }
    }
  }
  // walk[step_of[op]..] runs against the edges; print it along them.
  std::string message = "dependency cycle (deps and stream order): ";
  message += Quoted(names_[ops_[op].name]);
  for (size_t i = walk.size(); i-- > static_cast<size_t>(step_of[op]);) {
    message += (i + 1 < walk.size() && via_join[i + 1]) ||
                       (i + 1 == walk.size() && joined)
                   ? " -> (joined with) "
                   : " -> ";
    message += Quoted(names_[ops_[walk[i]].name]);
  }
  return message;
}

util::Result<void> OpEngine::Validate() const {
  if (auto known = CheckDepsKnown(); !known) return known;
  return CheckAcyclic(BuildGraph());
}

// The playout, for graphs with transfers (TimeFixedOps times the rest):
// Start(op) records the start and schedules the finish;
// Finish(op) releases its successors, starting those whose last
// predecessor it was. Start times equal the max() in the header because
// an op starts exactly when its last predecessor finishes.
//
// Transfers: the network model runs on double seconds beside the queue.
// `network_now_s` is its clock (the last time given to AdvanceTo or
// Start); one pending poll event sits at the first picosecond at or after
// NextEventTime() and is moved whenever that changes (after every Start
// and AdvanceTo). Finished transfers are finished by events of their own
// at the current time (at least 1 ps after their start), so the network
// is never re-entered from inside one of its own calls.
struct OpEngine::Playout {
  Playout(const OpEngine& engine, const Graph& graph, TransferModel* network)
      : engine(engine),
        graph(graph),
        network(network),
        waiting(graph.predecessors),
        arrived(engine.join_count(), 0),
        timings(engine.ops_.size(), {Time::Zero(), Time::Picos(-1)}) {
    // What Start() reads, packed: 8 bytes an op rather than an Op.
    duration_ps.reserve(engine.ops_.size());
    for (const Op& op : engine.ops_) {
      duration_ps.push_back(op.transfer() >= 0 ? -1 : op.duration().picos());
    }
  }

  const OpEngine& engine;
  const Graph& graph;
  TransferModel* network;
  util::LargeVector<int32_t> waiting;
  std::vector<int32_t> arrived;         // by join: members done waiting
  util::LargeVector<OpTiming> timings;  // finish < 0: not finished
  std::vector<int64_t> duration_ps;     // by op; -1: a transfer
  EventQueue queue;
  std::vector<OpId> op_of_transfer;  // by network id; kUnissued, kReported
  double network_now_s = 0;
  size_t reported = 0;
  EventId poll;
  Time poll_at;
  bool poll_pending = false;
  std::string failure;  // non-empty: the run stops with this error

  // `op` has no predecessor left: it starts, or arrives at its join.
  void Ready(OpId op) {
    const JoinId join = engine.ops_[op].join;
    if (join < 0) {
      Start(op);
      return;
    }
    const std::span<const OpId> members = engine.JoinMembers(join);
    if (++arrived[join] < static_cast<int32_t>(members.size())) return;
    // The last member arrived: all start now; the first member's transfer,
    // or the longest member's duration, ends them all.
    int64_t longest = 0;
    for (const OpId m : members) {
      timings[m].start = queue.now();
      longest = std::max(longest, duration_ps[m]);
    }
    if (duration_ps[members.front()] < 0) {
      StartTransfer(members.front(), engine.ops_[members.front()].transfer());
      return;
    }
    queue.Schedule(queue.now() + Time::Picos(longest),
                   [this, join] { FinishJoin(join); });
  }
  void Start(OpId op) {
    timings[op].start = queue.now();
    const int64_t duration = duration_ps[op];
    if (duration < 0) [[unlikely]] {
      StartTransfer(op, engine.ops_[op].transfer());
      return;
    }
    queue.Schedule(queue.now() + Time::Picos(duration),
                   [this, op] { Finish(op); });
  }
  void Release(OpId op) {
    if (--waiting[op] == 0) Ready(op);
  }
  void Finish(OpId op) {
    timings[op].finish = queue.now();
    for (size_t k = graph.dependents_begin[op];
         k < graph.dependents_begin[op + 1]; ++k) {
      Release(graph.dependents[k]);
    }
    if (graph.next_on_stream[op] >= 0) Release(graph.next_on_stream[op]);
  }
  void FinishJoin(JoinId join) {
    for (const OpId m : engine.JoinMembers(join)) Finish(m);
  }
  // A transfer the network reported done: its op, or its join's members.
  void FinishTransfer(OpId op) {
    const JoinId join = engine.ops_[op].join;
    join < 0 ? Finish(op) : FinishJoin(join);
  }

  void Fail(std::string message) {
    if (failure.empty()) failure = "network model: " + std::move(message);
  }
  // The model's next event time, or nullopt (also on a failure).
  std::optional<double> NextEventTime() {
    const std::optional<double> next = network->NextEventTime();
    if (next && !(std::isfinite(*next) && *next >= network_now_s)) {
      Fail("next event time " + std::to_string(*next) +
           " s is not finite or before its clock at " +
           std::to_string(network_now_s) + " s");
      return std::nullopt;
    }
    return next;
  }
  // AdvanceTo(to_s); every transfer it reports finishes now, and at least
  // 1 ps after its start. REQUIRES: network_now_s <= to_s <= next event.
  void Advance(double to_s) {
    network_now_s = to_s;
    for (const int id : network->AdvanceTo(to_s)) {
      if (id < 0 || static_cast<size_t>(id) >= op_of_transfer.size() ||
          op_of_transfer[id] < 0) {
        Fail("AdvanceTo reported transfer id " + std::to_string(id) +
             ", which is not running");
        return;
      }
      const OpId op = op_of_transfer[id];
      op_of_transfer[id] = kReported;
      ++reported;
      const Time at = std::max(queue.now(), timings[op].start + Time::Picos(1));
      queue.Schedule(at, [this, op] { FinishTransfer(op); });
    }
  }
  // Advances the model through every event that rounds up to `now` or
  // earlier.
  void Drain(Time now) {
    std::optional<double> previous;
    size_t reported_before = reported;
    while (failure.empty()) {
      const std::optional<double> next = NextEventTime();
      if (!next || Time::FromSecondsCeil(*next) > now) return;
      // A second AdvanceTo to the same time that reported nothing changes
      // nothing: the model is stuck.
      if (previous && *next == *previous && reported == reported_before) {
        Fail("no progress at " + std::to_string(*next) + " s");
        return;
      }
      previous = next;
      reported_before = reported;
      Advance(*next);
    }
  }
  void SchedulePoll() {
    const std::optional<double> next = NextEventTime();
    if (!next) {
      if (poll_pending) queue.Cancel(poll);
      poll_pending = false;
      return;
    }
    const Time at = std::max(Time::FromSecondsCeil(*next), queue.now());
    if (poll_pending) {
      if (poll_at == at) return;
      queue.Cancel(poll);
    }
    poll = queue.Schedule(at, [this] { Poll(); });
    poll_at = at;
    poll_pending = true;
  }
  void Poll() {
    poll_pending = false;
    Drain(queue.now());
    SchedulePoll();
  }
  void StartTransfer(OpId op, int32_t transfer) {
    Drain(queue.now());
    if (!failure.empty()) return;
    // Now in seconds, held within [the model's clock, its next event];
    // the model is advanced to the start first so that running flows have
    // the right bytes left.
    double start_s = std::max(queue.now().seconds(), network_now_s);
    if (const std::optional<double> next = NextEventTime()) {
      start_s = std::min(start_s, *next);
      if (start_s > network_now_s) Advance(start_s);
    }
    if (!failure.empty()) return;
    network_now_s = start_s;
    const int id = network->Start(start_s, transfer);
    if (id < 0 || (static_cast<size_t>(id) < op_of_transfer.size() &&
                   op_of_transfer[id] != kUnissued)) {
      Fail("Start returned transfer id " + std::to_string(id) +
           ", which it issued before");
      return;
    }
    if (static_cast<size_t>(id) >= op_of_transfer.size()) {
      op_of_transfer.resize(id + 1, kUnissued);
    }
    op_of_transfer[id] = op;
    SchedulePoll();
  }
};

bool OpEngine::TimeFixedOps(const Graph& g,
                            util::LargeVector<OpTiming>& timings) const {
  // timings[op].start gathers the latest finish of the op's predecessors
  // done so far (for a join member, of its own predecessors); an op is
  // timed when its last predecessor is. The order ops are taken in does
  // not change a time: each is a max() of its predecessors' finishes.
  const size_t n = ops_.size();
  timings.assign(n, {Time::Zero(), Time::Picos(-1)});
  util::LargeVector<int32_t> waiting = g.predecessors;
  std::vector<int32_t> arrived(join_count(), 0);
  std::vector<Time> join_start(join_count(), Time::Zero());
  std::vector<OpId> ready;  // timed, successors not yet released
  size_t timed = 0;
  auto arrive = [&](OpId op) {
    const JoinId j = ops_[op].join;
    if (j < 0) {
      timings[op].finish = timings[op].start + ops_[op].duration();
      ready.push_back(op);
      ++timed;
      return;
    }
    // A join starts when its last member is done waiting and runs as long
    // as its longest member.
    join_start[j] = std::max(join_start[j], timings[op].start);
    const std::span<const OpId> members = JoinMembers(j);
    if (++arrived[j] < static_cast<int32_t>(members.size())) return;
    Time longest = Time::Zero();
    for (const OpId m : members)
      longest = std::max(longest, ops_[m].duration());
    for (const OpId m : members) {
      timings[m] = {join_start[j], join_start[j] + longest};
      ready.push_back(m);
      ++timed;
    }
  };
  for (size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) arrive(static_cast<OpId>(i));
  }
  auto release = [&](OpId op, Time finish) {
    timings[op].start = std::max(timings[op].start, finish);
    if (--waiting[op] == 0) arrive(op);
  };
  while (!ready.empty()) {
    const OpId op = ready.back();
    ready.pop_back();
    const Time finish = timings[op].finish;
    for (size_t k = g.dependents_begin[op]; k < g.dependents_begin[op + 1];
         ++k) {
      release(g.dependents[k], finish);
    }
    if (g.next_on_stream[op] >= 0) release(g.next_on_stream[op], finish);
  }
  return timed == n;
}

bool OpEngine::TimeFixedOpsInIdOrder(util::LargeVector<Time>& finish,
                                     std::vector<Time>& join_longest) const {
  const size_t n = ops_.size();
  finish.assign(n, Time::Picos(-1));
  join_longest.assign(join_count(), Time::Zero());
  std::vector<int32_t> arrived(join_count(), 0);
  std::vector<Time> join_start(join_count(), Time::Zero());
  for (size_t i = 0; i < n; ++i) {
    const Op& op = ops_[i];
    // A predecessor not timed yet (finish < 0) comes later in id order, or
    // is a join member whose join is not complete.
    Time start = Time::Zero();
    const OpId prev = prev_on_stream_[i];
    if (prev >= 0) {
      if (finish[prev] < Time::Zero()) return false;
      start = finish[prev];
    }
    for (const OpId dep : Deps(i)) {
      if (static_cast<size_t>(dep) >= i || finish[dep] < Time::Zero())
        return false;
      start = std::max(start, finish[dep]);
    }
    if (op.join < 0) {
      finish[i] = start + op.duration();
      continue;
    }
    join_start[op.join] = std::max(join_start[op.join], start);
    const std::span<const OpId> members = JoinMembers(op.join);
    if (++arrived[op.join] < static_cast<int32_t>(members.size())) continue;
    Time longest = Time::Zero();
    for (const OpId m : members)
      longest = std::max(longest, ops_[m].duration());
    join_longest[op.join] = longest;
    for (const OpId m : members) finish[m] = join_start[op.join] + longest;
  }
  return true;
}

void OpEngine::KeepTimings(const util::LargeVector<OpTiming>& timings) {
  finish_.resize(timings.size());
  transfer_start_.assign(transfer_count_, Time::Zero());
  for (size_t i = 0; i < timings.size(); ++i) {
    finish_[i] = timings[i].finish;
    if (const int32_t t = ops_[i].transfer(); t >= 0) {
      transfer_start_[t] = timings[i].start;
    }
  }
  join_longest_.assign(join_count(), Time::Zero());
  for (size_t j = 0; j < join_count(); ++j) {
    for (const OpId m : JoinMembers(static_cast<JoinId>(j))) {
      if (ops_[m].transfer() < 0) {
        join_longest_[j] = std::max(join_longest_[j], ops_[m].duration());
      }
    }
  }
}

util::Result<void> OpEngine::Run(TransferModel* network) {
  CheckOrDie(!ran_, "OpEngine::Run called twice");
  if (transfer_count_ == 0) {
    util::LargeVector<Time> finish;
    std::vector<Time> join_longest;
    // Every dep known, and earlier.
    if (TimeFixedOpsInIdOrder(finish, join_longest)) {
      finish_ = std::move(finish);
      join_longest_ = std::move(join_longest);
      ran_ = true;
      return {};
    }
  }
  if (auto known = CheckDepsKnown(); !known) return known;
  if (network == nullptr && !transfer_count_ == 0) {
    for (size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].transfer() >= 0) {
        return util::Fail(DescribeOp(names_[ops_[i].name], i) +
                          ": a transfer needs a network model, and Run() "
                          "was given none");
      }
    }
  }
  const Graph graph = BuildGraph();
  if (transfer_count_ == 0) {
    // Every op starts unless it lies on or behind a cycle; CheckAcyclic
    // then says which.
    util::LargeVector<OpTiming> timings;
    if (!TimeFixedOps(graph, timings)) {
      util::Result<void> acyclic = CheckAcyclic(graph);
      CheckOrDie(!acyclic.has_value(), "OpEngine::Run: ops left unstarted");
      return acyclic;
    }
    KeepTimings(timings);
    ran_ = true;
    return {};
  }
  // Transfers touch the network model, so a graph with them is checked for
  // cycles before it plays.
  if (auto acyclic = CheckAcyclic(graph); !acyclic) return acyclic;
  Playout playout(*this, graph, network);
  for (size_t i = 0; i < ops_.size() && playout.failure.empty(); ++i) {
    if (playout.waiting[i] == 0) playout.Ready(static_cast<OpId>(i));
  }
  while (playout.failure.empty() && playout.queue.RunNext()) {
  }
  if (!playout.failure.empty()) return util::Fail(playout.failure);
  // The graph is acyclic, so only a transfer the model never finished can
  // hold ops back.
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i].transfer() >= 0 && playout.waiting[i] == 0 &&
        playout.timings[i].finish < Time::Zero()) {
      return util::Fail(DescribeOp(names_[ops_[i].name], i) +
                        ": the network model never finished this transfer "
                        "(started at " +
                        playout.timings[i].start.ToString() + ")");
    }
  }
  KeepTimings(playout.timings);
  ran_ = true;
  return {};
}

std::string OpEngine::ToChromeTrace(const std::vector<bool>& keep) const {
  CheckOrDie(ran_, "OpEngine::ToChromeTrace before a successful Run");
  std::string json = "{\"traceEvents\":[";
  bool first = true;
  auto begin_event = [&] {
    json += first ? "\n" : ",\n";
    first = false;
  };
  // {"name":<name>,"ph":"M","pid":<pid>,"tid":<tid>,"args":{<args>}}
  auto metadata = [&](std::string_view name, size_t pid, size_t tid,
                      std::string_view args) {
    begin_event();
    json += "{\"name\":\"";
    json += name;
    json += "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
            ",\"tid\":" + std::to_string(tid) + ",\"args\":{";
    json += args;
    json += "}}";
  };
  auto kept = [&](size_t process) { return keep.empty() || keep[process]; };
  // Process metadata carries tid 0, as Chrome's own traces do.
  for (size_t p = 0; p < process_names_.size(); ++p) {
    if (!kept(p)) continue;
    metadata("process_name", p, 0,
             "\"name\":" + util::JsonString(process_names_[p]));
    metadata("process_sort_index", p, 0, "\"sort_index\":" + std::to_string(p));
  }
  for (size_t s = 0; s < stream_names_.size(); ++s) {
    const size_t pid = process_of_stream_[s];
    if (!kept(pid)) continue;
    metadata("thread_name", pid, s,
             "\"name\":" + util::JsonString(ThreadName(stream_names_[s])));
    metadata("thread_sort_index", pid, s,
             "\"sort_index\":" + std::to_string(s));
  }
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& op = ops_[i];
    if (!kept(process_of_stream_[op.stream])) continue;
    const OpTiming t = timing(static_cast<OpId>(i));
    begin_event();
    json += "{\"name\":" + util::JsonString(names_[op.name]);
    if (const int32_t category = CategoryOf(i); category != 0) {
      json += ",\"cat\":" + util::JsonString(category_names_[category]);
    }
    json += ",\"ph\":\"X\",\"ts\":" + JsonMicros(t.start) +
            ",\"dur\":" + JsonMicros(t.finish - t.start) +
            ",\"pid\":" + std::to_string(process_of_stream_[op.stream]) +
            ",\"tid\":" + std::to_string(op.stream) + "}";
  }
  for (const CounterSample& c : counters_) {
    if (!kept(c.process)) continue;
    begin_event();
    char value[32];
    std::snprintf(value, sizeof value, "%.6g", c.value);
    json += "{\"name\":" + util::JsonString(names_[c.name]) +
            ",\"ph\":\"C\",\"ts\":" + JsonMicros(c.at) +
            ",\"pid\":" + std::to_string(c.process) + ",\"tid\":0,\"args\":{" +
            util::JsonString(names_[c.name]) + ":" + value + "}}";
  }
  json += "\n]}\n";
  return json;
}

}  // namespace moesim::sim
