#include "sim/step_stats.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <span>
#include <vector>

#include "util/check.h"

namespace moesim::sim {

namespace {

using Interval = std::pair<Time, Time>;

// Sorted, disjoint union of `intervals`.
std::vector<Interval> Merge(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// The union of two sorted disjoint unions, as Merge would give it, in
// linear time.
std::vector<Interval> Union(const std::vector<Interval>& a,
                            const std::vector<Interval>& b) {
  std::vector<Interval> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const Interval& next =
        j == b.size() || (i < a.size() && a[i] < b[j]) ? a[i++] : b[j++];
    if (!out.empty() && next.first <= out.back().second) {
      out.back().second = std::max(out.back().second, next.second);
    } else {
      out.push_back(next);
    }
  }
  return out;
}

Time Length(const std::vector<Interval>& merged) {
  Time total;
  for (const Interval& i : merged) total += i.second - i.first;
  return total;
}

// Length of the intersection of two sorted disjoint unions.
Time Overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  Time total;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const Time lo = std::max(a[i].first, b[j].first);
    const Time hi = std::min(a[i].second, b[j].second);
    if (lo < hi) total += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return total;
}

}  // namespace

std::array<double, kNumStreamKinds> CriticalPathSeconds(
    const Engine& engine, const StepStreams& streams) {
  std::array<double, kNumStreamKinds> out{};
  OpId cur = -1;
  Time last;
  for (size_t op = 0; op < engine.op_count(); ++op) {
    const Time f = engine.timing(static_cast<OpId>(op)).finish;
    if (cur < 0 || f > last) {
      cur = static_cast<OpId>(op);
      last = f;
    }
  }
  while (cur >= 0) {
    const OpTiming& t = engine.timing(cur);
    out[static_cast<int>(streams.streams[engine.op_stream(cur)].kind)] +=
        (t.finish - t.start).seconds();
    OpId best = -1;
    Time best_finish;
    auto consider = [&](OpId p) {
      if (p < 0) return;
      const Time f = engine.timing(p).finish;
      if (f > t.start) return;
      if (best < 0 || f > best_finish) {
        best = p;
        best_finish = f;
      }
    };
    const JoinId j = engine.op_join(cur);
    const OpId self[] = {cur};
    const std::span<const OpId> members =
        j >= 0 ? engine.join_members(j) : std::span<const OpId>(self);
    for (const OpId m : members) {
      consider(engine.stream_predecessor(m));
      for (const OpId d : engine.deps(m)) consider(d);
    }
    cur = best;
  }
  return out;
}

Time UnionLength(std::vector<Interval> intervals) {
  return Length(Merge(std::move(intervals)));
}

namespace {

// The compute stream's waits for the host per stage: a compute op whose
// last input to finish was a host launch.
std::vector<Time> HostWaits(const Engine& engine, const StepStreams& streams,
                            int num_stages) {
  std::vector<Time> host_wait(num_stages);
  for (size_t op = 0; op < engine.op_count(); ++op) {
    const OpId id = static_cast<OpId>(op);
    const StepStreams::Stream& info = streams.streams[engine.op_stream(id)];
    if (info.kind != StreamKind::kCompute) continue;
    Time gpu_ready, host_ready;
    if (const OpId prev = engine.stream_predecessor(id); prev >= 0) {
      gpu_ready = engine.timing(prev).finish;
    }
    for (const OpId dep : engine.deps(id)) {
      const Time done = engine.timing(dep).finish;
      if (streams.streams[engine.op_stream(dep)].kind == StreamKind::kHost) {
        host_ready = std::max(host_ready, done);
      } else {
        gpu_ready = std::max(gpu_ready, done);
      }
    }
    if (host_ready > gpu_ready) host_wait[info.stage] += host_ready - gpu_ready;
  }
  return host_wait;
}

// Busy intervals by stage and stream kind: each stream's, then the stage's
// streams of one kind (one per rank in full mode) merged.
std::vector<std::array<std::vector<Interval>, kNumStreamKinds>> BusyByStage(
    const Engine& engine, const StepStreams& streams, int num_stages) {
  // Busy intervals per stream. A stream runs its ops one at a time in id
  // order, so appending in id order keeps each list sorted; touching
  // intervals merge as they come.
  std::vector<std::vector<Interval>> busy(engine.stream_count());
  for (size_t op = 0; op < engine.op_count(); ++op) {
    const OpTiming& t = engine.timing(static_cast<OpId>(op));
    if (t.finish <= t.start) continue;
    std::vector<Interval>& list = busy[engine.op_stream(static_cast<OpId>(op))];
    if (!list.empty() && t.start <= list.back().second) {
      list.back().second = std::max(list.back().second, t.finish);
    } else {
      list.emplace_back(t.start, t.finish);
    }
  }
  // Each stage's streams of one kind (one per rank in full mode) merged
  // pairwise in rounds: O(n log k) for k streams.
  std::vector<std::array<std::vector<std::vector<Interval>>, kNumStreamKinds>>
      parts(num_stages);
  for (size_t s = 0; s < engine.stream_count(); ++s) {
    const StepStreams::Stream& info = streams.streams[s];
    parts[info.stage][static_cast<int>(info.kind)].push_back(
        std::move(busy[s]));
  }
  std::vector<std::array<std::vector<Interval>, kNumStreamKinds>> by_stage(
      num_stages);
  for (int r = 0; r < num_stages; ++r) {
    for (int k = 0; k < kNumStreamKinds; ++k) {
      std::vector<std::vector<Interval>>& lists = parts[r][k];
      while (lists.size() > 1) {
        std::vector<std::vector<Interval>> next;
        for (size_t i = 0; i + 1 < lists.size(); i += 2) {
          next.push_back(Union(lists[i], lists[i + 1]));
        }
        if (lists.size() % 2 == 1) next.push_back(std::move(lists.back()));
        lists = std::move(next);
      }
      if (!lists.empty()) by_stage[r][k] = std::move(lists.front());
    }
  }
  return by_stage;
}

}  // namespace

StepResult SummarizeStep(const Engine& engine, const StepStreams& streams,
                         int num_stages) {
  CheckOrDie(streams.streams.size() >= engine.stream_count(),
             "SummarizeStep: every stream described");
  StepResult out;
  const Time step = engine.makespan();
  out.step_time_s = step.seconds();
  out.ops = engine.op_count();
  const std::array<double, kNumStreamKinds> critical =
      CriticalPathSeconds(engine, streams);
  for (int k = 0; k < kNumStreamKinds; ++k) {
    out.critical_path_s[StreamKindName(static_cast<StreamKind>(k))] =
        critical[k];
  }
  const std::vector<Time> host_wait = HostWaits(engine, streams, num_stages);
  const std::vector<std::array<std::vector<Interval>, kNumStreamKinds>>
      by_stage = BusyByStage(engine, streams, num_stages);
  const double stages = num_stages;
  std::vector<StreamKind> kinds(std::begin(kCommKinds), std::end(kCommKinds));
  for (const StreamKind copy : {StreamKind::kCopy, StreamKind::kCopyH2d}) {
    for (int r = 0; r < num_stages; ++r) {
      if (!by_stage[r][static_cast<int>(copy)].empty()) {
        kinds.push_back(copy);
        break;
      }
    }
  }
  for (int r = 0; r < num_stages; ++r) {
    StageTime st;
    st.pp_rank = r;
    const auto& lists = by_stage[r];
    std::vector<Interval> all;
    for (int k = 0; k < kNumStreamKinds; ++k) {
      if (static_cast<StreamKind>(k) == StreamKind::kHost) continue;
      all = Union(all, lists[k]);
    }
    st.host_busy_s =
        Length(lists[static_cast<int>(StreamKind::kHost)]).seconds();
    st.host_wait_s = host_wait[r].seconds();
    out.host_idle_s += st.host_wait_s / stages;
    out.host_busy_s += st.host_busy_s / stages;
    const std::vector<Interval>& compute =
        lists[static_cast<int>(StreamKind::kCompute)];
    st.compute_s = Length(compute).seconds();
    st.idle_s = (step - Length(all)).seconds();
    // Activation-offload copies count like communication (data moved beside
    // compute), reported only when a scenario has them.
    for (const StreamKind kind_k : kinds) {
      const int k = static_cast<int>(kind_k);
      const Time total = Length(lists[k]);
      st.comm[k].total_s = total.seconds();
      st.comm[k].exposed_s = (total - Overlap(lists[k], compute)).seconds();
      const char* kind = StreamKindName(static_cast<StreamKind>(k));
      CommTime& sum = out.comm_s[kind];
      sum.total_s += st.comm[k].total_s / stages;
      sum.exposed_s += st.comm[k].exposed_s / stages;
      out.time_by_op_class_s[kind] += st.comm[k].total_s / stages;
    }
    for (const auto& [name, seconds] : streams.class_s[r]) {
      out.time_by_op_class_s[name] += seconds / stages;
    }
    out.bubble_fraction += st.idle_s / out.step_time_s / stages;
    out.stages.push_back(st);
  }
  return out;
}

double MemoryTimeline(Engine& engine, const std::vector<StepSpan>& spans,
                      int stage, StreamId compute_stream,
                      const models::StageMemory& memory, bool counters) {
  struct Change {
    Time at;
    double bytes;
  };
  std::vector<Change> changes;
  const double transient = memory.transient_bytes;
  for (const StepSpan& span : spans) {
    if (span.stage != stage) continue;
    const double stored = memory.chunk_activation_bytes.empty()
                              ? 0
                              : memory.chunk_activation_bytes[span.chunk];
    const double kept = memory.chunk_weight_grad_bytes.empty()
                            ? 0
                            : memory.chunk_weight_grad_bytes[span.chunk];
    Time start = engine.timing(span.exit).start;
    for (OpId op = span.begin; op < span.end; ++op) {
      if (engine.op_stream(op) == compute_stream) {
        start = std::min(start, engine.timing(op).start);
      }
    }
    const Time done = engine.timing(span.exit).finish;
    switch (span.kind) {
      case models::StepKind::kForward:
        changes.push_back({start, stored});
        break;
      case models::StepKind::kBackward:
        changes.push_back({start, transient});
        changes.push_back({done, -stored - transient});
        break;
      case models::StepKind::kInputGrad:
        changes.push_back({start, transient});
        changes.push_back({done, -(stored - kept) - transient});
        break;
      case models::StepKind::kWeightGrad:
        changes.push_back({done, -kept});
        break;
    }
  }
  // Frees before allocations at the same instant.
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) {
                     return a.at != b.at ? a.at < b.at : a.bytes < b.bytes;
                   });
  const double base = memory.params_bytes + memory.fp8_weight_bytes +
                      memory.fsdp_unit_bytes + memory.grads_bytes +
                      memory.optimizer_bytes + memory.buffers_bytes;
  double now = 0, peak = 0;
  if (counters) {
    engine.AddCounter(compute_stream, "memory_gib", Time::Zero(),
                      base / models::kGiB);
  }
  for (const Change& c : changes) {
    now += c.bytes;
    peak = std::max(peak, now);
    if (counters) {
      engine.AddCounter(compute_stream, "memory_gib", c.at,
                        (base + now) / models::kGiB);
    }
  }
  return base + peak;
}

Wall DiagnoseWall(const StepResult& step, double peak_bytes,
                  double capacity_bytes) {
  Wall w;
  double exposed = 0;
  for (const auto& [kind, c] : step.comm_s) exposed += c.exposed_s;
  double comm = 0, host = 0, compute = 0;
  for (const auto& [kind, s] : step.critical_path_s) {
    if (kind == "host") {
      host += s;
    } else if (kind == "compute") {
      compute += s;
    } else {
      comm += s;  // tp, cp, ep, dp, pp, and activation-offload copies
    }
  }
  const double t = step.step_time_s > 0 ? step.step_time_s : 1;
  w.exposed_comm_share = std::min(1.0, exposed / t);
  w.comm_share = std::min(1.0, comm / t);
  w.host_share = std::min(1.0, host / t);
  w.compute_share = std::min(1.0, compute / t);
  w.memory_headroom =
      capacity_bytes > 0 ? (capacity_bytes - peak_bytes) / capacity_bytes : 0;
  char evidence[256];
  std::snprintf(evidence, sizeof evidence,
                "critical path: compute %.0f%%, communication %.0f%%, host "
                "%.0f%% of the step; exposed communication %.0f%%, memory "
                "headroom %.0f%%",
                100 * w.compute_share, 100 * w.comm_share, 100 * w.host_share,
                100 * w.exposed_comm_share, 100 * w.memory_headroom);
  w.evidence = evidence;
  if (w.memory_headroom < kMemoryHeadroom) {
    w.name = "memory";
  } else if (w.comm_share >= kCommShare && w.comm_share >= w.host_share) {
    w.name = "communication";
  } else if (w.host_share >= kHostShare) {
    w.name = "host";
  } else {
    w.name = "compute";
  }
  return w;
}

}  // namespace moesim::sim
