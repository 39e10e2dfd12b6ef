#include "sim/step_builder.h"

#include <algorithm>
#include <map>

#include "models/dispatchers.h"
#include "models/memory.h"
#include "models/pipeline_schedules.h"
#include "util/check.h"

namespace moesim::sim::internal {

namespace {

using models::Group;
using topology::Collective;
using topology::GroupKind;

// Megatron DDP's bucket size when --ddp-bucket-size is unset
// (distributed_data_parallel.py): max(40M, 1M x data-parallel size)
// parameters.
int64_t BucketParams(int dp_size) {
  return std::max<int64_t>(40'000'000, int64_t{1'000'000} * dp_size);
}

GroupKind KindOf(Group group) {
  switch (group) {
    case Group::kTp:
      return GroupKind::kTp;
    case Group::kCp:
      return GroupKind::kCp;
    case Group::kEp:
      return GroupKind::kEp;
    case Group::kEtp:
      return GroupKind::kEtp;
    case Group::kDp:
      return GroupKind::kDpCp;  // dense gradients: DP x CP
    case Group::kEdp:
      return GroupKind::kEdp;
    case Group::kPp:
      return GroupKind::kPp;
  }
  return GroupKind::kTp;
}

// The slowest hop of the CP ring: a pair of consecutive members in different
// NVLink domains when the ring leaves one, else the first pair.
std::vector<int> CpHop(const std::vector<int>& ring,
                       const topology::Cluster& cluster) {
  if (ring.size() < 2) return ring;
  for (size_t i = 0; i < ring.size(); ++i) {
    const int a = ring[i], b = ring[(i + 1) % ring.size()];
    if (cluster.DomainOf(a) != cluster.DomainOf(b)) return {a, b};
  }
  return {ring[0], ring[1]};
}

// Engine ops one instance of a template adds: its ops and the host
// launches in front of each segment (at most two).
size_t InstanceOps(const OpTemplate& t, const std::vector<HostSegment>& host) {
  if (t.ops.empty()) return 1;
  size_t n = t.ops.size();
  for (const HostSegment& seg : host) n += seg.rest_launch_s > 0 ? 2 : 1;
  return n;
}

}  // namespace

StepBuilder::StepBuilder(const scenarios::ResolvedScenario& s,
                         const Platform& platform,
                         const topology::Placement& placement,
                         const ReplayOptions& options,
                         std::vector<std::vector<int>> lane_ranks,
                         std::vector<double> slowdown)
    : s_(s),
      platform_(platform),
      placement_(placement),
      options_(options),
      full_(options.full),
      lane_ranks_(std::move(lane_ranks)),
      slowdown_(std::move(slowdown)) {
  lanes_per_stage_ = static_cast<int>(lane_ranks_.front().size());
  stages_.resize(lane_ranks_.size());
  for (size_t r = 0; r < lane_ranks_.size(); ++r) {
    CheckOrDie(static_cast<int>(lane_ranks_[r].size()) == lanes_per_stage_,
               "StepBuilder: every stage has as many lanes");
    for (const int rank : lane_ranks_[r]) {
      Lane ln;
      ln.rank = rank;
      ln.gpu = placement_.Gpu(rank);
      ln.stage = static_cast<int>(r);
      const std::string prefix = full_ ? "stage" + std::to_string(r) + ".rank" +
                                             std::to_string(rank) + "/"
                                       : "stage" + std::to_string(r) + "/";
      const models::TrainingOptions& tr = s.training;
      const bool offloads = tr.cpu_offloading || tr.activation_offload.any() ||
                            tr.offload_optimizer_states;
      for (int k = 0; k < kNumStreamKinds; ++k) {
        if (static_cast<StreamKind>(k) == StreamKind::kCopyH2d && !offloads) {
          ln.streams[k] = -1;  // no reloads: no stream
          continue;
        }
        ln.streams[k] =
            engine_.Stream(prefix + StreamKindName(static_cast<StreamKind>(k)));
      }
      if (full_ && options.network == NetworkKind::kFlow) {
        for (int g = 0; g < kNumGroups; ++g) {
          if (static_cast<Group>(g) == Group::kPp) continue;
          ln.groups[g] = placement_.Group(KindOf(static_cast<Group>(g)), rank);
        }
      }
      lanes_.push_back(std::move(ln));
    }
  }
  class_s_.assign(lanes_.size(), {});
  ids_.resize(lanes_per_stage_);
}

RankContext StepBuilder::BaseContext(int rank) const {
  const models::Parallelism& par = s_.parallel;
  RankContext ctx;
  ctx.costs = platform_.costs.get();
  ctx.network = &platform_.network;
  ctx.cluster = platform_.cluster.get();
  ctx.flow_network = options_.network == NetworkKind::kFlow;
  ctx.merge_ring_steps = options_.merge_ring_steps && !options_.trace &&
                         !ctx.flow_network && !s_.training.ep_overlap;
  for (int g = 0; g < kNumGroups; ++g) {
    ctx.groups[g] = placement_.Group(KindOf(static_cast<Group>(g)), rank);
    ctx.shapes[g] = topology::ShapeOf(ctx.groups[g], *platform_.cluster);
  }
  const std::vector<int>& cp_group = ctx.groups[static_cast<int>(Group::kCp)];
  ctx.cp_hop = CpHop(cp_group, *platform_.cluster);
  ctx.cp_comm_type = s_.training.cp_comm_type;
  if (ctx.cp_comm_type == models::CpCommType::kA2aP2p &&
      !s_.training.hierarchical_cp_sizes.empty()) {
    // Inner a2a group: the first sizes[0] CP members (the fastest-varying
    // CP index, as Megatron builds hierarchical CP groups); the outer ring
    // links every inner-th member.
    const size_t inner = s_.training.hierarchical_cp_sizes.front();
    ctx.cp_inner.assign(cp_group.begin(),
                        cp_group.begin() + std::min(inner, cp_group.size()));
    ctx.cp_inner_shape = topology::ShapeOf(ctx.cp_inner, *platform_.cluster);
    std::vector<int> outer;
    for (size_t i = 0; i < cp_group.size(); i += inner) {
      outer.push_back(cp_group[i]);
    }
    ctx.cp_outer_hop = CpHop(outer, *platform_.cluster);
  }
  ctx.training_dtype = TrainingDtype(s_.training.precision);
  ctx.attention_dtype = AttentionDtype(s_.training);
  ctx.launch_s = launch_s_;
  ctx.te_module_s = te_module_s_;
  ctx.kernel_launch_s = kernel_launch_s_;
  ctx.autograd_node_s = autograd_node_s_;
  ctx.local_experts =
      s_.model.num_moe_experts() > 0 ? s_.model.num_moe_experts() / par.ep : 1;
  if (s_.training.routing == models::Routing::kDroplessNatural) {
    ctx.moe_imbalance = models::RoutingImbalance(
        s_.model.num_moe_experts(), par.ep, s_.training.routing_skew,
        s_.training.routing_histogram);
  }
  ctx.expert_load = ctx.moe_imbalance;
  ctx.fp8_current_scaling =
      s_.training.precision == models::Precision::kFp8CurrentScaling;
  ctx.graph_launch_s = graph_launch_s_;
  const models::CudaGraph& g = s_.training.cuda_graph;
  const bool layer = g.local_transformer_layer || g.full_iteration;
  using models::GraphScope;
  ctx.graphed[static_cast<int>(GraphScope::kNone)] = g.full_iteration;
  ctx.graphed[static_cast<int>(GraphScope::kAttn)] = g.attn || layer;
  ctx.graphed[static_cast<int>(GraphScope::kMlp)] = g.mlp || layer;
  ctx.graphed[static_cast<int>(GraphScope::kMoeRouter)] =
      g.moe_router || g.moe || layer;
  ctx.graphed[static_cast<int>(GraphScope::kMoePreprocess)] =
      g.moe_preprocess || g.moe || layer;
  ctx.graphed[static_cast<int>(GraphScope::kMoe)] = g.moe || layer;
  ctx.dispatcher = s_.training.dispatcher;
  ctx.ep = par.ep;
  ctx.static_token_counts =
      s_.training.routing == models::Routing::kTokenDrop &&
      s_.training.moe_pad_expert_input_to_capacity;
  ctx.shared_expert_overlap = s_.training.shared_expert_overlap && par.ep > 1;
  return ctx;
}

util::Result<StepBuilder::Item> StepBuilder::PriceItem(
    const models::LayerOps& ops, const RankContext& rank) {
  Item item;
  auto forward = PriceOps(ops.forward, rank);
  if (!forward) return std::unexpected(forward.error());
  if (const std::optional<RingBalance>& ring = forward->ring; ring) {
    auto ratio = [](const RingBalance& r) { return r.hop_s / r.tile_s; };
    if (!cp_ring_ || ratio(*ring) > ratio(*cp_ring_)) cp_ring_ = ring;
  }
  std::vector<models::LayerOp> backward = ops.recompute;
  for (models::LayerOp& op : backward) op.name = "recompute " + op.name;
  backward.insert(backward.end(), ops.backward.begin(), ops.backward.end());
  auto priced = PriceOps(backward, rank);
  if (!priced) return std::unexpected(priced.error());
  item.forward = std::move(*forward);
  std::optional<OpTemplate> priced_backward;
  if (s_.training.ep_overlap && s_.training.delay_wgrad_compute)
    priced_backward = *priced;
  if (models::TraitsOf(s_.training.pipeline_schedule).splits_backward) {
    SplitBackward split = SplitWeightGradients(*priced);
    item.input_grad = std::move(split.input);
    item.weight_grad = std::move(split.weight);
    Prepare(item.input_grad, item.input_grad_classes, item.input_grad_host,
            rank);
    Prepare(item.weight_grad, item.weight_grad_classes, item.weight_grad_host,
            rank);
  }
  item.backward = std::move(*priced);
  Prepare(item.forward, item.forward_classes, item.forward_host, rank);
  Prepare(item.backward, item.backward_classes, item.backward_host, rank);
  if (s_.training.ep_overlap) {
    item.forward_parts = SplitAtEpComm(item.forward, rank);
    if (s_.training.delay_wgrad_compute) {
      // Only the merged schedule defers: Megatron's warm-up and cool-down
      // passes (and this replay's) run each layer's backward whole.
      auto deferred = DeferWeightGradients(*priced_backward);
      // The weight gradients moved after an exchange run beside it: on the
      // SMs DeepEP / HybridEP leave (as EmitPair stretches the other half's
      // compute; a flow-network transfer's length is not known here).
      const double stretch = DispatcherStretch();
      double window = 0;
      for (TimedOp& op : deferred.ops) {
        if (op.stream == StreamKind::kEp) {
          window = op.transfer || stretch <= 1 ? 0 : op.duration.seconds();
        } else if (op.deferred && window > 0) {
          op.duration = Time::FromSecondsCeil(
              StretchedSeconds(op.duration.seconds(), stretch, window));
        } else if (!op.deferred) {
          window = 0;
        }
      }
      ClassTimes unused;
      std::vector<HostSegment> host;
      Prepare(deferred, unused, host, rank);
      item.backward_parts = SplitAtEpComm(deferred, rank);
      item.paired_backward = std::move(deferred);
    } else {
      item.backward_parts = SplitAtEpComm(item.backward, rank);
    }
  }
  item.dense_params = ops.dense_params;
  item.expert_params = ops.expert_params;
  item.dense_tensors = ops.dense_tensors;
  item.expert_tensors = ops.expert_tensors;
  item.replicated_tensors = ops.replicated_tensors;
  return item;
}

util::Result<std::vector<std::vector<StepBuilder::Item>>>
StepBuilder::PriceItems(int r, const RankContext& rank) {
  const models::Parallelism& par = s_.parallel;
  const models::Recompute& rc = s_.training.recompute;
  const int64_t mtp_heads = s_.model.mtp_num_layers();
  std::vector<std::vector<Item>> out;
  std::vector<std::pair<models::LayerOps, Item>> priced;
  for (int c = 0; c < par.vpp; ++c) {
    const models::VirtualStage& vs = s_.pipeline.Stage(r, c);
    std::vector<Item> items;
    auto add = [&](const models::LayerOps& ops) -> util::Result<void> {
      // Layers of one kind have equal ops: priced once per stage.
      for (const auto& [seen, item] : priced) {
        if (seen == ops) {
          items.push_back(item);
          return {};
        }
      }
      auto item = PriceItem(ops, rank);
      if (!item) return std::unexpected(item.error());
      priced.emplace_back(ops, *item);
      items.push_back(std::move(*item));
      return {};
    };
    if (vs.embedding) {
      if (auto a = add(models::BuildEmbeddingOps(s_.model, par, s_.training));
          !a)
        return std::unexpected(a.error());
    }
    for (size_t i = 0; i < vs.layers.size(); ++i) {
      const bool full = rc.full && (!rc.full_block ||
                                    static_cast<int>(i) < rc.full_num_layers);
      if (auto a = add(models::BuildLayerOps(s_.model, vs.layers[i], false, par,
                                             s_.training, full));
          !a)
        return std::unexpected(a.error());
    }
    for (int64_t i = 0; i < vs.mtp_layers; ++i) {
      if (auto a = add(models::BuildLayerOps(s_.model, 0, true, par,
                                             s_.training, rc.full));
          !a)
        return std::unexpected(a.error());
    }
    if (vs.loss) {
      if (auto a = add(models::BuildOutputOps(s_.model, par, s_.training,
                                              1 + mtp_heads));
          !a)
        return std::unexpected(a.error());
    }
    out.push_back(std::move(items));
  }
  return out;
}

util::Result<void> StepBuilder::PriceStage(int r) {
  const models::Parallelism& par = s_.parallel;
  Stage& st = stages_[r];
  const RankContext base = BaseContext(lane(r, 0).rank);
  // Expert loads by EP rank: the symmetric replay prices every rank as the
  // busiest (base.expert_load); the full one gives each its own.
  std::vector<double> loads;
  if (full_ && s_.training.routing == models::Routing::kDroplessNatural) {
    loads = models::ExpertLoads(s_.model.num_moe_experts(), par.ep,
                                s_.training.routing_skew,
                                s_.training.routing_histogram);
  }
  std::map<std::pair<double, double>, int> variant_of;
  for (int l = 0; l < lanes_per_stage_; ++l) {
    Lane& ln = lane(r, l);
    double load = base.expert_load;
    if (!loads.empty()) {
      const std::vector<int> ep = placement_.Group(GroupKind::kEp, ln.rank);
      const auto at = std::find(ep.begin(), ep.end(), ln.rank) - ep.begin();
      load = loads[at];
    }
    const double slowdown = slowdown_.empty() ? 1.0 : slowdown_[ln.rank];
    auto [it, added] = variant_of.try_emplace(
        {load, slowdown}, static_cast<int>(st.variants.size()));
    ln.variant = it->second;
    if (!added) continue;
    Variant v;
    v.rank = base;
    v.rank.expert_load = load;
    v.rank.compute_slowdown = slowdown;
    auto items = PriceItems(r, v.rank);
    if (!items) return std::unexpected(items.error());
    v.items = std::move(*items);
    st.variants.push_back(std::move(v));
  }
  for (const std::vector<Item>& items : st.variants[0].items) {
    Chunk chunk;
    PlanBuckets(items, chunk);
    chunk.offload.assign(items.size(), {});
    chunk.offloads_start_after.assign(items.size(), {});
    chunk.offloads_due_at.assign(items.size(), {});
    chunk.reloads_start_at.assign(items.size(), {});
    chunk.reloads_due_at.assign(items.size(), {});
    chunk.fine.assign(items.size(), {});
    if (st.chunks.empty()) PlanOffload(r, chunk);
    PlanFineGrainedOffload(r, static_cast<int>(st.chunks.size()), chunk);
    st.chunks.push_back(std::move(chunk));
  }
  // PP sends: forward to the next stage, backward to the previous one.
  const int pp = par.pp;
  for (int l = 0; l < lanes_per_stage_; ++l) {
    for (const bool forward : {true, false}) {
      const int to = forward ? (r + 1) % pp : (r + pp - 1) % pp;
      const std::vector<int> pair = {lane(r, l).gpu, lane(to, l).gpu};
      TimedOp op =
          SendRecvOp(st.variants[0].rank, pair, p2p_bytes_, StreamKind::kPp,
                     forward ? "send activation" : "send gradient");
      op.name_id = engine_.Name(op.name);
      (forward ? st.send_next : st.send_previous).push_back(std::move(op));
    }
  }
  PlanStepHost(r);
  if (full_) PlanJoins(r);
  return {};
}

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
          placement_.Group(KindOf(static_cast<Group>(g)), lane(r, l).rank);
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

int StepBuilder::ClassId(const std::string& name) {
  for (size_t i = 0; i < class_names_.size(); ++i) {
    if (class_names_[i] == name) return static_cast<int>(i);
  }
  class_names_.push_back(name);
  for (auto& lane : class_s_) lane.push_back(0);
  return static_cast<int>(class_names_.size() - 1);
}

double StepBuilder::ClassSeconds(int lane, const std::string& name) const {
  for (size_t i = 0; i < class_names_.size(); ++i) {
    if (class_names_[i] == name) return class_s_[lane][i];
  }
  return 0;
}

void StepBuilder::Prepare(OpTemplate& t, ClassTimes& classes,
                          std::vector<HostSegment>& host,
                          const RankContext& rank) {
  for (const TimedOp& op : t.ops) {
    if (op.stream != StreamKind::kCompute) continue;
    const int id = ClassId(op.category);
    auto it = std::find_if(classes.begin(), classes.end(),
                           [id](const auto& c) { return c.first == id; });
    if (it == classes.end()) {
      classes.emplace_back(id, op.duration.seconds());
    } else {
      it->second += op.duration.seconds();
    }
  }
  if (!options_.trace) t = Coalesce(t);
  for (TimedOp& op : t.ops) op.name_id = engine_.Name(op.name);
  host = HostSegments(t, rank);
}

StepStreams StepBuilder::TakeStreams() {
  StepStreams out;
  out.streams.resize(engine_.stream_count());
  for (size_t i = 0; i < lanes_.size(); ++i) {
    for (int k = 0; k < kNumStreamKinds; ++k) {
      if (lanes_[i].streams[k] < 0) continue;
      out.streams[lanes_[i].streams[k]] = {static_cast<int32_t>(i),
                                           static_cast<StreamKind>(k)};
    }
    std::map<std::string, double> classes;
    for (size_t c = 0; c < class_names_.size(); ++c) {
      if (class_s_[i][c] > 0) classes[class_names_[c]] = class_s_[i][c];
    }
    out.class_s.push_back(std::move(classes));
  }
  return out;
}

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

StepBuilder::Bundle StepBuilder::EmitForward(int r,
                                             const models::ScheduleStep& step,
                                             std::span<const OpId> entry) {
  Stage& st = stages_[r];
  const Chunk& chunk = st.chunks[step.chunk];
  const int n = static_cast<int>(st.variants[0].items[step.chunk].size());
  LaneDeps deps = DepsOf(entry);
  if (n == 0) return EmptyOnLanes(r, deps);
  std::vector<OpId> exits(lanes_per_stage_);
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
  Stage& st = stages_[r];
  const Chunk& chunk = st.chunks[step.chunk];
  const int n = static_cast<int>(st.variants[0].items[step.chunk].size());
  LaneDeps deps = DepsOf(entry);
  if (n == 0) return EmptyOnLanes(r, deps);
  std::vector<OpId> exits(lanes_per_stage_);
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
  const Stage& st = stages_[r];
  const Chunk& chunk = st.chunks[step.chunk];
  const int n = static_cast<int>(st.variants[0].items[step.chunk].size());
  LaneDeps deps = DepsOf(entry);
  if (n == 0) return EmptyOnLanes(r, deps);
  std::vector<OpId> exits(lanes_per_stage_);
  const bool last = step.microbatch == microbatches_ - 1;
  for (int i = n; i-- > 0;) {
    exits = InstantiateItem(r, step.chunk, i, step.kind, deps);
    for (int l = 0; l < lanes_per_stage_; ++l) deps[l] = {exits[l]};
    if (last || s_.training.shard_grads)
      ReduceScatterBuckets(r, chunk, i, deps);
  }
  return NewBundle(exits);
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

util::Result<void> StepBuilder::Price() {
  const models::Parallelism& par = s_.parallel;
  // Host launch costs (calibration/tables/<gpu>/host.csv).
  const calibration::CostModel& costs = *platform_.costs;
  for (const auto& [quantity, seconds] :
       {std::pair{"torch_op_us", &launch_s_},
        std::pair{"te_module_us", &te_module_s_},
        std::pair{"kernel_launch_us", &kernel_launch_s_},
        std::pair{"autograd_node_us", &autograd_node_s_},
        std::pair{"graph_launch_us", &graph_launch_s_}}) {
    auto us = costs.Host(quantity);
    if (!us) {
      return util::Fail("calibration/tables/" + costs.tables().gpu +
                        "/host.csv: no " + quantity + " row");
    }
    *seconds = *us * 1e-6;
  }
  // The Python-side calls (eager ops, TE module calls, autograd nodes) cost
  // python_call_factor x their isolated microbenchmark figures inside the
  // training step; raw driver launches and graph launches do not.
  const auto factor = costs.Host("python_call_factor");
  if (!factor) {
    return util::Fail("calibration/tables/" + costs.tables().gpu +
                      "/host.csv: no python_call_factor row");
  }
  launch_s_ *= *factor;
  te_module_s_ *= *factor;
  autograd_node_s_ *= *factor;
  microbatches_ = s_.training.num_microbatches();
  p2p_sync_ = par.pp > 1 && par.vpp == 1 && s_.training.batch_p2p_sync;
  // Megatron's p2p tensor: (seq / cp [/ tp with sequence parallel], mbs, h).
  const int64_t seq_local =
      s_.training.seq_length / par.cp / (par.sequence_parallel ? par.tp : 1);
  p2p_bytes_ =
      2.0 * seq_local * s_.training.micro_batch_size * s_.model.hidden_size();
  for (int r = 0; r < par.pp; ++r) {
    if (auto p = PriceStage(r); !p) return p;
  }
  // Every lane instantiates its variant's templates once per micro-batch,
  // plus a send per step.
  size_t ops = 0;
  for (int r = 0; r < par.pp; ++r) {
    size_t stage_ops = 0;
    // Megatron-FSDP (two gathers and a reduction) and activation-offload
    // copies (two) per item and micro-batch, at most.
    const models::TrainingOptions& tr = s_.training;
    const size_t hooks =
        (tr.shard_params || tr.shard_grads ? 3 : 0) +
        (tr.cpu_offloading || tr.activation_offload.any() ? 2 : 0);
    for (const std::vector<Item>& items : stages_[r].variants[0].items) {
      for (const Item& item : items) {
        stage_ops += InstanceOps(item.forward, item.forward_host) +
                     InstanceOps(item.backward, item.backward_host) + hooks;
      }
    }
    ops += stage_ops * lanes_per_stage_;
  }
  ops_per_microbatch_ = ops + 2 * par.vpp * par.pp * lanes_per_stage_;
  return {};
}

size_t StepBuilder::EstimatedOps(int64_t microbatches) const {
  return ops_per_microbatch_ *
         static_cast<size_t>(microbatches > 0 ? microbatches : microbatches_);
}

void StepBuilder::ResetEmission() {
  engine_.ClearOps();
  spans_.clear();
  bundles_.clear();
  for (std::vector<double>& lane : class_s_) {
    std::fill(lane.begin(), lane.end(), 0.0);
  }
  for (Lane& ln : lanes_) {
    ln.reduce_scatters.clear();
    ln.step_host = -1;
    ln.pending_send = -1;
  }
  for (Stage& st : stages_) {
    st.offloaded.clear();
    st.pre_reload.clear();
    st.keep_last.clear();
  }
}

void StepBuilder::Emit(int64_t microbatches) {
  const models::Parallelism& par = s_.parallel;
  if (emitted_) ResetEmission();
  emitted_ = true;
  // The step's own count, or a sample's: priced as the step's (above).
  const int64_t step_microbatches = s_.training.num_microbatches();
  microbatches_ = microbatches > 0 ? microbatches : step_microbatches;
  // Slack for what the estimate leaves out (DP buckets, the optimizer), so
  // that a large graph never reallocates.
  const size_t estimated = EstimatedOps();
  const size_t ops = estimated + estimated / 16 + lanes_.size() * 16;
  engine_.Reserve(ops, ops + ops / 2);
  PipelineCallbacks callbacks;
  callbacks.run = [this](int r, const models::ScheduleStep& step,
                         const std::vector<OpId>& entry) {
    const OpId emitted = static_cast<OpId>(engine_.op_count());
    // A weight-gradient step exchanges nothing: no p2p call, no sync.
    if (p2p_sync_ && step.sends()) HostSyncAtP2p(r, step, entry);
    const OpId begin = static_cast<OpId>(engine_.op_count());
    const Bundle exit = step.forward() ? EmitForward(r, step, entry)
                        : step.kind == models::StepKind::kWeightGrad
                            ? EmitWeightGrad(r, step, entry)
                            : EmitBackward(r, step, entry);
    const OpId end = static_cast<OpId>(engine_.op_count());
    spans_.push_back({r, step.forward(), step.chunk, begin, end, At(exit, 0),
                      emitted, end, step.kind});
    return exit;
  };
  // A send follows its step's emission at once (EmitPipeline): it extends
  // the last span (both halves of a merged pair).
  callbacks.send = [this](int r, int, const models::ScheduleStep& step,
                          Bundle done) {
    const Bundle sent = Send(r, step.forward(), done);
    const OpId end = static_cast<OpId>(engine_.op_count());
    for (auto it = spans_.rbegin(); it != spans_.rend() && it->stage == r &&
                                    it->begin == spans_.back().begin;
         ++it) {
      it->emitted_end = end;
    }
    return sent;
  };
  if (s_.training.ep_overlap) {
    callbacks.run_pair = [this](int r, const models::ScheduleStep& f,
                                const models::ScheduleStep& b,
                                const std::vector<OpId>& entry) {
      const OpId begin = static_cast<OpId>(engine_.op_count());
      const PipelineCallbacks::PairEnd end = EmitPair(r, f, b, entry);
      const OpId stop = static_cast<OpId>(engine_.op_count());
      spans_.push_back({r, true, f.chunk, begin, stop, At(end.forward, 0),
                        begin, stop, models::StepKind::kForward});
      spans_.push_back({r, false, b.chunk, begin, stop, At(end.backward, 0),
                        begin, stop, models::StepKind::kBackward});
      return end;
    };
  }
  // The previous step's closing sync leaves the GPU idle while the host
  // logs the loss, zeroes the grad buffers and dispatches the first param
  // gathers: the host stream starts with that work.
  for (int r = 0; r < par.pp; ++r) {
    for (int l = 0; l < lanes_per_stage_; ++l) {
      Lane& ln = lane(r, l);
      ln.step_host =
          emitter_.EmitOne(ln.streams, stages_[r].step_host_after, {});
    }
  }
  std::vector<OpId> chain(par.pp, -1);
  EmitPipeline(s_.training.pipeline_schedule, par.pp, par.vpp, microbatches_,
               chain, callbacks);
  for (int r = 0; r < par.pp; ++r) EmitOptimizer(r, chain[r]);
}

// The optimizer step on this GPU's shard after its last reduce-scatter:
// Adam (memory-bound: read master weight, grad, both moments; write them and
// the 16-bit weight) on the share kept on the GPU; the offloaded share moves
// its gradients to the host, runs CPU Adam, and copies weights back (no
// overlap of the three: the replay-fidelity issue adds it). A straggler's
// Adam kernel is slowed like its other kernels.
void StepBuilder::EmitOptimizer(int r, Bundle after) {
  Stage& st = stages_[r];
  const models::Parallelism& par = s_.parallel;
  const models::TrainingOptions& tr = s_.training;
  double shard = 0;
  for (const std::vector<Item>& items : st.variants[0].items) {
    for (const Item& item : items) {
      shard += static_cast<double>(item.dense_params) / (par.dp * par.cp) +
               static_cast<double>(item.expert_params) / par.edp;
    }
  }
  const double offload = tr.optimizer_offload_fraction;
  const double bytes_per_param = 2.0 * tr.main_param_bytes +
                                 tr.main_grad_bytes + 4.0 * tr.exp_avg_bytes +
                                 2;
  const calibration::CostModel& costs = *platform_.costs;
  const calibration::Tables& t = costs.tables();
  const double d2h = CopyRate("d2h"), h2d = CopyRate("h2d");
  const double cpu_params_s =
      t.cpu_adam.empty() ? 0 : t.cpu_adam.front().params_per_s;
  const double params = offload * shard;
  const double d2h_s = params * tr.main_grad_bytes / (d2h * 1e9);
  const double adam_s = params / cpu_params_s;
  const double h2d_s = params * 2.0 / (h2d * 1e9);
  size_t groups = 0;
  for (const std::vector<Item>& items : st.variants[0].items) {
    groups += items.size();
  }
  groups = std::max<size_t>(groups, 1);
  // --offload-optimizer-states: the optimizer state the memory model puts
  // in host memory (master weights and both moments of this GPU's shard).
  const double state_bytes =
      tr.offload_optimizer_states ? Memory().stages[r].optimizer_host_bytes : 0;
  const Time adam_time = Time::FromSecondsCeil(
      costs
          .MemoryBound("adam",
                       std::max(1.0, (1 - offload) * shard * bytes_per_param))
          .seconds);
  for (int l = 0; l < lanes_per_stage_; ++l) {
    Lane& ln = lane(r, l);
    const int index = LaneIndex(r, l);
    auto add = [&](const TimedOp& op, std::span<const OpId> deps) {
      class_s_[index][ClassId(op.category)] += op.duration.seconds();
      return emitter_.EmitOne(ln.streams, op, deps);
    };
    std::vector<OpId> deps = ln.reduce_scatters;
    deps.push_back(At(after, l));
    // The optimizer's kernels wait for the host to issue them, after the
    // last backward's launches (the host stream is FIFO) and the grad sync
    // and optimizer Python before them.
    deps.push_back(emitter_.EmitOne(ln.streams, st.step_host_before, {}));
    if (tr.offload_optimizer_states && state_bytes > 0) {
      // --offload-optimizer-states (OptimizerStateOffloader): the master
      // weights and moments come back before the step (reload on the h2d
      // stream once the step is issued, sync_before_step), and go down after
      // it (offload, overlapping the next step's start: replayed at this
      // step's start, where the previous step's copy runs).
      TimedOp up = CopyOp("reload optimizer states h2d",
                          Time::FromSecondsCeil(state_bytes / (h2d * 1e9)),
                          StreamKind::kCopyH2d);
      deps.push_back(emitter_.EmitOne(ln.streams, up, deps));
      TimedOp down = CopyOp("offload optimizer states d2h",
                            Time::FromSecondsCeil(state_bytes / (d2h * 1e9)));
      const OpId start[] = {ln.step_host};
      emitter_.EmitOne(ln.streams, down, start);
    }
    TimedOp adam;
    adam.name = "optimizer adam";
    adam.category = "optimizer";
    adam.duration = adam_time;
    const double slowdown = VariantOf(r, l).rank.compute_slowdown;
    if (slowdown != 1) {
      adam.duration = Time::FromSecondsCeil(adam_time.seconds() * slowdown);
    }
    OpId chain = add(adam, deps);
    if (offload <= 0) continue;
    auto host_op = [&](std::string name, double seconds) {
      TimedOp op;
      op.name = std::move(name);
      op.category = "optimizer";
      op.duration = Time::FromSecondsCeil(seconds);
      const OpId previous[] = {chain};
      chain = add(op, previous);
    };
    if (!tr.offload_overlap) {
      host_op("offload grads d2h", d2h_s);
      host_op("cpu adam", adam_s);
      host_op("offload params h2d", h2d_s);
      continue;
    }
    // --overlap-cpu-optimizer-d2h-h2d: Megatron's hybrid optimizer copies
    // each parameter group's gradients down, steps it on the CPU and copies
    // its weights up while the next group is in flight: a pipeline over the
    // stage's layers (one group each), so the slowest of the three sets the
    // pace and the first group's copy down and the last one's copy up stay
    // exposed.
    host_op("offload d2h / cpu adam / h2d (overlapped)",
            std::max({d2h_s, adam_s, h2d_s}) + (d2h_s + h2d_s) / groups);
  }
}

}  // namespace moesim::sim::internal
