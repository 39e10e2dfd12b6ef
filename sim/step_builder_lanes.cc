// The step builder's ops on lanes (sim/step_builder.h): an op or an item's
// template on every lane of a stage, joined by its group in full mode, the
// pipeline sends, the p2p sync, and the copy and parameter-gather ops.
#include <algorithm>

#include "sim/step_builder.h"
#include "util/check.h"

namespace moesim::sim::internal {

using models::Group;
using topology::Collective;
using topology::GroupKind;

StepBuilder::Bundle StepBuilder::NewBundle(std::span<const OpId> ops) {
  const auto id = static_cast<Bundle>(bundles_.size() / lanes_per_stage_);
  bundles_.insert(bundles_.end(), ops.begin(), ops.end());
  return id;
}

StepBuilder::LaneDeps StepBuilder::DepsOf(std::span<const OpId> entry) const {
  LaneDeps deps(lanes_per_stage_);
  for (int l = 0; l < lanes_per_stage_; ++l) {
    for (const Bundle b : entry) deps[l].push_back(At(b, l));
  }
  return deps;
}

void StepBuilder::RetargetTransfers(int r, const OpTemplate& t, int first,
                                    int last,
                                    const std::vector<std::vector<OpId>>& ids) {
  if (!full_ || options_.network != NetworkKind::kFlow) return;
  const RankContext& base = stages_[r].variants[0].rank;
  for (int i = first; i <= last; ++i) {
    const TimedOp& op = t.ops[i];
    if (!op.transfer) continue;
    CheckOrDie(op.group || op.stream == StreamKind::kCp,
               "StepBuilder: a template transfer outside any group");
    const int g = static_cast<int>(op.group ? *op.group : Group::kCp);
    const std::vector<int>& from = base.groups[g];
    const auto size = static_cast<std::ptrdiff_t>(from.size());
    auto position = [](const std::vector<int>& group, int gpu) {
      const auto at = std::find(group.begin(), group.end(), gpu);
      CheckOrDie(at != group.end(),
                 "StepBuilder: a transfer's GPU outside its group");
      return at - group.begin();
    };
    const std::ptrdiff_t base_at = position(from, lane(r, 0).gpu);
    for (int l = 0; l < lanes_per_stage_; ++l) {
      const std::vector<int>& to = lane(r, l).groups[g];
      CheckOrDie(static_cast<std::ptrdiff_t>(to.size()) == size,
                 "StepBuilder: groups of one kind differ in size");
      // The same places relative to this lane as to the first: a ring hop
      // becomes this member's hop, a group collective its own group's.
      const std::ptrdiff_t shift = position(to, lane(r, l).gpu) - base_at;
      std::vector<int> gpus;
      gpus.reserve(op.transfer->gpus.size());
      for (const int gpu : op.transfer->gpus) {
        gpus.push_back(
            to[((position(from, gpu) + shift) % size + size) % size]);
      }
      engine_.RetargetTransfer(ids[l][i], std::move(gpus));
    }
  }
}

void StepBuilder::JoinGroupOps(int r, const OpTemplate& t, int first, int last,
                               const std::vector<std::vector<OpId>>& ids) {
  RetargetTransfers(r, t, first, last, ids);
  const Stage& st = stages_[r];
  for (int i = first; i <= last; ++i) {
    if (!t.ops[i].group) continue;
    const int g = static_cast<int>(*t.ops[i].group);
    const int size = st.group_size[g];
    if (size <= 1) continue;
    const std::vector<int>& order = st.lanes_by_slot[g];
    for (size_t begin = 0; begin < order.size(); begin += size) {
      members_.clear();
      for (int k = 0; k < size; ++k)
        members_.push_back(ids[order[begin + k]][i]);
      engine_.Join(members_);
    }
  }
}

StepBuilder::Bundle StepBuilder::AddOnLanes(int r, const TimedOp& op,
                                            const LaneDeps& deps) {
  std::vector<OpId> ids(lanes_per_stage_);
  for (int l = 0; l < lanes_per_stage_; ++l) {
    ids[l] = emitter_.EmitOne(lane(r, l).streams, op, deps[l]);
    if (op.stream == StreamKind::kCompute && !op.transfer) {
      class_s_[LaneIndex(r, l)][ClassId(op.category)] += op.duration.seconds();
    }
  }
  if (full_) {
    // A single-op template: the joins (transfers: the retargets) of its op 0.
    OpTemplate one;
    one.ops.push_back(op);
    ids_.assign(lanes_per_stage_, {});
    for (int l = 0; l < lanes_per_stage_; ++l) ids_[l] = {ids[l]};
    if (op.group && stages_[r].group_size[static_cast<int>(*op.group)] > 1) {
      JoinGroupOps(r, one, 0, 0, ids_);
    } else {
      RetargetTransfers(r, one, 0, 0, ids_);
    }
  }
  return NewBundle(ids);
}

std::vector<OpId> StepBuilder::InstantiateItem(int r, int chunk, int item,
                                               models::StepKind kind,
                                               const LaneDeps& deps) {
  std::vector<OpId> exits(lanes_per_stage_);
  ids_.resize(lanes_per_stage_);
  for (int l = 0; l < lanes_per_stage_; ++l) {
    const Item::Pass pass = VariantOf(r, l).items[chunk][item].PassOf(kind);
    for (const auto& [id, seconds] : pass.classes) {
      class_s_[LaneIndex(r, l)][id] += seconds;
    }
    if (pass.ops.ops.empty()) {
      exits[l] = emitter_.Emit(lane(r, l).streams, pass.ops, pass.host, deps[l])
                     .second;
      continue;
    }
    ids_[l].assign(pass.ops.ops.size(), -1);
    emit_lanes_.push_back(
        {&lane(r, l).streams, &pass.ops, &pass.host, &ids_[l], deps[l]});
  }
  const OpTemplate& t0 =
      stages_[r].variants[0].items[chunk][item].PassOf(kind).ops;
  if (!t0.ops.empty()) {
    const int last = static_cast<int>(t0.ops.size()) - 1;
    emitter_.EmitParts(emit_lanes_, 0, last);
    emit_lanes_.clear();
    for (int l = 0; l < lanes_per_stage_; ++l) exits[l] = ids_[l][t0.exit];
    if (full_) JoinGroupOps(r, t0, 0, last, ids_);
  }
  return exits;
}

// A chunk without layers on this stage: an empty template per lane, so the
// schedule's dependencies still pass through.
StepBuilder::Bundle StepBuilder::EmptyOnLanes(int r, const LaneDeps& deps) {
  std::vector<OpId> exits(lanes_per_stage_);
  for (int l = 0; l < lanes_per_stage_; ++l) {
    exits[l] =
        emitter_.Emit(lane(r, l).streams, OpTemplate{}, {}, deps[l]).second;
  }
  return NewBundle(exits);
}

StepBuilder::Bundle StepBuilder::Send(int from, bool forward, Bundle done) {
  const Stage& st = stages_[from];
  std::vector<OpId> ids(lanes_per_stage_);
  for (int l = 0; l < lanes_per_stage_; ++l) {
    const OpId deps[] = {At(done, l)};
    ids[l] =
        emitter_.EmitOne(lane(from, l).streams,
                         forward ? st.send_next[l] : st.send_previous[l], deps);
    lane(from, l).pending_send = ids[l];
  }
  return NewBundle(ids);
}

// Megatron's non-interleaved 1F1B batches each pipeline exchange
// (batch_isend_irecv) and, with batch_p2p_sync, then calls
// torch.cuda.synchronize() (NVIDIA/Megatron-LM
// megatron/core/pipeline_parallel/p2p_communication.py _communicate). The
// exchange before `step` (the previous step's send, this step's receive)
// therefore holds the host until the GPU has run everything issued and the
// received tensor is there: the host cannot run ahead into `step`. No
// exchange (the first stage's forward input, the last stage's backward
// input, nothing sent): no call, no sync.
void StepBuilder::HostSyncAtP2p(int r, const models::ScheduleStep& step,
                                std::span<const OpId> entry) {
  const int pp = s_.parallel.pp;
  const bool receives = step.forward() ? r > 0 : r + 1 < pp;
  for (int l = 0; l < lanes_per_stage_; ++l) {
    Lane& ln = lane(r, l);
    if (!receives && ln.pending_send < 0) continue;
    std::vector<OpId> deps(entry.begin(), entry.end());
    if (ln.pending_send >= 0) deps.push_back(ln.pending_send);
    ln.pending_send = -1;
    TimedOp sync;
    sync.stream = StreamKind::kHost;
    sync.name = "p2p sync";
    sync.category = "host";
    emitter_.EmitOne(ln.streams, sync, deps);
  }
}

// A bucket's weights all-gathered over its data-parallel group: FP8 with
// fp8_param_gather, except MXFP8, whose parameters Megatron all-gathers in
// BF16.
TimedOp StepBuilder::ParamGather(const Stage& st, const Bucket& bucket) const {
  const bool fp8_gather = s_.training.fp8_param_gather &&
                          s_.training.precision != models::Precision::kMxfp8;
  const double bytes = bucket.params * (fp8_gather ? 1.0 : 2.0);
  return CollectiveOp(
      st.variants[0].rank, bucket.expert ? Group::kEdp : Group::kDp,
      Collective::kAllGather, bytes, StreamKind::kDp, "param all-gather");
}

TimedOp StepBuilder::CopyOp(const char* name, Time duration,
                            StreamKind stream) const {
  TimedOp op;
  op.stream = stream;
  op.name = name;
  op.category = "offload";
  op.duration = duration;
  return op;
}

}  // namespace moesim::sim::internal
