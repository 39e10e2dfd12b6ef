#include "sim/step_stats.h"

#include <algorithm>

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

Time UnionLength(std::vector<Interval> intervals) {
  return Length(Merge(std::move(intervals)));
}

StepResult SummarizeStep(const Engine& engine, const StepStreams& streams,
                         int num_stages) {
  CheckOrDie(streams.streams.size() >= engine.stream_count(),
             "SummarizeStep: every stream described");
  StepResult out;
  const Time step = engine.makespan();
  out.step_time_s = step.seconds();
  out.ops = engine.op_count();
  out.events = engine.op_count();
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
  std::vector<std::array<std::vector<Interval>, kNumStreamKinds>> by_stage(
      num_stages);
  for (size_t s = 0; s < engine.stream_count(); ++s) {
    const StepStreams::Stream& info = streams.streams[s];
    auto& list = by_stage[info.stage][static_cast<int>(info.kind)];
    if (list.empty()) {
      list = std::move(busy[s]);
    } else {
      list.insert(list.end(), busy[s].begin(), busy[s].end());
      list = Merge(std::move(list));
    }
  }
  const double stages = num_stages;
  for (int r = 0; r < num_stages; ++r) {
    StageTime st;
    st.pp_rank = r;
    const auto& lists = by_stage[r];
    std::vector<Interval> all;
    for (const auto& list : lists)
      all.insert(all.end(), list.begin(), list.end());
    const std::vector<Interval>& compute =
        lists[static_cast<int>(StreamKind::kCompute)];
    st.compute_s = Length(compute).seconds();
    st.idle_s = (step - UnionLength(std::move(all))).seconds();
    for (int k = 1; k < kNumStreamKinds; ++k) {
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

}  // namespace moesim::sim
