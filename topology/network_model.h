// The NetworkModel seam of ../shared/ARCHITECTURE.md: when does a transfer
// finish, given what else is on the wire? Two implementations answer it.
//
// AnalyticalNetwork: each collective takes the time EstimateCollective gives
// for its group's placement (alpha-beta with NCCL's algorithm choice);
// concurrent transfers do not see each other. Cheap; the default for sweeps.
//
// FlowNetwork: each collective becomes flows on the cluster graph's routes
// (ring neighbours per channel, every pair of an all-to-all, one flow per
// member through the NVSwitch for NVLS) and flows share links by max-min
// fairness (flow::MaxMinSolver), re-solved when a flow starts or ends. An EP
// all-to-all and a DP reduce-scatter on the same NIC each get their share.
// Link capacities are the spec of the edge times the efficiency NCCL reaches
// on its class (NetworkParams). A flow's bytes are scaled by its algorithm's
// efficiency (all-to-all, NVLS), so a transfer alone on the wire takes what
// the analytical model says; the NCCL latency is added when its last flow
// ends.
//
// Times are seconds (double) at this seam; sim:: rounds them up to integer
// picoseconds. Transfers are identified by dense ids in start order.
#ifndef MOESIM_TOPOLOGY_NETWORK_MODEL_H_
#define MOESIM_TOPOLOGY_NETWORK_MODEL_H_

#include <optional>
#include <vector>

#include "topology/cluster.h"
#include "topology/collectives.h"
#include "topology/flow/maxmin.h"
#include "topology/network_params.h"

namespace moesim::topology {

struct CollectiveRequest {
  Collective collective = Collective::kAllReduce;
  std::vector<int>
      gpus;          // members in group (ring) order; send/recv: {src, dst}
  double bytes = 0;  // nccl-tests convention (collectives.h)
};

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  // Starts `request` at `now_s` and returns its id.
  // REQUIRES: now_s >= the last time passed to AdvanceTo.
  virtual int Start(double now_s, const CollectiveRequest& request) = 0;
  // Time of the next state change (a transfer finishing or, for flows, a
  // flow ending), or nullopt when nothing runs.
  virtual std::optional<double> NextEventTime() const = 0;
  // Moves time to `now_s` (REQUIRES: <= NextEventTime() when there is one)
  // and returns the ids of the transfers that finished by then, ascending.
  virtual std::vector<int> AdvanceTo(double now_s) = 0;
};

class AnalyticalNetwork final : public NetworkModel {
 public:
  AnalyticalNetwork(const Cluster& cluster, NetworkParams params);
  int Start(double now_s, const CollectiveRequest& request) override;
  std::optional<double> NextEventTime() const override;
  std::vector<int> AdvanceTo(double now_s) override;

 private:
  const Cluster& cluster_;
  NetworkParams params_;
  std::vector<double> finish_s_;  // by id; < 0 once reported
};

class FlowNetwork final : public NetworkModel {
 public:
  // REQUIRES: `cluster` outlives the model.
  FlowNetwork(const Cluster& cluster, NetworkParams params);
  int Start(double now_s, const CollectiveRequest& request) override;
  std::optional<double> NextEventTime() const override;
  std::vector<int> AdvanceTo(double now_s) override;

  // Current rate of every flow of transfer `id`, bytes/s (for tests).
  std::vector<double> Rates(int id) const;

 private:
  struct ActiveFlow {
    flow::FlowId id;
    int transfer;
    double remaining_bytes;
  };
  struct Transfer {
    int flows_left = 0;
    double latency_s = 0;
    double done_s = -1;  // when the last flow ended; < 0 while flows run
  };
  void AddFlow(int transfer, const std::vector<EdgeId>& path, double bytes);
  flow::LinkId SolverLink(EdgeId edge);
  double Capacity(const Link& link) const;

  const Cluster& cluster_;
  NetworkParams params_;
  // Mutable: the const queries solve what Start left unsolved (Solve()
  // changes no observable state but the rates, which it brings up to date).
  mutable flow::MaxMinSolver solver_;
  std::vector<flow::LinkId> link_of_edge_;  // -1 until a flow uses the edge
  std::vector<ActiveFlow> flows_;           // in start order
  std::vector<Transfer> transfers_;
  // Ids of the transfers not yet reported, ascending: each event looks at
  // these only (full mode starts millions of transfers over a step).
  std::vector<int> pending_;
  double now_s_ = 0;
};

}  // namespace moesim::topology

#endif  // MOESIM_TOPOLOGY_NETWORK_MODEL_H_
