// Max-min fair bandwidth sharing: the core of the flow-level network model.
//
// Design. Like SimGrid's lmm maxmin, links are constraints with a capacity and
// flows are variables over a path of links. Solve() computes weighted max-min
// fair rates with per-flow rate bounds by progressive filling over a "fill
// level" t (bytes/s per unit of weight): every unfixed flow runs at
// weight * t; a link saturates at the t where its fixed flows' rates plus
// t * (its unfixed flows' weights) reach its capacity, and all its unfixed
// flows are then fixed at weight * t; a flow whose bound is reached first is
// fixed at its bound (level bound / weight). Links sit in a binary min-heap
// keyed by (saturation level, link id), one entry per link; fixing a flow
// raises the level of each other link on its path (levels never decrease),
// so an entry's key is a lower bound of its link's level and is refreshed
// lazily when it reaches the top. Bounded flows are events sorted once by
// (bound / weight, flow id). One solve of F flows with paths of P links over L
// links is O((F * P + L) log L + B log B) for B bounded flows. Solve() is
// incremental: AddFlow, RemoveFlow and SetLinkCapacity mark what they touch;
// Solve() finds, by BFS over "flow crosses link", the connected components
// containing a touched element and recomputes only those. Every floating-point
// operation on a component depends only on that component (its links'
// capacities, its flows in id order, events ordered by (level, id)), so a
// component's rates are bit-identical whether it is solved alone or with
// others, and untouched components keep theirs. Results depend only on the
// sequence of calls, never on addresses or hash order.
//
// Thread safety: none; a solver is a value owned by one simulation.
#ifndef MOESIM_TOPOLOGY_FLOW_MAXMIN_H_
#define MOESIM_TOPOLOGY_FLOW_MAXMIN_H_

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace moesim::topology::flow {

// Dense ids: links and flows are numbered 0, 1, 2, ... in creation order.
using LinkId = int32_t;
using FlowId = int32_t;

// A rate bound meaning "no per-flow cap".
inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// Weighted max-min fair rates (bytes/s) of flows sharing capacitated links.
//
// Invariants after Solve(): every live flow's rate is in [0, rate_bound];
// no link carries more than its capacity (up to rounding, ~1e-12 relative);
// every flow is at its bound or crosses a saturated link on which no other
// flow has a larger rate / weight (max-min optimality).
//
// Preconditions written as REQUIRES are programming errors: violating one
// aborts the process with a message on stderr.
class MaxMinSolver {
 public:
  MaxMinSolver() = default;

  // Adds a link of `capacity` bytes/s and returns its id.
  // REQUIRES: capacity > 0 and finite.
  LinkId AddLink(double capacity);

  // Changes a link's capacity; rates change at the next Solve().
  // REQUIRES: link is a valid id; capacity > 0 and finite.
  void SetLinkCapacity(LinkId link, double capacity);

  // Adds a flow over `path` and returns its id; its rate is 0 until the next
  // Solve(). `weight` scales its share (weighted max-min); `rate_bound` caps
  // its rate in bytes/s (kUnbounded: no cap).
  // REQUIRES: every link in path is a valid id and appears once; weight > 0
  // and finite; rate_bound > 0 (may be +inf); path is non-empty unless
  // rate_bound is finite (a pathless flow simply gets its bound).
  FlowId AddFlow(std::span<const LinkId> path, double weight = 1.0,
                 double rate_bound = kUnbounded);

  // Removes a live flow; ids are never reused. Other rates change at the
  // next Solve(). REQUIRES: flow is alive.
  void RemoveFlow(FlowId flow);

  // Recomputes the rates of the connected components touched since the last
  // Solve(); does nothing when nothing changed.
  void Solve();

  // Rate in bytes/s as of the last Solve() (0 for a flow added since).
  // REQUIRES: flow is alive.
  double Rate(FlowId flow) const;

  // Sum of Rate() over the live flows crossing `link`, bytes/s.
  // REQUIRES: link is a valid id.
  double LinkLoad(LinkId link) const;

  // REQUIRES: link is a valid id.
  double LinkCapacity(LinkId link) const;

  int NumLinks() const { return static_cast<int>(links_.size()); }
  int NumActiveFlows() const { return num_active_flows_; }

  // Number of flows the last Solve() recomputed (the touched components).
  int LastSolveFlowCount() const { return last_solve_flow_count_; }

 private:
  struct Link {
    double capacity = 0;
    std::vector<FlowId> flows;  // Live flows crossing the link, ascending id.
  };
  struct Flow {
    std::vector<LinkId> path;  // Emptied on removal.
    double weight = 1;
    double rate_bound = kUnbounded;
    double rate = 0;
    bool alive = true;
  };
  // Progressive-filling state of one link during Solve().
  struct LinkFill {
    double remaining = 0;       // Capacity minus the fixed flows' rates.
    double unfixed_weight = 0;  // Sum of the unfixed flows' weights.
    double weight_ref = 0;      // unfixed_weight when last summed exactly.
    double level = 0;           // Saturation level t; never decreases.
    int32_t unfixed = 0;        // Unfixed flows; 0 = saturated or empty.
  };
  struct HeapEntry {
    double level;
    LinkId link;
  };

  void CheckLink(LinkId link) const;
  void CheckFlow(FlowId flow) const;
  // Fills component_links_ / component_flows_ with the components reachable
  // from dirty_links_ / dirty_flows_.
  void CollectTouchedComponents();
  // Progressive filling over the collected components.
  void Fill();
  // Fixes `flow` at `rate` and updates the other links of its path.
  void FixFlow(FlowId flow, double rate, LinkId saturated_link);
  void ReleaseFromLink(LinkId link, const Flow& flow, double rate);

  std::vector<Link> links_;
  std::vector<Flow> flows_;
  int num_active_flows_ = 0;
  int last_solve_flow_count_ = 0;

  // Elements touched since the last Solve() (may hold duplicates and flows
  // removed since).
  std::vector<LinkId> dirty_links_;
  std::vector<FlowId> dirty_flows_;

  // Scratch reused by Solve(), indexed by id; holds no state between solves.
  std::vector<uint32_t> link_visit_;
  std::vector<uint32_t> flow_visit_;
  uint32_t visit_epoch_ = 0;
  std::vector<LinkId> component_links_;
  std::vector<FlowId> component_flows_;
  std::vector<FlowId> bounded_flows_;
  std::vector<LinkFill> fill_;
  std::vector<char> fixed_;
  std::vector<HeapEntry> heap_;
};

}  // namespace moesim::topology::flow

#endif  // MOESIM_TOPOLOGY_FLOW_MAXMIN_H_
