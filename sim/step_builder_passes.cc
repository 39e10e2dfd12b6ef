// The step builder's passes (sim/step_builder.h): a chunk's forward,
// backward, input and weight gradients item by item with their gathers,
// offload copies and gradient reduce-scatters, and EP overlap's merged
// forward-backward pair.

#include "models/dispatchers.h"
#include "sim/step_builder.h"

namespace moesim::sim::internal {

using models::Group;
using topology::Collective;
using topology::GroupKind;

PipelineCallbacks::PairEnd StepBuilder::EmitPair(
    int r, const models::ScheduleStep& f, const models::ScheduleStep& b,
    const std::vector<OpId>& entry) {
  Stage& st = stages_[r];
  const auto& items0 = st.variants[0].items;
  PipelineCallbacks::PairEnd end;
  // The first forward and the last backward of a chunk carry the DP bucket
  // hooks: those steps run one after the other.
  // Megatron-FSDP's per-layer gathers and reductions and cpu_offloading's
  // copies hook every micro-batch: the replay runs those pairs in turn too
  // (EP overlap under FSDP or activation offload is not modelled).
  const models::TrainingOptions& tr = s_.training;
  const bool hooked = tr.shard_params || tr.shard_grads ||
                      (tr.cpu_offloading && tr.cpu_offloading_num_layers > 0);
  if (hooked || f.microbatch == 0 || b.microbatch == microbatches_ - 1 ||
      items0[f.chunk].empty() || items0[b.chunk].empty()) {
    end.forward = EmitForward(r, f, entry);
    const OpId after[] = {end.forward};
    end.backward = EmitBackward(r, b, after);
    end.both = end.backward;
    return end;
  }
  const double stretch = DispatcherStretch();
  const int lanes = lanes_per_stage_;
  struct Cursor {
    int chunk = 0;
    int items = 0;
    bool forward = true;
    int item = 0;  // position in this half's order
    size_t part = 0;
    std::vector<std::vector<OpId>> ids;  // per lane
    LaneDeps entry;
    std::vector<OpId> exit;  // per lane
    double ep_s = 0;         // the EP op that ended the last part (0: none)
    bool done() const { return item >= items; }
  };
  Cursor halves[2];
  halves[0].chunk = f.chunk;
  halves[0].forward = true;
  halves[1].chunk = b.chunk;
  halves[1].forward = false;
  for (Cursor& c : halves) {
    c.items = static_cast<int>(items0[c.chunk].size());
    c.ids.resize(lanes);
    c.entry = DepsOf(entry);
    c.exit.assign(lanes, -1);
  }
  auto emit_part = [&](Cursor& c, double stretch_s) {
    const int index = c.forward ? c.item : c.items - 1 - c.item;
    const Item& item0 = items0[c.chunk][index];
    const OpTemplate& t0 = c.forward ? item0.forward : item0.PairedBackward();
    const auto& parts0 = c.forward ? item0.forward_parts : item0.backward_parts;
    for (int l = 0; l < lanes; ++l) {
      const Item& item = VariantOf(r, l).items[c.chunk][index];
      const OpTemplate& t = c.forward ? item.forward : item.PairedBackward();
      const auto& parts = c.forward ? item.forward_parts : item.backward_parts;
      const StageStreams& streams = lane(r, l).streams;
      if (c.part == 0) {
        for (const auto& [id, seconds] :
             c.forward ? item.forward_classes : item.backward_classes) {
          class_s_[LaneIndex(r, l)][id] += seconds;
        }
        c.ids[l].assign(t.ops.size(), -1);
      }
      if (t.ops.empty()) {
        c.exit[l] = emitter_.Emit(streams, t, {}, c.entry[l]).second;
      } else {
        emit_lanes_.push_back(
            {&streams, &t, &parts[c.part].host, &c.ids[l], c.entry[l]});
      }
    }
    if (!t0.ops.empty()) {
      const TemplatePart& p0 = parts0[c.part];
      emitter_.EmitParts(emit_lanes_, p0.first, p0.last, stretch, stretch_s);
      emit_lanes_.clear();
      if (full_) JoinGroupOps(r, t0, p0.first, p0.last, c.ids);
      const TimedOp* ep = p0.ep >= 0 ? &t0.ops[p0.ep] : nullptr;
      c.ep_s = ep && !ep->transfer ? ep->duration.seconds() : 0;
      if (++c.part < parts0.size()) return;
      for (int l = 0; l < lanes; ++l) c.exit[l] = c.ids[l][t0.HandoffOrExit()];
    }
    for (int l = 0; l < lanes; ++l) c.entry[l] = {c.exit[l]};
    c.part = 0;
    ++c.item;
  };
  while (!halves[0].done() || !halves[1].done()) {
    for (int h = 0; h < 2; ++h) {
      if (halves[h].done()) continue;
      // This part runs beside the other half's all-to-all, if its last
      // part ended with one.
      const double beside = stretch > 1 ? halves[1 - h].ep_s : 0;
      emit_part(halves[h], beside);
      halves[1 - h].ep_s = 0;
    }
  }
  end.forward = NewBundle(halves[0].exit);
  end.backward = NewBundle(halves[1].exit);
  TimedOp both;
  both.name = "ep overlap join";
  both.category = "marker";
  std::vector<OpId> marks(lanes);
  for (int l = 0; l < lanes; ++l) {
    const OpId deps[] = {halves[0].exit[l], halves[1].exit[l]};
    marks[l] = emitter_.EmitOne(lane(r, l).streams, both, deps);
  }
  end.both = NewBundle(marks);
  return end;
}

// DeepEP / HybridEP hold their SMs while they run: compute beside them
// runs on the rest (calibration::CostModel's SM-sharing rule).
double StepBuilder::DispatcherStretch() const {
  const int sm_count = platform_.costs->peaks().sm_count;
  const int held = models::TraitsOf(s_.training.dispatcher).sms_held;
  return held > 0 && sm_count > held
             ? static_cast<double>(sm_count) / (sm_count - held)
             : 1.0;
}

StepBuilder::Bundle StepBuilder::EmitForward(int r,
                                             const models::ScheduleStep& step,
                                             std::span<const OpId> entry) {
  const int n = ItemCount(r, step.chunk);
  LaneDeps deps = DepsOf(entry);
  if (n == 0) return EmptyOnLanes(r, deps);
  Stage& st = stages_[r];
  const Chunk& chunk = st.chunks[step.chunk];
  // Parameters all-gathered: with overlap_param_gather at the first
  // micro-batch only (the weights then stay whole), with Megatron-FSDP's
  // sharded weights at every one.
  const bool gather = step.microbatch == 0 || s_.training.shard_params;
  // The ops whose finish starts the forward of the last bucket's first item;
  // the first bucket's gather waits for the host to dispatch it.
  LaneDeps previous_bucket_entry(lanes_per_stage_);
  for (int l = 0; l < lanes_per_stage_; ++l) {
    previous_bucket_entry[l].push_back(lane(r, l).step_host);
  }
  std::vector<Bundle> copied(n, -1);  // activation copies to the host
  // Fine-grained offloading: the item kept on the GPU, if any, and the
  // copies down for this forward's backward.
  int kept = -1;
  bool fine_any = false;
  for (int i = 0; i < n; ++i) {
    if (chunk.fine[i].d2h > Time::Zero()) {
      kept = i;
      fine_any = true;
    }
  }
  if (kept >= 0 &&
      !st.keep_last[step.microbatch * s_.parallel.vpp + step.chunk]) {
    kept = -1;
  }
  std::vector<Bundle> fine(fine_any ? n : 0, -1);
  std::vector<OpId> exits;
  for (int i = 0; i < n; ++i) {
    if (gather) {
      // The first bucket's at the start, each next one when the forward
      // starts using the previous.
      for (const int b : chunk.buckets_of_item[i]) {
        const Bundle gathered = AddOnLanes(r, ParamGather(st, chunk.buckets[b]),
                                           previous_bucket_entry);
        for (int l = 0; l < lanes_per_stage_; ++l) {
          deps[l].push_back(At(gathered, l));
        }
      }
    }
    if (gather && !chunk.buckets_of_item[i].empty()) {
      previous_bucket_entry = deps;
    }
    // cpu_offloading: the forward waits for the copies due by this layer
    // and starts the next copy when it ends (PlanOffload).
    for (const int j : chunk.offloads_due_at[i]) {
      for (int l = 0; l < lanes_per_stage_; ++l)
        deps[l].push_back(At(copied[j], l));
    }
    exits = InstantiateItem(r, step.chunk, i, step.kind, deps);
    for (int l = 0; l < lanes_per_stage_; ++l) deps[l] = {exits[l]};
    for (const int j : chunk.offloads_start_after[i]) {
      copied[j] = AddOnLanes(
          r, CopyOp("offload activations d2h", chunk.offload[j].d2h), deps);
    }
    if (chunk.fine[i].d2h > Time::Zero() && i != kept) {
      fine[i] = AddOnLanes(
          r, CopyOp("offload activation groups d2h", chunk.fine[i].d2h), deps);
    }
  }
  if (fine_any) st.offloaded[{step.microbatch, step.chunk}] = std::move(fine);
  return NewBundle(exits);
}

StepBuilder::Bundle StepBuilder::EmitBackward(int r,
                                              const models::ScheduleStep& step,
                                              std::span<const OpId> entry) {
  const int n = ItemCount(r, step.chunk);
  LaneDeps deps = DepsOf(entry);
  if (n == 0) return EmptyOnLanes(r, deps);
  Stage& st = stages_[r];
  const Chunk& chunk = st.chunks[step.chunk];
  const bool last = step.microbatch == microbatches_ - 1;
  const models::TrainingOptions& tr = s_.training;
  // Megatron-FSDP gathers each layer's weights again for its backward,
  // prefetched when the backward of the layer after it starts.
  LaneDeps previous_entry = deps;
  std::vector<Bundle> reloaded(n, -1);        // activation groups back
  std::vector<Bundle> layer_reloaded(n, -1);  // cpu_offloading's layers back
  // Fine-grained offloading: this forward's copies down, reloaded one item
  // ahead; the last one from the previous backward's start of its first
  // item (or this backward's entry).
  std::vector<Bundle> fine;
  if (auto it = st.offloaded.find({step.microbatch, step.chunk});
      it != st.offloaded.end()) {
    fine = std::move(it->second);
    st.offloaded.erase(it);
  }
  auto reload = [&](int j, const LaneDeps& from) {
    LaneDeps after = from;
    for (int l = 0; l < lanes_per_stage_; ++l)
      after[l].push_back(At(fine[j], l));
    reloaded[j] = AddOnLanes(r,
                             CopyOp("reload activation groups h2d",
                                    chunk.fine[j].h2d, StreamKind::kCopyH2d),
                             after);
  };
  for (int i = static_cast<int>(fine.size()); i-- > 0;) {
    if (fine[i] < 0) continue;
    reload(i, st.pre_reload.empty() ? deps : st.pre_reload);
    break;
  }
  std::vector<OpId> exits;
  for (int i = n; i-- > 0;) {
    for (const int j : chunk.reloads_start_at[i]) {
      layer_reloaded[j] =
          AddOnLanes(r,
                     CopyOp("reload activations h2d", chunk.offload[j].h2d,
                            StreamKind::kCopyH2d),
                     deps);
    }
    if (i > 0 && i - 1 < static_cast<int>(fine.size()) && fine[i - 1] >= 0 &&
        reloaded[i - 1] < 0) {
      reload(i - 1, deps);
    }
    if (i == 0 && tr.activation_offload.any()) st.pre_reload = deps;
    LaneDeps item_deps = deps;
    if (tr.shard_params) {
      for (const Bucket& bucket : chunk.buckets) {
        if (bucket.last_item != i) continue;
        const Bundle gathered =
            AddOnLanes(r, ParamGather(st, bucket), previous_entry);
        for (int l = 0; l < lanes_per_stage_; ++l)
          item_deps[l].push_back(At(gathered, l));
      }
    }
    if (reloaded[i] >= 0) {
      for (int l = 0; l < lanes_per_stage_; ++l)
        item_deps[l].push_back(At(reloaded[i], l));
    }
    for (const int j : chunk.reloads_due_at[i]) {
      for (int l = 0; l < lanes_per_stage_; ++l)
        item_deps[l].push_back(At(layer_reloaded[j], l));
    }
    previous_entry = deps;
    exits = InstantiateItem(r, step.chunk, i, step.kind, item_deps);
    for (int l = 0; l < lanes_per_stage_; ++l) deps[l] = {exits[l]};
    // Gradients reduce-scattered: with overlap_grad_reduce after the last
    // micro-batch's backward, with Megatron-FSDP's sharded gradients after
    // every one, bucket by bucket (the bucket whose backward-order last
    // item this was). A split backward's gradients are whole after its
    // weight-gradient step (EmitWeightGrad).
    if ((last || tr.shard_grads) && step.kind == models::StepKind::kBackward)
      ReduceScatterBuckets(r, chunk, i, deps);
  }
  return NewBundle(exits);
}

void StepBuilder::ReduceScatterBuckets(int r, const Chunk& chunk, int i,
                                       const LaneDeps& deps) {
  const models::TrainingOptions& tr = s_.training;
  for (const Bucket& bucket : chunk.buckets) {
    if (bucket.first_item != i) continue;
    const TimedOp rs = CollectiveOp(
        stages_[r].variants[0].rank, bucket.expert ? Group::kEdp : Group::kDp,
        Collective::kReduceScatter,
        bucket.params * static_cast<double>(tr.main_grad_bytes),
        StreamKind::kDp, "grad reduce-scatter");
    const Bundle done = AddOnLanes(r, rs, deps);
    for (int l = 0; l < lanes_per_stage_; ++l) {
      lane(r, l).reduce_scatters.push_back(At(done, l));
    }
  }
}

StepBuilder::Bundle StepBuilder::EmitWeightGrad(
    int r, const models::ScheduleStep& step, std::span<const OpId> entry) {
  const int n = ItemCount(r, step.chunk);
  LaneDeps deps = DepsOf(entry);
  if (n == 0) return EmptyOnLanes(r, deps);
  // The gradients are whole once the last micro-batch's weight gradients
  // ran (with Megatron-FSDP's sharded gradients, every micro-batch's).
  const bool reduce =
      step.microbatch == microbatches_ - 1 || s_.training.shard_grads;
  std::vector<OpId> exits;
  for (int i = n; i-- > 0;) {
    exits = InstantiateItem(r, step.chunk, i, step.kind, deps);
    for (int l = 0; l < lanes_per_stage_; ++l) deps[l] = {exits[l]};
    if (reduce) ReduceScatterBuckets(r, stages_[r].chunks[step.chunk], i, deps);
  }
  return NewBundle(exits);
}

}  // namespace moesim::sim::internal
