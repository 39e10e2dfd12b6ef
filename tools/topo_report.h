// `moesim topo SYSTEM --gpus N [layout flags] [--json] [--dot FILE]`: the
// cluster a system grows to at N GPUs (NVLink domains, hosts, NICs, switches
// per tier, bisection bandwidth), and, given a layout, where each parallel
// group's traffic goes. `moesim topo --check` prints predicted against
// published NCCL bus bandwidths.
#ifndef MOESIM_TOOLS_TOPO_REPORT_H_
#define MOESIM_TOOLS_TOPO_REPORT_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "util/error.h"

namespace moesim::tools {

struct TopoFlags {
  std::string system;  // positional
  std::optional<int> gpus, tp, cp, ep, etp, pp, gpus_per_domain;
  std::string rank_order = "tp-cp-ep-dp-pp";
  bool json = false;
  std::string dot_file;
  bool check = false;
};

void AddTopoFlags(CLI::App& app, TopoFlags& flags);

// The report text (or JSON); writes the Graphviz file when asked. Errors are
// one line naming the flag, or the system file and field.
[[nodiscard]] util::Result<std::string> RunTopo(const TopoFlags& flags);

// `--check`: the table, and whether every row is within `tolerance_pct`.
struct TopoCheck {
  std::string text;
  bool all_within = true;
};
// `json`: the rows, the tolerance and the verdict as JSON (topo --check
// --json); else the table and an ok / FAILED line.
[[nodiscard]] util::Result<TopoCheck> RunTopoCheck(double tolerance_pct,
                                                   bool json);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_TOPO_REPORT_H_
