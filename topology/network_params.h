// What NCCL achieves on a system's links: the spec figures of the System
// (topology/systems/*.textproto) times the efficiencies, channel counts and
// latencies of topology/network_model.csv, each row with its source.
//
// Until the calibration tables (calibration/tables/<gpu>/) carry measured
// bus-bandwidth curves, these are the bandwidths the collective and flow
// models use. Units: GB/s = 1e9 bytes/s per direction; microseconds.
#ifndef MOESIM_TOPOLOGY_NETWORK_PARAMS_H_
#define MOESIM_TOPOLOGY_NETWORK_PARAMS_H_

#include <string>
#include <vector>

#include "topology/system.pb.h"
#include "util/error.h"

namespace moesim::topology {

// NCCL protocols (src/device/prims_*.h): LL and LL128 trade bandwidth for
// latency; Simple reaches the link rate.
enum class Protocol { kLl, kLl128, kSimple };
inline constexpr Protocol kProtocols[] = {Protocol::kLl, Protocol::kLl128,
                                          Protocol::kSimple};
const char* ProtocolName(Protocol p);

// NCCL tuning-model latencies for one protocol (microseconds).
struct ProtocolLatency {
  double ring_base_us = 0;
  double tree_base_us = 0;
  double nvlink_ring_us = 0;  // per ring step inside an NVLink domain
  double nvlink_tree_us = 0;
  double net_ring_us = 0;  // per ring step across the network
  double net_tree_us = 0;
  double bandwidth_factor = 1;  // of the Simple bandwidth
};

struct NetworkParams {
  // Per GPU, per direction, as NCCL achieves them.
  double nvlink_gb_s = 0;      // links x NCCL per-link bandwidth
  double nvls_algbw_gb_s = 0;  // NVLS all-reduce algorithm bandwidth; 0 = none
  int nvls_min_gpus = 0;       // NVLS only for groups at least this large
  double nvlink_alltoall_efficiency = 0;
  double nic_gb_s = 0;        // the GPU's NIC(s), achievable
  double nic_efficiency = 0;  // achievable / line rate on InfiniBand hops
  double net_alltoall_efficiency = 0;
  double host_gb_s = 0;              // GPU <-> host memory, achievable
  double oversubscription = 1;       // leaf down:up
  double tree_bandwidth_factor = 0;  // tree all-reduce busBw / ring's
  double nvls_latency_us = 0;
  double call_overhead_us = 0;  // host cost of one benchmark call
  double nvlink_hop_us = 0;     // graph edge latencies
  double net_hop_us = 0;
  ProtocolLatency protocol[3];  // indexed by Protocol
  // The table rows these came from: "quantity=value (source)".
  std::vector<std::string> sources;

  const ProtocolLatency& latency(Protocol p) const {
    return protocol[static_cast<int>(p)];
  }
};

// Network parameters of `system` (its gpu.architecture selects the rows).
// Errors: unknown architecture, a missing row, a non-positive value.
[[nodiscard]] util::Result<NetworkParams> NetworkParamsFor(
    const System& system);

}  // namespace moesim::topology

#endif  // MOESIM_TOPOLOGY_NETWORK_PARAMS_H_
