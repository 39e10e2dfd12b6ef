#include "tools/memory_report.h"

#include <cstdio>
#include <string_view>

#include "models/flops.h"
#include "tools/text_format.h"

namespace moesim::tools {
namespace {

using models::kGiB;

std::string Gib(double bytes) { return Format("%.1f", bytes / kGiB); }

}  // namespace

std::string LayoutLine(const scenarios::ResolvedScenario& s) {
  const models::Parallelism& p = s.parallel;
  return Format(
      "layout TP%d CP%d DP%d PP%d VPP%d | EP%d ETP%d EDP%d | seq %lld MBS %lld "
      "GBS %lld (%lld micro-batches)",
      p.tp, p.cp, p.dp, p.pp, p.vpp, p.ep, p.etp, p.edp,
      static_cast<long long>(s.training.seq_length),
      static_cast<long long>(s.training.micro_batch_size),
      static_cast<long long>(s.training.global_batch_size),
      static_cast<long long>(s.training.num_microbatches()));
}

namespace {

std::string RecomputeSummary(const scenarios::Recompute& rc) {
  if (rc.granularity() == "full") {
    return Format("full (%s, %d layers)", rc.method().c_str(), rc.num_layers());
  }
  if (rc.granularity() != "selective" || rc.modules_size() == 0) return "none";
  std::string modules;
  for (const std::string& m : rc.modules())
    modules += (modules.empty() ? "" : ",") + m;
  return "selective " + modules;
}

std::string FsdpSummary(const scenarios::Scenario& spec) {
  return spec.use_megatron_fsdp()
             ? "Megatron-FSDP " + spec.data_parallel_sharding_strategy()
             : std::string("off");
}

}  // namespace

std::string TrainingLine(const scenarios::ResolvedScenario& s) {
  const scenarios::Scenario& spec = s.spec;
  std::string line = Format(
      "training %s, %s dispatcher, recompute %s, routing %s, CUDA graphs %s",
      spec.precision().c_str(), spec.dispatcher().c_str(),
      RecomputeSummary(spec.recompute()).c_str(), spec.routing().c_str(),
      spec.cuda_graph().c_str());
  if (spec.optimizer_offload_fraction() > 0)
    line += Format(", optimizer offload %g", spec.optimizer_offload_fraction());
  if (spec.cpu_offloading())
    line += Format(", activation offload %d layers",
                   spec.cpu_offloading_num_layers());
  if (s.training.activation_offload.any()) {
    std::string modules;
    for (int g = 0; g < models::kNumOffloadModules; ++g) {
      if (!s.training.activation_offload.modules[g]) continue;
      if (!modules.empty()) modules += ',';
      modules += models::kOffloadModuleNames[g];
    }
    line += ", activation offload " + modules;
    if (s.training.activation_offload.fraction < 1)
      line += Format(" (fraction %g)", s.training.activation_offload.fraction);
  }
  if (spec.offload_optimizer_states()) line += ", optimizer states offloaded";
  if (spec.use_megatron_fsdp()) line += ", " + FsdpSummary(spec);
  line += s.training.distributed_optimizer ? ", distributed optimizer"
                                           : ", no distributed optimizer";
  if (s.training.pipeline_schedule != models::PipelineScheduleKind::kOneFOneB)
    line += ", pipeline schedule " + s.spec.pipeline_schedule();
  if (s.training.ep_overlap) line += ", EP overlap";
  return line;
}

std::string FormatMemoryText(const scenarios::ResolvedScenario& s,
                             const studies::MemoryReport& r) {
  const models::Parallelism& p = s.parallel;
  std::string out;
  out += Format("model %s on %d x %s (%s, %.1f GiB)\n", s.model.name().c_str(),
                p.num_gpus(), s.system.name().c_str(),
                s.system.gpu().name().c_str(), s.system.gpu().memory_gib());
  out += LayoutLine(s) + "\n";
  out += TrainingLine(s) + "\n";
  out += Format("params %.2fB total, %.2fB active (%.2fB / %.2fB with MTP)\n",
                r.params.total / 1e9, r.params.active / 1e9,
                r.params.total_with_mtp / 1e9, r.params.active_with_mtp / 1e9);
  out += Format(
      "model FLOPs %.4g per step, %.2f GFLOP per token (Megatron-Bridge "
      "count)\n\n",
      r.model_flops_per_step, r.model_flops_per_token / 1e9);
  out +=
      "GiB per GPU   params    weights  fp8-copy  grads  optimizer  activ. "
      "(mb)  transient"
      "  buffers  peak   capacity  verdict\n";
  const double capacity = r.memory.capacity_bytes;
  for (const models::StageMemory& st : r.memory.stages) {
    const double margin = capacity - st.peak_bytes;
    out += Format(
        "pp%-3d       %7.2fB  %7s  %8s  %5s  %9s  %6s (%3lld)  %9s  %7s  %5s  "
        "%8s  %s\n",
        st.pp_rank, st.params / 1e9, Gib(st.params_bytes).c_str(),
        Gib(st.fp8_weight_bytes).c_str(), Gib(st.grads_bytes).c_str(),
        Gib(st.optimizer_bytes).c_str(), Gib(st.activations_bytes).c_str(),
        static_cast<long long>(st.peak_in_flight),
        Gib(st.transient_bytes).c_str(), Gib(st.buffers_bytes).c_str(),
        Gib(st.peak_bytes).c_str(), Gib(capacity).c_str(),
        margin >= 0 ? Format("fits (%.1f free)", margin / kGiB).c_str()
                    : Format("OOM (%.1f over)", -margin / kGiB).c_str());
  }
  const models::StageMemory& busiest = r.memory.stages[r.memory.busiest_rank];
  out +=
      Format("\nactivations of pp%d by module (GiB, %lld stored forwards):",
             busiest.pp_rank, static_cast<long long>(busiest.peak_in_flight));
  for (const models::NamedBytes& a : busiest.activations) {
    out += Format(" %s %s", a.name.c_str(), Gib(a.bytes).c_str());
  }
  out += "\nbuffers outside the allocator (GiB):";
  for (const models::NamedBytes& b : busiest.buffers) {
    out += Format(" %s %s", b.name.c_str(), Gib(b.bytes).c_str());
  }
  const int node = s.system.gpus_per_node();
  if (busiest.optimizer_host_bytes > 0) {
    out += Format(
        "\noptimizer state in host memory: %s GiB per GPU, %s GiB "
        "per node of %d GPUs",
        Gib(busiest.optimizer_host_bytes).c_str(),
        Gib(node * busiest.optimizer_host_bytes).c_str(), node);
  }
  if (busiest.optimizer_step_bytes > 0) {
    out += Format(
        "\noptimizer step (states back on the GPU, no activations): %s GiB "
        "allocated",
        Gib(busiest.optimizer_step_bytes).c_str());
  }
  if (!busiest.offload_saved.empty()) {
    out += "\nsaved on the GPU by activation offload (GiB, stored forwards):";
    for (const models::NamedBytes& a : busiest.offload_saved) {
      out += Format(" %s %s", a.name.c_str(), Gib(a.bytes).c_str());
    }
  }
  if (busiest.fsdp_unit_bytes > 0) {
    out += Format(
        "\nMegatron-FSDP whole layers (weights and gradients of the layer "
        "computing and the one prefetched, beside the shards): %s GiB",
        Gib(busiest.fsdp_unit_bytes).c_str());
  }
  if (busiest.activation_host_bytes > 0 && s.training.cpu_offloading) {
    out += Format(
        "\nactivations in host memory (cpu_offloading, %zu layers): %s GiB "
        "per micro-batch",
        busiest.offloaded_layer_bytes.size(),
        Gib(busiest.activation_host_bytes).c_str());
  } else if (busiest.activation_host_bytes > 0) {
    out += Format(
        "\nactivations in host memory (stored forwards): %s GiB per GPU, %s "
        "GiB per node of %d GPUs",
        Gib(busiest.activation_host_bytes).c_str(),
        Gib(node * busiest.activation_host_bytes).c_str(), node);
  }
  out += Format(
      "\n\npeak %s GiB on pp%d of %s GiB: %s\n",
      Gib(r.memory.peak_bytes).c_str(), r.memory.busiest_rank,
      Gib(capacity).c_str(),
      r.memory.fits
          ? Format("fits, %.1f GiB free", r.memory.margin_bytes / kGiB).c_str()
          : Format("OUT OF MEMORY by %.1f GiB", -r.memory.margin_bytes / kGiB)
                .c_str());
  if (!s.defaults_used.empty()) {
    out += s.spec.defaults() == "megatron-lm"
               ? "defaults (Megatron-LM):"
               : "defaults (Megatron-Bridge recipe):";
    for (const std::string& d : s.defaults_used) out += " " + d;
    out += "\n";
  }
  for (const std::string& w : s.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace moesim::tools
