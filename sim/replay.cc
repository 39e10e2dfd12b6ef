#include "sim/replay.h"

#include <algorithm>
#include <span>

#include "models/architecture.h"
#include "models/flops.h"
#include "models/layer_ops.h"
#include "models/memory.h"
#include "models/params.h"
#include "models/pipeline.h"
#include "sim/engine.h"
#include "sim/pipeline_schedule.h"
#include "sim/step_stats.h"
#include "sim/template_emitter.h"
#include "util/check.h"

namespace moesim::sim {

namespace {

using models::Group;
using topology::Collective;
using topology::GroupKind;

constexpr const char* kRankOrder = "tp-cp-ep-dp-pp";  // Megatron's default

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

// One unit of a virtual stage's forward order: the embedding, a decoder or
// MTP layer, or the output layer and loss; priced for one stage.
// Compute seconds of a template by op class (index into the builder's class
// names), counted once per instantiation.
using ClassTimes = std::vector<std::pair<int, double>>;

struct Item {
  OpTemplate forward, backward;
  ClassTimes forward_classes, backward_classes;
  std::vector<HostSegment> forward_host, backward_host;
  // With EP overlap: the parts between EP communication ops.
  std::vector<TemplatePart> forward_parts, backward_parts;
  int64_t dense_params = 0, expert_params = 0;
};

struct Bucket {
  bool expert = false;
  int64_t params = 0;
  int first_item = 0;  // forward order
  int last_item = 0;   // forward order; the bucket is full when the backward
                       // reaches its first item
  OpId all_gather = -1;
};

struct Chunk {
  std::vector<Item> items;
  std::vector<Bucket> buckets;
  std::vector<std::vector<int>> buckets_of_item;  // item -> buckets
};

struct Stage {
  int gpu = 0;  // the representative rank's GPU
  RankContext rank;
  StageStreams streams{};
  std::vector<Chunk> chunks;
  std::vector<OpId> reduce_scatters;
};

class StepBuilder {
 public:
  StepBuilder(const scenarios::ResolvedScenario& s, const Platform& platform,
              const topology::Placement& placement,
              const ReplayOptions& options)
      : s_(s), platform_(platform), placement_(placement), options_(options) {}

  util::Result<void> Build();
  Engine& engine() { return engine_; }
  StepStreams TakeStreams();
  const std::vector<StepSpan>& spans() const { return spans_; }
  const StageStreams& streams(int r) const { return stages_[r].streams; }
  int num_stages() const { return static_cast<int>(stages_.size()); }

 private:
  util::Result<void> BuildStage(int r);
  util::Result<Item> PriceItem(const models::LayerOps& ops, const Stage& st);
  void PlanBuckets(Chunk& chunk) const;
  // Instantiates `t`; returns {first op, exit op}.
  std::pair<OpId, OpId> Instantiate(int r, const OpTemplate& t,
                                    const ClassTimes& classes,
                                    const std::vector<HostSegment>& host,
                                    const std::vector<OpId>& entry);
  // Adds `op` outside any template; a compute op counts in its class here.
  OpId AddOp(int r, const TimedOp& op, std::span<const OpId> deps);
  OpId AddOp(int r, const TimedOp& op, std::initializer_list<OpId> deps) {
    return AddOp(r, op, std::span<const OpId>(deps.begin(), deps.size()));
  }
  // Interns names and categories; without a trace, merges runs of serial
  // compute ops (Coalesce) after taking the class times.
  void Prepare(OpTemplate& t, ClassTimes& classes,
               std::vector<HostSegment>& host, const RankContext& rank);
  int ClassId(const std::string& name);
  OpId EmitForward(int r, const models::ScheduleStep& step,
                   std::vector<OpId> entry);
  OpId EmitBackward(int r, const models::ScheduleStep& step,
                    std::vector<OpId> entry);
  // EP overlap: a steady-state forward and backward interleaved part by
  // part, each one's EP communication beside the other's compute.
  PipelineCallbacks::PairEnd EmitPair(int r, const models::ScheduleStep& f,
                                      const models::ScheduleStep& b,
                                      const std::vector<OpId>& entry);
  void EmitOptimizer(int r, OpId after);
  OpId Send(int from, int to, bool forward, OpId after);

  const scenarios::ResolvedScenario& s_;
  const Platform& platform_;
  const topology::Placement& placement_;
  const ReplayOptions& options_;
  Engine engine_;
  std::vector<StepSpan> spans_;
  std::vector<std::string> class_names_;
  std::vector<std::vector<double>> class_s_;  // [stage][class]
  TemplateEmitter emitter_{engine_, options_.trace};
  std::vector<Stage> stages_;
  int64_t microbatches_ = 0;
  double p2p_bytes_ = 0;
  double launch_s_ = 0, kernel_launch_s_ = 0, graph_launch_s_ = 0;
};

util::Result<Item> StepBuilder::PriceItem(const models::LayerOps& ops,
                                          const Stage& st) {
  Item item;
  auto forward = PriceOps(ops.forward, st.rank);
  if (!forward) return std::unexpected(forward.error());
  std::vector<models::LayerOp> backward = ops.recompute;
  for (models::LayerOp& op : backward) op.name = "recompute " + op.name;
  backward.insert(backward.end(), ops.backward.begin(), ops.backward.end());
  auto priced = PriceOps(backward, st.rank);
  if (!priced) return std::unexpected(priced.error());
  item.forward = std::move(*forward);
  item.backward = std::move(*priced);
  Prepare(item.forward, item.forward_classes, item.forward_host, st.rank);
  Prepare(item.backward, item.backward_classes, item.backward_host, st.rank);
  if (s_.training.ep_overlap) {
    item.forward_parts = SplitAtEpComm(item.forward, st.rank);
    item.backward_parts = SplitAtEpComm(item.backward, st.rank);
  }
  item.dense_params = ops.dense_params;
  item.expert_params = ops.expert_params;
  return item;
}

util::Result<void> StepBuilder::BuildStage(int r) {
  Stage& st = stages_[r];
  const models::Parallelism& par = s_.parallel;
  const int rank = placement_.Group(GroupKind::kPp, 0)[r];
  st.gpu = placement_.Gpu(rank);
  RankContext& ctx = st.rank;
  ctx.costs = platform_.costs.get();
  ctx.network = &platform_.network;
  ctx.cluster = platform_.cluster.get();
  ctx.flow_network = options_.network == NetworkKind::kFlow;
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
  ctx.launch_s = launch_s_;
  ctx.kernel_launch_s = kernel_launch_s_;
  ctx.local_experts =
      s_.model.num_moe_experts() > 0 ? s_.model.num_moe_experts() / par.ep : 1;
  if (s_.training.routing == models::Routing::kDroplessNatural) {
    ctx.moe_imbalance = RoutingImbalance(s_.model.num_moe_experts(), par.ep,
                                         s_.training.routing_skew);
  }
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

  const std::string prefix = "stage" + std::to_string(r) + "/";
  for (int k = 0; k < kNumStreamKinds; ++k) {
    st.streams[k] =
        engine_.Stream(prefix + StreamKindName(static_cast<StreamKind>(k)));
  }

  const models::Recompute& rc = s_.training.recompute;
  const int64_t mtp_heads = s_.model.mtp_num_layers();
  for (int c = 0; c < par.vpp; ++c) {
    const models::VirtualStage& vs = s_.pipeline.Stage(r, c);
    Chunk chunk;
    auto add = [&](const models::LayerOps& ops) -> util::Result<void> {
      auto item = PriceItem(ops, st);
      if (!item) return std::unexpected(item.error());
      chunk.items.push_back(std::move(*item));
      return {};
    };
    if (vs.embedding) {
      if (auto a = add(models::BuildEmbeddingOps(s_.model, par, s_.training));
          !a)
        return a;
    }
    for (size_t i = 0; i < vs.layers.size(); ++i) {
      const bool full = rc.full && (!rc.full_block ||
                                    static_cast<int>(i) < rc.full_num_layers);
      if (auto a = add(models::BuildLayerOps(s_.model, vs.layers[i], false, par,
                                             s_.training, full));
          !a)
        return a;
    }
    for (int64_t i = 0; i < vs.mtp_layers; ++i) {
      if (auto a = add(models::BuildLayerOps(s_.model, 0, true, par,
                                             s_.training, rc.full));
          !a)
        return a;
    }
    if (vs.loss) {
      if (auto a = add(models::BuildOutputOps(s_.model, par, s_.training,
                                              1 + mtp_heads));
          !a)
        return a;
    }
    PlanBuckets(chunk);
    st.chunks.push_back(std::move(chunk));
  }
  return {};
}

// Buckets fill in backward order (Megatron registers parameters so that
// buckets complete as the backward proceeds); dense and expert parameters
// have separate buffers.
void StepBuilder::PlanBuckets(Chunk& chunk) const {
  const models::Parallelism& par = s_.parallel;
  const int n = static_cast<int>(chunk.items.size());
  chunk.buckets_of_item.assign(n, {});
  for (const bool expert : {false, true}) {
    const int dp = expert ? par.edp : par.dp * par.cp;
    if (dp <= 1) continue;
    const int64_t limit = BucketParams(dp);
    Bucket open{expert, 0, n - 1, n - 1, -1};
    for (int i = n - 1; i >= 0; --i) {
      const int64_t p =
          expert ? chunk.items[i].expert_params : chunk.items[i].dense_params;
      if (p == 0) continue;
      if (open.params == 0) open.last_item = i;
      open.params += p;
      open.first_item = i;
      if (open.params >= limit || i == 0) {
        chunk.buckets.push_back(open);
        open = Bucket{expert, 0, i - 1, i - 1, -1};
      }
    }
    if (open.params > 0) chunk.buckets.push_back(open);
  }
  for (size_t b = 0; b < chunk.buckets.size(); ++b) {
    chunk.buckets_of_item[chunk.buckets[b].first_item].push_back(
        static_cast<int>(b));
  }
}

int StepBuilder::ClassId(const std::string& name) {
  for (size_t i = 0; i < class_names_.size(); ++i) {
    if (class_names_[i] == name) return static_cast<int>(i);
  }
  class_names_.push_back(name);
  for (auto& stage : class_s_) stage.push_back(0);
  return static_cast<int>(class_names_.size() - 1);
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
  for (size_t r = 0; r < stages_.size(); ++r) {
    for (int k = 0; k < kNumStreamKinds; ++k) {
      out.streams[stages_[r].streams[k]] = {static_cast<int32_t>(r),
                                            static_cast<StreamKind>(k)};
    }
    std::map<std::string, double> classes;
    for (size_t c = 0; c < class_names_.size(); ++c) {
      if (class_s_[r][c] > 0) classes[class_names_[c]] = class_s_[r][c];
    }
    out.class_s.push_back(std::move(classes));
  }
  return out;
}

OpId StepBuilder::AddOp(int r, const TimedOp& op, std::span<const OpId> deps) {
  const OpId id = emitter_.EmitOne(stages_[r].streams, op, deps);
  if (op.stream == StreamKind::kCompute && !op.transfer) {
    class_s_[r][ClassId(op.category)] += op.duration.seconds();
  }
  return id;
}

std::pair<OpId, OpId> StepBuilder::Instantiate(
    int r, const OpTemplate& t, const ClassTimes& classes,
    const std::vector<HostSegment>& host, const std::vector<OpId>& entry) {
  for (const auto& [id, seconds] : classes) class_s_[r][id] += seconds;
  return emitter_.Emit(stages_[r].streams, t, host, entry);
}

PipelineCallbacks::PairEnd StepBuilder::EmitPair(
    int r, const models::ScheduleStep& f, const models::ScheduleStep& b,
    const std::vector<OpId>& entry) {
  Stage& st = stages_[r];
  PipelineCallbacks::PairEnd end;
  // The first forward and the last backward of a chunk carry the DP bucket
  // hooks: those steps run one after the other.
  if (f.microbatch == 0 || b.microbatch == microbatches_ - 1 ||
      st.chunks[f.chunk].items.empty() || st.chunks[b.chunk].items.empty()) {
    end.forward = EmitForward(r, f, entry);
    end.backward = EmitBackward(r, b, {end.forward});
    end.both = end.backward;
    return end;
  }
  // DeepEP / HybridEP hold their SMs while they run: compute beside them
  // runs on the rest (calibration::CostModel's SM-sharing rule).
  double stretch = 1;
  const auto& dispatcher = s_.training.dispatcher;
  const int sm_count = platform_.costs->peaks().sm_count;
  const int held = DispatcherSms(dispatcher);
  if (held > 0 && sm_count > held) {
    stretch = static_cast<double>(sm_count) / (sm_count - held);
  }
  struct Cursor {
    const Chunk* chunk = nullptr;
    bool forward = true;
    int item = 0;  // position in this half's order
    size_t part = 0;
    std::vector<OpId> ids, entry;
    OpId exit = -1;
    double ep_s = 0;  // the EP op that ended the last part (0: none)
    bool done() const { return item >= static_cast<int>(chunk->items.size()); }
  };
  Cursor halves[2];
  halves[0].chunk = &st.chunks[f.chunk];
  halves[0].forward = true;
  halves[1].chunk = &st.chunks[b.chunk];
  halves[1].forward = false;
  for (Cursor& c : halves) c.entry = entry;
  auto emit_part = [&](Cursor& c, double stretch_s) {
    const int n = static_cast<int>(c.chunk->items.size());
    const Item& item = c.chunk->items[c.forward ? c.item : n - 1 - c.item];
    const OpTemplate& t = c.forward ? item.forward : item.backward;
    const auto& parts = c.forward ? item.forward_parts : item.backward_parts;
    if (c.part == 0) {
      for (const auto& [id, seconds] :
           c.forward ? item.forward_classes : item.backward_classes) {
        class_s_[r][id] += seconds;
      }
      c.ids.assign(t.ops.size(), -1);
    }
    if (t.ops.empty()) {
      c.exit = emitter_.Emit(st.streams, t, {}, c.entry).second;
    } else {
      const TemplatePart& p = parts[c.part];
      emitter_.EmitPart(st.streams, t, p.first, p.last, p.host, c.ids, c.entry,
                        stretch, stretch_s);
      const TimedOp& last = t.ops[p.last];
      c.ep_s = last.stream == StreamKind::kEp && !last.transfer
                   ? last.duration.seconds()
                   : 0;
      if (++c.part < parts.size()) return;
      c.exit = c.ids[t.exit];
    }
    c.entry = {c.exit};
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
  end.forward = halves[0].exit;
  end.backward = halves[1].exit;
  TimedOp both;
  both.name = "ep overlap join";
  both.category = "marker";
  const OpId deps[] = {end.forward, end.backward};
  end.both = emitter_.EmitOne(st.streams, both, deps);
  return end;
}

OpId StepBuilder::Send(int from, int to, bool forward, OpId after) {
  const std::vector<int> pair = {stages_[from].gpu, stages_[to].gpu};
  TimedOp op = SendRecvOp(stages_[from].rank, pair, p2p_bytes_, StreamKind::kPp,
                          forward ? "send activation" : "send gradient");
  return AddOp(from, op, {after});
}

OpId StepBuilder::EmitForward(int r, const models::ScheduleStep& step,
                              std::vector<OpId> entry) {
  Chunk& chunk = stages_[r].chunks[step.chunk];
  if (chunk.items.empty())
    return Instantiate(r, OpTemplate{}, {}, {}, entry).second;
  // The ops whose finish starts the forward of the last bucket's first item.
  std::vector<OpId> previous_bucket_entry;
  for (size_t i = 0; i < chunk.items.size(); ++i) {
    std::vector<OpId> deps = std::move(entry);
    if (step.microbatch == 0) {
      // Parameters all-gathered (overlap_param_gather): the first bucket's
      // at the start of the step, each next one when the forward starts
      // using the previous.
      for (const int b : chunk.buckets_of_item[i]) {
        Bucket& bucket = chunk.buckets[b];
        // FP8 weights travel in FP8 with fp8_param_gather, except MXFP8,
        // whose parameters Megatron all-gathers in BF16.
        const bool fp8_gather =
            s_.training.fp8_param_gather &&
            s_.training.precision != models::Precision::kMxfp8;
        const double bytes = bucket.params * (fp8_gather ? 1.0 : 2.0);
        TimedOp ag = CollectiveOp(
            stages_[r].rank, bucket.expert ? Group::kEdp : Group::kDp,
            Collective::kAllGather, bytes, StreamKind::kDp, "param all-gather");
        bucket.all_gather = AddOp(r, ag, previous_bucket_entry);
        deps.push_back(bucket.all_gather);
      }
    }
    if (step.microbatch == 0 && !chunk.buckets_of_item[i].empty()) {
      previous_bucket_entry = deps;
    }
    const OpId exit =
        Instantiate(r, chunk.items[i].forward, chunk.items[i].forward_classes,
                    chunk.items[i].forward_host, deps)
            .second;
    entry = {exit};
  }
  return entry.front();
}

OpId StepBuilder::EmitBackward(int r, const models::ScheduleStep& step,
                               std::vector<OpId> entry) {
  Stage& st = stages_[r];
  Chunk& chunk = st.chunks[step.chunk];
  if (chunk.items.empty())
    return Instantiate(r, OpTemplate{}, {}, {}, entry).second;
  const bool last = step.microbatch == microbatches_ - 1;
  for (size_t i = chunk.items.size(); i-- > 0;) {
    const OpId exit =
        Instantiate(r, chunk.items[i].backward, chunk.items[i].backward_classes,
                    chunk.items[i].backward_host, entry)
            .second;
    entry = {exit};
    if (!last) continue;
    // Gradients complete (overlap_grad_reduce): reduce-scatter the bucket
    // whose backward-order last item this was.
    for (const Bucket& bucket : chunk.buckets) {
      if (bucket.first_item != static_cast<int>(i)) continue;
      TimedOp rs = CollectiveOp(
          st.rank, bucket.expert ? Group::kEdp : Group::kDp,
          Collective::kReduceScatter,
          bucket.params * static_cast<double>(s_.training.main_grad_bytes),
          StreamKind::kDp, "grad reduce-scatter");
      st.reduce_scatters.push_back(AddOp(r, rs, {exit}));
    }
  }
  return entry.front();
}

util::Result<void> StepBuilder::Build() {
  const models::Parallelism& par = s_.parallel;
  // Host launch costs (calibration/tables/<gpu>/host.csv).
  const calibration::CostModel& costs = *platform_.costs;
  for (const auto& [quantity, seconds] :
       {std::pair{"eager_op_us", &launch_s_},
        std::pair{"kernel_launch_us", &kernel_launch_s_},
        std::pair{"graph_launch_us", &graph_launch_s_}}) {
    auto us = costs.Host(quantity);
    if (!us) {
      return util::Fail("calibration/tables/" + costs.tables().gpu +
                        "/host.csv: no " + quantity + " row");
    }
    *seconds = *us * 1e-6;
  }
  microbatches_ = s_.training.num_microbatches();
  // Megatron's p2p tensor: (seq / cp [/ tp with sequence parallel], mbs, h).
  const int64_t seq_local =
      s_.training.seq_length / par.cp / (par.sequence_parallel ? par.tp : 1);
  p2p_bytes_ =
      2.0 * seq_local * s_.training.micro_batch_size * s_.model.hidden_size();
  stages_.resize(par.pp);
  class_s_.assign(par.pp, std::vector<double>(class_names_.size(), 0.0));
  for (int r = 0; r < par.pp; ++r) {
    if (auto b = BuildStage(r); !b) return b;
  }
  PipelineCallbacks callbacks;
  callbacks.run = [this](int r, const models::ScheduleStep& step,
                         const std::vector<OpId>& entry) {
    const OpId begin = static_cast<OpId>(engine_.op_count());
    const OpId exit = step.forward ? EmitForward(r, step, entry)
                                   : EmitBackward(r, step, entry);
    spans_.push_back({r, step.forward, step.chunk, begin,
                      static_cast<OpId>(engine_.op_count()), exit});
    return exit;
  };
  callbacks.send = [this](int r, int to, const models::ScheduleStep& step,
                          OpId done) {
    return Send(r, to, step.forward, done);
  };
  if (s_.training.ep_overlap) {
    callbacks.run_pair = [this](int r, const models::ScheduleStep& f,
                                const models::ScheduleStep& b,
                                const std::vector<OpId>& entry) {
      const OpId begin = static_cast<OpId>(engine_.op_count());
      const PipelineCallbacks::PairEnd end = EmitPair(r, f, b, entry);
      const OpId stop = static_cast<OpId>(engine_.op_count());
      spans_.push_back({r, true, f.chunk, begin, stop, end.forward});
      spans_.push_back({r, false, b.chunk, begin, stop, end.backward});
      return end;
    };
  }
  size_t ops = 0;
  for (const Stage& st : stages_) {
    for (const Chunk& chunk : st.chunks) {
      for (const Item& item : chunk.items) {
        ops += item.forward.ops.size() + item.backward.ops.size() + 1;
      }
    }
  }
  ops = ops * microbatches_ + 2 * microbatches_ * par.vpp * par.pp;
  engine_.Reserve(ops, ops + ops / 2);
  std::vector<OpId> chain(par.pp, -1);
  EmitPipeline(par.pp, par.vpp, microbatches_, chain, callbacks);
  for (int r = 0; r < par.pp; ++r) EmitOptimizer(r, chain[r]);
  return {};
}

// The optimizer step on this GPU's shard after its last reduce-scatter:
// Adam (memory-bound: read master weight, grad, both moments; write them and
// the 16-bit weight) on the share kept on the GPU; the offloaded share moves
// its gradients to the host, runs CPU Adam, and copies weights back (no
// overlap of the three: the replay-fidelity issue adds it).
void StepBuilder::EmitOptimizer(int r, OpId after) {
  Stage& st = stages_[r];
  const models::Parallelism& par = s_.parallel;
  const models::TrainingOptions& tr = s_.training;
  double shard = 0;
  for (const Chunk& chunk : st.chunks) {
    for (const Item& item : chunk.items) {
      shard += static_cast<double>(item.dense_params) / (par.dp * par.cp) +
               static_cast<double>(item.expert_params) / par.edp;
    }
  }
  std::vector<OpId> deps = st.reduce_scatters;
  deps.push_back(after);
  const double offload = tr.optimizer_offload_fraction;
  const double bytes_per_param = 2.0 * tr.main_param_bytes +
                                 tr.main_grad_bytes + 4.0 * tr.exp_avg_bytes +
                                 2;
  const calibration::CostModel& costs = *platform_.costs;
  TimedOp adam;
  adam.name = "optimizer adam";
  adam.category = "optimizer";
  adam.duration = Time::FromSecondsCeil(
      costs
          .MemoryBound("adam",
                       std::max(1.0, (1 - offload) * shard * bytes_per_param))
          .seconds);
  OpId chain = AddOp(r, adam, deps);
  if (offload <= 0) return;
  const calibration::Tables& t = costs.tables();
  auto copy_rate = [&](const char* direction) {
    double gb_s = 0;
    for (const auto& row : t.host_copy) {
      if (row.direction == direction) gb_s = std::max(gb_s, row.gb_s);
    }
    return gb_s;
  };
  const double d2h = copy_rate("d2h"), h2d = copy_rate("h2d");
  const double cpu_params_s =
      t.cpu_adam.empty() ? 0 : t.cpu_adam.front().params_per_s;
  const double params = offload * shard;
  auto host_op = [&](std::string name, double seconds) {
    TimedOp op;
    op.name = std::move(name);
    op.category = "optimizer";
    op.duration = Time::FromSecondsCeil(seconds);
    chain = AddOp(r, op, {chain});
  };
  const double d2h_s = params * tr.main_grad_bytes / (d2h * 1e9);
  const double adam_s = params / cpu_params_s;
  const double h2d_s = params * 2.0 / (h2d * 1e9);
  if (!tr.offload_overlap) {
    host_op("offload grads d2h", d2h_s);
    host_op("cpu adam", adam_s);
    host_op("offload params h2d", h2d_s);
    return;
  }
  // --overlap-cpu-optimizer-d2h-h2d: Megatron's hybrid optimizer copies each
  // parameter group's gradients down, steps it on the CPU and copies its
  // weights up while the next group is in flight: a pipeline over the
  // stage's layers (one group each), so the slowest of the three sets the
  // pace and the first group's copy down and the last one's copy up stay
  // exposed.
  size_t groups = 0;
  for (const Chunk& chunk : st.chunks) groups += chunk.items.size();
  groups = std::max<size_t>(groups, 1);
  host_op("offload d2h / cpu adam / h2d (overlapped)",
          std::max({d2h_s, adam_s, h2d_s}) + (d2h_s + h2d_s) / groups);
}

}  // namespace

calibration::GpuPeaks PeaksOf(const topology::System& system) {
  const topology::Gpu& g = system.gpu();
  return calibration::GpuPeaks{g.bf16_dense_tflops(), g.fp8_dense_tflops(),
                               g.fp4_dense_tflops(),  g.tf32_dense_tflops(),
                               g.hbm_tbps(),          g.sm_count()};
}

util::Result<Platform> BuildPlatform(
    const scenarios::ResolvedScenario& scenario,
    const calibration::Profile& profile) {
  using calibration::Factor;
  Platform platform;
  auto params = topology::NetworkParamsFor(scenario.system);
  if (!params) return std::unexpected(params.error());
  const calibration::Corrections corrections =
      profile.For(scenario.system.gpu().calibration());
  const double nvlink = corrections.at(Factor::kNvlinkComm);
  const double net = corrections.at(Factor::kNetworkComm);
  const double a2a = corrections.at(Factor::kDispatcher);
  params->nvlink_gb_s *= nvlink;
  params->nvls_algbw_gb_s *= nvlink;
  params->nic_gb_s *= net;
  params->nic_efficiency *= net;
  params->nvlink_alltoall_efficiency *= a2a;
  params->net_alltoall_efficiency *= a2a;
  platform.network = *params;
  topology::LinkLatencies latencies;
  latencies.nvlink_us = params->nvlink_hop_us;
  latencies.nic_leaf_us = latencies.leaf_spine_us = latencies.spine_core_us =
      params->net_hop_us;
  auto cluster = topology::Cluster::Build(scenario.system,
                                          scenario.spec.num_gpus(), latencies);
  if (!cluster) return std::unexpected(cluster.error());
  platform.cluster = std::make_unique<topology::Cluster>(std::move(*cluster));
  auto tables = calibration::LoadTables(scenario.system.gpu().calibration());
  if (!tables) return std::unexpected(tables.error());
  platform.costs = std::make_unique<calibration::CostModel>(
      std::move(*tables), PeaksOf(scenario.system), corrections);
  return platform;
}

util::Result<StepResult> Replay(const scenarios::ResolvedScenario& s,
                                const Platform& platform,
                                const ReplayOptions& options) {
  const models::Parallelism& par = s.parallel;
  topology::MeshSizes sizes{par.tp, par.cp,  par.dp, par.pp,
                            par.ep, par.etp, par.edp};
  auto placement =
      topology::Placement::Build(sizes, kRankOrder, *platform.cluster);
  if (!placement) return std::unexpected(placement.error());
  StepBuilder builder(s, platform, *placement, options);
  if (auto b = builder.Build(); !b) return std::unexpected(b.error());
  Engine& engine = builder.engine();
  std::unique_ptr<topology::NetworkModel> network;
  if (options.network == NetworkKind::kFlow) {
    network = std::make_unique<topology::FlowNetwork>(*platform.cluster,
                                                      platform.network);
  }
  if (auto run = engine.Run(network.get()); !run) {
    return std::unexpected(run.error());
  }

  StepResult out =
      SummarizeStep(engine, builder.TakeStreams(), builder.num_stages());
  const models::MemoryEstimate memory =
      models::EstimateMemory(s.model, s.pipeline, s.parallel, s.training,
                             s.system.gpu().memory_gib() * models::kGiB);
  for (int r = 0; r < builder.num_stages(); ++r) {
    const int compute =
        builder.streams(r)[static_cast<int>(StreamKind::kCompute)];
    out.stages[r].memory_peak_bytes = MemoryTimeline(
        engine, builder.spans(), r, compute, memory.stages[r], options.trace);
  }
  const double gpus = s.spec.num_gpus();
  out.model_flops_per_step =
      models::ModelFlopsPerSequence(s.model, s.training.seq_length, par.tp) *
      static_cast<double>(s.training.global_batch_size);
  out.tflops_per_gpu = out.model_flops_per_step / out.step_time_s / gpus / 1e12;
  out.tokens_per_sec_per_gpu =
      static_cast<double>(s.training.global_batch_size) *
      s.training.seq_length / out.step_time_s / gpus;
  const double peak =
      platform.costs->peaks().PeakTflops(TrainingDtype(s.training.precision));
  out.mfu = peak > 0 ? out.tflops_per_gpu / peak : 0;
  if (options.trace) out.trace = engine.ToChromeTrace();
  return out;
}

}  // namespace moesim::sim
