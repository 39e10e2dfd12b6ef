#include "tools/topo_report.h"

#include <cmath>
#include <fstream>

#include "tools/text_format.h"
#include "topology/cluster.h"
#include "topology/comm_check.h"
#include "topology/network_params.h"
#include "topology/placement.h"
#include "topology/system.h"
#include "util/json_write.h"
#include "util/output.h"

namespace moesim::tools {
namespace {

using topology::Cluster;
using topology::ClusterSummary;
using topology::GroupSpan;
using topology::Placement;

// Library errors about a flag's value start with the flag ("--gpus: ...");
// the CLI names their origin like its own flag errors.
util::Error FromFlags(util::Error e) {
  if (e.message.starts_with("--")) e.message = "flags: " + e.message;
  return e;
}

// Layout flags to mesh sizes: dp and edp are what the GPU count leaves.
util::Result<topology::MeshSizes> Sizes(const TopoFlags& f, int gpus) {
  topology::MeshSizes m;
  const std::pair<const std::optional<int>*, std::string_view> kFlags[] = {
      {&f.tp, "--tp"},
      {&f.cp, "--cp"},
      {&f.ep, "--ep"},
      {&f.etp, "--etp"},
      {&f.pp, "--pp"}};
  for (auto [value, flag] : kFlags) {
    if (*value && **value < 1) {
      return std::unexpected(
          FlagError(flag, "must be >= 1, got " + std::to_string(**value)));
    }
  }
  m.tp = f.tp.value_or(1);
  m.cp = f.cp.value_or(1);
  m.ep = f.ep.value_or(1);
  m.etp = f.etp.value_or(1);
  m.pp = f.pp.value_or(1);
  const long long dense = 1LL * m.tp * m.cp * m.pp;
  if (gpus % dense != 0) {
    return std::unexpected(FlagError(
        "--gpus",
        Format("%d is not divisible by tp*cp*pp = %lld", gpus, dense)));
  }
  const long long expert = 1LL * m.etp * m.ep * m.pp;
  if (gpus % expert != 0) {
    return std::unexpected(FlagError(
        "--ep",
        Format("etp*ep*pp = %lld does not divide --gpus %d", expert, gpus)));
  }
  m.dp = static_cast<int>(gpus / dense);
  m.edp = static_cast<int>(gpus / expert);
  return m;
}

std::string Text(const topology::System& system, const ClusterSummary& s,
                 int domain_gpus_used, const Placement* placement,
                 const std::string& order) {
  std::string out;
  out += Format("%s at %d GPUs: %s\n", system.name().c_str(), s.gpus,
                system.description().c_str());
  out += Format(
      "  NVLink domains  %d, the job using %d of %d GPUs each "
      "(NVLink%d, %d x %g GB/s per GPU per direction%s)\n",
      s.nvlink_domains, domain_gpus_used, system.nvlink_domain_gpus(),
      system.nvlink().generation(), system.nvlink().links_per_gpu(),
      system.nvlink().link_gb_s(), system.nvlink().nvls() ? ", NVLS" : "");
  out += Format(
      "  hosts           %d (%d GPUs, %d x %s each; host link %s)\n", s.hosts,
      system.gpus_per_node(), system.host_link().cpus_per_node(),
      system.host_link().cpu().c_str(), system.host_link().kind().c_str());
  out += Format("  NICs            %d x %s %g Gb/s\n", s.nics,
                system.nic().model().c_str(), system.nic().gbit_s());
  out += Format(
      "  switches        NVSwitch %d, leaf %d, spine %d, core %d "
      "(%d tiers of %s, %d ports)\n",
      s.nvswitch_chips, s.leaf_switches, s.spine_switches, s.core_switches,
      s.tiers, system.scale_out().switch_model().c_str(),
      system.scale_out().switch_radix());
  out +=
      Format("  bisection       %.0f GB/s per direction\n", s.bisection_gb_s);
  if (placement == nullptr) return out;
  const topology::MeshSizes& m = placement->sizes();
  out += Format(
      "\ngroups (tp %d cp %d dp %d pp %d | etp %d ep %d edp %d; "
      "rank order %s)\n",
      m.tp, m.cp, m.dp, m.pp, m.etp, m.ep, m.edp, order.c_str());
  out +=
      Format("  %-6s %5s %7s %8s %11s %-7s %9s %s\n", "kind", "size", "groups",
             "domains", "per-domain", "tier", "per-NIC", "uniform");
  for (const GroupSpan& g : placement->spans()) {
    out += Format("  %-6s %5d %7d %8d %11d %-7s %9d %s\n",
                  topology::GroupKindName(g.kind), g.size, g.num_groups,
                  g.domains_spanned, g.members_per_domain,
                  std::string(topology::TierName(g.tier)).c_str(),
                  g.groups_per_nic, g.uniform ? "yes" : "no");
  }
  return out;
}

std::string Json(const ClusterSummary& s, int domain_gpus_used,
                 const Placement* placement) {
  using Layout = util::JsonWriter::Layout;
  util::JsonWriter w;
  w.BeginObject(Layout::kLines).Key("system").String(s.system);
  w.Key("gpus_per_domain").Number(domain_gpus_used).Key("gpus").Number(s.gpus);
  w.Key("nvlink_domains").Number(s.nvlink_domains);
  w.Key("hosts").Number(s.hosts).Key("cpus").Number(s.cpus);
  w.Key("nics").Number(s.nics).Key("switches").BeginObject();
  w.Key("nvswitch").Number(s.nvswitch_chips).Key("leaf");
  w.Number(s.leaf_switches).Key("spine").Number(s.spine_switches);
  w.Key("core").Number(s.core_switches).EndObject();
  w.Key("tiers").Number(s.tiers).Key("scalable_units");
  w.Number(s.scalable_units).Key("bisection_gbps").Number(s.bisection_gb_s);
  if (placement != nullptr) {
    w.Key("groups").BeginArray(Layout::kLines);
    for (const GroupSpan& g : placement->spans()) {
      w.BeginObject().Key("kind").String(topology::GroupKindName(g.kind));
      w.Key("size").Number(g.size).Key("groups").Number(g.num_groups);
      w.Key("domains_spanned").Number(g.domains_spanned);
      w.Key("members_per_domain").Number(g.members_per_domain);
      w.Key("tier").String(topology::TierName(g.tier));
      w.Key("groups_per_nic").Number(g.groups_per_nic);
      w.Key("uniform").Bool(g.uniform).EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return std::move(w).Take();
}

}  // namespace

void AddTopoFlags(CLI::App& app, TopoFlags& f) {
  app.add_option("system", f.system,
                 "Shipped system (dgx-h100, gb200-nvl72, ...) or .textproto");
  app.add_option("--gpus", f.gpus, "Number of GPUs the fabric grows to");
  app.add_option("--gpus-per-domain", f.gpus_per_domain,
                 "GPUs the job uses in each NVLink domain (default: all of an "
                 "8-GPU domain; whole Slurm segments of an NVL72 rack)");
  app.add_option("--tp", f.tp, "tensor_model_parallel_size");
  app.add_option("--cp", f.cp, "context_parallel_size");
  app.add_option("--ep", f.ep, "expert_model_parallel_size");
  app.add_option("--etp", f.etp, "expert_tensor_parallel_size");
  app.add_option("--pp", f.pp, "pipeline_model_parallel_size");
  app.add_option("--rank-order", f.rank_order,
                 "Megatron-Core rank order (default tp-cp-ep-dp-pp)");
  app.add_flag("--json", f.json, "Print JSON");
  app.add_option("--dot", f.dot_file, "Write the cluster graph (Graphviz)");
  app.add_flag("--check", f.check,
               "Compare predicted NCCL bus bandwidth with published "
               "measurements");
}

util::Result<std::string> RunTopo(const TopoFlags& f) {
  if (f.system.empty())
    return std::unexpected(FlagError("SYSTEM", "a system is required"));
  if (!f.gpus) return std::unexpected(FlagError("--gpus", "is required"));
  auto system = topology::LoadSystem(f.system);
  if (!system) return std::unexpected(system.error());
  auto params = topology::NetworkParamsFor(*system);
  if (!params) return std::unexpected(params.error());
  topology::LinkLatencies latencies;
  latencies.nvlink_us = params->nvlink_hop_us;
  latencies.nic_leaf_us = latencies.leaf_spine_us = latencies.spine_core_us =
      params->net_hop_us;
  // Cluster::Build reads 0 as "the default"; a 0 the user typed is not that.
  if (f.gpus_per_domain && *f.gpus_per_domain < 1) {
    return std::unexpected(
        FlagError("--gpus-per-domain",
                  "must be >= 1, got " + std::to_string(*f.gpus_per_domain)));
  }
  auto cluster = Cluster::Build(*system, *f.gpus, latencies,
                                f.gpus_per_domain.value_or(0));
  if (!cluster) return std::unexpected(FromFlags(cluster.error()));
  std::optional<Placement> placement;
  const bool layout =
      f.tp || f.cp || f.ep || f.etp || f.pp || f.rank_order != "tp-cp-ep-dp-pp";
  if (layout) {
    auto sizes = Sizes(f, *f.gpus);
    if (!sizes) return std::unexpected(sizes.error());
    auto p = Placement::Build(*sizes, f.rank_order, *cluster);
    if (!p) return std::unexpected(FromFlags(p.error()));
    placement = std::move(*p);
  }
  if (!f.dot_file.empty()) {
    if (auto ok = util::WriteOutputFile(f.dot_file, cluster->ToDot(), "--dot");
        !ok)
      return std::unexpected(ok.error());
  }
  const ClusterSummary summary = cluster->Summarize();
  const Placement* p = placement ? &*placement : nullptr;
  return f.json
             ? Json(summary, cluster->domain_gpus(), p)
             : Text(*system, summary, cluster->domain_gpus(), p, f.rank_order);
}

util::Result<TopoCheck> RunTopoCheck(double tolerance_pct, bool json) {
  auto checks = topology::RunCommChecks();
  if (!checks) return std::unexpected(checks.error());
  TopoCheck result;
  for (const topology::CommCheck& c : *checks) {
    if (std::abs(c.error_pct) > tolerance_pct) result.all_within = false;
  }
  if (!json) {
    result.text = topology::FormatCommChecks(*checks) +
                  Format("%s: every row within %.0f%%\n",
                         result.all_within ? "ok" : "FAILED", tolerance_pct);
    return result;
  }
  using Layout = util::JsonWriter::Layout;
  util::JsonWriter w;
  w.BeginObject(Layout::kLines).Key("rows").BeginArray(Layout::kLines);
  for (const topology::CommCheck& c : *checks) {
    w.BeginObject().Key("system").String(c.system).Key("collective");
    w.String(topology::CollectiveName(c.collective)).Key("gpus").Number(c.gpus);
    w.Key("bytes").Number(c.bytes).Key("algorithm");
    w.String(std::string(topology::AlgorithmName(c.algorithm)) + "/" +
             topology::ProtocolName(c.protocol));
    w.Key("measured_busbw_gb_s").Number(c.measured_bus_gb_s);
    w.Key("predicted_busbw_gb_s").Number(c.predicted_bus_gb_s);
    w.Key("error_pct").Number(c.error_pct).Key("source").String(c.source);
    w.EndObject();
  }
  w.EndArray().Key("tolerance_pct").Number(tolerance_pct);
  w.Key("all_within").Bool(result.all_within).EndObject();
  result.text = std::move(w).Take();
  return result;
}

}  // namespace moesim::tools
