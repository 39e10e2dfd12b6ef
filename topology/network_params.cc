#include "topology/network_params.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "util/csv.h"
#include "util/embedded.h"

namespace moesim::topology {

const std::vector<util::EmbeddedFile>& EmbeddedFiles();

namespace {

constexpr std::string_view kTablePath = "topology/network_model.csv";

class Table {
 public:
  Table(const util::CsvTable& csv, std::string arch)
      : csv_(csv), arch_(std::move(arch)) {}

  // The row for (architecture or "any", tier, quantity); the architecture's
  // own row wins over "any".
  util::Result<double> Get(std::string_view tier, std::string_view quantity,
                           NetworkParams& params) const {
    int found = -1;
    for (size_t r = 0; r < csv_.num_rows(); ++r) {
      if (csv_.Get(r, "tier") != tier || csv_.Get(r, "quantity") != quantity)
        continue;
      const std::string& a = csv_.Get(r, "architecture");
      if (a == arch_) found = static_cast<int>(r);
      if (a == "any" && found < 0) found = static_cast<int>(r);
    }
    std::string where = std::string(kTablePath) + ": " + std::string(tier) +
                        "/" + std::string(quantity);
    if (found < 0) {
      return util::Fail(where + ": no row for architecture '" + arch_ + "'");
    }
    const std::string& text = csv_.Get(found, "value");
    double value = 0;
    auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() ||
        !std::isfinite(value) || value <= 0) {
      return util::Fail(where + ":" + std::to_string(csv_.Line(found)) +
                        ": value: must be a positive number, got '" + text +
                        "'");
    }
    params.sources.push_back(std::string(tier) + "/" + std::string(quantity) +
                             "=" + text + " (" + csv_.Get(found, "source") +
                             ")");
    return value;
  }

 private:
  const util::CsvTable& csv_;
  std::string arch_;
};

}  // namespace

const char* ProtocolName(Protocol p) {
  switch (p) {
    case Protocol::kLl:
      return "LL";
    case Protocol::kLl128:
      return "LL128";
    case Protocol::kSimple:
      return "Simple";
  }
  return "?";
}

util::Result<NetworkParams> NetworkParamsFor(const System& system) {
  const util::EmbeddedFile* file = nullptr;
  for (const util::EmbeddedFile& f : EmbeddedFiles()) {
    if (f.path == kTablePath) file = &f;
  }
  if (file == nullptr) return util::Fail("network_model.csv: not embedded");
  auto csv = util::CsvTable::Parse(file->content, kTablePath);
  if (!csv) return std::unexpected(csv.error());
  const std::string& arch = system.gpu().architecture();
  if (arch != "hopper" && arch != "blackwell") {
    return util::Fail(system.name() +
                      ": gpu.architecture: must be hopper or "
                      "blackwell, got '" +
                      arch + "'");
  }
  Table table(*csv, arch);
  NetworkParams p;
  // Pull one row; on error leave the function with it.
#define MOESIM_ROW(var, tier, quantity)    \
  auto var = table.Get(tier, quantity, p); \
  if (!var) return std::unexpected(var.error())
  MOESIM_ROW(link, "nvlink", "nccl_link_gb_s");
  p.nvlink_gb_s = *link * system.nvlink().links_per_gpu();
  if (system.nvlink().nvls()) {
    MOESIM_ROW(eff, "nvlink", "nvls_efficiency");
    MOESIM_ROW(channels, "nvlink", "nvls_channels");
    MOESIM_ROW(min_gpus, "nvlink", "nvls_min_gpus");
    MOESIM_ROW(nvls_lat, "latency", "nvls_simple_us");
    // NCCL (src/tuning/nvls.cc): bwIntra x nvlsEfficiency x (nCh-1)/nCh.
    p.nvls_algbw_gb_s = p.nvlink_gb_s * *eff * (*channels - 1) / *channels;
    p.nvls_min_gpus = static_cast<int>(*min_gpus);
    p.nvls_latency_us = *nvls_lat;
  }
  MOESIM_ROW(a2a, "nvlink", "alltoall_efficiency");
  p.nvlink_alltoall_efficiency = *a2a;
  MOESIM_ROW(nic_eff, "net", "nic_efficiency");
  const double nics_per_gpu =
      static_cast<double>(system.nic().per_node()) / system.gpus_per_node();
  p.nic_gb_s = nics_per_gpu * system.nic().gbit_s() / 8 * *nic_eff;
  p.nic_efficiency = *nic_eff;
  MOESIM_ROW(net_a2a, "net", "alltoall_efficiency");
  p.net_alltoall_efficiency = *net_a2a;
  const bool c2c = system.host_link().kind() == "nvlink-c2c";
  MOESIM_ROW(host_eff, "host", c2c ? "c2c_efficiency" : "pcie_efficiency");
  p.host_gb_s = system.host_link().gb_s() * *host_eff;
  p.oversubscription = system.scale_out().oversubscription();
  MOESIM_ROW(call, "latency", "call_overhead_us");
  p.call_overhead_us = *call;
  MOESIM_ROW(nvhop, "latency", "nvlink_hop_us");
  p.nvlink_hop_us = *nvhop;
  MOESIM_ROW(nethop, "latency", "net_hop_us");
  p.net_hop_us = *nethop;
  MOESIM_ROW(tree, "protocol", "tree_bandwidth_factor");
  p.tree_bandwidth_factor = *tree;
  MOESIM_ROW(ll, "protocol", "ll_bandwidth_factor");
  MOESIM_ROW(ll128, "protocol", "ll128_bandwidth_factor");
  const double factors[3] = {*ll, *ll128, 1.0};
  static constexpr std::string_view kSuffix[3] = {"ll_us", "ll128_us",
                                                  "simple_us"};
  for (int i = 0; i < 3; ++i) {
    ProtocolLatency& l = p.protocol[i];
    const std::string s(kSuffix[i]);
    MOESIM_ROW(rb, "latency", "ring_base_" + s);
    MOESIM_ROW(tb, "latency", "tree_base_" + s);
    MOESIM_ROW(nr, "latency", "nvlink_ring_" + s);
    MOESIM_ROW(nt, "latency", "nvlink_tree_" + s);
    MOESIM_ROW(er, "latency", "net_ring_" + s);
    MOESIM_ROW(et, "latency", "net_tree_" + s);
    l = {*rb, *tb, *nr, *nt, *er, *et, factors[i]};
  }
#undef MOESIM_ROW
  return p;
}

}  // namespace moesim::topology
