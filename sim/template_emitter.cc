#include "sim/template_emitter.h"

#include <algorithm>

#include "util/check.h"

namespace moesim::sim {

TemplateEmitter::TemplateEmitter(Engine& engine, bool categories)
    : engine_(engine),
      categories_(categories),
      launch_name_(engine.Name("launch")),
      marker_name_(engine.Name("(empty)")) {}

OpId TemplateEmitter::EmitOne(const StageStreams& streams, const TimedOp& op,
                              std::span<const OpId> deps, Time duration) {
  const StreamId stream = streams[static_cast<int>(op.stream)];
  const NameId name = op.name_id >= 0 ? op.name_id : engine_.Name(op.name);
  const Time d = duration >= Time::Zero() ? duration : op.duration;
  const OpId id = op.transfer
                      ? engine_.AddTransfer(stream, *op.transfer, deps, name)
                      : engine_.Add(stream, d, deps, name);
  if (categories_) engine_.SetCategory(id, op.category);
  return id;
}

std::pair<OpId, OpId> TemplateEmitter::Emit(
    const StageStreams& streams, const OpTemplate& t,
    const std::vector<HostSegment>& host, std::span<const OpId> entry) {
  if (t.ops.empty()) {
    const OpId id = engine_.Add(streams[static_cast<int>(StreamKind::kCompute)],
                                Time::Zero(), entry, marker_name_);
    return {id, id};
  }
  ids_.assign(t.ops.size(), -1);
  EmitPart(streams, t, 0, static_cast<int>(t.ops.size()) - 1, host, ids_,
           entry);
  return {ids_.front(), ids_[t.exit]};
}

OpId TemplateEmitter::EmitPart(const StageStreams& streams, const OpTemplate& t,
                               int first, int last,
                               const std::vector<HostSegment>& host,
                               std::vector<OpId>& ids,
                               std::span<const OpId> entry, double stretch,
                               double stretch_s) {
  const Lane lane{&streams, &t, &host, &ids, entry};
  EmitParts(std::span<const Lane>(&lane, 1), first, last, stretch, stretch_s);
  return ids[last];
}

void TemplateEmitter::EmitParts(std::span<const Lane> lanes, int first,
                                int last, double stretch, double stretch_s) {
  const std::vector<HostSegment>& segments = *lanes.front().host;
  CheckOrDie(!segments.empty() && segments.front().first == first &&
                 segments.back().last == last,
             "TemplateEmitter::EmitParts: the segments cover the part");
  for (const Lane& lane : lanes.subspan(1)) {
    const std::vector<HostSegment>& own = *lane.host;
    CheckOrDie(own.size() == segments.size() &&
                   std::equal(own.begin(), own.end(), segments.begin(),
                              [](const HostSegment& a, const HostSegment& b) {
                                return a.first == b.first && a.last == b.last;
                              }),
               "TemplateEmitter::EmitParts: lanes with other segments");
  }
  launches_.resize(lanes.size());
  windows_.assign(lanes.size(), stretch_s);  // each lane's own window
  for (size_t s = 0; s < segments.size(); ++s) {
    for (size_t l = 0; l < lanes.size(); ++l) {
      launches_[l] = EmitLaunches(lanes[l], (*lanes[l].host)[s], first);
    }
    for (int i = segments[s].first; i <= segments[s].last; ++i) {
      for (size_t l = 0; l < lanes.size(); ++l) {
        EmitOp(lanes[l], (*lanes[l].host)[s], i, launches_[l], stretch,
               windows_[l]);
      }
    }
  }
}

std::pair<OpId, OpId> TemplateEmitter::EmitLaunches(const Lane& l,
                                                    const HostSegment& seg,
                                                    int first) {
  const StreamId host_stream =
      (*l.streams)[static_cast<int>(StreamKind::kHost)];
  // After a sync the host waits for the op that ended the last segment.
  std::span<const OpId> after;
  if (seg.first > first && l.t->ops[seg.first - 1].host_sync) {
    after = std::span<const OpId>(&(*l.ids)[seg.first - 1], 1);
  }
  const OpId first_launch =
      engine_.Add(host_stream, Time::FromSecondsCeil(seg.first_launch_s), after,
                  launch_name_);
  OpId rest_launch = -1;
  if (seg.rest_launch_s > 0) {
    rest_launch =
        engine_.Add(host_stream, Time::FromSecondsCeil(seg.rest_launch_s),
                    std::span<const OpId>(), launch_name_);
  }
  return {first_launch, rest_launch};
}

void TemplateEmitter::EmitOp(const Lane& l, const HostSegment& seg, int i,
                             std::pair<OpId, OpId> launch, double stretch,
                             double& stretch_s) {
  const TimedOp& op = l.t->ops[i];
  std::vector<OpId>& ids = *l.ids;
  scratch_.clear();
  bool outside = op.deps.empty();
  for (const int d : op.deps) {
    if (d == kEntry) {
      scratch_.insert(scratch_.end(), l.entry.begin(), l.entry.end());
      outside = true;
    } else {
      scratch_.push_back(ids[d]);
      outside = outside || d < seg.first;
    }
  }
  if (outside) scratch_.push_back(launch.first);
  if (i == seg.last && launch.second >= 0) scratch_.push_back(launch.second);
  Time duration = Time::Picos(-1);
  if (stretch_s > 0 && op.stream == StreamKind::kCompute && !op.transfer) {
    duration = Time::FromSecondsCeil(
        StretchedSeconds(op.duration.seconds(), stretch, stretch_s));
  }
  ids[i] = EmitOne(*l.streams, op, scratch_, duration);
}

}  // namespace moesim::sim
