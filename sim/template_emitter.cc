#include "sim/template_emitter.h"

namespace moesim::sim {

TemplateEmitter::TemplateEmitter(Engine& engine, bool categories)
    : engine_(engine),
      categories_(categories),
      launch_name_(engine.Name("launch")),
      marker_name_(engine.Name("(empty)")) {}

OpId TemplateEmitter::EmitOne(const StageStreams& streams, const TimedOp& op,
                              std::span<const OpId> deps) {
  const StreamId stream = streams[static_cast<int>(op.stream)];
  const NameId name = op.name_id >= 0 ? op.name_id : engine_.Name(op.name);
  const OpId id = op.transfer
                      ? engine_.AddTransfer(stream, *op.transfer, deps, name)
                      : engine_.Add(stream, op.duration, deps, name);
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
  const StreamId host_stream = streams[static_cast<int>(StreamKind::kHost)];
  for (const HostSegment& seg : host) {
    // After a sync the host waits for the op that ended the last segment.
    std::span<const OpId> after;
    if (seg.first > 0) after = std::span<const OpId>(&ids_[seg.first - 1], 1);
    const OpId first_launch =
        engine_.Add(host_stream, Time::FromSecondsCeil(seg.first_launch_s),
                    after, launch_name_);
    OpId rest_launch = -1;
    if (seg.rest_launch_s > 0) {
      rest_launch =
          engine_.Add(host_stream, Time::FromSecondsCeil(seg.rest_launch_s),
                      std::span<const OpId>(), launch_name_);
    }
    for (int i = seg.first; i <= seg.last; ++i) {
      scratch_.clear();
      bool outside = t.ops[i].deps.empty();
      for (const int d : t.ops[i].deps) {
        if (d == kEntry) {
          scratch_.insert(scratch_.end(), entry.begin(), entry.end());
          outside = true;
        } else {
          scratch_.push_back(ids_[d]);
          outside = outside || d < seg.first;
        }
      }
      if (outside) scratch_.push_back(first_launch);
      if (i == seg.last && rest_launch >= 0) scratch_.push_back(rest_launch);
      ids_[i] = EmitOne(streams, t.ops[i], scratch_);
    }
  }
  return {ids_.front(), ids_[t.exit]};
}

}  // namespace moesim::sim
