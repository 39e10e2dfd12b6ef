// Prices a layer's ops (models::LayerOps) for one representative rank and
// lays them out as a template of timed ops on that rank's streams, ready to
// be instantiated once per micro-batch by the replay.
//
// Design. Every micro-batch of a layer does the same work (balanced routing),
// so each layer is priced once: kernel times from calibration::CostModel,
// collective times from the topology collective model on the placed group.
// Under the flow network a collective instead carries its CollectiveRequest
// and the engine asks the NetworkModel when it finishes (so concurrent
// transfers share links); the analytical network's answer does not depend on
// other traffic, so it is priced here once.
//
// Ops run one after another (each waits for the previous one), except where
// Megatron overlaps: the context-parallel ring, where the transfer of the next
// KV block runs on the CP stream beside the attention of the block in hand
// (Megatron's causal load balancing: 2 x cp chunks, the diagonal block is
// causal, the cp - 1 others are half blocks, none is empty). Communication
// runs on its own stream (TP, CP, EP) so the replay can tell exposed
// communication from hidden.
#ifndef MOESIM_SIM_OP_PRICING_H_
#define MOESIM_SIM_OP_PRICING_H_

#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "calibration/cost_model.h"
#include "models/layer_ops.h"
#include "models/routing.h"
#include "sim/core/time.h"
#include "sim/host_calls.h"
#include "topology/collectives.h"
#include "topology/network_model.h"
#include "util/error.h"

namespace moesim::sim {

// kHost: the host thread that launches the stage's kernels.
// kCopy: device-to-host copies of offloaded activations and optimizer
// state; kCopyH2d: their host-to-device reloads. Transformer Engine's and
// Megatron-Core's offload handlers issue the two directions on separate
// streams (TE cpu_offload.py AsyncDoubleBufferGroupOffloadHandler,
// MCore PipelineOffloadManager d2h_stream / h2d_stream), which run on
// separate copy engines over a full-duplex host link. Lanes get a kCopyH2d
// stream only in scenarios that offload (StepBuilder).
enum class StreamKind {
  kCompute,
  kTp,
  kCp,
  kEp,
  kDp,
  kPp,
  kHost,
  kCopy,
  kCopyH2d
};
inline constexpr int kNumStreamKinds = 9;
inline constexpr StreamKind kCommKinds[] = {StreamKind::kTp, StreamKind::kCp,
                                            StreamKind::kEp, StreamKind::kDp,
                                            StreamKind::kPp};
const char* StreamKindName(StreamKind kind);  // "compute", "tp", ..., "host"

inline constexpr int kEntry = -1;  // a dep on the template's entry

struct TimedOp {
  StreamKind stream = StreamKind::kCompute;
  Time duration;  // ignored when `transfer` is set
  std::optional<topology::CollectiveRequest> transfer;
  std::string name;
  // Op class for reports: gemm, grouped_gemm, attention, memory_bound, and
  // for communication the stream kind (tp, cp, ep, dp, pp).
  std::string category;
  std::vector<int> deps;  // earlier ops of the template, or kEntry
  // Host time before its kernels are issued: Megatron's eager host calls
  // for it (`calls`, priced by HostSeconds), or the launch of a CUDA graph
  // on the first op of a graphed run plus the per-parameter work a
  // TE-scoped graph leaves to autograd.
  double host_s = 0;
  // host_s of its first kernel alone: a merged run's (Coalesce) first launch
  // is still its first kernel's, so merging does not change the replay.
  double head_host_s = 0;
  HostCalls calls;  // eager host calls it stands for (merged runs: summed)
  bool graphed = false;
  // The host waits for this op to finish before it launches the next ones
  // (a device-to-host sync, e.g. the tokens per expert TE's grouped GEMM
  // takes as a host list).
  bool host_sync = false;
  // A Transformer Engine linear's weight gradient (a GEMM or grouped GEMM
  // of Pass::kWgrad; not the router's or the output layer's, which are not
  // TE modules): --delay-wgrad-compute holds it back (DeferWeightGradients),
  // which marks the ops it moved `deferred`.
  bool wgrad = false;
  bool deferred = false;
  // The group whose members run this op jointly (a collective, a CP ring
  // step, a dispatch): the full-rank replay joins the members' instances
  // (Engine::Join). Empty: the rank's own op (compute, a PP send).
  std::optional<models::Group> group;
  // Identical steps of a p2p CP ring this op stands for (MergedSteps in
  // op_pricing.cc): its length and host calls are that many steps'.
  int steps = 1;
  // Set by the replay when it interns the name and category (-1: not yet).
  int32_t name_id = -1;
  int16_t category_id = -1;
};

// A p2p context-parallel ring's balance in one forward pass: its slowest
// hop moving one step's K/V block (the analytical network's estimate, with
// either network) against the step's attention tile. A ring whose hop
// outlasts its tile cannot hide the exchange (Megatron-Bridge's
// performance guide: "the short chunk length can barely overlap the p2p
// communications, so a2a+p2p ought to be the preferred choice").
struct RingBalance {
  double hop_s = 0, tile_s = 0;
  bool crosses_domains = false;  // the slowest hop leaves the NVLink domain
  // Steady steps of each ring added as one run of ops (op_pricing.cc,
  // MergedSteps); 0: every step its own ops.
  int merged_steps = 0;
  int ring = 0;                // ranks on the ring
  int members_per_domain = 0;  // of the whole CP group, per NVLink domain
  bool operator==(const RingBalance&) const = default;
};

struct OpTemplate {
  std::vector<TimedOp> ops;
  // Set when the template holds a forward p2p ring (AddRing).
  std::optional<RingBalance> ring;
  int exit = kEntry;  // the op whose finish ends it (kEntry: empty)
  // The op the next layer's pass waits for, where that is not the exit:
  // the last op before the weight gradients DeferWeightGradients moved to
  // the end (kEntry: the exit). The exit still ends the template.
  int handoff = kEntry;
  int HandoffOrExit() const { return handoff == kEntry ? exit : handoff; }
};

inline constexpr int kNumGroups = 7;  // models::Group values

// One representative rank: its groups on the cluster and what prices ops.
struct RankContext {
  const calibration::CostModel* costs = nullptr;
  const topology::NetworkParams* network = nullptr;
  const topology::Cluster* cluster = nullptr;
  bool flow_network = false;
  // Members (GPU ids, group order) and shape of the rank's group of each
  // models::Group kind; the CP ring's slowest hop (two GPUs).
  std::array<std::vector<int>, kNumGroups> groups;
  std::array<topology::GroupShape, kNumGroups> shapes;
  std::vector<int> cp_hop;
  // Context-parallel communication (Megatron --cp-comm-type): for a2a+p2p,
  // the inner a2a group (GPU ids) and the slowest hop of the outer ring.
  models::CpCommType cp_comm_type = models::CpCommType::kP2p;
  std::vector<int> cp_inner;
  topology::GroupShape cp_inner_shape;
  std::vector<int> cp_outer_hop;
  calibration::Dtype training_dtype = calibration::Dtype::kBf16;
  calibration::Dtype attention_dtype = calibration::Dtype::kBf16;
  // Host: seconds per host call of each kind and per CUDA-graph launch
  // (host.csv), and which graph scopes are captured (by models::GraphScope;
  // all of them with a full-iteration graph, which also graphs kNone).
  double launch_s = 0;         // torch_op_us: one eager PyTorch op
  double te_module_s = 0;      // te_module_us: one TE module call
  double kernel_launch_s = 0;  // kernel_launch_us: each further kernel
  double autograd_node_s = 0;  // autograd_node_us: one C++ autograd node
  double graph_launch_s = 0;
  int64_t local_experts = 1;  // experts / EP: GroupedLinear's GEMMs
  // Routed tokens on the busiest EP rank / the mean (RoutingImbalance): its
  // all-to-alls gate every rank's.
  double moe_imbalance = 1;
  // Routed tokens on this rank / the mean: its grouped GEMMs and expert
  // memory-bound kernels. The symmetric replay sets it to moe_imbalance
  // (the busiest rank gates); the full one to the rank's own
  // (ExpertLoads).
  double expert_load = 1;
  // Every compute-stream kernel takes this factor longer (>= 1: a
  // straggler GPU).
  double compute_slowdown = 1;
  bool fp8_current_scaling = false;  // per-expert amax + scale + cast
  std::array<bool, 6> graphed{};
  models::Dispatcher dispatcher = models::Dispatcher::kAllToAll;
  int ep = 1;
  // Token drop padded to capacity (moe_pad_expert_input_to_capacity): the
  // alltoall dispatcher's split sizes are static, the host does not wait
  // for the token counts.
  bool static_token_counts = false;
  // --moe-shared-expert-overlap with EP > 1: PriceOps runs each pass's
  // shared-expert ops beside the pass's first EP token exchange.
  bool shared_expert_overlap = false;
  // A p2p ring's identical steady steps may be added as one run of ops
  // (op_pricing.cc, MergedSteps): ReplayOptions::merge_ring_steps, off for
  // the trace, which shows every step, on the flow network, where a hop's
  // length is not known when the template is priced, and with EP overlap,
  // whose stretch of the compute beside an all-to-all rounds per op.
  bool merge_ring_steps = false;
};

// Template of `ops` (one pass of one layer, in order). Errors name the
// calibration table that lacks a row the op needs.
[[nodiscard]] util::Result<OpTemplate> PriceOps(
    const std::vector<models::LayerOp>& ops, const RankContext& rank);

// A collective over the rank's group `group` as a timed op on `stream`.
// REQUIRES: `collective` is not kSendRecv (SendRecvOp).
TimedOp CollectiveOp(const RankContext& rank, models::Group group,
                     topology::Collective collective, double bytes,
                     StreamKind stream, std::string name);

// Segments of a template between host syncs: the host launches a segment's
// ops one after another; it starts the next segment only once the op that
// ends this one (host_sync) has finished on the GPU.
struct HostSegment {
  int first = 0, last = 0;    // template op indices, inclusive
  double first_launch_s = 0;  // the launch the segment's first op waits for
  double rest_launch_s = 0;   // the other launches, before its last op ends
};
// Segments of ops [first, last] (all of them by default).
std::vector<HostSegment> HostSegments(const OpTemplate& t,
                                      const RankContext& rank, int first = 0,
                                      int last = -1);

// Parts of a template between EP communication ops: each part ends with an
// op on the EP stream (or at the end). With EP overlap the replay interleaves
// the parts of a forward with those of a backward, so one's all-to-all runs
// beside the other's compute.
// A part's EP op may be followed by the weight gradients deferred past it
// (DeferWeightGradients): they close the part, on the compute stream beside
// its all-to-all.
struct TemplatePart {
  int first = 0, last = 0;  // inclusive
  int ep = -1;              // the part's EP op (-1: none, the template's end)
  std::vector<HostSegment> host;
};
std::vector<TemplatePart> SplitAtEpComm(const OpTemplate& t,
                                        const RankContext& rank);

// Megatron's --delay-wgrad-compute in the EP-overlap schedule
// (megatron/core/models/common/model_chunk_schedule_plan.py,
// TransformerLayerSchedulePlan.run): a layer's backward runs the MLP's
// dgrad (mlp.backward), then its delayed weight gradients
// (mlp.backward_dw), then issues the dispatch backward, which waits only
// for the dgrad; the attention's weight gradients (attn.backward_dw) run
// after the attention backward, beside the next layer's combine backward.
// So: each wgrad op of `t` (a backward template) moves to just after the
// first EP op that follows it, or to the end when none does; an op that
// waited for a moved op waits for what that op waited for; the ops moved
// to the end leave `handoff` at the op before them. Compute-stream order
// keeps every moved op before the compute that follows it.
OpTemplate DeferWeightGradients(const OpTemplate& t);

// A zero-bubble schedule's backward in two steps (models::StepKind): `input`
// holds every op of `t` but the TE linears' weight gradients (wgrad), an op
// that waited for one of them waiting for what it waited for, as
// DeferWeightGradients resolves them; `weight` holds the weight gradients in
// order, each waiting only for the weight gradients it waited for, since
// the step that runs them follows `input` on the stage (Qi et al., Zero
// Bubble Pipeline Parallelism, ICLR 2024: W depends on B alone). `weight`
// is empty when `t` has no weight gradient.
struct SplitBackward {
  OpTemplate input, weight;
};
SplitBackward SplitWeightGradients(const OpTemplate& t);

// `t` with each run of compute ops that follow one another (an op whose only
// dependency is the previous compute op, which nothing else waits for) merged
// into one op of their summed duration, named "first .. last". Such ops run
// back to back on the compute stream, so every start and finish outside the
// run, and every busy interval, is unchanged: the replay uses it when no
// trace needs the single kernels. Category of a merged op: "compute".
// The op that ends a host segment (host_sync, or the template's last op)
// waits for the segment's launches (HostSegments), so it starts a run of
// its own rather than delay the ops before it.
OpTemplate Coalesce(const OpTemplate& t);

// A point-to-point transfer of `bytes` between two GPUs (`pair`: src, dst).
TimedOp SendRecvOp(const RankContext& rank, const std::vector<int>& pair,
                   double bytes, StreamKind stream, std::string name);

// Expected number of distinct EP ranks a token's top-k experts live on
// (balanced, uniformly random routing; group-limited routing: `groups`
// expert groups, each token's experts within `group_topk` of them; 0: none).
double DistinctRanksPerToken(int64_t experts, int64_t topk, int64_t ep,
                             int64_t groups = 0, int64_t group_topk = 0);

// Wall time of `work` seconds of compute that starts inside a window of
// `window` seconds during which it runs at 1 / `stretch` (>= 1) of its
// speed (beside kernels holding SMs), at full speed after it; the window
// closing inside the op stretches only its share inside. Subtracts the
// wall time from `window` (the next op of the chain gets what is left;
// callers stop stretching once it is <= 0).
double StretchedSeconds(double work, double stretch, double& window);

// The calibration dtype of a training precision's low-precision GEMMs.
calibration::Dtype TrainingDtype(models::Precision precision);

// The dtype core attention runs in: 16 bits, or with
// fp8_dot_product_attention the recipe's FP8 format (per-tensor FP8 for
// fp8-cs and fp8-delayed, MXFP8 for mxfp8; Resolve admits no other).
calibration::Dtype AttentionDtype(const models::TrainingOptions& training);

}  // namespace moesim::sim

#endif  // MOESIM_SIM_OP_PRICING_H_
