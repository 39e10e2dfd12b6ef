// The time of one NCCL collective on a placed group, with the algorithms and
// protocols NCCL chooses between (its tuning model, src/graph/tuning.cc):
// ring, tree, NVLS inside an NVLink domain, and hierarchical (intra-domain
// reduce-scatter, inter-domain all-reduce, intra-domain all-gather) across
// domains; LL, LL128 and Simple. Each candidate's time is latency + bytes /
// bandwidth; the fastest wins, as in NCCL.
//
// The bandwidth of a candidate depends on where the group sits, not on its
// size alone: inside one domain every GPU drives its NVLink; across domains a
// ring leaves each domain through the NICs of the group's members there, so
// its rate is min(NVLink, members_per_domain x NIC); an all-to-all moves
// (n - m)/n of its bytes over the NIC. Bandwidths come from NetworkParams
// (spec x the stated efficiencies of topology/network_model.csv) until the
// calibration tables carry measured curves.
//
// Sizes follow nccl-tests (doc/PERFORMANCE.md): `bytes` is the all-reduce
// buffer, the gathered size of all-gather / reduce-scatter, the per-rank send
// buffer of all-to-all, the message of send/recv and broadcast. Bus bandwidth
// = algbw x {2(n-1)/n all-reduce; (n-1)/n all-gather, reduce-scatter,
// all-to-all; 1 otherwise}.
#ifndef MOESIM_TOPOLOGY_COLLECTIVES_H_
#define MOESIM_TOPOLOGY_COLLECTIVES_H_

#include <span>

#include "topology/cluster.h"
#include "topology/network_params.h"
#include "topology/placement.h"

namespace moesim::topology {

enum class Collective {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSendRecv,
  kBroadcast
};
const char* CollectiveName(Collective c);  // nccl-tests names: "all_reduce"

// nccl-tests' bus-bandwidth factor for a group of n (doc/PERFORMANCE.md).
double BusBandwidthFactor(Collective c, int n);

enum class Algorithm { kAuto, kRing, kTree, kNvls, kHierarchical, kP2p };
const char* AlgorithmName(Algorithm a);

// Where a group sits: what the collective model needs of a placement.
struct GroupShape {
  int size = 1;
  int domains = 1;             // NVLink domains spanned
  int members_per_domain = 1;  // members in each domain (the minimum)
  Tier tier = Tier::kNvlink;   // highest tier crossed
};
GroupShape ShapeOf(const GroupSpan& span);
// Shape of an explicit member list (GPU ids) on `cluster`.
GroupShape ShapeOf(std::span<const int> gpus, const Cluster& cluster);

struct CollectiveEstimate {
  double seconds = 0;
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  double latency_us = 0;
  double bus_gb_s = 0;  // achieved, latency included (what nccl-tests prints)
};

// Time of `collective` over `bytes` on a group of `shape`. `only` forces an
// algorithm (NCCL_ALGO); kAuto picks the fastest. REQUIRES: bytes >= 0.
// A group of one takes no time.
CollectiveEstimate EstimateCollective(const NetworkParams& params,
                                      Collective collective,
                                      const GroupShape& shape, double bytes,
                                      Algorithm only = Algorithm::kAuto);

// All-to-all with uneven traffic: this rank sends `intra_bytes` to members in
// its own domain and `inter_bytes` to the others (the busiest rank gates).
CollectiveEstimate EstimateAllToAllV(const NetworkParams& params,
                                     const GroupShape& shape,
                                     double intra_bytes, double inter_bytes);

// All-to-all with per-peer sizes: member `self` of `gpus` (GPU ids, group
// order) sends `bytes_to[i]` to member i (bytes_to[self] stays local).
// REQUIRES: bytes_to.size() == gpus.size(), 0 <= self < gpus.size().
CollectiveEstimate EstimateAllToAllV(const NetworkParams& params,
                                     std::span<const int> gpus, int self,
                                     std::span<const double> bytes_to,
                                     const Cluster& cluster);

}  // namespace moesim::topology

#endif  // MOESIM_TOPOLOGY_COLLECTIVES_H_
