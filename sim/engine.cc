#include "sim/engine.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "sim/event_queue.h"

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

// A JSON string literal for `text`.
std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x",
                        static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
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

StreamId Engine::Stream(std::string_view name) {
  if (auto it = stream_ids_.find(name); it != stream_ids_.end()) {
    return it->second;
  }
  const auto id = static_cast<StreamId>(stream_names_.size());
  stream_names_.emplace_back(name);
  stream_ids_.emplace(std::string(name), id);
  last_on_stream_.push_back(-1);
  return id;
}

OpId Engine::Add(std::string_view stream, Time duration, std::vector<OpId> deps,
                 std::string name) {
  return Add(Stream(stream), duration, std::move(deps), std::move(name));
}

OpId Engine::Add(StreamId stream, Time duration, std::vector<OpId> deps,
                 std::string name) {
  CheckOrDie(!ran_, "Engine::Add after Run");
  CheckOrDie(duration >= Time::Zero(), "Engine::Add: negative duration");
  CheckOrDie(stream >= 0 && static_cast<size_t>(stream) < stream_count(),
             "Engine::Add: unknown stream id");
  CheckOrDie(ops_.size() < static_cast<size_t>(INT32_MAX),
             "Engine::Add: too many ops");
  const auto id = static_cast<OpId>(ops_.size());
  ops_.push_back({std::move(name), stream, duration, std::move(deps)});
  prev_on_stream_.push_back(last_on_stream_[stream]);
  last_on_stream_[stream] = id;
  return id;
}

const std::string& Engine::stream_name(StreamId stream) const {
  CheckOrDie(stream >= 0 && static_cast<size_t>(stream) < stream_count(),
             "Engine::stream_name: unknown stream id");
  return stream_names_[stream];
}

const std::string& Engine::op_name(OpId op) const {
  CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
             "Engine::op_name: unknown op id");
  return ops_[op].name;
}

const OpTiming& Engine::timing(OpId op) const {
  CheckOrDie(ran_, "Engine::timing before a successful Run");
  CheckOrDie(op >= 0 && static_cast<size_t>(op) < op_count(),
             "Engine::timing: unknown op id");
  return timings_[op];
}

Time Engine::makespan() const {
  CheckOrDie(ran_, "Engine::makespan before a successful Run");
  Time latest;
  for (const OpTiming& t : timings_) latest = std::max(latest, t.finish);
  return latest;
}

util::Result<void> Engine::CheckDepsKnown() const {
  for (size_t i = 0; i < ops_.size(); ++i) {
    for (const OpId dep : ops_[i].deps) {
      if (dep < 0 || static_cast<size_t>(dep) >= ops_.size()) {
        return util::Fail("op " + Quoted(ops_[i].name) + " (id " +
                          std::to_string(i) + "): unknown dependency id " +
                          std::to_string(dep) + " (" +
                          std::to_string(ops_.size()) + " ops)");
      }
    }
  }
  return {};
}

Engine::Graph Engine::BuildGraph() const {
  const size_t n = ops_.size();
  Graph g;
  g.dependents_begin.assign(n + 1, 0);
  g.next_on_stream.assign(n, -1);
  g.predecessors.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (const OpId dep : ops_[i].deps) ++g.dependents_begin[dep + 1];
    g.predecessors[i] = static_cast<int32_t>(ops_[i].deps.size());
    if (prev_on_stream_[i] >= 0) {
      g.next_on_stream[prev_on_stream_[i]] = static_cast<OpId>(i);
      ++g.predecessors[i];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    g.dependents_begin[i + 1] += g.dependents_begin[i];
  }
  g.dependents.resize(g.dependents_begin[n]);
  std::vector<size_t> fill(g.dependents_begin.begin(),
                           g.dependents_begin.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    for (const OpId dep : ops_[i].deps) {
      g.dependents[fill[dep]++] = static_cast<OpId>(i);
    }
  }
  return g;
}

util::Result<void> Engine::CheckAcyclic(const Graph& g) const {
  // Kahn's algorithm; ops left with unresolved predecessors lie on or behind
  // a cycle.
  std::vector<int32_t> unresolved = g.predecessors;
  std::vector<OpId> ready;
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (unresolved[i] == 0) ready.push_back(static_cast<OpId>(i));
  }
  size_t resolved = 0;
  auto release = [&](OpId op) {
    if (--unresolved[op] == 0) ready.push_back(op);
  };
  while (!ready.empty()) {
    const OpId op = ready.back();
    ready.pop_back();
    ++resolved;
    for (size_t k = g.dependents_begin[op]; k < g.dependents_begin[op + 1];
         ++k) {
      release(g.dependents[k]);
    }
    if (g.next_on_stream[op] >= 0) release(g.next_on_stream[op]);
  }
  if (resolved == ops_.size()) return {};
  return util::Fail(DescribeCycle(unresolved));
}

std::string Engine::DescribeCycle(
    const std::vector<int32_t>& unresolved) const {
  // Every unresolved op has an unresolved predecessor, so walking backwards
  // from one must revisit an op; the revisited stretch is a cycle.
  OpId op = 0;
  while (unresolved[op] == 0) ++op;
  std::vector<int32_t> step_of(ops_.size(), -1);
  std::vector<OpId> walk;
  while (step_of[op] < 0) {
    step_of[op] = static_cast<int32_t>(walk.size());
    walk.push_back(op);
    const OpId prev = prev_on_stream_[op];
    if (prev >= 0 && unresolved[prev] > 0) {
      op = prev;
      continue;
    }
    for (const OpId dep : ops_[op].deps) {
      if (unresolved[dep] > 0) {
        op = dep;
        break;
      }
    }
  }
  // walk[step_of[op]..] runs against the edges; print it along them.
  std::string message = "dependency cycle (deps and stream order): ";
  message += Quoted(ops_[op].name);
  for (size_t i = walk.size(); i-- > static_cast<size_t>(step_of[op]);) {
    message += " -> " + Quoted(ops_[walk[i]].name);
  }
  return message;
}

util::Result<void> Engine::Validate() const {
  if (auto known = CheckDepsKnown(); !known) return known;
  return CheckAcyclic(BuildGraph());
}

util::Result<void> Engine::Run() {
  CheckOrDie(!ran_, "Engine::Run called twice");
  if (auto known = CheckDepsKnown(); !known) return known;
  const Graph graph = BuildGraph();
  if (auto acyclic = CheckAcyclic(graph); !acyclic) return acyclic;

  // The playout: Start(op) records the start and schedules the finish;
  // Finish(op) releases its successors, starting those whose last
  // predecessor it was. Start times equal the max() in the header because
  // an op starts exactly when its last predecessor finishes.
  struct Playout {
    const Engine& engine;
    const Graph& graph;
    std::vector<int32_t> waiting;
    std::vector<OpTiming> timings;
    EventQueue queue;

    void Start(OpId op) {
      timings[op].start = queue.now();
      queue.Schedule(queue.now() + engine.ops_[op].duration,
                     [this, op] { Finish(op); });
    }
    void Release(OpId op) {
      if (--waiting[op] == 0) Start(op);
    }
    void Finish(OpId op) {
      timings[op].finish = queue.now();
      for (size_t k = graph.dependents_begin[op];
           k < graph.dependents_begin[op + 1]; ++k) {
        Release(graph.dependents[k]);
      }
      if (graph.next_on_stream[op] >= 0) Release(graph.next_on_stream[op]);
    }
  };
  Playout playout{*this, graph, graph.predecessors,
                  std::vector<OpTiming>(ops_.size()), EventQueue()};
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (playout.waiting[i] == 0) playout.Start(static_cast<OpId>(i));
  }
  playout.queue.RunAll();
  timings_ = std::move(playout.timings);
  ran_ = true;
  return {};
}

std::string Engine::ToChromeTrace() const {
  CheckOrDie(ran_, "Engine::ToChromeTrace before a successful Run");
  std::string json = "{\"traceEvents\":[";
  bool first = true;
  auto begin_event = [&] {
    json += first ? "\n" : ",\n";
    first = false;
  };
  for (size_t s = 0; s < stream_names_.size(); ++s) {
    begin_event();
    json += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":" +
            std::to_string(s) +
            ",\"args\":{\"name\":" + JsonString(stream_names_[s]) + "}}";
  }
  for (size_t i = 0; i < ops_.size(); ++i) {
    const OpTiming& t = timings_[i];
    begin_event();
    json += "{\"name\":" + JsonString(ops_[i].name) +
            ",\"ph\":\"X\",\"ts\":" + JsonMicros(t.start) +
            ",\"dur\":" + JsonMicros(t.finish - t.start) +
            ",\"pid\":0,\"tid\":" + std::to_string(ops_[i].stream) + "}";
  }
  json += "\n]}\n";
  return json;
}

}  // namespace moesim::sim
