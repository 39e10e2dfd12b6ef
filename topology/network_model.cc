#include "topology/network_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moesim::topology {

namespace {

constexpr double kGb = 1e9;
constexpr double kUs = 1e-6;
// A flow with less than this many bytes left has ended (rounding of
// rate x dt over many steps).
constexpr double kDoneBytes = 1e-3;

CollectiveEstimate Estimate(const Cluster& cluster, const NetworkParams& p,
                            const CollectiveRequest& r) {
  const GroupShape shape = ShapeOf(r.gpus, cluster);
  return EstimateCollective(p, r.collective, shape, r.bytes);
}

}  // namespace

// --- AnalyticalNetwork ------------------------------------------------------

AnalyticalNetwork::AnalyticalNetwork(const Cluster& cluster,
                                     NetworkParams params)
    : cluster_(cluster), params_(std::move(params)) {}

int AnalyticalNetwork::Start(double now_s, const CollectiveRequest& request) {
  finish_s_.push_back(now_s + Estimate(cluster_, params_, request).seconds);
  return static_cast<int>(finish_s_.size()) - 1;
}

std::optional<double> AnalyticalNetwork::NextEventTime() const {
  std::optional<double> next;
  for (double t : finish_s_) {
    if (t >= 0 && (!next || t < *next)) next = t;
  }
  return next;
}

std::vector<int> AnalyticalNetwork::AdvanceTo(double now_s) {
  std::vector<int> done;
  for (size_t i = 0; i < finish_s_.size(); ++i) {
    if (finish_s_[i] >= 0 && finish_s_[i] <= now_s) {
      done.push_back(static_cast<int>(i));
      finish_s_[i] = -1;
    }
  }
  return done;
}

// --- FlowNetwork ------------------------------------------------------------

FlowNetwork::FlowNetwork(const Cluster& cluster, NetworkParams params)
    : cluster_(cluster),
      params_(std::move(params)),
      link_of_edge_(cluster.num_edges(), -1) {}

double FlowNetwork::Capacity(const Link& link) const {
  switch (link.link_class) {
    case LinkClass::kNvlink:
      return params_.nvlink_gb_s * kGb;  // NCCL's per-GPU NVLink rate
    case LinkClass::kHost:
      return params_.host_gb_s * kGb;
    case LinkClass::kPcie:
    case LinkClass::kNicLeaf:
    case LinkClass::kLeafSpine:
    case LinkClass::kSpineCore:
      // The NIC efficiency applies to every hop of the InfiniBand path.
      return link.bandwidth_gb_s * kGb * params_.nic_efficiency;
  }
  return link.bandwidth_gb_s * kGb;
}

flow::LinkId FlowNetwork::SolverLink(EdgeId edge) {
  if (link_of_edge_[edge] < 0)
    link_of_edge_[edge] = solver_.AddLink(Capacity(cluster_.link(edge)));
  return link_of_edge_[edge];
}

void FlowNetwork::AddFlow(int transfer, const std::vector<EdgeId>& path,
                          double bytes) {
  std::vector<flow::LinkId> links;
  links.reserve(path.size());
  for (EdgeId e : path) links.push_back(SolverLink(e));
  flows_.push_back({solver_.AddFlow(links), transfer, bytes});
  ++transfers_[transfer].flows_left;
}

int FlowNetwork::Start(double now_s, const CollectiveRequest& r) {
  now_s_ = now_s;
  const int id = static_cast<int>(transfers_.size());
  transfers_.emplace_back();
  pending_.push_back(id);
  const CollectiveEstimate estimate = Estimate(cluster_, params_, r);
  transfers_[id].latency_s = estimate.latency_us * kUs;
  const int n = static_cast<int>(r.gpus.size());
  const GroupShape shape = ShapeOf(r.gpus, cluster_);
  auto pair_flow = [&](int a, int b, double bytes) {
    if (bytes > 0) AddFlow(id, cluster_.Route(a, b), bytes);
  };
  switch (r.collective) {
    case Collective::kSendRecv:
      if (n == 2) pair_flow(r.gpus[0], r.gpus[1], r.bytes);
      break;
    case Collective::kAllToAll:
      // Every ordered pair carries bytes/n, scaled by the all-to-all
      // efficiency of the tier it crosses.
      for (int a : r.gpus) {
        for (int b : r.gpus) {
          if (a == b) continue;
          const bool intra = cluster_.DomainOf(a) == cluster_.DomainOf(b);
          const double eff = intra ? params_.nvlink_alltoall_efficiency
                                   : params_.net_alltoall_efficiency;
          pair_flow(a, b, r.bytes / n / eff);
        }
      }
      break;
    default:
      if (n <= 1) break;
      if (estimate.algorithm == Algorithm::kNvls) {
        // Each member pushes its buffer into the switch and reads the result
        // back: one flow up and down its own NVLink, sized so that alone it
        // takes bytes / NVLS algbw.
        const double bytes =
            r.bytes * params_.nvlink_gb_s / params_.nvls_algbw_gb_s;
        for (int g : r.gpus) {
          const EdgeId up =
              cluster_.Route(g, g == r.gpus[0] ? r.gpus[1] : r.gpus[0])[0];
          AddFlow(id, {up, Cluster::Reverse(up)}, bytes);
        }
        break;
      }
      // Rings, one per channel: across domains NCCL runs as many channels as
      // the group has members per domain, each entering and leaving every
      // domain at a different member, so all their NICs carry traffic.
      std::vector<std::vector<int>> by_domain;
      for (int g : r.gpus) {
        if (by_domain.empty() ||
            cluster_.DomainOf(by_domain.back()[0]) != cluster_.DomainOf(g)) {
          by_domain.push_back({g});
        } else {
          by_domain.back().push_back(g);
        }
      }
      const int channels = shape.domains > 1 ? shape.members_per_domain : 1;
      double volume = 1;  // bytes each member sends to its ring neighbour
      if (r.collective == Collective::kAllReduce) volume = 2.0 * (n - 1) / n;
      if (r.collective == Collective::kAllGather ||
          r.collective == Collective::kReduceScatter) {
        volume = static_cast<double>(n - 1) / n;
      }
      for (int c = 0; c < channels; ++c) {
        std::vector<int> ring;
        ring.reserve(n);
        for (const std::vector<int>& d : by_domain) {
          const int size = static_cast<int>(d.size());
          for (int i = 0; i < size; ++i) ring.push_back(d[(c + i) % size]);
        }
        for (int i = 0; i < n; ++i)
          pair_flow(ring[i], ring[(i + 1) % n], r.bytes * volume / channels);
      }
      break;
  }
  // Rates are solved when next needed (NextEventTime, AdvanceTo, Rates):
  // the transfers that start at one time share one solve.
  if (transfers_[id].flows_left == 0) transfers_[id].done_s = now_s;
  return id;
}

std::optional<double> FlowNetwork::NextEventTime() const {
  solver_.Solve();  // a no-op unless flows started since the last solve
  double next = std::numeric_limits<double>::infinity();
  for (const ActiveFlow& f : flows_) {
    const double rate = solver_.Rate(f.id);
    if (rate > 0) next = std::min(next, now_s_ + f.remaining_bytes / rate);
  }
  for (const int id : pending_) {
    const Transfer& t = transfers_[id];
    if (t.done_s >= 0) next = std::min(next, t.done_s + t.latency_s);
  }
  if (!std::isfinite(next)) return std::nullopt;
  return next;
}

std::vector<int> FlowNetwork::AdvanceTo(double now_s) {
  solver_.Solve();  // the rates the flows ran at since now_s_
  const double dt = now_s - now_s_;
  bool changed = false;
  std::vector<ActiveFlow> running;
  running.reserve(flows_.size());
  for (ActiveFlow& f : flows_) {
    const double rate = solver_.Rate(f.id);
    f.remaining_bytes -= rate * dt;
    // Done when (almost) nothing is left, or when what is left would end
    // within the rounding of now_s (late in a long step, remaining / rate
    // can fall below the spacing of doubles near now_s: NextEventTime would
    // then return now_s forever).
    if (f.remaining_bytes <= kDoneBytes ||
        (rate > 0 && now_s + f.remaining_bytes / rate <= now_s)) {
      solver_.RemoveFlow(f.id);
      changed = true;
      Transfer& t = transfers_[f.transfer];
      if (--t.flows_left == 0) t.done_s = now_s;
    } else {
      running.push_back(f);
    }
  }
  flows_ = std::move(running);
  now_s_ = now_s;
  if (changed) solver_.Solve();
  std::vector<int> done;
  size_t kept = 0;
  for (const int id : pending_) {
    const Transfer& t = transfers_[id];
    // Relative slack: done_s + latency_s may round differently from the
    // NextEventTime the caller passed back.
    if (t.done_s >= 0 && t.done_s + t.latency_s <= now_s * (1 + 1e-12)) {
      done.push_back(id);
    } else {
      pending_[kept++] = id;
    }
  }
  pending_.resize(kept);
  return done;
}

std::vector<double> FlowNetwork::Rates(int id) const {
  solver_.Solve();
  std::vector<double> rates;
  for (const ActiveFlow& f : flows_) {
    if (f.transfer == id) rates.push_back(solver_.Rate(f.id));
  }
  return rates;
}

}  // namespace moesim::topology
