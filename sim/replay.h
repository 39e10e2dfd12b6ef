// sim::Replay: one training step of a resolved scenario, replayed micro-batch
// by micro-batch on the event engine, and what it predicts.
//
// Design (../shared/ARCHITECTURE.md). Two modes share one builder
// (step_builder.h): they differ only in which ranks are replayed.
//  - Symmetric (default). Ranks that the layout makes equivalent do the same
//    work at the same times, so one representative rank per pipeline stage
//    is replayed (TP, CP, DP and EP index 0); its collectives are priced on
//    its real groups' placement, so the traffic its peers put on shared
//    NICs is in the price. With skewed routing every rank is priced as the
//    busiest EP rank, which gates the all-to-all.
//  - Full (ReplayOptions::full). Every rank is replayed with its own
//    streams and host thread. Ranks are numbered as topology::Placement
//    numbers them (Megatron-Core's order "tp-cp-ep-dp-pp", TP fastest; rank
//    r on GPU r). A collective among a group (TP, CP, EP, ETP, DP x CP and
//    expert-DP collectives, the CP ring's steps, dispatch and combine) is
//    one op per member tied into an Engine join: it starts when its last
//    member arrives and lasts its priced duration (the representative's
//    price: every group of a kind has the same shape in a uniform
//    placement). With skewed routing each EP rank gets its own routed
//    tokens (ExpertLoads; EP rank j of its group), so grouped GEMMs differ
//    and the dispatch waits for the slowest; all-to-all bytes stay the
//    busiest rank's, as in symmetric mode. A straggler's compute-stream
//    kernels take `factor` times longer. PP transfers stay the sender's op
//    that the receiver's step waits for (Megatron posts the receive ahead).
//    On the flow network every rank's transfers run on its own groups'
//    GPUs (a CP ring hop from the rank to its own neighbour), so traffic
//    that different groups put on one link shares it; the symmetric mode
//    plays the representative's transfers only. Full mode runs up to
//    kMaxFullRanks GPUs and kMaxFullOps engine ops (both checked before
//    anything is built; see CheckFullMode). On a layout with no imbalance and
//    no straggler every member of a group arrives at a join at the time its
//    representative would, so both modes give the same step.
// In both modes each replayed rank has a compute stream and one stream per
// communication kind (TP, CP, EP, DP, PP), plus the host thread.
//  - Each stage runs Megatron's 1F1B order (models::OneFOneBSchedule); a
//    forward waits for the activation the previous virtual stage sends it
//    (a p2p transfer on that stage's PP stream), a backward for the gradient
//    from the next. Bubbles come out of these waits.
//  - A layer's ops come from models::BuildLayerOps, priced by PriceOps; TP
//    and EP collectives are serial with compute (no TP or EP overlap here),
//    the CP ring overlaps transfer with attention.
//  - Data parallel (distributed optimizer, overlap_grad_reduce and
//    overlap_param_gather on, as the Megatron-Bridge recipes run): layers'
//    gradients fill buckets of Megatron's size in backward order; a bucket is
//    reduce-scattered on the DP stream once the last micro-batch's backward
//    has produced all of it, and its parameters are all-gathered before the
//    first micro-batch's forward reaches it. Dense parameters go over the
//    DP x CP group, expert parameters over expert DP. The optimizer step
//    (Adam, memory-bound, on the GPU's shard; the offloaded share as host
//    copies and CPU Adam) runs after the last reduce-scatter.
//  - Full recompute replays the first `full_num_layers` layers of each chunk
//    (method "block") or every layer (method "uniform").
#ifndef MOESIM_SIM_REPLAY_H_
#define MOESIM_SIM_REPLAY_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibration/cost_model.h"
#include "calibration/profile.h"
#include "scenarios/scenario.h"
#include "sim/op_pricing.h"
#include "topology/cluster.h"
#include "topology/network_params.h"
#include "topology/placement.h"
#include "util/error.h"

namespace moesim::sim {

// What a scenario runs on: the cluster graph, rank placement, network
// parameters and the GPU's calibrated cost model. Built once, shared by
// every replay of the same system and GPU count.
struct Platform {
  topology::NetworkParams network;
  std::unique_ptr<topology::Cluster> cluster;
  std::unique_ptr<calibration::CostModel> costs;
};

// Loads the calibration tables of the system's GPU and builds the cluster.
// The profile's corrections for that GPU (calibration/profile.h) go into the
// cost model and the network parameters: nvlink_comm_efficiency scales the
// NVLink and NVLS rates, network_comm_efficiency the NIC rate and the NIC
// efficiency every fabric hop takes, dispatcher_efficiency the all-to-all
// efficiencies of both tiers. The default (identity) changes nothing
// beyond the tables' own sustained share of compute-bound rates
// (sustained.csv), which the cost model's corrections carry.
[[nodiscard]] util::Result<Platform> BuildPlatform(
    const scenarios::ResolvedScenario& scenario,
    const calibration::Profile& profile = {});

// The GPU's spec peaks for the cost model.
calibration::GpuPeaks PeaksOf(const topology::System& system);

enum class NetworkKind { kAnalytical, kFlow };

// A GPU whose kernels run slow: every compute-stream op of `rank` takes
// `factor` times its price.
struct Straggler {
  int rank = 0;
  double factor = 1;
};

struct ReplayOptions {
  NetworkKind network = NetworkKind::kAnalytical;
  // Keep the Chrome trace in StepResult::trace. In full mode it holds the
  // processes of a bounded set of ranks (TracedRanks).
  bool trace = false;
  bool full = false;  // replay every rank (the header's design)
  // Replay three counts of micro-batches and extend them when the step is
  // periodic (sim/periodic.h); false: replay every micro-batch.
  bool periodic = true;
  // Add a p2p CP ring's steady steps as one run of ops (op_pricing.cc,
  // MergedSteps): every op after the ring starts and ends as with each
  // step replayed; false: each step its own ops (as with `trace`).
  bool merge_ring_steps = true;
  // Full mode only; a rank named twice takes the larger factor.
  std::vector<Straggler> stragglers;
  // Called once, before the replay starts, when full mode is estimated to
  // need more than kNoticeFullOps engine ops: the estimate (ops, memory,
  // seconds), for the command line to show while the user waits.
  std::function<void(const std::string&)> notice;
};

// Full mode's limits. Ranks: 16,384 GPUs. Ops: the engine, its playout and
// the summary peak at about 100 bytes per op (measured: 2.1 GB for the
// 21.5 M ops of DeepSeek-V3 on 1,024 GPUs with 64 micro-batches, 0.94 GB
// for 9.5 M ops at 4,096 GPUs), so 100 M ops is about 10 GB, and the
// replay runs at about 1.5 M ops/s on one core (tests/bench/replay_bench).
inline constexpr int kMaxFullRanks = 16384;
// Full mode on the flow network: 512 GPUs. Every rank's transfers are flows
// whose max-min shares are re-solved at each start and end, so the time
// grows with the square of the ranks (measured: DeepSeek-V3 on H100, DP
// 256: 0.8 s, DP 512: 3.4 s and 0.3 GB; 1,024 did not finish in 20 s).
inline constexpr int kMaxFullFlowRanks = 512;
inline constexpr size_t kMaxFullOps = 100'000'000;
// Above 10 M ops (about 1 GB and 7 s) full mode tells its estimate first.
inline constexpr size_t kNoticeFullOps = 10'000'000;
// Full mode's replay rate, ops per second on one core (replay_bench).
inline constexpr double kFullOpsPerSecond = 1.5e6;
// A trace's limit: about 1 GB of Chrome JSON, estimated before the replay
// from the engine ops (one event each; in full mode, the traced ranks'
// share) at kTraceBytesPerOp (measured 97-103 bytes per event: Llama 3 8B
// on 8 H100s, 54,554 events, 5.29 MB; DeepSeek-V3 on 256, 65,831 events,
// 6.77 MB). The trace is built in memory, twice its size at its peak.
inline constexpr double kTraceBytesPerOp = 100;
inline constexpr double kMaxTraceBytes = 1e9;
// Ranks whose processes a full-mode trace keeps at most (beyond every
// stage's first rank, the stragglers and the slowest rank, which it always
// keeps).
inline constexpr int kMaxTracedRanks = 64;

// The options' full-mode rules, checked before anything is built: no
// stragglers without full mode; full mode at most kMaxFullRanks GPUs
// (kMaxFullFlowRanks on the flow network);
// straggler ranks within the GPUs and factors
// finite and >= 1. Errors say the rule ("full mode: ...", "straggler ...").
[[nodiscard]] util::Result<void> CheckFullMode(
    const scenarios::ResolvedScenario& scenario, const ReplayOptions& options);

// Per-kind communication seconds of one stage: total time its stream was
// busy, and the part no compute overlapped (interval unions).
struct CommTime {
  double total_s = 0;
  double exposed_s = 0;
  // The share hidden under compute; 1 without communication.
  double hidden_fraction() const {
    return total_s > 0 ? 1 - exposed_s / total_s : 1;
  }
};

struct StageTime {
  int pp_rank = 0;
  double compute_s = 0;    // union of compute-stream intervals
  double idle_s = 0;       // no GPU stream of the stage busy
  double host_busy_s = 0;  // the host thread launching kernels
  // Compute-stream time waiting for a launch: a kernel ready on the GPU
  // (its stream and inputs done) that the host had not launched yet.
  double host_wait_s = 0;
  // Peak device memory over the replayed step (MemoryTimeline; in full mode
  // of the stage's first rank).
  double memory_peak_bytes = 0;
  std::array<CommTime, kNumStreamKinds> comm{};  // by StreamKind (compute 0)
  // Full mode: the figures above are means over the stage's `ranks`; the
  // slowest of them (most compute-stream time; the lowest on a tie) and
  // its compute time. Symmetric: 1, the representative, compute_s.
  int ranks = 1;
  int slowest_rank = 0;
  double slowest_compute_s = 0;
};

// One replayed rank's own figures.
struct RankTime {
  int rank = 0;
  int pp_rank = 0;
  double compute_s = 0;       // union of its compute-stream intervals
  double grouped_gemm_s = 0;  // its grouped GEMM kernels
  double finish_s = 0;        // its last op's finish
};

struct StepResult {
  double step_time_s = 0;
  double model_flops_per_step = 0;
  double tflops_per_gpu = 0;  // Megatron's model FLOPs / step / GPUs
  double tokens_per_sec_per_gpu = 0;
  double mfu = 0;  // tflops_per_gpu / the training dtype's dense peak
  // Mean over stages of idle time / step time. (Full mode: every "mean over
  // stages" below is the mean over all ranks, which is the mean over stages
  // of each stage's mean, stages having equal rank counts.)
  double bubble_fraction = 0;
  double host_idle_s = 0;  // mean over stages of StageTime::host_wait_s
  double host_busy_s = 0;  // mean over stages
  // Automatic-GC stall added to the replayed step (0 with manual_gc).
  double gc_stall_s = 0;
  // Mean over stages, by kind: tp, cp, ep, dp, pp.
  std::map<std::string, CommTime> comm_s;
  // Seconds of the step's critical path by stream kind (compute, tp, cp,
  // ep, dp, pp, host, copy; CriticalPathSeconds), the GC stall counted as
  // host: what the step waited on.
  std::map<std::string, double> critical_path_s;
  // Mean over stages of the busy time of each op class (gemm,
  // grouped_gemm, attention, memory_bound, optimizer, and comm kinds).
  std::map<std::string, double> time_by_op_class_s;
  std::vector<StageTime> stages;
  size_t ops = 0;
  std::string trace;  // Chrome trace JSON when asked
  bool full = false;  // the mode it was replayed in
  // Every replayed rank in rank order (symmetric: each stage's
  // representative), and the slowest (most compute-stream time).
  std::vector<RankTime> ranks;
  int slowest_rank = 0;
  // What the replay found worth telling the user (a p2p CP ring that
  // crosses NVLink domains with hops longer than its attention steps).
  std::vector<std::string> warnings;
  // The forward p2p ring's balance where the layout has one (the layer
  // whose hop outlasts its tile the most).
  std::optional<RingBalance> cp_ring;
  // The micro-batch counts replayed when the step was extended from its
  // periodic steady state (sim/periodic.h); nullopt: every micro-batch was.
  std::optional<std::array<int64_t, 3>> periodic_samples;
};

[[nodiscard]] util::Result<StepResult> Replay(
    const scenarios::ResolvedScenario& scenario, const Platform& platform,
    const ReplayOptions& options);

}  // namespace moesim::sim

#endif  // MOESIM_SIM_REPLAY_H_
