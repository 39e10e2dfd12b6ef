#include "tools/memory_report.h"

#include <cstdio>
#include <string_view>

#include "models/flops.h"
#include "tools/text_format.h"

namespace moesim::tools {
namespace {

using models::kGiB;

std::string JsonGiB(double bytes) { return Format("%.3f", bytes / kGiB); }

std::string JsonBytesMap(const std::vector<models::NamedBytes>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i ? ", " : "") + JsonString(items[i].name) + ": " +
           JsonGiB(items[i].bytes);
  }
  return out + "}";
}

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

MemoryReport BuildMemoryReport(const scenarios::ResolvedScenario& s) {
  MemoryReport r;
  r.params = models::CountParams(s.model);
  const double per_sequence = models::ModelFlopsPerSequence(
      s.model, s.training.seq_length, s.parallel.tp);
  r.model_flops_per_step = per_sequence * s.training.global_batch_size;
  r.model_flops_per_token = per_sequence / s.training.seq_length;
  r.memory = models::EstimateMemory(s.model, s.pipeline, s.parallel, s.training,
                                    s.system.gpu().memory_gib() * kGiB);
  return r;
}

std::string FormatMemoryText(const scenarios::ResolvedScenario& s,
                             const MemoryReport& r) {
  const models::Parallelism& p = s.parallel;
  std::string out;
  out += Format("model %s on %d x %s (%s, %.1f GiB)\n", s.model.name().c_str(),
                p.num_gpus(), s.system.name().c_str(),
                s.system.gpu().name().c_str(), s.system.gpu().memory_gib());
  out += LayoutLine(s) + "\n";
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
  if (busiest.optimizer_host_bytes > 0) {
    out += Format("\noptimizer state in host memory: %s GiB per GPU",
                  Gib(busiest.optimizer_host_bytes).c_str());
  }
  if (busiest.fsdp_unit_bytes > 0) {
    out += Format(
        "\nMegatron-FSDP whole layers (weights and gradients of the layer "
        "computing and the one prefetched, beside the shards): %s GiB",
        Gib(busiest.fsdp_unit_bytes).c_str());
  }
  if (busiest.activation_host_bytes > 0) {
    out += Format(
        "\nactivations in host memory (cpu_offloading, %zu layers): %s GiB "
        "per micro-batch",
        busiest.offloaded_layer_bytes.size(),
        Gib(busiest.activation_host_bytes).c_str());
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
    out += "defaults (Megatron-Bridge recipe):";
    for (const std::string& d : s.defaults_used) out += " " + d;
    out += "\n";
  }
  for (const std::string& w : s.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string FormatMemoryJson(const scenarios::ResolvedScenario& s,
                             const MemoryReport& r) {
  std::string out = "{\n";
  out += "  \"model\": " + JsonString(s.model.name()) + ",\n";
  out += "  \"system\": " + JsonString(s.system.name()) + ",\n";
  out += Format("  \"num_gpus\": %d,\n", s.parallel.num_gpus());
  out += Format("  \"params_total\": %lld,\n",
                static_cast<long long>(r.params.total));
  out += Format("  \"params_active\": %lld,\n",
                static_cast<long long>(r.params.active));
  out += Format("  \"params_total_with_mtp\": %lld,\n",
                static_cast<long long>(r.params.total_with_mtp));
  out += "  \"model_flops_per_step\": " + JsonNumber(r.model_flops_per_step) +
         ",\n";
  out += "  \"model_flops_per_token\": " + JsonNumber(r.model_flops_per_token) +
         ",\n";
  out += "  \"stages\": [\n";
  for (size_t i = 0; i < r.memory.stages.size(); ++i) {
    const models::StageMemory& st = r.memory.stages[i];
    out += Format("    {\"pp_rank\": %d, \"params\": %lld, ", st.pp_rank,
                  static_cast<long long>(st.params));
    out += "\"params_gib\": " + JsonGiB(st.params_bytes) +
           ", \"fp8_weights_gib\": " + JsonGiB(st.fp8_weight_bytes) +
           ", \"grads_gib\": " + JsonGiB(st.grads_bytes) +
           ", \"optimizer_gib\": " + JsonGiB(st.optimizer_bytes) +
           ", \"optimizer_host_gib\": " + JsonGiB(st.optimizer_host_bytes) +
           ", \"fsdp_unit_gib\": " + JsonGiB(st.fsdp_unit_bytes) +
           ", \"activation_host_gib\": " +
           JsonGiB(st.activation_host_bytes) +
           ", \"activations_gib\": " + JsonGiB(st.activations_bytes) +
           Format(", \"in_flight_microbatches\": %lld",
                  static_cast<long long>(st.peak_in_flight)) +
           ", \"activations_by_module_gib\": " + JsonBytesMap(st.activations) +
           ", \"transient_gib\": " + JsonGiB(st.transient_bytes) +
           ", \"buffers_gib\": " + JsonGiB(st.buffers_bytes) +
           ", \"buffers_by_kind_gib\": " + JsonBytesMap(st.buffers) +
           ", \"allocated_peak_gib\": " + JsonGiB(st.allocated_peak_bytes) +
           ", \"peak_gib\": " + JsonGiB(st.peak_bytes) + "}";
    out += i + 1 < r.memory.stages.size() ? ",\n" : "\n";
  }
  out += "  ],\n";
  out += Format("  \"busiest_pp_rank\": %d,\n", r.memory.busiest_rank);
  out += "  \"peak_memory_gib\": " + JsonGiB(r.memory.peak_bytes) + ",\n";
  out += "  \"capacity_gib\": " + JsonGiB(r.memory.capacity_bytes) + ",\n";
  out +=
      std::string("  \"fits\": ") + (r.memory.fits ? "true" : "false") + ",\n";
  out += "  \"margin_gib\": " + JsonGiB(r.memory.margin_bytes) + ",\n";
  out += "  \"defaults_used\": " + JsonList(s.defaults_used) + ",\n";
  out += "  \"warnings\": " + JsonList(s.warnings) + "\n";
  out += "}\n";
  return out;
}

}  // namespace moesim::tools
