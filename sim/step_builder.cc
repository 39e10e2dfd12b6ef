#include "sim/step_builder.h"

#include <algorithm>
#include <map>

#include "models/dispatchers.h"
#include "models/pipeline_schedules.h"
#include "util/check.h"

namespace moesim::sim::internal {

namespace {

using models::Group;
using topology::Collective;
using topology::GroupKind;

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

GroupKind GroupKindOf(Group group) {
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
          ln.groups[g] =
              placement_.Group(GroupKindOf(static_cast<Group>(g)), rank);
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
    ctx.groups[g] = placement_.Group(GroupKindOf(static_cast<Group>(g)), rank);
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

}  // namespace moesim::sim::internal
