#include "sim/replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "models/flops.h"
#include "models/memory.h"
#include "models/pipeline_schedules.h"
#include "sim/engine.h"
#include "sim/periodic.h"
#include "sim/step_builder.h"
#include "sim/step_stats.h"

namespace moesim::sim {

namespace {

using topology::GroupKind;

constexpr const char* kRankOrder = "tp-cp-ep-dp-pp";  // Megatron's default

// Per stage, the ranks to replay in lane order. Symmetric: the
// representative (the first pipeline group's member). Full: every rank,
// lane l of each stage being the l-th pipeline group's member there.
std::vector<std::vector<int>> LaneRanks(const topology::Placement& placement,
                                        int pp, bool full) {
  std::vector<std::vector<int>> lanes(pp);
  for (int rank = 0; rank < placement.num_ranks(); ++rank) {
    const std::vector<int> group = placement.Group(GroupKind::kPp, rank);
    if (group.front() != rank) continue;  // not a first-stage rank
    for (int r = 0; r < pp; ++r) lanes[r].push_back(group[r]);
    if (!full) break;
  }
  return lanes;
}

// Full mode's figures: per-rank results folded into per-stage means and
// slowest ranks.
void FoldStages(const internal::StepBuilder& builder, StepResult& out) {
  const int per_stage = builder.lanes_per_stage();
  std::vector<StageTime> stages;
  for (int r = 0; r < builder.num_stages(); ++r) {
    StageTime st;
    st.pp_rank = r;
    st.ranks = per_stage;
    st.slowest_compute_s = -1;
    for (int l = 0; l < per_stage; ++l) {
      const int i = builder.LaneIndex(r, l);
      const StageTime& lane = out.stages[i];
      st.compute_s += lane.compute_s / per_stage;
      st.idle_s += lane.idle_s / per_stage;
      st.host_busy_s += lane.host_busy_s / per_stage;
      st.host_wait_s += lane.host_wait_s / per_stage;
      for (int k = 0; k < kNumStreamKinds; ++k) {
        st.comm[k].total_s += lane.comm[k].total_s / per_stage;
        st.comm[k].exposed_s += lane.comm[k].exposed_s / per_stage;
      }
      if (lane.compute_s > st.slowest_compute_s) {
        st.slowest_compute_s = lane.compute_s;
        st.slowest_rank = builder.lanes()[i].rank;
      }
    }
    st.memory_peak_bytes =
        out.stages[builder.LaneIndex(r, 0)].memory_peak_bytes;
    stages.push_back(st);
  }
  out.stages = std::move(stages);
}

// The processes a full-mode trace keeps: every stage's first rank, the
// stragglers, the slowest rank, then the slowest rank's groups' members
// until kMaxTracedRanks.
std::vector<bool> TracedProcesses(const Engine& engine,
                                  const internal::StepBuilder& builder,
                                  const ReplayOptions& options,
                                  int slowest_rank) {
  std::vector<bool> rank_kept(builder.lanes().size(), false);
  std::vector<int> lane_of(builder.lanes().size(), -1);
  for (size_t i = 0; i < builder.lanes().size(); ++i) {
    lane_of[builder.lanes()[i].rank] = static_cast<int>(i);
  }
  int kept = 0;
  auto keep = [&](int rank, bool always) {
    if (rank_kept[rank] || (!always && kept >= kMaxTracedRanks)) return;
    rank_kept[rank] = true;
    ++kept;
  };
  for (int r = 0; r < builder.num_stages(); ++r) {
    keep(builder.lanes()[builder.LaneIndex(r, 0)].rank, true);
  }
  for (const Straggler& s : options.stragglers) keep(s.rank, true);
  keep(slowest_rank, true);
  const internal::Lane& slow = builder.lanes()[lane_of[slowest_rank]];
  const int stage_first = builder.LaneIndex(slow.stage, 0);
  for (int l = 0; l < builder.lanes_per_stage(); ++l) {
    keep(builder.lanes()[stage_first + l].rank, false);
  }
  std::vector<bool> processes(engine.process_count(), false);
  for (const internal::Lane& lane : builder.lanes()) {
    if (!rank_kept[lane.rank]) continue;
    for (const StreamId s : lane.streams) {
      if (s >= 0) processes[engine.stream_process(s)] = true;
    }
  }
  return processes;
}

}  // namespace

util::Result<void> CheckFullMode(const scenarios::ResolvedScenario& s,
                                 const ReplayOptions& options) {
  const int gpus = s.parallel.num_gpus();
  if (!options.full) {
    if (!options.stragglers.empty()) {
      return util::Fail("stragglers need full mode (every rank replayed)");
    }
    return {};
  }
  if (gpus > kMaxFullRanks) {
    return util::Fail("full mode: " + std::to_string(gpus) +
                      " GPUs is beyond its limit of " +
                      std::to_string(kMaxFullRanks) +
                      " ranks (every rank is replayed; the symmetric mode "
                      "has no limit)");
  }
  if (options.network == NetworkKind::kFlow && gpus > kMaxFullFlowRanks) {
    return util::Fail(
        "full mode on the flow network: " + std::to_string(gpus) +
        " GPUs is beyond its limit of " + std::to_string(kMaxFullFlowRanks) +
        " ranks (its time grows with the square of the ranks: 3.4 s at 512, "
        "minutes beyond 1,024); the analytical network or the symmetric "
        "mode has no such limit");
  }
  for (const Straggler& st : options.stragglers) {
    if (st.rank < 0 || st.rank >= gpus) {
      return util::Fail("straggler rank " + std::to_string(st.rank) +
                        " must be a GPU rank in [0, " + std::to_string(gpus) +
                        ")");
    }
    if (!std::isfinite(st.factor) || st.factor < 1) {
      return util::Fail("straggler factor of rank " + std::to_string(st.rank) +
                        " must be a finite number >= 1");
    }
  }
  return {};
}

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
  // A training step is sustained load: compute-bound kernels run at the
  // table's sustained share of their benchmarked rate (sustained.csv; the
  // power-limited SM clock), HBM-bound kernels and the GEMM traffic floor
  // at theirs.
  calibration::Corrections kernels = corrections;
  const double sustained = tables->SustainedComputeRate();
  for (Factor f : {Factor::kGemm, Factor::kGroupedGemm, Factor::kAttention})
    kernels.at(f) *= sustained;
  platform.costs = std::make_unique<calibration::CostModel>(
      std::move(*tables), PeaksOf(scenario.system), kernels);
  return platform;
}

namespace {

// Full mode's op limit and notice, and the trace's size limit, from the
// builder's estimate of the step's engine ops.
util::Result<void> CheckSize(const scenarios::ResolvedScenario& s,
                             const ReplayOptions& options, size_t estimated_ops,
                             int64_t microbatches) {
  const models::Parallelism& par = s.parallel;
  if (options.full && estimated_ops > kMaxFullOps) {
    return util::Fail(
        "full mode: about " + std::to_string(estimated_ops / 1'000'000) +
        " M engine ops (" + std::to_string(par.num_gpus()) + " ranks x " +
        std::to_string(microbatches) +
        " micro-batches) is beyond its limit of " +
        std::to_string(kMaxFullOps / 1'000'000) +
        " M ops (about 100 bytes each); fewer GPUs or micro-batches fit");
  }
  if (options.full && options.notice && estimated_ops > kNoticeFullOps) {
    const double ops = static_cast<double>(estimated_ops);
    char text[200];
    std::snprintf(text, sizeof(text),
                  "full mode: about %.0f M engine ops, some %.1f GB of memory "
                  "and %.0f s of replay (the limit is %zu M ops)",
                  ops / 1e6, ops * 100 / 1e9, ops / kFullOpsPerSecond,
                  kMaxFullOps / 1'000'000);
    options.notice(text);
  }
  if (options.trace) {
    // A full-mode trace keeps a bounded set of ranks (TracedRanks): each
    // stage's first, the stragglers, the slowest and up to kMaxTracedRanks.
    const double ranks = par.num_gpus();
    const double traced =
        options.full
            ? std::min(ranks,
                       static_cast<double>(kMaxTracedRanks + par.pp +
                                           options.stragglers.size() + 1))
            : ranks;
    const double bytes = static_cast<double>(estimated_ops) *
                         (options.full ? traced / ranks : 1.0) *
                         kTraceBytesPerOp;
    if (bytes > kMaxTraceBytes) {
      char size[32];
      std::snprintf(size, sizeof(size), "%.1f", bytes / 1e9);
      return util::Fail(
          "trace: about " + std::string(size) +
          " GB of Chrome JSON is beyond its limit of 1 GB, which Perfetto "
          "cannot load either; trace fewer micro-batches (a smaller global "
          "batch) or fewer GPUs");
    }
  }
  return {};
}

// The warning for a p2p CP ring that crosses NVLink domains with hops
// longer than its attention steps, with the a2a+p2p split to propose.
std::optional<std::string> CpRingWarning(
    const scenarios::ResolvedScenario& s,
    const std::optional<RingBalance>& ring) {
  if (!ring || s.training.cp_comm_type != models::CpCommType::kP2p ||
      !ring->crosses_domains || ring->hop_s <= ring->tile_s) {
    return std::nullopt;
  }
  // The a2a+p2p split to propose: the inner a2a group as large as the CP
  // ranks one NVLink domain holds, halved until Transformer Engine's head
  // split accepts it (scenarios::CpExchangeRule).
  const int cp = s.parallel.cp;
  int inner = std::max(1, ring->members_per_domain);
  while (inner > 1 &&
         (cp % inner != 0 ||
          scenarios::CpExchangeRule(s.model, s.parallel.tp, cp,
                                    models::CpCommType::kA2aP2p, "a2a+p2p",
                                    std::vector<int>{inner, cp / inner}))) {
    inner /= 2;
  }
  const std::string advice =
      inner > 1 ? "--cp-comm-type a2a+p2p --hierarchical-cp-sizes " +
                      std::to_string(inner) + "," + std::to_string(cp / inner) +
                      " keeps the a2a inside the domain and gives each "
                      "ring step " +
                      std::to_string(inner) +
                      "x the attention for the same "
                      "K/V bytes"
                : "no a2a+p2p split fits the heads per TP rank";
  char text[512];
  std::snprintf(text, sizeof text,
                "cp_comm_type p2p: the %d-rank ring crosses NVLink domains "
                "and its slowest hop (%.2f ms a K/V block) outlasts a "
                "step's attention (%.2f ms), so the exchange cannot hide; "
                "%s (Megatron-Bridge performance guide: a2a+p2p at large "
                "CP)",
                ring->ring, ring->hop_s * 1e3, ring->tile_s * 1e3,
                advice.c_str());
  return std::string(text);
}

// Each replayed rank's own figures, in rank order, and the slowest.
void AddRanks(const Engine& engine, const internal::StepBuilder& builder,
              StepResult& out) {
  const int lanes = static_cast<int>(builder.lanes().size());
  std::vector<Time> finish(lanes);
  std::vector<int> lane_of_stream(engine.stream_count(), 0);
  for (int i = 0; i < lanes; ++i) {
    for (const StreamId st : builder.lanes()[i].streams) {
      if (st >= 0) lane_of_stream[st] = i;  // -1: a stream the lane lacks
    }
  }
  for (size_t op = 0; op < engine.op_count(); ++op) {
    const OpId id = static_cast<OpId>(op);
    Time& f = finish[lane_of_stream[engine.op_stream(id)]];
    f = std::max(f, engine.timing(id).finish);
  }
  for (int i = 0; i < lanes; ++i) {
    const internal::Lane& lane = builder.lanes()[i];
    out.ranks.push_back({lane.rank, lane.stage, out.stages[i].compute_s,
                         builder.ClassSeconds(i, "grouped_gemm"),
                         finish[i].seconds()});
  }
  std::sort(
      out.ranks.begin(), out.ranks.end(),
      [](const RankTime& a, const RankTime& b) { return a.rank < b.rank; });
  double slowest_s = -1;
  for (const RankTime& rank : out.ranks) {
    if (rank.compute_s > slowest_s) {
      slowest_s = rank.compute_s;
      out.slowest_rank = rank.rank;
    }
  }
}

// A step's builder, priced, and the placement it replays on.
struct PricedStep {
  std::unique_ptr<topology::Placement> placement;
  std::unique_ptr<internal::StepBuilder> builder;
};

util::Result<PricedStep> PriceStep(const scenarios::ResolvedScenario& s,
                                   const Platform& platform,
                                   const ReplayOptions& options) {
  const models::Parallelism& par = s.parallel;
  topology::MeshSizes sizes{par.tp, par.cp,  par.dp, par.pp,
                            par.ep, par.etp, par.edp};
  auto placement =
      topology::Placement::Build(sizes, kRankOrder, *platform.cluster);
  if (!placement) return std::unexpected(placement.error());
  std::vector<double> slowdown;
  if (!options.stragglers.empty()) {
    slowdown.assign(placement->num_ranks(), 1.0);
    for (const Straggler& st : options.stragglers) {
      slowdown[st.rank] = std::max(slowdown[st.rank], st.factor);
    }
  }
  PricedStep priced;
  priced.placement =
      std::make_unique<topology::Placement>(std::move(*placement));
  priced.builder = std::make_unique<internal::StepBuilder>(
      s, platform, *priced.placement, options,
      LaneRanks(*priced.placement, par.pp, options.full), std::move(slowdown));
  if (auto p = priced.builder->Price(); !p) return std::unexpected(p.error());
  return priced;
}

// The priced step played out on the engine, micro-batch by micro-batch, at
// `microbatches` (0: the step's own; else a sample of sim/periodic.h):
// every figure but those FinishStep adds. With `steady_shift`, also its
// internal::SteadyShift.
util::Result<StepResult> PlayOut(const scenarios::ResolvedScenario& s,
                                 const Platform& platform,
                                 const ReplayOptions& options,
                                 internal::StepBuilder& builder,
                                 int64_t microbatches,
                                 std::optional<Time>* steady_shift) {
  const models::Parallelism& par = s.parallel;
  const int64_t played =
      microbatches > 0 ? microbatches : s.training.num_microbatches();
  if (auto ok = CheckSize(s, options, builder.EstimatedOps(played), played);
      !ok) {
    return std::unexpected(ok.error());
  }
  builder.Emit(played);
  Engine& engine = builder.engine();
  std::unique_ptr<topology::NetworkModel> network;
  if (options.network == NetworkKind::kFlow) {
    network = std::make_unique<topology::FlowNetwork>(*platform.cluster,
                                                      platform.network);
  }
  if (auto run = engine.Run(network.get()); !run) {
    return std::unexpected(run.error());
  }
  if (steady_shift) {
    *steady_shift =
        internal::SteadyShift(engine, builder.spans(), par.pp, par.vpp, played);
  }

  const int lanes = static_cast<int>(builder.lanes().size());
  StepResult out = SummarizeStep(engine, builder.TakeStreams(), lanes);
  out.cp_ring = builder.cp_ring();
  if (auto warning = CpRingWarning(s, out.cp_ring)) {
    out.warnings.push_back(*std::move(warning));
  }
  // The memory model's stages, estimated once per step (StepBuilder).
  const models::MemoryEstimate& memory = builder.Memory();
  for (int r = 0; r < builder.num_stages(); ++r) {
    const int lane = builder.LaneIndex(r, 0);
    const int compute =
        builder.lanes()[lane].streams[static_cast<int>(StreamKind::kCompute)];
    out.stages[lane].memory_peak_bytes = MemoryTimeline(
        engine, builder.spans(), r, compute, memory.stages[r], options.trace);
  }
  AddRanks(engine, builder, out);
  if (options.full) {
    FoldStages(builder, out);
  } else {
    for (int r = 0; r < builder.num_stages(); ++r) {
      out.stages[r].slowest_rank = builder.lanes()[r].rank;
      out.stages[r].slowest_compute_s = out.stages[r].compute_s;
    }
  }
  out.full = options.full;
  if (options.trace) {
    out.trace = options.full ? engine.ToChromeTrace(TracedProcesses(
                                   engine, builder, options, out.slowest_rank))
                             : engine.ToChromeTrace();
  }
  return out;
}

// What Replay adds to the engine's figures: the GC stall and the step's
// FLOPs and rates.
util::Result<void> FinishStep(const scenarios::ResolvedScenario& s,
                              const Platform& platform, StepResult& out) {
  const models::Parallelism& par = s.parallel;
  // Python's automatic garbage collector (no --manual-gc) pauses ranks at
  // different times and each collective waits for the paused one: a stall
  // of host.csv's auto_gc_stall_fraction of the step, after the replay.
  if (!s.training.manual_gc) {
    const auto fraction = platform.costs->Host("auto_gc_stall_fraction");
    if (!fraction) {
      return util::Fail("calibration/tables/" + platform.costs->tables().gpu +
                        "/host.csv: no auto_gc_stall_fraction row");
    }
    out.gc_stall_s = *fraction * out.step_time_s;
    out.step_time_s += out.gc_stall_s;
    out.critical_path_s["host"] += out.gc_stall_s;
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
  return {};
}

}  // namespace

util::Result<StepResult> Replay(const scenarios::ResolvedScenario& s,
                                const Platform& platform,
                                const ReplayOptions& options) {
  if (auto ok = CheckFullMode(s, options); !ok) {
    return std::unexpected(ok.error());
  }
  // The periodic steady state (sim/periodic.h): fixed op durations only
  // (the analytical network), not for a trace, which shows every op, and
  // for a schedule whose steady phase it knows (1F1B's).
  // Samples that were not steady yet are tried again from 4 times their
  // count while that costs less than the step.
  const int64_t microbatches = s.training.num_microbatches();
  const bool periodic =
      options.periodic && !options.trace &&
      options.network == NetworkKind::kAnalytical &&
      models::TraitsOf(s.training.pipeline_schedule).periodic_shortcut;
  auto priced = PriceStep(s, platform, options);
  if (!priced) return std::unexpected(priced.error());
  internal::StepBuilder& builder = *priced->builder;
  std::optional<StepResult> step;
  ReplayOptions quiet = options;
  quiet.notice = nullptr;
  for (int64_t at_least = 0; periodic && !step;) {
    const std::optional<std::array<int64_t, 3>> samples =
        internal::PeriodicSamples(s.parallel.pp, s.pipeline.vpp, microbatches,
                                  at_least);
    if (!samples) break;
    std::array<StepResult, 3> sampled;
    std::optional<Time> shift;
    for (size_t i = 0; i < samples->size(); ++i) {
      auto r = PlayOut(s, platform, quiet, builder, (*samples)[i],
                       i == 2 ? &shift : nullptr);
      if (!r) return std::unexpected(r.error());
      sampled[i] = std::move(*r);
    }
    step = internal::ExtrapolateStep(sampled[0], sampled[1], sampled[2],
                                     *samples, microbatches, shift);
    if (step) step->periodic_samples = *samples;
    at_least = 4 * (*samples)[0];
  }
  if (!step) {
    auto r = PlayOut(s, platform, options, builder, 0, nullptr);
    if (!r) return std::unexpected(r.error());
    step = std::move(*r);
  }
  if (auto ok = FinishStep(s, platform, *step); !ok) {
    return std::unexpected(ok.error());
  }
  return std::move(*step);
}

}  // namespace moesim::sim
