#include "topology/comm_check.h"

#include <charconv>
#include <cstdio>

#include "topology/cluster.h"
#include "topology/network_params.h"
#include "topology/system.h"
#include "util/csv.h"
#include "util/embedded.h"

namespace moesim::topology {

const std::vector<util::EmbeddedFile>& EmbeddedFiles();

namespace {

constexpr std::string_view kTablePath = "topology/comm_checks.csv";

util::Result<double> Number(const util::CsvTable& t, size_t row,
                            std::string_view column) {
  const std::string& text = t.Get(row, column);
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !(v > 0)) {
    return util::Fail(std::string(kTablePath) + ":" +
                      std::to_string(t.Line(row)) + ": " + std::string(column) +
                      ": must be a positive number");
  }
  return v;
}

util::Result<Collective> ParseCollective(std::string_view name) {
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather,
                       Collective::kReduceScatter, Collective::kAllToAll,
                       Collective::kSendRecv, Collective::kBroadcast}) {
    if (name == CollectiveName(c)) return c;
  }
  return util::Fail("unknown collective '" + std::string(name) + "'");
}

util::Result<Algorithm> ParseAlgorithm(std::string_view name) {
  for (Algorithm a : {Algorithm::kAuto, Algorithm::kRing, Algorithm::kTree,
                      Algorithm::kNvls, Algorithm::kHierarchical}) {
    if (name == AlgorithmName(a)) return a;
  }
  return util::Fail("unknown algorithm '" + std::string(name) + "'");
}

}  // namespace

util::Result<std::vector<CommCheck>> RunCommChecks() {
  const util::EmbeddedFile* file = nullptr;
  for (const util::EmbeddedFile& f : EmbeddedFiles()) {
    if (f.path == kTablePath) file = &f;
  }
  if (file == nullptr) return util::Fail("comm_checks.csv: not embedded");
  auto table = util::CsvTable::Parse(file->content, kTablePath);
  if (!table) return std::unexpected(table.error());
  std::vector<CommCheck> checks;
  for (size_t r = 0; r < table->num_rows(); ++r) {
    CommCheck c;
    c.system = table->Get(r, "system");
    auto collective = ParseCollective(table->Get(r, "collective"));
    auto forced = ParseAlgorithm(table->Get(r, "algorithm"));
    auto gpus = Number(*table, r, "gpus");
    auto bytes = Number(*table, r, "bytes");
    auto measured = Number(*table, r, "measured_bus_gb_s");
    for (const util::Error* e :
         {collective ? nullptr : &collective.error(),
          forced ? nullptr : &forced.error(), gpus ? nullptr : &gpus.error(),
          bytes ? nullptr : &bytes.error(),
          measured ? nullptr : &measured.error()}) {
      if (e) return std::unexpected(*e);
    }
    c.collective = *collective;
    c.forced = *forced;
    c.gpus = static_cast<int>(*gpus);
    c.bytes = *bytes;
    c.measured_bus_gb_s = *measured;
    c.source = table->Get(r, "source");
    auto system = LoadSystem(c.system);
    if (!system) return std::unexpected(system.error());
    auto params = NetworkParamsFor(*system);
    if (!params) return std::unexpected(params.error());
    // A measurement on part of a node (4 of 8 GPUs) runs on the whole node.
    const int unit = c.gpus > system->nvlink_domain_gpus()
                         ? system->nvlink_domain_gpus()
                         : system->gpus_per_node();
    auto cluster = Cluster::Build(*system, (c.gpus + unit - 1) / unit * unit);
    if (!cluster) return std::unexpected(cluster.error());
    std::vector<int> members(c.gpus);
    for (int g = 0; g < c.gpus; ++g) members[g] = g;
    const CollectiveEstimate e = EstimateCollective(
        *params, c.collective, ShapeOf(members, *cluster), c.bytes, c.forced);
    const double seconds = e.seconds + params->call_overhead_us * 1e-6;
    c.predicted_bus_gb_s =
        c.bytes * BusBandwidthFactor(c.collective, c.gpus) / seconds / 1e9;
    c.error_pct = (c.predicted_bus_gb_s - c.measured_bus_gb_s) /
                  c.measured_bus_gb_s * 100;
    c.algorithm = e.algorithm;
    c.protocol = e.protocol;
    checks.push_back(std::move(c));
  }
  return checks;
}

std::string FormatCommChecks(const std::vector<CommCheck>& checks) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %-15s %5s %12s %-14s %9s %9s %7s\n",
                "system", "collective", "gpus", "bytes", "algorithm",
                "measured", "moesim", "error");
  out += line;
  for (const CommCheck& c : checks) {
    const std::string algo = std::string(AlgorithmName(c.algorithm)) + "/" +
                             ProtocolName(c.protocol);
    std::snprintf(line, sizeof line,
                  "%-12s %-15s %5d %12.0f %-14s %9.2f %9.2f %+6.1f%%\n",
                  c.system.c_str(), CollectiveName(c.collective), c.gpus,
                  c.bytes, algo.c_str(), c.measured_bus_gb_s,
                  c.predicted_bus_gb_s, c.error_pct);
    out += line;
  }
  out +=
      "bus bandwidth in GB/s (nccl-tests busbw); sources: "
      "topology/comm_checks.csv\n";
  return out;
}

}  // namespace moesim::topology
