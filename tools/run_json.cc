// run --json (tools/run_report.h, FormatRunJson).
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/op_pricing.h"
#include "sim/step_stats.h"
#include "tools/memory_report.h"
#include "tools/run_report.h"
#include "util/json_write.h"

namespace moesim::tools {

using models::kGiB;

namespace {

// run --json's per-stage objects; the memory model's stage peaks beside
// the replay's.
void WriteStages(util::JsonWriter& w, const sim::StepResult& st,
                 const models::MemoryEstimate& m) {
  w.BeginArray();
  for (size_t i = 0; i < st.stages.size(); ++i) {
    const sim::StageTime& stage = st.stages[i];
    w.BeginObject();
    w.Key("pp_rank").Number(stage.pp_rank);
    w.Key("compute_s").Number(stage.compute_s);
    w.Key("idle_s").Number(stage.idle_s);
    w.Key("peak_memory_gib").Number(m.stages[i].peak_bytes / kGiB);
    w.Key("replay_peak_memory_gib").Number(stage.memory_peak_bytes / kGiB);
    if (st.full) {
      w.Key("ranks").Number(stage.ranks);
      w.Key("slowest_rank").Number(stage.slowest_rank);
      w.Key("slowest_compute_s").Number(stage.slowest_compute_s);
    }
    w.EndObject();
  }
  w.EndArray();
}

// Full mode's per-rank objects, in rank order.
void WriteRanks(util::JsonWriter& w, const sim::StepResult& st) {
  w.BeginArray();
  for (const sim::RankTime& rank : st.ranks) {
    w.BeginObject();
    w.Key("rank").Number(rank.rank);
    w.Key("pp_rank").Number(rank.pp_rank);
    w.Key("compute_s").Number(rank.compute_s);
    w.Key("grouped_gemm_s").Number(rank.grouped_gemm_s);
    w.Key("finish_s").Number(rank.finish_s);
    w.EndObject();
  }
  w.EndArray();
}

// The replay's figures of `st` (FormatRunJson), from the step time on.
void WriteStepFigures(util::JsonWriter& w, const studies::RunReport& r) {
  const sim::StepResult& st = r.step;
  const models::MemoryEstimate& m = r.memory.memory;
  auto comm_object = [&](auto value) {
    w.BeginObject();
    for (const sim::StreamKind k : sim::kCommKinds) {
      const char* kind = sim::StreamKindName(k);
      w.Key(kind).Number(value(st.comm_s.at(kind)));
    }
    w.EndObject();
  };
  auto seconds_map = [&](const std::map<std::string, double>& map) {
    w.BeginObject();
    for (const auto& [name, seconds] : map) w.Key(name).Number(seconds);
    w.EndObject();
  };
  w.Key("step_time_s").Number(st.step_time_s);
  w.Key("tflops_per_gpu").Number(st.tflops_per_gpu);
  w.Key("tokens_per_sec_per_gpu").Number(st.tokens_per_sec_per_gpu);
  w.Key("mfu").Number(st.mfu);
  w.Key("model_flops_per_step").Number(st.model_flops_per_step);
  w.Key("peak_memory_gib").Number(m.peak_bytes / kGiB);
  w.Key("capacity_gib").Number(m.capacity_bytes / kGiB);
  w.Key("fits").Bool(m.fits);
  w.Key("margin_gib").Number(m.margin_bytes / kGiB);
  w.Key("bubble_fraction").Number(st.bubble_fraction);
  const sim::Wall wall = sim::DiagnoseWall(st, m.peak_bytes, m.capacity_bytes);
  w.Key("wall").String(wall.name);
  w.Key("wall_evidence").BeginObject();
  w.Key("comm_share").Number(wall.comm_share);
  w.Key("host_share").Number(wall.host_share);
  w.Key("compute_share").Number(wall.compute_share);
  w.Key("exposed_comm_share").Number(wall.exposed_comm_share);
  w.Key("memory_headroom").Number(wall.memory_headroom);
  w.EndObject();
  w.Key("host_idle_s").Number(st.host_idle_s);
  w.Key("sustained_compute_rate").Number(r.sustained_compute_rate);
  w.Key("host_busy_s").Number(st.host_busy_s);
  w.Key("gc_stall_s").Number(st.gc_stall_s);
  w.Key("exposed_comm_s");
  comm_object([](const sim::CommTime& c) { return c.exposed_s; });
  w.Key("comm_s");
  comm_object([](const sim::CommTime& c) { return c.total_s; });
  w.Key("hidden_fraction");
  comm_object([](const sim::CommTime& c) { return c.hidden_fraction(); });
  w.Key("time_by_op_class_s");
  seconds_map(st.time_by_op_class_s);
  w.Key("critical_path_s");
  seconds_map(st.critical_path_s);
  w.Key("stages");
  WriteStages(w, st, m);
  if (st.full) {
    w.Key("ranks");
    WriteRanks(w, st);
  }
  w.Key("ops").Number(static_cast<double>(st.ops));
  if (const auto& samples = st.periodic_samples; samples) {
    w.Key("periodic_microbatches").BeginArray();
    for (const int64_t count : *samples) w.Number(static_cast<double>(count));
    w.EndArray();
  }
}

}  // namespace

std::string FormatRunJson(const scenarios::ResolvedScenario& s,
                          const studies::RunReport& r) {
  const sim::StepResult& st = r.step;
  util::JsonWriter w;
  w.BeginObject(util::JsonWriter::Layout::kLines);
  w.Key("model").String(s.model.name());
  w.Key("system").String(s.system.name());
  w.Key("num_gpus").Number(s.parallel.num_gpus());
  w.Key("scenario");
  WriteScenario(w, s);
  if (st.full) {
    w.Key("mode").String("full");
    w.Key("ranks_simulated").Number(static_cast<double>(st.ranks.size()));
    w.Key("slowest_rank").Number(st.slowest_rank);
    double slowest_s = 0;
    for (const sim::RankTime& rank : st.ranks) {
      if (rank.rank == st.slowest_rank) slowest_s = rank.compute_s;
    }
    w.Key("slowest_rank_compute_s").Number(slowest_s);
  }
  WriteStepFigures(w, r);
  w.Key("defaults_used").Strings(s.defaults_used);
  if (const std::optional<sim::RingBalance>& ring = st.cp_ring; ring) {
    w.Key("cp_ring").BeginObject();
    w.Key("ranks").Number(ring->ring);
    w.Key("hop_s").Number(ring->hop_s);
    w.Key("tile_s").Number(ring->tile_s);
    w.Key("crosses_domains").Bool(ring->crosses_domains);
    w.Key("merged_steps").Number(ring->merged_steps);
    w.EndObject();
  }
  std::vector<std::string> warnings = s.warnings;
  warnings.insert(warnings.end(), st.warnings.begin(), st.warnings.end());
  w.Key("warnings").Strings(warnings);
  w.EndObject();
  return std::move(w).Take();
}

}  // namespace moesim::tools
