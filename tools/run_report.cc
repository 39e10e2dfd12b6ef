#include "tools/run_report.h"

#include <cmath>
#include <cstdio>
#include <fstream>

#include "sim/op_pricing.h"
#include "sim/step_stats.h"
#include "tools/text_format.h"
#include "util/output.h"

namespace moesim::tools {

namespace {

using models::kGiB;

}  // namespace

std::string FormatRunText(const scenarios::ResolvedScenario& s,
                          const studies::RunReport& r) {
  const models::Parallelism& p = s.parallel;
  const sim::StepResult& st = r.step;
  std::string out;
  out += Format("model %s on %d x %s\n", s.model.name().c_str(), p.num_gpus(),
                s.system.name().c_str());
  out += LayoutLine(s) + "\n";
  out += TrainingLine(s) + "\n";
  out += st.full
             ? Format("mode: full (%zu ranks replayed; slowest rank %d)\n",
                      st.ranks.size(), st.slowest_rank)
             : std::string("mode: symmetric (one rank per pipeline stage)\n");
  if (const auto& samples = st.periodic_samples; samples) {
    out += Format(
        "periodic steady state: %lld, %lld and %lld of %lld micro-batches "
        "replayed, the step extended from them (--every-microbatch "
        "replays all)\n",
        static_cast<long long>((*samples)[0]),
        static_cast<long long>((*samples)[1]),
        static_cast<long long>((*samples)[2]),
        static_cast<long long>(s.training.num_microbatches()));
  }
  if (st.cp_ring && st.cp_ring->merged_steps > 0) {
    out += Format(
        "p2p CP ring: steps 1-%d of each %d-step ring run as one, every op "
        "after it as if replayed step by step (--every-ring-step replays "
        "each)\n",
        st.cp_ring->merged_steps, st.cp_ring->ring);
  }
  out += "\n";
  out += Format("step time            %10.3f s\n", st.step_time_s);
  out += Format("model TFLOPS/GPU     %10.1f   (Megatron-Bridge FLOPs count)\n",
                st.tflops_per_gpu);
  out += Format("tokens/s/GPU         %10.1f\n", st.tokens_per_sec_per_gpu);
  out += Format("MFU                  %10.1f %% of the %s dense peak\n",
                100 * st.mfu, s.spec.precision().c_str());
  // Every stream of the stage idle: the pipeline bubble, and at PP 1 too
  // the GPU's waits for the host and for syncs.
  out += Format(
      "GPU idle             %10.1f %% of the step (no kernel or transfer: "
      "pipeline bubble, host and sync waits)\n",
      100 * st.bubble_fraction);
  out += Format(
      "host                 %10.3f s launching, GPU waited %.3f s for "
      "launches\n",
      st.host_busy_s, st.host_idle_s);
  if (r.sustained_compute_rate < 1) {
    out += Format(
        "sustained load       GEMM and attention at %.1f %% of their "
        "benchmarked rate (calibration/tables/%s/sustained.csv)\n",
        100 * r.sustained_compute_rate, s.system.gpu().calibration().c_str());
  }
  if (st.gc_stall_s > 0) {
    out += Format(
        "garbage collection   %10.3f s of stalls (automatic GC; --manual-gc "
        "1 removes them)\n",
        st.gc_stall_s);
  }
  const sim::Wall wall = sim::DiagnoseWall(st, r.memory.memory.peak_bytes,
                                           r.memory.memory.capacity_bytes);
  out += "binding wall         " + wall.name + " (" + wall.evidence + ")\n\n";
  out += "communication (mean per stage)   total s   exposed s   hidden\n";
  for (const sim::StreamKind k : sim::kCommKinds) {
    const char* kind = sim::StreamKindName(k);
    const sim::CommTime& c = st.comm_s.at(kind);
    out += Format("  %-30s %9.3f   %9.3f   %5.1f %%\n", kind, c.total_s,
                  c.exposed_s, 100 * c.hidden_fraction());
  }
  for (const auto& [kind, label] :
       {std::pair{"copy", "copy d2h (offload)"},
        std::pair{"copy_h2d", "copy h2d (offload reloads)"}}) {
    if (const auto copy = st.comm_s.find(kind); copy != st.comm_s.end()) {
      const sim::CommTime& c = copy->second;
      out += Format("  %-30s %9.3f   %9.3f   %5.1f %%\n", label, c.total_s,
                    c.exposed_s, 100 * c.hidden_fraction());
    }
  }
  out += "\ntime by op class (mean per stage, s)\n";
  for (const auto& [name, seconds] : st.time_by_op_class_s) {
    out += Format("  %-30s %9.3f\n", name.c_str(), seconds);
  }
  out +=
      "\nper stage     compute s   idle s   peak GiB (replayed)        "
      "verdict\n";
  const models::MemoryEstimate& m = r.memory.memory;
  for (size_t i = 0; i < st.stages.size(); ++i) {
    const double peak = m.stages[i].peak_bytes;
    const double margin = m.capacity_bytes - peak;
    out += Format(
        "  pp%-3d     %10.3f %8.3f %10.1f (%6.1f)   %s\n", st.stages[i].pp_rank,
        st.stages[i].compute_s, st.stages[i].idle_s, peak / kGiB,
        st.stages[i].memory_peak_bytes / kGiB,
        margin >= 0
            ? Format("fits (%.1f GiB free)", margin / kGiB).c_str()
            : Format("OUT OF MEMORY by %.1f GiB", -margin / kGiB).c_str());
  }
  if (st.full) {
    out += "\nslowest rank per stage (compute s; the stage's mean above)\n";
    for (const sim::StageTime& stage : st.stages) {
      out +=
          Format("  pp%-3d     rank %-6d %10.3f   of %d ranks\n", stage.pp_rank,
                 stage.slowest_rank, stage.slowest_compute_s, stage.ranks);
    }
  }
  out += Format("\nmemory: peak %.1f GiB of %.1f GiB (pp%d): %s\n",
                m.peak_bytes / kGiB, m.capacity_bytes / kGiB, m.busiest_rank,
                m.fits ? "fits" : "OUT OF MEMORY");
  for (const std::string& d : s.defaults_used) {
    out += "default: " + d + "\n";
  }
  for (const std::string& w : s.warnings) out += "warning: " + w + "\n";
  for (const std::string& w : st.warnings) out += "warning: " + w + "\n";
  return out;
}

util::Result<std::string> RunCommand(const RunFlags& f) {
  if (!f.stragglers.empty() && !f.full) {
    return std::unexpected(FlagError(
        "--straggler", "needs --full (only the full mode replays each rank)"));
  }
  calibration::Profile profile;
  if (!f.calibration_file.empty()) {
    auto loaded = calibration::LoadProfile(f.calibration_file);
    if (!loaded) return std::unexpected(loaded.error());
    profile = std::move(*loaded);
  }
  auto scenario = studies::ResolveFlags(f.scenario);
  if (!scenario) return std::unexpected(scenario.error());
  const int gpus = scenario->parallel.num_gpus();
  if (f.full && gpus > sim::kMaxFullRanks) {
    return std::unexpected(FlagError(
        "--full", std::to_string(gpus) +
                      " GPUs is beyond full mode's limit "
                      "of " +
                      std::to_string(sim::kMaxFullRanks) +
                      " ranks (each rank is replayed; drop --full for the "
                      "symmetric mode)"));
  }
  auto stragglers = ParseStragglers(f, gpus);
  if (!stragglers) return std::unexpected(stragglers.error());
  sim::ReplayOptions options;
  options.network = f.network == "flow" ? sim::NetworkKind::kFlow
                                        : sim::NetworkKind::kAnalytical;
  options.trace = !f.trace_file.empty();
  options.full = f.full;
  options.periodic = !f.every_microbatch;
  options.merge_ring_steps = !f.every_ring_step;
  options.stragglers = std::move(*stragglers);
  options.notice = [](const std::string& text) {
    std::fprintf(stderr, "moesim: note: %s\n", text.c_str());
  };
  // Before the replay: a trace that would overwrite an input is refused
  // at once, not after the work.
  if (auto ok = util::CheckOutputTargets({{"--trace", f.trace_file}}); !ok)
    return std::unexpected(ok.error());
  auto report = studies::BuildRunReport(*scenario, options, profile);
  if (!report) {
    // The replay's own limits name the flag that asked for them.
    const std::string& message = report.error().message;
    if (message.starts_with("trace: "))
      return std::unexpected(FlagError("--trace", message.substr(7)));
    if (message.starts_with("full mode"))
      return std::unexpected(FlagError("--full", message));
    return std::unexpected(report.error());
  }
  if (options.trace) {
    if (auto ok =
            util::WriteOutputFile(f.trace_file, report->step.trace, "--trace");
        !ok)
      return std::unexpected(ok.error());
  }
  return f.json ? FormatRunJson(*scenario, *report)
                : FormatRunText(*scenario, *report);
}

}  // namespace moesim::tools
