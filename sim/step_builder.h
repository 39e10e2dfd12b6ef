// Internal to moesim_sim (sim/replay.cc): lays one training step of a
// resolved scenario out on an Engine, for the symmetric and the full-rank
// replay alike.
//
// Design. The builder replays lanes: a lane is one GPU rank with its own
// streams (compute, TP, CP, EP, DP, PP, host). The symmetric replay has one
// lane per pipeline stage (the stage's representative, TP/CP/DP/EP index
// 0); the full replay has every rank, lane l of every stage being the l-th
// pipeline-parallel group's member there (so lane l of stage r sends its
// activation to lane l of stage r + 1). Everything else is shared:
//  - pricing: a stage's layers are priced once per variant, a class of its
//    lanes that run the same kernels at the same speed (the representative;
//    in full mode, lanes with the same expert load and straggler factor);
//  - emission: each schedule step is emitted on every lane of its stage in
//    lockstep (TemplateEmitter), and in full mode the instances of a
//    template's group op (TimedOp::group) on the members of each group are
//    tied into one joint op (Engine::Join), as are the DP bucket
//    collectives;
//  - the pipeline schedule (EmitPipeline) sees one op id per stage: here it
//    is a bundle id, naming one op per lane of the stage.
// Collectives keep the representative's price (every group of a kind has the
// same shape in a uniform placement); a joint op lasts its longest member.
// PP transfers are the sender's op, which the receiver's step waits for (the
// receive is posted ahead, as Megatron's batched p2p posts it), not joins.
#ifndef MOESIM_SIM_STEP_BUILDER_H_
#define MOESIM_SIM_STEP_BUILDER_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "models/layer_ops.h"
#include "models/memory.h"
#include "models/pipeline.h"
#include "scenarios/scenario.h"
#include "sim/engine.h"
#include "sim/op_pricing.h"
#include "sim/pipeline_schedule.h"
#include "sim/replay.h"
#include "sim/step_stats.h"
#include "sim/template_emitter.h"
#include "topology/placement.h"
#include "util/error.h"

namespace moesim::sim::internal {

// One replayed rank.
struct Lane {
  int rank = 0;
  int gpu = 0;
  int stage = 0;    // pipeline-parallel rank
  int variant = 0;  // index into its stage's variants
  StageStreams streams{};
  // Its own group of each models::Group kind (GPU ids, group order): full
  // mode on the flow network issues each rank's transfers on them.
  std::array<std::vector<int>, kNumGroups> groups;
  std::vector<OpId> reduce_scatters;
  // The host's work after the previous step's sync (the step's first host
  // op): the first param all-gather is dispatched at its end.
  OpId step_host = -1;
  // The last pipeline send of this lane not yet waited for by a
  // batch_p2p_sync device synchronize (-1: none).
  OpId pending_send = -1;
};

// Transformer Engine's layer_window_map for cpu_offloading (cpu_offload.py,
// AsyncDoubleBufferGroupOffloadHandler): of `layers` layers with the first
// `offloaded` offloaded, the layer by whose end layer k's copy to the host
// must be done (0 <= offloaded < layers): floor(L/N)(k + 1) - 1, plus k + 1
// for the first L mod N layers and L mod N for the rest.
std::vector<int> OffloadWindows(int layers, int offloaded);

class StepBuilder {
 public:
  // `lane_ranks`: per stage, the ranks to replay in lane order (the same
  // count for every stage); `stragglers`: per rank, the compute slowdown
  // (empty: none). REQUIRES: the arguments outlive the builder.
  StepBuilder(const scenarios::ResolvedScenario& s, const Platform& platform,
              const topology::Placement& placement,
              const ReplayOptions& options,
              std::vector<std::vector<int>> lane_ranks,
              std::vector<double> slowdown);

  // Prices every stage's variants. Then EstimatedOps() is known.
  [[nodiscard]] util::Result<void> Price();
  // About how many engine ops Emit() adds for `microbatches` (the step's
  // own when 0).
  size_t EstimatedOps(int64_t microbatches = 0) const;
  // Emits the step, or (sim/periodic.h) the same step with `microbatches`
  // micro-batches, everything priced as for the step's own (its per-step
  // host work included); emitting again replaces what the engine held.
  // REQUIRES: Price() succeeded.
  void Emit(int64_t microbatches = 0);

  Engine& engine() { return engine_; }
  // Streams by lane (StepStreams::Stream::stage is the lane index) and the
  // class times of each lane.
  StepStreams TakeStreams();
  // The spans of lane 0 of each stage (StepSpan::stage: the stage).
  const std::vector<StepSpan>& spans() const { return spans_; }
  const std::vector<Lane>& lanes() const { return lanes_; }
  int num_stages() const { return static_cast<int>(stages_.size()); }
  int lanes_per_stage() const { return lanes_per_stage_; }
  // The engine id of lane `l` of stage `r` (its index in lanes()).
  int LaneIndex(int r, int l) const { return r * lanes_per_stage_ + l; }
  // Seconds of compute-stream work of op class `name` on lane `lane`.
  double ClassSeconds(int lane, const std::string& name) const;
  // The memory model's estimate of this scenario (offload bytes, and the
  // stages' static bytes for MemoryTimeline), made once; its capacity and
  // verdict are not set.
  const models::MemoryEstimate& Memory();
  // The forward p2p CP ring whose hop outlasts its attention tile the most
  // (the largest hop / tile over the priced layers); nullopt without one.
  const std::optional<RingBalance>& cp_ring() const { return cp_ring_; }

 private:
  // EmitParts' lanes, reused (InstantiateItem, EmitPair).
  std::vector<TemplateEmitter::Lane> emit_lanes_;
  std::optional<RingBalance> cp_ring_;
  std::optional<models::MemoryEstimate> memory_;  // Memory()
  using ClassTimes = std::vector<std::pair<int, double>>;
  using LaneDeps = std::vector<std::vector<OpId>>;  // per lane of a stage
  using Bundle = OpId;  // a pipeline-schedule op id: one op per lane

  struct Item {
    OpTemplate forward, backward;
    ClassTimes forward_classes, backward_classes;
    std::vector<HostSegment> forward_host, backward_host;
    // With EP overlap: the parts between EP communication ops, and the
    // backward the merged schedule runs (with --delay-wgrad-compute its
    // weight gradients deferred, DeferWeightGradients; else `backward`).
    std::vector<TemplatePart> forward_parts, backward_parts;
    std::optional<OpTemplate> paired_backward;
    const OpTemplate& PairedBackward() const {
      return paired_backward ? *paired_backward : backward;
    }
    // A schedule that splits the backward (models::StepKind): its input
    // gradient and its weight gradients (SplitWeightGradients).
    OpTemplate input_grad, weight_grad;
    ClassTimes input_grad_classes, weight_grad_classes;
    std::vector<HostSegment> input_grad_host, weight_grad_host;
    // The template, class times and host segments of pass `kind`.
    struct Pass {
      const OpTemplate& ops;
      const ClassTimes& classes;
      const std::vector<HostSegment>& host;
    };
    Pass PassOf(models::StepKind kind) const {
      switch (kind) {
        case models::StepKind::kForward:
          return {forward, forward_classes, forward_host};
        case models::StepKind::kBackward:
          break;
        case models::StepKind::kInputGrad:
          return {input_grad, input_grad_classes, input_grad_host};
        case models::StepKind::kWeightGrad:
          return {weight_grad, weight_grad_classes, weight_grad_host};
      }
      return {backward, backward_classes, backward_host};
    }
    int64_t dense_params = 0, expert_params = 0;
    int64_t dense_tensors = 0, expert_tensors = 0, replicated_tensors = 0;
  };
  struct Bucket {
    bool expert = false;
    int64_t params = 0;
    int first_item = 0;  // forward order
    int last_item = 0;   // forward order; the bucket is full when the
                         // backward reaches its first item
  };
  struct Chunk {
    std::vector<Bucket> buckets;
    std::vector<std::vector<int>> buckets_of_item;  // item -> buckets
    // cpu_offloading: per item, its copy to the host and back (zero: kept
    // on the GPU). Per item, the offloaded items whose copies down start
    // when its forward ends and those its forward waits for; the offloaded
    // items whose copies up start when its backward starts and those its
    // backward waits for (StepBuilder::PlanOffload).
    struct Offload {
      Time d2h, h2d;
    };
    std::vector<Offload> offload;
    std::vector<std::vector<int>> offloads_start_after;
    std::vector<std::vector<int>> offloads_due_at;
    std::vector<std::vector<int>> reloads_start_at;
    std::vector<std::vector<int>> reloads_due_at;
    // Fine-grained activation offloading: per item, its offload groups'
    // copy to the host and back (zero: nothing offloaded).
    std::vector<Offload> fine;
  };
  // A pricing of the stage's items for a class of its lanes.
  struct Variant {
    RankContext rank;
    std::vector<std::vector<Item>> items;  // [chunk][item]
  };
  struct Stage {
    std::vector<Chunk> chunks;
    std::vector<Variant> variants;  // [0]: lane 0's
    // Per models::Group: the stage's lanes ordered by slot (members of one
    // group consecutive), and the members per group; empty when the kind
    // needs no join.
    std::array<std::vector<int>, kNumGroups> lanes_by_slot;
    std::array<int, kNumGroups> group_size{};
    // PP sends of each lane to the next and the previous stage.
    std::vector<TimedOp> send_next, send_previous;
    // Per-step host work (StepHostCallsOf): before the optimizer's kernels,
    // and after the step's closing sync (replayed before the first forward).
    TimedOp step_host_before, step_host_after;
    // Fine-grained offloading, per (micro-batch, chunk) whose backward has
    // not run: its items' copies to the host (-1: kept on the GPU).
    std::map<std::pair<int64_t, int>, std::vector<Bundle>> offloaded;
    // Where the last backward started its first item: the next backward's
    // last item is reloaded from there (pre_reload_last_layer); empty
    // before the first backward.
    LaneDeps pre_reload;
    // Per micro-batch x vpp + chunk: the forward whose backward is the
    // rank's next one keeps its last offloading item on the GPU.
    std::vector<char> keep_last;
  };

  RankContext BaseContext(int rank) const;
  util::Result<void> PriceStage(int r);
  util::Result<Item> PriceItem(const models::LayerOps& ops,
                               const RankContext& rank);
  util::Result<std::vector<std::vector<Item>>> PriceItems(
      int r, const RankContext& rank);
  void PlanBuckets(const std::vector<Item>& items, Chunk& chunk) const;
  void PlanOffload(int r, Chunk& chunk);
  void PlanFineGrainedOffload(int r, int c, Chunk& chunk);
  void PlanStepHost(int r);
  TimedOp ParamGather(const Stage& st, const Bucket& bucket) const;
  TimedOp CopyOp(const char* name, Time duration,
                 StreamKind stream = StreamKind::kCopy) const;
  // The host-copy table's best rate in `direction` ("d2h", "h2d"), GB/s.
  double CopyRate(const char* direction) const;
  void PlanJoins(int r);
  void Prepare(OpTemplate& t, ClassTimes& classes,
               std::vector<HostSegment>& host, const RankContext& rank);
  int ClassId(const std::string& name);

  Lane& lane(int r, int l) { return lanes_[LaneIndex(r, l)]; }
  const Variant& VariantOf(int r, int l) const {
    return stages_[r].variants[lanes_[LaneIndex(r, l)].variant];
  }
  // Items (layers) of chunk `chunk` on stage r.
  int ItemCount(int r, int chunk) const {
    return static_cast<int>(stages_[r].variants[0].items[chunk].size());
  }
  // Bundle helpers: a new bundle of `ops` (one per lane), an op of one.
  Bundle NewBundle(std::span<const OpId> ops);
  OpId At(Bundle b, int l) const { return bundles_[b * lanes_per_stage_ + l]; }
  LaneDeps DepsOf(std::span<const OpId> entry) const;

  // Ties the instances of `t`'s group ops [first, last] on stage r's lanes
  // (ids[l]: lane l's engine ids) into joins, one per group (full mode).
  // On the flow network it first moves every lane's transfers onto its own
  // groups (RetargetTransfers).
  void JoinGroupOps(int r, const OpTemplate& t, int first, int last,
                    const std::vector<std::vector<OpId>>& ids);
  // Full mode on the flow network: `t` was priced for stage r's first lane,
  // so its transfers name that rank's groups. Lane l's instances of ops
  // [first, last] get the GPUs at the same places of lane l's groups (the
  // op's group; a CP ring hop's, CP), so each group's traffic is its own.
  void RetargetTransfers(int r, const OpTemplate& t, int first, int last,
                         const std::vector<std::vector<OpId>>& ids);
  // `op` on every lane of stage r (with `duration` when not negative),
  // lane l waiting for deps[l]; joined by its group in full mode.
  Bundle AddOnLanes(int r, const TimedOp& op, const LaneDeps& deps);
  // Pass `kind` of item `item` of chunk `chunk` on every lane of stage r,
  // lane l's entry ops waiting for deps[l]; returns the exits.
  std::vector<OpId> InstantiateItem(int r, int chunk, int item,
                                    models::StepKind kind,
                                    const LaneDeps& deps);
  // An empty template on each lane of stage r (a chunk with no layers).
  Bundle EmptyOnLanes(int r, const LaneDeps& deps);
  Bundle EmitForward(int r, const models::ScheduleStep& step,
                     std::span<const OpId> entry);
  // A whole backward, or the input gradient of a split one.
  Bundle EmitBackward(int r, const models::ScheduleStep& step,
                      std::span<const OpId> entry);
  // The weight gradients of a split backward, layer by layer in backward
  // order, and the gradient reduce-scatters they complete.
  Bundle EmitWeightGrad(int r, const models::ScheduleStep& step,
                        std::span<const OpId> entry);
  // The data-parallel reduce-scatter of the buckets whose backward-order
  // last item is item `i` of `chunk` on stage r, after `deps`.
  void ReduceScatterBuckets(int r, const Chunk& chunk, int i,
                            const LaneDeps& deps);
  // EP overlap: a steady-state forward and backward interleaved part by
  // part, each one's EP communication beside the other's compute.
  PipelineCallbacks::PairEnd EmitPair(int r, const models::ScheduleStep& f,
                                      const models::ScheduleStep& b,
                                      const std::vector<OpId>& entry);
  void EmitOptimizer(int r, Bundle after);
  // The activation (forward) to the next stage or the gradient to the
  // previous one, from every lane of stage `from` to its lane there.
  Bundle Send(int from, bool forward, Bundle done);
  // batch_p2p_sync: the host-side device synchronize after the pipeline
  // exchange that precedes `step` on stage `r` (each lane's host stream
  // waits for `entry` and the lane's last send).
  void HostSyncAtP2p(int r, const models::ScheduleStep& step,
                     std::span<const OpId> entry);
  // 1 / the share of SMs the dispatcher leaves compute (1: alltoall).
  double DispatcherStretch() const;

  const scenarios::ResolvedScenario& s_;
  const Platform& platform_;
  const topology::Placement& placement_;
  const ReplayOptions& options_;
  const bool full_;
  std::vector<std::vector<int>> lane_ranks_;
  std::vector<double> slowdown_;  // by rank; empty: none
  int lanes_per_stage_ = 1;
  Engine engine_;
  std::vector<StepSpan> spans_;
  bool emitted_ = false;
  std::vector<std::string> class_names_;
  std::vector<std::vector<double>> class_s_;  // [lane][class]
  TemplateEmitter emitter_{engine_, options_.trace};
  std::vector<Stage> stages_;
  std::vector<Lane> lanes_;  // stage-major
  std::vector<OpId> bundles_;
  std::vector<std::vector<OpId>> ids_;  // per lane: a template's engine ids
  std::vector<OpId> members_;           // one join's members
  int64_t microbatches_ = 0;
  // Non-interleaved PP with batch_p2p_sync: a device synchronize after each
  // pipeline exchange (HostSyncAtP2p).
  bool p2p_sync_ = false;
  double p2p_bytes_ = 0;
  double launch_s_ = 0, te_module_s_ = 0, kernel_launch_s_ = 0,
         autograd_node_s_ = 0, graph_launch_s_ = 0;
  // EstimatedOps() = ops_per_microbatch_ x micro-batches.
  size_t ops_per_microbatch_ = 0;
  // Clears what an emission leaves (the engine's ops, spans, bundles, class
  // seconds, lanes' and stages' emission state) for another one.
  void ResetEmission();
};

// The placement's group kind of a parallel group (kDp: the dense
// gradients' DP x CP group).
topology::GroupKind GroupKindOf(models::Group group);

}  // namespace moesim::sim::internal

#endif  // MOESIM_SIM_STEP_BUILDER_H_
