// The step builder's plans (sim/step_builder.h): the host work around a
// step, the full-rank joins, the data-parallel buckets and the activation
// offload copies.
#include <algorithm>
#include <map>

#include "models/memory.h"
#include "sim/step_builder.h"
#include "util/check.h"

namespace moesim::sim::internal {

using models::Group;
using topology::Collective;
using topology::GroupKind;

namespace {

// Megatron DDP's bucket size when --ddp-bucket-size is unset
// (distributed_data_parallel.py): max(40M, 1M x data-parallel size)
// parameters.
int64_t BucketParams(int dp_size) {
  return std::max<int64_t>(40'000'000, int64_t{1'000'000} * dp_size);
}

}  // namespace

// The stage's per-step host calls (host_calls.h StepHostCallsOf) from its
// parameter tensors and DDP buckets, priced like the layers' calls.
void StepBuilder::PlanStepHost(int r) {
  const models::Parallelism& par = s_.parallel;
  const models::TrainingOptions& tr = s_.training;
  Stage& st = stages_[r];
  StepHostShape x;
  x.dense_dp = par.dp * par.cp;
  x.expert_dp = par.edp;
  int64_t dense_params = 0, expert_params = 0;
  for (const std::vector<Item>& items : st.variants[0].items) {
    for (const Item& item : items) {
      x.dense_tensors += item.dense_tensors;
      x.expert_tensors += item.expert_tensors;
      x.replicated_tensors += item.replicated_tensors;
      dense_params += item.dense_params;
      expert_params += item.expert_params;
    }
  }
  for (const Chunk& chunk : st.chunks) {
    for (const Bucket& b : chunk.buckets) {
      (b.expert ? x.expert_buckets : x.dense_buckets) += 1;
    }
  }
  // PlanBuckets makes none without data parallelism; Megatron's DDP still
  // has its buckets (their collectives span one rank).
  auto buckets = [](int64_t params, int dp) {
    return static_cast<int>((params + BucketParams(dp) - 1) / BucketParams(dp));
  };
  if (x.dense_dp <= 1) x.dense_buckets = buckets(dense_params, x.dense_dp);
  if (x.expert_dp <= 1) x.expert_buckets = buckets(expert_params, x.expert_dp);
  x.dense_shard_params = static_cast<double>(dense_params) / x.dense_dp;
  x.expert_shard_params = static_cast<double>(expert_params) / x.expert_dp;
  x.biased = s_.model.add_bias_linear();
  x.precision_aware = tr.precision_aware_optimizer;
  x.sp_norm_allreduce = par.tp > 1 && par.sequence_parallel;
  x.embedding_allreduce = par.pp > 1 && (r == 0 || r == par.pp - 1) &&
                          (!s_.model.untie_embeddings_and_output_weights() ||
                           s_.model.mtp_num_layers() > 0);
  x.last_stage = r == par.pp - 1;
  x.moe = s_.model.num_moe_experts() > 0;
  x.microbatches = microbatches_;
  const StepHostCalls calls = StepHostCallsOf(x);
  const HostCallCosts costs{launch_s_, te_module_s_, autograd_node_s_,
                            kernel_launch_s_};
  auto host_op = [&](const char* name, const HostCalls& c) {
    TimedOp op;
    op.stream = StreamKind::kHost;
    op.name = name;
    op.category = "host";
    op.duration = Time::FromSecondsCeil(HostSeconds(c, costs));
    return op;
  };
  st.step_host_before =
      host_op("step host: grad sync, optimizer step", calls.before_step);
  st.step_host_after =
      host_op("step host: loss log, zero grad, param gather", calls.after_sync);
}

// Groups of each kind: lanes whose placed group (of that kind) is the same
// share a slot; a group's members are consecutive in lanes_by_slot.
void StepBuilder::PlanJoins(int r) {
  Stage& st = stages_[r];
  for (int g = 0; g < kNumGroups; ++g) {
    if (static_cast<Group>(g) == Group::kPp) continue;
    std::map<int, int> slot_of;  // lowest member rank -> slot
    std::vector<std::vector<int>> by_slot;
    int size = 1;
    for (int l = 0; l < lanes_per_stage_; ++l) {
      const std::vector<int> members =
          placement_.Group(GroupKindOf(static_cast<Group>(g)), lane(r, l).rank);
      size = static_cast<int>(members.size());
      auto [it, added] = slot_of.try_emplace(members.front(),
                                             static_cast<int>(slot_of.size()));
      if (added) by_slot.emplace_back();
      by_slot[it->second].push_back(l);
    }
    st.group_size[g] = size;
    if (size <= 1) continue;
    for (const std::vector<int>& members : by_slot) {
      CheckOrDie(static_cast<int>(members.size()) == size,
                 "StepBuilder: a group's members span stages");
      st.lanes_by_slot[g].insert(st.lanes_by_slot[g].end(), members.begin(),
                                 members.end());
    }
  }
}

// Buckets fill in backward order (Megatron registers parameters so that
// buckets complete as the backward proceeds); dense and expert parameters
// have separate buffers.
void StepBuilder::PlanBuckets(const std::vector<Item>& items,
                              Chunk& chunk) const {
  const models::Parallelism& par = s_.parallel;
  const int n = static_cast<int>(items.size());
  chunk.buckets_of_item.assign(n, {});
  for (const bool expert : {false, true}) {
    const int dp = expert ? par.edp : par.dp * par.cp;
    if (dp <= 1) continue;
    // Megatron-FSDP gathers and reduces by unit, a transformer layer
    // (fsdp_unit_modules): one bucket per item.
    const bool fsdp = s_.training.shard_params || s_.training.shard_grads;
    const int64_t limit = fsdp ? 1 : BucketParams(dp);
    Bucket open{expert, 0, n - 1, n - 1};
    for (int i = n - 1; i >= 0; --i) {
      const int64_t p = expert ? items[i].expert_params : items[i].dense_params;
      if (p == 0) continue;
      if (open.params == 0) open.last_item = i;
      open.params += p;
      open.first_item = i;
      if (open.params >= limit || i == 0) {
        chunk.buckets.push_back(open);
        open = Bucket{expert, 0, i - 1, i - 1};
      }
    }
    if (open.params > 0) chunk.buckets.push_back(open);
  }
  for (size_t b = 0; b < chunk.buckets.size(); ++b) {
    chunk.buckets_of_item[chunk.buckets[b].first_item].push_back(
        static_cast<int>(b));
  }
}

std::vector<int> OffloadWindows(int layers, int offloaded) {
  std::vector<int> window(std::max(0, offloaded));
  if (offloaded <= 0) return window;
  const int per = layers / offloaded, extra = layers % offloaded;
  int constant = 0;
  for (int k = 0; k < offloaded; ++k) {
    window[k] = per * (k + 1) - 1;
    if (k < extra) {
      window[k] += k + 1;
      constant = k + 1;
    } else {
      window[k] += constant;
    }
  }
  return window;
}

double StepBuilder::CopyRate(const char* direction) const {
  double gb_s = 0;
  for (const auto& row : platform_.costs->tables().host_copy) {
    if (row.direction == direction) gb_s = std::max(gb_s, row.gb_s);
  }
  return gb_s;
}

// cpu_offloading (PP 1, so one chunk): the first cpu_offloading_num_layers
// layers' stored activations (the memory model's bytes) go to the host on
// the copy stream and come back on the reload stream, one layer at a time,
// at the points Transformer Engine's offload handler syncs the streams
// (TransformerEngine cpu_offload.py, AsyncDoubleBufferGroupOffloadHandler:
// get_cpu_offload_context as Megatron's transformer_block.py calls it with
// the model's layer count, before the handler was rewritten by TE PR 1762).
// Of L layers, N offloaded, layer k's window ends at layer
//   w(k) = floor(L/N) (k + 1) - 1, plus k + 1 for the first L mod N layers
//   (L mod N for the rest): layer_window_map.
// Forward (synchronize_on_group_commit_forward): layer 0's copy starts when
// layer 0 ends; when layer w(k) ends the compute waits for copy k and copy
// k + 1 starts. Backward (on_group_commit_backward): when layer w(k)'s
// backward starts, the compute waits for reload k + 1 and reload k starts;
// layer 0's backward waits for reload 0. So each copy hides behind the
// layers from the one it starts after to w(k), each reload behind w(k)'s
// backward down to w(k - 1)'s: one layer of 126 with 95 offloaded, two for
// the first 31; two layers of 80 with 40.
void StepBuilder::PlanOffload(int r, Chunk& chunk) {
  const models::TrainingOptions& tr = s_.training;
  if (!tr.cpu_offloading || tr.cpu_offloading_num_layers <= 0) return;
  const std::vector<double>& bytes = Memory().stages[r].offloaded_layer_bytes;
  const models::VirtualStage& vs = s_.pipeline.Stage(r, 0);
  const int first = vs.embedding ? 1 : 0;
  const int layers = static_cast<int>(vs.layers.size());
  const int n = static_cast<int>(chunk.offload.size());
  const int offloaded = static_cast<int>(bytes.size());
  const double d2h = CopyRate("d2h") * 1e9, h2d = CopyRate("h2d") * 1e9;
  CheckOrDie(d2h > 0 && h2d > 0, "StepBuilder: no host-copy rate");
  const std::vector<int> window = OffloadWindows(layers, offloaded);
  auto item = [&](int layer) { return std::min(n - 1, first + layer); };
  for (int k = 0; k < offloaded; ++k) {
    Chunk::Offload& o = chunk.offload[first + k];
    o.d2h = Time::FromSecondsCeil(bytes[k] / d2h);
    o.h2d = Time::FromSecondsCeil(bytes[k] / h2d);
    chunk.offloads_start_after[item(k == 0 ? 0 : window[k - 1])].push_back(
        first + k);
    chunk.offloads_due_at[item(window[k] + 1)].push_back(first + k);
    chunk.reloads_start_at[item(window[k])].push_back(first + k);
    chunk.reloads_due_at[item(k == 0 ? 0 : window[k - 1])].push_back(first + k);
  }
}

const models::MemoryEstimate& StepBuilder::Memory() {
  if (!memory_) {
    memory_ = models::EstimateMemory(s_.model, s_.pipeline, s_.parallel,
                                     s_.training, 0);
  }
  return *memory_;
}

// Fine-grained activation offloading (Megatron-LM@d98e8a64dd
// pipeline_parallel/fine_grained_activation_offload.py), at the replay's
// layer granularity: a layer's offload groups go to the host on the copy
// stream once its forward ends (on_group_commit_forward: d2h_stream waits
// for the compute stream; the forward itself never waits for a copy), and
// come back on the reload stream when the backward of the layer after it
// starts (bulk_reload, issued as the next group's backward ends, one layer
// ahead) after their own copy down (wait_offload_event); the layer's
// backward waits for them (on_group_commit_backward). A chunk's last
// offloaded layer is reloaded where the previous backward chunk started its
// first layer (pre_reload_last_layer), or kept on the GPU when its backward
// is the rank's next one (should_bulk_offload; post_warmup_callback's
// margin for the first). Under EP overlap the merged forward-backward steps
// are replayed without these copies (the memory saving stays).
void StepBuilder::PlanFineGrainedOffload(int r, int c, Chunk& chunk) {
  const models::TrainingOptions& tr = s_.training;
  if (!tr.activation_offload.any() || tr.ep_overlap) return;
  const std::vector<std::vector<double>>& per_chunk =
      Memory().stages[r].offload_layer_copy_bytes;
  if (c >= static_cast<int>(per_chunk.size())) return;
  const models::VirtualStage& vs = s_.pipeline.Stage(r, c);
  const size_t first = vs.embedding ? 1 : 0;
  const double d2h = CopyRate("d2h") * 1e9, h2d = CopyRate("h2d") * 1e9;
  CheckOrDie(d2h > 0 && h2d > 0, "StepBuilder: no host-copy rate");
  for (size_t p = 0; p < per_chunk[c].size(); ++p) {
    if (first + p >= chunk.fine.size() || per_chunk[c][p] <= 0) continue;
    chunk.fine[first + p] = {Time::FromSecondsCeil(per_chunk[c][p] / d2h),
                             Time::FromSecondsCeil(per_chunk[c][p] / h2d)};
  }
  Stage& st = stages_[r];
  if (!st.keep_last.empty()) return;
  const models::Parallelism& par = s_.parallel;
  const models::OneFOneBSchedule schedule(r, par.pp, par.vpp, microbatches_);
  st.keep_last.assign(static_cast<size_t>(microbatches_) * par.vpp, 0);
  const int64_t total = microbatches_ * par.vpp;
  for (int64_t k = 0; k < total; ++k) {
    const models::ScheduleStep f = schedule.Forward(k);
    const models::ScheduleStep next =
        schedule.Backward(std::max<int64_t>(0, k - schedule.warmup()));
    if (f.microbatch == next.microbatch && f.chunk == next.chunk)
      st.keep_last[f.microbatch * par.vpp + f.chunk] = 1;
  }
}

}  // namespace moesim::sim::internal
