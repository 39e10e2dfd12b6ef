#include "topology/collectives.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/bus_bandwidth.h"

namespace moesim::topology {

namespace {

constexpr double kGb = 1e9;  // GB/s = 1e9 bytes/s
constexpr double kUs = 1e-6;

}  // namespace

double BusBandwidthFactor(Collective c, int n) {
  return util::NcclBusFactor(CollectiveName(c), n);
}

namespace {

// Per-GPU rate of this GPU's NIC(s) for traffic crossing `tier`: the spine
// and core tiers carry 1/oversubscription of the leaf's down bandwidth.
double NicBandwidth(const NetworkParams& p, Tier tier) {
  return tier >= Tier::kSpine ? p.nic_gb_s / p.oversubscription : p.nic_gb_s;
}

// Simple-protocol bus bandwidth of a ring (NCCL runs one ring per channel;
// across domains the channels leave each domain through the NICs of the
// group's members there).
double RingBandwidth(const NetworkParams& p, const GroupShape& s) {
  if (s.domains <= 1) return p.nvlink_gb_s;
  return std::min(p.nvlink_gb_s,
                  s.members_per_domain * NicBandwidth(p, s.tier));
}

struct Candidate {
  double seconds = std::numeric_limits<double>::infinity();
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  double latency_us = 0;
};

void Consider(Candidate& best, Algorithm a, Protocol pr, double latency_us,
              double data_s) {
  const double t = latency_us * kUs + data_s;
  if (t < best.seconds) best = {t, a, pr, latency_us};
}

// NCCL's ring latency: base + intra-domain steps x NVLink latency + steps
// that cross domains x network latency.
double RingLatencyUs(const ProtocolLatency& l, Collective c, int n, int k) {
  const bool ar = c == Collective::kAllReduce;
  const int steps = ar ? 2 * (n - 1) : n - 1;
  const int inter = k > 1 ? (ar ? 2 * (k - 1) : k - 1) : 0;
  return l.ring_base_us + (steps - inter) * l.nvlink_ring_us +
         inter * l.net_ring_us;
}

// Bytes each rank pushes through the ring, per byte of `bytes`.
double RingVolume(Collective c, int n) {
  switch (c) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return static_cast<double>(n - 1) / n;
    default:
      return 1;  // broadcast: pipelined, every byte crosses every link once
  }
}

void RingCandidates(const NetworkParams& p, Collective c, const GroupShape& s,
                    double bytes, Candidate& best) {
  const double b = RingBandwidth(p, s) * kGb;
  for (Protocol pr : kProtocols) {
    const ProtocolLatency& l = p.latency(pr);
    Consider(best, Algorithm::kRing, pr, RingLatencyUs(l, c, s.size, s.domains),
             bytes * RingVolume(c, s.size) / (b * l.bandwidth_factor));
  }
}

void TreeCandidates(const NetworkParams& p, const GroupShape& s, double bytes,
                    Candidate& best) {
  // NCCL: tree all-reduce algbw = 0.5 x min(busBw x tree factor, ...); the
  // chain inside a domain and the tree across domains move every byte twice.
  const double b = RingBandwidth(p, s) * kGb * p.tree_bandwidth_factor * 0.5;
  const double per_domain = static_cast<double>(s.size) / s.domains;
  for (Protocol pr : kProtocols) {
    const ProtocolLatency& l = p.latency(pr);
    const double lat =
        l.tree_base_us + 2 * ((per_domain - 1) * l.nvlink_tree_us +
                              std::log2(s.domains) * l.net_tree_us);
    Consider(best, Algorithm::kTree, pr, lat, bytes / (b * l.bandwidth_factor));
  }
}

void NvlsCandidate(const NetworkParams& p, double bytes, Candidate& best) {
  Consider(best, Algorithm::kNvls, Protocol::kSimple, p.nvls_latency_us,
           bytes / (p.nvls_algbw_gb_s * kGb));
}

void HierarchicalCandidate(const NetworkParams& p, const GroupShape& s,
                           double bytes, Candidate& best) {
  const GroupShape intra{s.members_per_domain, 1, s.members_per_domain,
                         Tier::kNvlink};
  const GroupShape inter{s.domains, s.domains, 1, s.tier};
  const double m = s.members_per_domain;
  const CollectiveEstimate rs = EstimateCollective(
      p, Collective::kReduceScatter, intra, bytes, Algorithm::kRing);
  const CollectiveEstimate ar = EstimateCollective(
      p, Collective::kAllReduce, inter, bytes / m, Algorithm::kRing);
  const CollectiveEstimate ag = EstimateCollective(
      p, Collective::kAllGather, intra, bytes, Algorithm::kRing);
  const double lat = rs.latency_us + ar.latency_us + ag.latency_us;
  const double data = rs.seconds + ar.seconds + ag.seconds - lat * kUs;
  Consider(best, Algorithm::kHierarchical, Protocol::kSimple, lat, data);
}

CollectiveEstimate Finish(const Candidate& best, Collective c, int n,
                          double bytes) {
  CollectiveEstimate e;
  e.seconds = best.seconds;
  e.algorithm = best.algorithm;
  e.protocol = best.protocol;
  e.latency_us = best.latency_us;
  e.bus_gb_s =
      e.seconds > 0 ? bytes * BusBandwidthFactor(c, n) / e.seconds / kGb : 0;
  return e;
}

}  // namespace

const char* CollectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllToAll:
      return "alltoall";
    case Collective::kSendRecv:
      return "sendrecv";
    case Collective::kBroadcast:
      return "broadcast";
  }
  return "?";
}

const char* AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kAuto:
      return "auto";
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kHierarchical:
      return "hierarchical";
    case Algorithm::kP2p:
      return "p2p";
  }
  return "?";
}

GroupShape ShapeOf(const GroupSpan& span) {
  return {span.size, span.domains_spanned, span.members_per_domain, span.tier};
}

GroupShape ShapeOf(std::span<const int> gpus, const Cluster& cluster) {
  GroupShape s;
  s.size = static_cast<int>(gpus.size());
  if (gpus.empty()) return s;
  std::vector<int> domains;
  domains.reserve(gpus.size());
  for (int g : gpus) domains.push_back(g / cluster.domain_gpus());
  std::sort(domains.begin(), domains.end());
  s.domains = 0;
  s.members_per_domain = s.size;
  for (size_t i = 0; i < domains.size();) {
    size_t j = i;
    while (j < domains.size() && domains[j] == domains[i]) ++j;
    ++s.domains;
    s.members_per_domain =
        std::min(s.members_per_domain, static_cast<int>(j - i));
    i = j;
  }
  for (int g : gpus) s.tier = std::max(s.tier, cluster.PathTier(gpus[0], g));
  for (int g : gpus) {
    if (g / cluster.domain_gpus() != gpus[0] / cluster.domain_gpus()) {
      for (int h : gpus) s.tier = std::max(s.tier, cluster.PathTier(g, h));
      break;
    }
  }
  return s;
}

CollectiveEstimate EstimateCollective(const NetworkParams& p, Collective c,
                                      const GroupShape& s, double bytes,
                                      Algorithm only) {
  if (c != Collective::kSendRecv && s.size <= 1) return {};
  if (c == Collective::kAllToAll) {
    const double n = s.size, m = s.members_per_domain;
    return EstimateAllToAllV(p, s, bytes * (m - 1) / n, bytes * (n - m) / n);
  }
  Candidate best;
  auto allowed = [&](Algorithm a) {
    return only == Algorithm::kAuto || only == a;
  };
  if (c == Collective::kSendRecv) {
    const double b =
        (s.tier == Tier::kNvlink ? p.nvlink_gb_s : NicBandwidth(p, s.tier)) *
        kGb;
    for (Protocol pr : kProtocols) {
      const ProtocolLatency& l = p.latency(pr);
      const double hop =
          s.tier == Tier::kNvlink ? l.nvlink_ring_us : l.net_ring_us;
      Consider(best, Algorithm::kP2p, pr, l.ring_base_us + hop,
               bytes / (b * l.bandwidth_factor));
    }
    return Finish(best, c, 2, bytes);
  }
  if (allowed(Algorithm::kRing)) RingCandidates(p, c, s, bytes, best);
  if (c == Collective::kAllReduce) {
    if (allowed(Algorithm::kNvls) && s.domains == 1 && p.nvls_algbw_gb_s > 0 &&
        s.size >= p.nvls_min_gpus) {
      NvlsCandidate(p, bytes, best);
    }
    if (allowed(Algorithm::kTree) && s.domains > 1)
      TreeCandidates(p, s, bytes, best);
    if (allowed(Algorithm::kHierarchical) && s.domains > 1 &&
        s.members_per_domain > 1) {
      HierarchicalCandidate(p, s, bytes, best);
    }
  }
  if (!std::isfinite(best.seconds)) {
    // A forced algorithm that does not apply here: fall back to the ring.
    RingCandidates(p, c, s, bytes, best);
  }
  return Finish(best, c, s.size, bytes);
}

CollectiveEstimate EstimateAllToAllV(const NetworkParams& p,
                                     const GroupShape& s, double intra_bytes,
                                     double inter_bytes) {
  if (s.size <= 1) return {};
  // Every peer is served at once (NCCL groups the sends); this GPU's NVLink
  // and NIC work in parallel, the slower one gates.
  const double nvlink = p.nvlink_gb_s * p.nvlink_alltoall_efficiency * kGb;
  const double nic = NicBandwidth(p, s.tier) * p.net_alltoall_efficiency * kGb;
  Candidate best;
  for (Protocol pr : kProtocols) {
    const ProtocolLatency& l = p.latency(pr);
    const double hop = s.domains > 1 ? l.net_ring_us : l.nvlink_ring_us;
    const double data =
        std::max(intra_bytes / nvlink, s.domains > 1 ? inter_bytes / nic : 0) /
        l.bandwidth_factor;
    Consider(best, Algorithm::kP2p, pr, l.ring_base_us + hop, data);
  }
  // Bus bandwidth over what this rank sends (nccl-tests counts (n-1)/n of
  // the send buffer; here the buffer is intra + inter + the self share).
  CollectiveEstimate e;
  e.seconds = best.seconds;
  e.algorithm = best.algorithm;
  e.protocol = best.protocol;
  e.latency_us = best.latency_us;
  e.bus_gb_s =
      e.seconds > 0 ? (intra_bytes + inter_bytes) / e.seconds / kGb : 0;
  return e;
}

CollectiveEstimate EstimateAllToAllV(const NetworkParams& params,
                                     std::span<const int> gpus, int self,
                                     std::span<const double> bytes_to,
                                     const Cluster& cluster) {
  double intra = 0, inter = 0;
  const int domain = cluster.DomainOf(gpus[self]);
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (static_cast<int>(i) == self) continue;
    (cluster.DomainOf(gpus[i]) == domain ? intra : inter) += bytes_to[i];
  }
  return EstimateAllToAllV(params, ShapeOf(gpus, cluster), intra, inter);
}

}  // namespace moesim::topology
