// memory --json and the resolved scenario object run --json shares
// (tools/memory_report.h: WriteScenario, FormatMemoryJson).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/params.h"
#include "tools/memory_report.h"
#include "util/json_write.h"

namespace moesim::tools {

using models::kGiB;

void WriteScenario(util::JsonWriter& w, const scenarios::ResolvedScenario& s) {
  const models::Parallelism& p = s.parallel;
  const scenarios::Scenario& spec = s.spec;
  const models::ParamSummary params = models::CountParams(s.model);
  auto integer = [](int64_t v) { return static_cast<double>(v); };
  w.BeginObject();
  w.Key("model").String(s.model.name());
  w.Key("model_source").String(s.model.source());
  w.Key("params_total").Number(integer(params.total));
  w.Key("params_active").Number(integer(params.active));
  w.Key("num_layers").Number(integer(s.model.num_layers()));
  w.Key("mtp_num_layers").Number(integer(s.model.mtp_num_layers()));
  w.Key("num_moe_experts").Number(integer(s.model.num_moe_experts()));
  w.Key("system").String(s.system.name());
  w.Key("num_gpus").Number(p.num_gpus());
  w.Key("layout").BeginObject();
  w.Key("tp").Number(p.tp).Key("cp").Number(p.cp).Key("dp").Number(p.dp);
  w.Key("pp").Number(p.pp).Key("vpp").Number(p.vpp).Key("ep").Number(p.ep);
  w.Key("etp").Number(p.etp).Key("edp").Number(p.edp);
  w.Key("sequence_parallel").Bool(p.sequence_parallel);
  w.Key("pipeline_layout")
      .String(spec.layout().pipeline_model_parallel_layout());
  w.Key("micro_batch_size").Number(integer(s.training.micro_batch_size));
  w.Key("global_batch_size").Number(integer(s.training.global_batch_size));
  w.Key("seq_length").Number(integer(s.training.seq_length));
  w.EndObject();
  w.Key("precision").String(spec.precision());
  w.Key("dispatcher").String(spec.dispatcher());
  w.Key("pipeline_schedule").String(spec.pipeline_schedule());
  w.Key("routing").String(spec.routing());
  w.Key("recompute").BeginObject();
  w.Key("granularity").String(spec.recompute().granularity());
  w.Key("modules").BeginArray();
  for (const std::string& m : spec.recompute().modules()) w.String(m);
  w.EndArray();
  w.Key("method").String(spec.recompute().method());
  w.Key("num_layers").Number(integer(spec.recompute().num_layers()));
  w.EndObject();
  w.Key("cuda_graph").String(spec.cuda_graph());
  w.Key("cp_comm_type").String(spec.cp_comm_type());
  w.Key("optimizer_offload_fraction").Number(spec.optimizer_offload_fraction());
  w.Key("activation_offload_layers")
      .Number(integer(spec.cpu_offloading() ? spec.cpu_offloading_num_layers()
                                            : 0));
  w.Key("offload_modules").BeginArray();
  for (int g = 0; g < models::kNumOffloadModules; ++g) {
    if (s.training.activation_offload.modules[g])
      w.String(models::kOffloadModuleNames[g]);
  }
  w.EndArray();
  w.Key("activation_offload_fraction")
      .Number(s.training.activation_offload.fraction);
  w.Key("offload_optimizer_states").Bool(s.training.offload_optimizer_states);
  w.Key("megatron_fsdp").Bool(spec.use_megatron_fsdp());
  w.Key("fsdp_sharding")
      .String(spec.use_megatron_fsdp() ? spec.data_parallel_sharding_strategy()
                                       : "");
  w.Key("distributed_optimizer").Bool(s.training.distributed_optimizer);
  w.Key("ep_overlap").Bool(s.training.ep_overlap);
  w.EndObject();
}

std::string FormatMemoryJson(const scenarios::ResolvedScenario& s,
                             const studies::MemoryReport& r) {
  using Layout = util::JsonWriter::Layout;
  util::JsonWriter w;
  // GiB with three decimals.
  auto gib = [&w](std::string_view key, double bytes) {
    w.Key(key).Fixed(bytes / kGiB, 3);
  };
  auto bytes_map = [&](std::string_view key,
                       const std::vector<models::NamedBytes>& items) {
    w.Key(key).BeginObject();
    for (const models::NamedBytes& item : items) gib(item.name, item.bytes);
    w.EndObject();
  };
  w.BeginObject(Layout::kLines);
  w.Key("model").String(s.model.name());
  w.Key("system").String(s.system.name());
  w.Key("num_gpus").Number(s.parallel.num_gpus());
  w.Key("scenario");
  WriteScenario(w, s);
  w.Key("params_total").Number(static_cast<double>(r.params.total));
  w.Key("params_active").Number(static_cast<double>(r.params.active));
  w.Key("params_total_with_mtp")
      .Number(static_cast<double>(r.params.total_with_mtp));
  w.Key("model_flops_per_step").Number(r.model_flops_per_step);
  w.Key("model_flops_per_token").Number(r.model_flops_per_token);
  w.Key("stages").BeginArray(Layout::kLines);
  for (const models::StageMemory& st : r.memory.stages) {
    w.BeginObject();
    w.Key("pp_rank").Number(st.pp_rank);
    w.Key("params").Number(static_cast<double>(st.params));
    gib("params_gib", st.params_bytes);
    gib("fp8_weights_gib", st.fp8_weight_bytes);
    gib("grads_gib", st.grads_bytes);
    gib("optimizer_gib", st.optimizer_bytes);
    gib("optimizer_host_gib", st.optimizer_host_bytes);
    gib("fsdp_unit_gib", st.fsdp_unit_bytes);
    gib("activation_host_gib", st.activation_host_bytes);
    bytes_map("activation_offload_saved_gib", st.offload_saved);
    gib("optimizer_step_gib", st.optimizer_step_bytes);
    gib("activations_gib", st.activations_bytes);
    w.Key("in_flight_microbatches")
        .Number(static_cast<double>(st.peak_in_flight));
    bytes_map("activations_by_module_gib", st.activations);
    gib("transient_gib", st.transient_bytes);
    gib("buffers_gib", st.buffers_bytes);
    bytes_map("buffers_by_kind_gib", st.buffers);
    gib("allocated_peak_gib", st.allocated_peak_bytes);
    gib("peak_memory_gib", st.peak_bytes);
    w.EndObject();
  }
  w.EndArray();
  w.Key("busiest_pp_rank").Number(r.memory.busiest_rank);
  gib("peak_memory_gib", r.memory.peak_bytes);
  gib("capacity_gib", r.memory.capacity_bytes);
  w.Key("fits").Bool(r.memory.fits);
  gib("margin_gib", r.memory.margin_bytes);
  w.Key("defaults_used").Strings(s.defaults_used);
  w.Key("warnings").Strings(s.warnings);
  w.EndObject();
  return std::move(w).Take();
}

}  // namespace moesim::tools
