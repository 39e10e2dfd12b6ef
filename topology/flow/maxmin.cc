#include "topology/flow/maxmin.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "util/check.h"

namespace moesim::topology::flow {
namespace {

// A bound event and a link saturation whose levels agree to this relative
// precision are treated as simultaneous: the bound is applied first.
constexpr double kRelEpsilon = 1e-12;

// A link's running sum of unfixed weights is re-summed from its terms once it
// falls below this fraction of its last exact value, so that cancellation
// (weights of very different sizes) cannot inflate its relative error.
constexpr double kResumFraction = 1.0 / 16;

// Aborts with `message` (evaluated only on failure) unless `condition`.
#define MAXMIN_CHECK(condition, message)                           \
  do {                                                             \
    if (!(condition)) {                                            \
      util::CheckFailed(std::string(#condition ": ") + (message)); \
    }                                                              \
  } while (false)

std::string Num(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

bool IsValidCapacity(double capacity) {
  return capacity > 0 && std::isfinite(capacity);
}

// Heap comparator making a min-heap on (level, link id): true when `a` pops
// after `b`.
struct PopsLater {
  template <typename Entry>
  bool operator()(const Entry& a, const Entry& b) const {
    return a.level > b.level || (a.level == b.level && a.link > b.link);
  }
};

// Restores the heap order (std::*_heap with PopsLater) after the top entry's
// key increased.
template <typename Entry>
void SiftDownTop(std::vector<Entry>& heap) {
  constexpr PopsLater pops_later;
  const size_t size = heap.size();
  size_t i = 0;
  const Entry moving = heap[0];
  while (true) {
    size_t child = 2 * i + 1;
    if (child >= size) break;
    if (child + 1 < size && pops_later(heap[child], heap[child + 1])) ++child;
    if (!pops_later(moving, heap[child])) break;
    heap[i] = heap[child];
    i = child;
  }
  heap[i] = moving;
}

}  // namespace

LinkId MaxMinSolver::AddLink(double capacity) {
  MAXMIN_CHECK(IsValidCapacity(capacity),
               "link capacity must be > 0 and finite, got " + Num(capacity));
  MAXMIN_CHECK(links_.size() < static_cast<size_t>(INT32_MAX),
               "too many links");
  const auto id = static_cast<LinkId>(links_.size());
  links_.push_back(Link{.capacity = capacity, .flows = {}});
  return id;
}

void MaxMinSolver::SetLinkCapacity(LinkId link, double capacity) {
  CheckLink(link);
  MAXMIN_CHECK(IsValidCapacity(capacity),
               "link " + std::to_string(link) +
                   " capacity must be > 0 and finite, got " + Num(capacity));
  links_[link].capacity = capacity;
  dirty_links_.push_back(link);
}

FlowId MaxMinSolver::AddFlow(std::span<const LinkId> path, double weight,
                             double rate_bound) {
  MAXMIN_CHECK(weight > 0 && std::isfinite(weight),
               "flow weight must be > 0 and finite, got " + Num(weight));
  MAXMIN_CHECK(rate_bound > 0,
               "flow rate bound must be > 0, got " + Num(rate_bound));
  MAXMIN_CHECK(!path.empty() || std::isfinite(rate_bound),
               "a flow with an empty path needs a finite rate bound");
  MAXMIN_CHECK(flows_.size() < static_cast<size_t>(INT32_MAX),
               "too many flows");
  for (LinkId link : path) CheckLink(link);
  std::vector<LinkId> sorted(path.begin(), path.end());
  std::sort(sorted.begin(), sorted.end());
  const auto repeated = std::adjacent_find(sorted.begin(), sorted.end());
  MAXMIN_CHECK(repeated == sorted.end(), "flow path crosses link " +
                                             std::to_string(*repeated) +
                                             " more than once");

  const auto id = static_cast<FlowId>(flows_.size());
  flows_.push_back(Flow{.path = std::vector<LinkId>(path.begin(), path.end()),
                        .weight = weight,
                        .rate_bound = rate_bound,
                        .rate = 0,
                        .alive = true});
  // Ids only grow, so appending keeps every link's flow list ascending.
  for (LinkId link : path) {
    links_[link].flows.push_back(id);
    dirty_links_.push_back(link);
  }
  dirty_flows_.push_back(id);
  ++num_active_flows_;
  return id;
}

void MaxMinSolver::RemoveFlow(FlowId flow) {
  CheckFlow(flow);
  Flow& f = flows_[flow];
  for (LinkId link : f.path) {
    std::vector<FlowId>& on_link = links_[link].flows;
    on_link.erase(std::lower_bound(on_link.begin(), on_link.end(), flow));
    dirty_links_.push_back(link);
  }
  f.alive = false;
  f.rate = 0;
  std::vector<LinkId>().swap(f.path);
  --num_active_flows_;
}

double MaxMinSolver::Rate(FlowId flow) const {
  CheckFlow(flow);
  return flows_[flow].rate;
}

double MaxMinSolver::LinkLoad(LinkId link) const {
  CheckLink(link);
  double load = 0;
  for (FlowId flow : links_[link].flows) load += flows_[flow].rate;
  return load;
}

double MaxMinSolver::LinkCapacity(LinkId link) const {
  CheckLink(link);
  return links_[link].capacity;
}

void MaxMinSolver::CheckLink(LinkId link) const {
  MAXMIN_CHECK(link >= 0 && static_cast<size_t>(link) < links_.size(),
               "no link " + std::to_string(link) + " (have " +
                   std::to_string(links_.size()) + ")");
}

void MaxMinSolver::CheckFlow(FlowId flow) const {
  MAXMIN_CHECK(flow >= 0 && static_cast<size_t>(flow) < flows_.size() &&
                   flows_[flow].alive,
               "no live flow " + std::to_string(flow));
}

void MaxMinSolver::Solve() {
  if (dirty_links_.empty() && dirty_flows_.empty()) {
    last_solve_flow_count_ = 0;
    return;
  }
  CollectTouchedComponents();
  Fill();
  last_solve_flow_count_ = static_cast<int>(component_flows_.size());
  dirty_links_.clear();
  dirty_flows_.clear();
}

void MaxMinSolver::CollectTouchedComponents() {
  link_visit_.resize(links_.size(), 0);
  flow_visit_.resize(flows_.size(), 0);
  if (++visit_epoch_ == 0) {  // Wrapped: forget every old mark.
    std::fill(link_visit_.begin(), link_visit_.end(), 0);
    std::fill(flow_visit_.begin(), flow_visit_.end(), 0);
    visit_epoch_ = 1;
  }
  component_links_.clear();
  component_flows_.clear();
  auto visit_link = [&](LinkId link) {
    if (link_visit_[link] == visit_epoch_) return;
    link_visit_[link] = visit_epoch_;
    component_links_.push_back(link);
  };
  auto visit_flow = [&](FlowId flow) {
    if (flow_visit_[flow] == visit_epoch_ || !flows_[flow].alive) return;
    flow_visit_[flow] = visit_epoch_;
    component_flows_.push_back(flow);
  };
  for (LinkId link : dirty_links_) visit_link(link);
  for (FlowId flow : dirty_flows_) visit_flow(flow);
  // Breadth-first: the two lists double as the queues.
  size_t next_link = 0;
  size_t next_flow = 0;
  while (next_link < component_links_.size() ||
         next_flow < component_flows_.size()) {
    while (next_link < component_links_.size()) {
      for (FlowId flow : links_[component_links_[next_link]].flows) {
        visit_flow(flow);
      }
      ++next_link;
    }
    while (next_flow < component_flows_.size()) {
      for (LinkId link : flows_[component_flows_[next_flow]].path) {
        visit_link(link);
      }
      ++next_flow;
    }
  }
}

void MaxMinSolver::Fill() {
  fill_.resize(links_.size());
  fixed_.resize(flows_.size(), 0);
  heap_.clear();
  bounded_flows_.clear();
  for (FlowId flow : component_flows_) {
    fixed_[flow] = 0;
    flows_[flow].rate = 0;
    if (std::isfinite(flows_[flow].rate_bound)) bounded_flows_.push_back(flow);
  }
  for (LinkId link : component_links_) {
    LinkFill& fill = fill_[link];
    const Link& l = links_[link];
    double weight = 0;
    for (FlowId flow : l.flows) weight += flows_[flow].weight;
    fill = LinkFill{.remaining = l.capacity,
                    .unfixed_weight = weight,
                    .weight_ref = weight,
                    .level = 0,
                    .unfixed = static_cast<int32_t>(l.flows.size())};
    if (fill.unfixed == 0) continue;  // Nothing to share.
    fill.level = fill.remaining / fill.unfixed_weight;
    heap_.push_back(HeapEntry{.level = fill.level, .link = link});
  }
  constexpr PopsLater heap_order;
  std::make_heap(heap_.begin(), heap_.end(), heap_order);

  const auto bound_level = [this](FlowId flow) {
    return flows_[flow].rate_bound / flows_[flow].weight;
  };
  std::sort(bounded_flows_.begin(), bounded_flows_.end(),
            [&](FlowId a, FlowId b) {
              const double level_a = bound_level(a);
              const double level_b = bound_level(b);
              return level_a < level_b || (level_a == level_b && a < b);
            });

  size_t next_bound = 0;
  while (true) {
    // Each unsaturated link has one entry whose key is a lower bound of its
    // level (levels only increase). A top entry that is outdated gets its
    // key refreshed; the top is then the link with the least (level, id).
    while (!heap_.empty()) {
      HeapEntry& top = heap_.front();
      const LinkFill& fill = fill_[top.link];
      if (fill.unfixed == 0) {
        std::pop_heap(heap_.begin(), heap_.end(), heap_order);
        heap_.pop_back();
      } else if (top.level != fill.level) {
        top.level = fill.level;
        SiftDownTop(heap_);
      } else {
        break;
      }
    }
    const bool has_bound = next_bound < bounded_flows_.size();
    if (heap_.empty() && !has_bound) break;
    if (has_bound &&
        (heap_.empty() || bound_level(bounded_flows_[next_bound]) <=
                              heap_.front().level * (1 + kRelEpsilon))) {
      const FlowId flow = bounded_flows_[next_bound++];
      if (!fixed_[flow]) FixFlow(flow, flows_[flow].rate_bound, -1);
      continue;
    }
    const HeapEntry top = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), heap_order);
    heap_.pop_back();
    for (FlowId flow : links_[top.link].flows) {
      if (fixed_[flow]) continue;
      const Flow& f = flows_[flow];
      FixFlow(flow, std::min(f.weight * top.level, f.rate_bound), top.link);
    }
    fill_[top.link].unfixed = 0;
  }
  for (FlowId flow : component_flows_) {
    MAXMIN_CHECK(fixed_[flow], "flow " + std::to_string(flow) +
                                   " left unfixed by progressive filling");
  }
}

void MaxMinSolver::FixFlow(FlowId flow, double rate, LinkId saturated_link) {
  fixed_[flow] = 1;
  Flow& f = flows_[flow];
  f.rate = rate;
  for (LinkId link : f.path) {
    if (link != saturated_link) ReleaseFromLink(link, f, rate);
  }
}

void MaxMinSolver::ReleaseFromLink(LinkId link, const Flow& flow, double rate) {
  LinkFill& fill = fill_[link];
  if (--fill.unfixed == 0) return;  // Its heap entry is now stale.
  fill.remaining -= rate;
  fill.unfixed_weight -= flow.weight;
  if (fill.unfixed_weight < fill.weight_ref * kResumFraction) {
    double weight = 0;
    for (FlowId other : links_[link].flows) {
      if (!fixed_[other]) weight += flows_[other].weight;
    }
    fill.unfixed_weight = weight;
    fill.weight_ref = weight;
  }
  // Exactly, the level cannot drop when a flow at a level at most this link's
  // is fixed; the max keeps rounding from breaking that. The link's heap
  // entry is refreshed when it reaches the top.
  fill.level =
      std::max(fill.level, std::max(fill.remaining, 0.0) / fill.unfixed_weight);
}

#undef MAXMIN_CHECK

}  // namespace moesim::topology::flow
