// sim::Replay: one training step of a resolved scenario, replayed micro-batch
// by micro-batch on the event engine, and what it predicts.
//
// Design (symmetric mode, ../shared/ARCHITECTURE.md). Ranks that the layout
// makes equivalent do the same work at the same times, so one representative
// rank per pipeline stage is replayed (TP, CP, DP and EP index 0); its
// collectives are priced on its real groups' placement, so the traffic its
// peers put on shared NICs is in the price. Each stage has a compute stream
// and one stream per communication kind (TP, CP, EP, DP, PP).
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
#include <map>
#include <memory>
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
// efficiencies of both tiers. The default (identity) changes nothing.
[[nodiscard]] util::Result<Platform> BuildPlatform(
    const scenarios::ResolvedScenario& scenario,
    const calibration::Profile& profile = {});

// The GPU's spec peaks for the cost model.
calibration::GpuPeaks PeaksOf(const topology::System& system);

enum class NetworkKind { kAnalytical, kFlow };

struct ReplayOptions {
  NetworkKind network = NetworkKind::kAnalytical;
  bool trace = false;  // keep the Chrome trace in StepResult::trace
};

// Per-kind communication seconds of one stage: total time its stream was
// busy, and the part no compute overlapped (interval unions).
struct CommTime {
  double total_s = 0;
  double exposed_s = 0;
};

struct StageTime {
  int pp_rank = 0;
  double compute_s = 0;    // union of compute-stream intervals
  double idle_s = 0;       // no GPU stream of the stage busy
  double host_busy_s = 0;  // the host thread launching kernels
  // Compute-stream time waiting for a launch: a kernel ready on the GPU
  // (its stream and inputs done) that the host had not launched yet.
  double host_wait_s = 0;
  // Peak device memory over the replayed step (MemoryTimeline).
  double memory_peak_bytes = 0;
  std::array<CommTime, kNumStreamKinds> comm{};  // by StreamKind (compute 0)
};

struct StepResult {
  double step_time_s = 0;
  double model_flops_per_step = 0;
  double tflops_per_gpu = 0;  // Megatron's model FLOPs / step / GPUs
  double tokens_per_sec_per_gpu = 0;
  double mfu = 0;  // tflops_per_gpu / the training dtype's dense peak
  // Mean over stages of idle time / step time.
  double bubble_fraction = 0;
  double host_idle_s = 0;  // mean over stages of StageTime::host_wait_s
  double host_busy_s = 0;  // mean over stages
  // Mean over stages, by kind: tp, cp, ep, dp, pp.
  std::map<std::string, CommTime> comm_s;
  // Mean over stages of the busy time of each op class (gemm,
  // grouped_gemm, attention, memory_bound, optimizer, and comm kinds).
  std::map<std::string, double> time_by_op_class_s;
  std::vector<StageTime> stages;
  size_t ops = 0;
  std::string trace;  // Chrome trace JSON when asked
};

[[nodiscard]] util::Result<StepResult> Replay(
    const scenarios::ResolvedScenario& scenario, const Platform& platform,
    const ReplayOptions& options);

}  // namespace moesim::sim

#endif  // MOESIM_SIM_REPLAY_H_
