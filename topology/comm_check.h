// Predicted bus bandwidth against published NCCL measurements
// (topology/comm_checks.csv, each row with its source, taken from
// ../shared/reference/measured_comm.csv). Every row is a benchmark log, so the
// prediction adds the benchmark's per-call host cost (network_model.csv
// latency/call_overhead_us) to the collective's time.
#ifndef MOESIM_TOPOLOGY_COMM_CHECK_H_
#define MOESIM_TOPOLOGY_COMM_CHECK_H_

#include <string>
#include <vector>

#include "topology/collectives.h"
#include "util/error.h"

namespace moesim::topology {

struct CommCheck {
  std::string system;
  Collective collective = Collective::kAllReduce;
  Algorithm forced = Algorithm::kAuto;  // NCCL_ALGO of the measurement
  int gpus = 0;
  double bytes = 0;
  double measured_bus_gb_s = 0;
  std::string source;
  // Prediction.
  double predicted_bus_gb_s = 0;
  double error_pct = 0;  // (predicted - measured) / measured
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
};

// Runs every row of the shipped table: the group is GPUs 0..gpus-1 of the
// row's system.
[[nodiscard]] util::Result<std::vector<CommCheck>> RunCommChecks();

// A table: system, collective, GPUs, size, algorithm, measured, predicted,
// error.
std::string FormatCommChecks(const std::vector<CommCheck>& checks);

}  // namespace moesim::topology

#endif  // MOESIM_TOPOLOGY_COMM_CHECK_H_
