// Tests of the max-min fair bandwidth solver (topology/flow/maxmin.h). Every
// expected rate is derived by hand from progressive filling: unfixed flows
// grow at weight * t, a link saturates when its fixed rates plus t times its
// unfixed weights reach capacity, and its unfixed flows are then fixed.
#include "topology/flow/maxmin.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace moesim::topology::flow {
namespace {

using Path = std::vector<LinkId>;

TEST(MaxMinTest, OneBottleneckSplitsEvenly) {
  MaxMinSolver solver;
  const LinkId link = solver.AddLink(30);
  const FlowId a = solver.AddFlow(Path{link});
  const FlowId b = solver.AddFlow(Path{link});
  const FlowId c = solver.AddFlow(Path{link});
  solver.Solve();
  // Link 0 carries 3 flows: 30 / 3 = 10 each.
  EXPECT_DOUBLE_EQ(solver.Rate(a), 10);
  EXPECT_DOUBLE_EQ(solver.Rate(b), 10);
  EXPECT_DOUBLE_EQ(solver.Rate(c), 10);
  EXPECT_DOUBLE_EQ(solver.LinkLoad(link), 30);
  EXPECT_EQ(solver.NumActiveFlows(), 3);
}

TEST(MaxMinTest, ManyFlowsOnOneBottleneck) {
  MaxMinSolver solver;
  const LinkId link = solver.AddLink(1e9);
  std::vector<FlowId> flows;
  for (int i = 0; i < 7; ++i) flows.push_back(solver.AddFlow(Path{link}));
  solver.Solve();
  // 7 flows on 1e9 bytes/s: 1e9 / 7 each.
  for (FlowId flow : flows) EXPECT_DOUBLE_EQ(solver.Rate(flow), 1e9 / 7);
  EXPECT_NEAR(solver.LinkLoad(link), 1e9, 1e9 * 1e-12);
}

TEST(MaxMinTest, TwoBottlenecksInSeries) {
  MaxMinSolver solver;
  const LinkId wide = solver.AddLink(10);
  const LinkId narrow = solver.AddLink(4);
  const FlowId both = solver.AddFlow(Path{wide, narrow});
  const FlowId wide_only = solver.AddFlow(Path{wide});
  solver.Solve();
  // Levels: wide 10 / 2 = 5, narrow 4 / 1 = 4. Narrow saturates first and
  // fixes `both` at 4; wide then has 10 - 4 = 6 left for `wide_only` alone.
  EXPECT_DOUBLE_EQ(solver.Rate(both), 4);
  EXPECT_DOUBLE_EQ(solver.Rate(wide_only), 6);
  EXPECT_DOUBLE_EQ(solver.LinkLoad(wide), 10);
  EXPECT_DOUBLE_EQ(solver.LinkLoad(narrow), 4);
}

TEST(MaxMinTest, ParkingLot) {
  constexpr int kLinks = 4;
  constexpr double kCapacity = 10;
  MaxMinSolver solver;
  std::vector<LinkId> path;
  for (int i = 0; i < kLinks; ++i) path.push_back(solver.AddLink(kCapacity));
  const FlowId long_flow = solver.AddFlow(path);
  std::vector<FlowId> short_flows;
  for (LinkId link : path) short_flows.push_back(solver.AddFlow(Path{link}));
  solver.Solve();
  // Every link carries the long flow and one short flow: all tie at level
  // 10 / 2 = 5. Link 0 (lowest id) fixes the long flow and its short flow at
  // 5; each other link then has 10 - 5 = 5 for its short flow alone.
  EXPECT_DOUBLE_EQ(solver.Rate(long_flow), kCapacity / 2);
  for (FlowId flow : short_flows) {
    EXPECT_DOUBLE_EQ(solver.Rate(flow), kCapacity / 2);
  }
  for (LinkId link : path) EXPECT_DOUBLE_EQ(solver.LinkLoad(link), kCapacity);
}

TEST(MaxMinTest, WeightedFlowsShareInProportion) {
  MaxMinSolver solver;
  const LinkId link = solver.AddLink(8);
  const FlowId light = solver.AddFlow(Path{link}, /*weight=*/1);
  const FlowId heavy = solver.AddFlow(Path{link}, /*weight=*/3);
  solver.Solve();
  // Total weight 4: level 8 / 4 = 2, so rates 1 * 2 = 2 and 3 * 2 = 6.
  EXPECT_DOUBLE_EQ(solver.Rate(light), 2);
  EXPECT_DOUBLE_EQ(solver.Rate(heavy), 6);
}

TEST(MaxMinTest, RateBoundedFlowLeavesItsShareToOthers) {
  MaxMinSolver solver;
  const LinkId link = solver.AddLink(10);
  const FlowId capped = solver.AddFlow(Path{link}, 1, /*rate_bound=*/1);
  const FlowId b = solver.AddFlow(Path{link});
  const FlowId c = solver.AddFlow(Path{link});
  solver.Solve();
  // Bound level 1 / 1 = 1 comes before the link's 10 / 3: `capped` is fixed
  // at 1, leaving (10 - 1) / 2 = 4.5 for each of the other two.
  EXPECT_DOUBLE_EQ(solver.Rate(capped), 1);
  EXPECT_DOUBLE_EQ(solver.Rate(b), 4.5);
  EXPECT_DOUBLE_EQ(solver.Rate(c), 4.5);
}

TEST(MaxMinTest, LooseRateBoundDoesNotBind) {
  MaxMinSolver solver;
  const LinkId link = solver.AddLink(10);
  const FlowId capped = solver.AddFlow(Path{link}, 1, /*rate_bound=*/100);
  const FlowId other = solver.AddFlow(Path{link});
  solver.Solve();
  // The link saturates at level 10 / 2 = 5, before the bound's 100.
  EXPECT_DOUBLE_EQ(solver.Rate(capped), 5);
  EXPECT_DOUBLE_EQ(solver.Rate(other), 5);
}

TEST(MaxMinTest, WeightedRateBoundUsesBoundOverWeight) {
  MaxMinSolver solver;
  const LinkId link = solver.AddLink(12);
  const FlowId heavy = solver.AddFlow(Path{link}, /*weight=*/4,
                                      /*rate_bound=*/6);
  const FlowId light = solver.AddFlow(Path{link}, /*weight=*/2);
  solver.Solve();
  // Link level 12 / 6 = 2 would give heavy 8, but its bound is reached at
  // level 6 / 4 = 1.5: heavy = 6, and light takes the remaining 12 - 6 = 6.
  EXPECT_DOUBLE_EQ(solver.Rate(heavy), 6);
  EXPECT_DOUBLE_EQ(solver.Rate(light), 6);
}

TEST(MaxMinTest, ThreeLinksSharedByDifferentPaths) {
  MaxMinSolver solver;
  const LinkId l0 = solver.AddLink(12);
  const LinkId l1 = solver.AddLink(6);
  const LinkId l2 = solver.AddLink(10);
  const FlowId f0 = solver.AddFlow(Path{l0, l1});
  const FlowId f1 = solver.AddFlow(Path{l1, l2});
  const FlowId f2 = solver.AddFlow(Path{l0});
  const FlowId f3 = solver.AddFlow(Path{l2});
  const FlowId f4 = solver.AddFlow(Path{l0, l2});
  solver.Solve();
  // Initial levels: l0 = 12 / 3 (f0 f2 f4) = 4, l1 = 6 / 2 (f0 f1) = 3,
  // l2 = 10 / 3 (f1 f3 f4) = 3.33.
  // l1 saturates at 3: f0 = f1 = 3. Then l0 = (12 - 3) / 2 = 4.5 and
  // l2 = (10 - 3) / 2 = 3.5.
  // l2 saturates at 3.5: f3 = f4 = 3.5. Then l0 = (12 - 3 - 3.5) / 1 = 5.5.
  // l0 saturates at 5.5: f2 = 5.5.
  EXPECT_DOUBLE_EQ(solver.Rate(f0), 3);
  EXPECT_DOUBLE_EQ(solver.Rate(f1), 3);
  EXPECT_DOUBLE_EQ(solver.Rate(f2), 5.5);
  EXPECT_DOUBLE_EQ(solver.Rate(f3), 3.5);
  EXPECT_DOUBLE_EQ(solver.Rate(f4), 3.5);
  // All three links end saturated: 3 + 5.5 + 3.5, 3 + 3, 3 + 3.5 + 3.5.
  EXPECT_DOUBLE_EQ(solver.LinkLoad(l0), 12);
  EXPECT_DOUBLE_EQ(solver.LinkLoad(l1), 6);
  EXPECT_DOUBLE_EQ(solver.LinkLoad(l2), 10);
}

TEST(MaxMinTest, EmptyPathFlowGetsItsBound) {
  MaxMinSolver solver;
  const LinkId link = solver.AddLink(10);
  const FlowId local = solver.AddFlow({}, 1, /*rate_bound=*/7);
  const FlowId remote = solver.AddFlow(Path{link});
  solver.Solve();
  // `local` crosses no link: only its bound limits it. `remote` is alone on
  // the link: 10.
  EXPECT_DOUBLE_EQ(solver.Rate(local), 7);
  EXPECT_DOUBLE_EQ(solver.Rate(remote), 10);
  EXPECT_DOUBLE_EQ(solver.LinkLoad(link), 10);
}

TEST(MaxMinTest, NewFlowHasZeroRateUntilSolve) {
  MaxMinSolver solver;
  const LinkId link = solver.AddLink(10);
  const FlowId flow = solver.AddFlow(Path{link});
  EXPECT_EQ(solver.Rate(flow), 0);
  EXPECT_EQ(solver.LinkLoad(link), 0);
  solver.Solve();
  EXPECT_DOUBLE_EQ(solver.Rate(flow), 10);  // Alone on the link.
}

TEST(MaxMinTest, SameCallsGiveBitIdenticalRates) {
  auto build = [] {
    MaxMinSolver solver;
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> capacity(1, 3);
    for (int i = 0; i < 20; ++i) solver.AddLink(capacity(rng));
    std::uniform_int_distribution<LinkId> link(0, 19);
    for (int i = 0; i < 60; ++i) {
      const LinkId a = link(rng);
      const LinkId b = (a + 1 + link(rng) % 19) % 20;
      solver.AddFlow(Path{a, b}, capacity(rng));
    }
    solver.Solve();
    return solver;
  };
  const MaxMinSolver first = build();
  const MaxMinSolver second = build();
  for (FlowId flow = 0; flow < 60; ++flow) {
    EXPECT_EQ(first.Rate(flow), second.Rate(flow)) << "flow " << flow;
  }
}

TEST(MaxMinIncrementalTest, ArrivalAndDepartureResolveOnlyTheTouchedComponent) {
  MaxMinSolver solver;
  // Component A: link 0 (10) with two flows. Component B: link 1 (9) with
  // three flows.
  const LinkId link_a = solver.AddLink(10);
  const LinkId link_b = solver.AddLink(9);
  const FlowId a0 = solver.AddFlow(Path{link_a});
  const FlowId a1 = solver.AddFlow(Path{link_a});
  std::vector<FlowId> b_flows;
  for (int i = 0; i < 3; ++i) b_flows.push_back(solver.AddFlow(Path{link_b}));
  solver.Solve();
  EXPECT_EQ(solver.LastSolveFlowCount(), 5);  // First solve: everything.
  EXPECT_DOUBLE_EQ(solver.Rate(a0), 5);       // 10 / 2.
  for (FlowId flow : b_flows) EXPECT_DOUBLE_EQ(solver.Rate(flow), 3);  // 9 / 3

  // Arrival on link 0: 10 / 3 each there; component B is not recomputed.
  const FlowId arrival = solver.AddFlow(Path{link_a});
  solver.Solve();
  EXPECT_EQ(solver.LastSolveFlowCount(), 3);
  EXPECT_DOUBLE_EQ(solver.Rate(a0), 10.0 / 3);
  EXPECT_DOUBLE_EQ(solver.Rate(a1), 10.0 / 3);
  EXPECT_DOUBLE_EQ(solver.Rate(arrival), 10.0 / 3);
  for (FlowId flow : b_flows) EXPECT_DOUBLE_EQ(solver.Rate(flow), 3);

  // Departure: back to 10 / 2; only the two remaining flows of A recomputed.
  solver.RemoveFlow(arrival);
  solver.Solve();
  EXPECT_EQ(solver.LastSolveFlowCount(), 2);
  EXPECT_DOUBLE_EQ(solver.Rate(a0), 5);
  EXPECT_DOUBLE_EQ(solver.Rate(a1), 5);
  for (FlowId flow : b_flows) EXPECT_DOUBLE_EQ(solver.Rate(flow), 3);
  EXPECT_EQ(solver.NumActiveFlows(), 5);

  // A flow bridging A and B merges them: all 6 flows recomputed. Levels:
  // link 0 carries a0 a1 bridge, 10 / 3 = 3.33; link 1 carries bridge and the
  // three B flows, 9 / 4 = 2.25. Link 1 saturates first, fixing its four
  // flows at 2.25; link 0 has 10 - 2.25 = 7.75 left for a0 and a1: 3.875.
  const FlowId bridge = solver.AddFlow(Path{link_a, link_b});
  solver.Solve();
  EXPECT_EQ(solver.LastSolveFlowCount(), 6);
  EXPECT_DOUBLE_EQ(solver.Rate(bridge), 2.25);
  for (FlowId flow : b_flows) EXPECT_DOUBLE_EQ(solver.Rate(flow), 2.25);
  EXPECT_DOUBLE_EQ(solver.Rate(a0), 3.875);
  EXPECT_DOUBLE_EQ(solver.Rate(a1), 3.875);
}

TEST(MaxMinIncrementalTest, SolveWithoutChangesRecomputesNothing) {
  MaxMinSolver solver;
  const LinkId link = solver.AddLink(10);
  const FlowId flow = solver.AddFlow(Path{link});
  solver.Solve();
  EXPECT_EQ(solver.LastSolveFlowCount(), 1);
  solver.Solve();
  EXPECT_EQ(solver.LastSolveFlowCount(), 0);
  EXPECT_DOUBLE_EQ(solver.Rate(flow), 10);
}

TEST(MaxMinIncrementalTest, SetLinkCapacityResolves) {
  MaxMinSolver solver;
  const LinkId wide = solver.AddLink(10);
  const LinkId narrow = solver.AddLink(4);
  const LinkId other = solver.AddLink(30);
  const FlowId both = solver.AddFlow(Path{wide, narrow});
  const FlowId wide_only = solver.AddFlow(Path{wide});
  const FlowId other_flow = solver.AddFlow(Path{other});
  solver.Solve();
  EXPECT_DOUBLE_EQ(solver.Rate(both), 4);  // As in TwoBottlenecksInSeries.
  EXPECT_DOUBLE_EQ(solver.Rate(wide_only), 6);

  // Narrow 4 -> 8: levels wide 10 / 2 = 5, narrow 8 / 1 = 8. Wide saturates
  // first: both flows at 5; `other` is in another component.
  solver.SetLinkCapacity(narrow, 8);
  solver.Solve();
  EXPECT_EQ(solver.LastSolveFlowCount(), 2);
  EXPECT_DOUBLE_EQ(solver.Rate(both), 5);
  EXPECT_DOUBLE_EQ(solver.Rate(wide_only), 5);
  EXPECT_DOUBLE_EQ(solver.Rate(other_flow), 30);
  EXPECT_DOUBLE_EQ(solver.LinkCapacity(narrow), 8);

  // A link without flows: nothing to recompute.
  const LinkId idle = solver.AddLink(1);
  solver.SetLinkCapacity(idle, 2);
  solver.Solve();
  EXPECT_EQ(solver.LastSolveFlowCount(), 0);
  EXPECT_EQ(solver.LinkLoad(idle), 0);
}

// Solving one component alone must give exactly what a full solve gives.
TEST(MaxMinIncrementalTest, ComponentSolveIsBitIdenticalToFullSolve) {
  // Two components with awkward (non-dyadic) numbers.
  auto build = [](MaxMinSolver& solver) {
    const LinkId a = solver.AddLink(10.0 / 3);
    const LinkId b = solver.AddLink(7.1);
    const LinkId c = solver.AddLink(2.9);
    solver.AddFlow(Path{a, b}, 0.7);
    solver.AddFlow(Path{b}, 1.3, 2.2);
    solver.AddFlow(Path{a}, 2.1);
    solver.AddFlow(Path{c}, 0.3);
    solver.AddFlow(Path{c}, 1.9);
  };
  MaxMinSolver incremental;
  build(incremental);
  incremental.Solve();
  MaxMinSolver full;
  build(full);
  // Only component {a, b} changes; `incremental` recomputes just it, `full`
  // solves both components at once.
  for (MaxMinSolver* solver : {&incremental, &full}) {
    solver->RemoveFlow(2);
    solver->AddFlow(Path{0}, 0.9);
    solver->SetLinkCapacity(1, 6.7);
  }
  incremental.Solve();
  EXPECT_EQ(incremental.LastSolveFlowCount(), 3);
  full.Solve();
  EXPECT_EQ(full.LastSolveFlowCount(), 5);
  for (FlowId flow : {0, 1, 3, 4, 5}) {
    EXPECT_EQ(incremental.Rate(flow), full.Rate(flow)) << "flow " << flow;
  }
}

// A random instance mirrored outside the solver.
struct MirrorFlow {
  FlowId id;
  std::vector<LinkId> path;
  double weight;
  double rate_bound;
};

bool NearRel(double actual, double expected, double rel) {
  return std::abs(actual - expected) <=
         rel * std::max({std::abs(actual), std::abs(expected), 1e-300});
}

// Checks feasibility and max-min optimality of the solver's rates.
void ExpectMaxMinFair(const MaxMinSolver& solver,
                      const std::vector<double>& capacities,
                      const std::vector<MirrorFlow>& flows) {
  constexpr double kRel = 1e-9;
  std::vector<double> load(capacities.size(), 0);
  std::vector<double> max_level(capacities.size(), 0);  // Max rate / weight.
  for (const MirrorFlow& f : flows) {
    const double rate = solver.Rate(f.id);
    EXPECT_GE(rate, 0) << "flow " << f.id;
    EXPECT_LE(rate, f.rate_bound * (1 + kRel)) << "flow " << f.id;
    for (LinkId link : f.path) {
      load[link] += rate;
      max_level[link] = std::max(max_level[link], rate / f.weight);
    }
  }
  for (size_t link = 0; link < capacities.size(); ++link) {
    EXPECT_LE(load[link], capacities[link] * (1 + kRel)) << "link " << link;
    EXPECT_TRUE(
        NearRel(solver.LinkLoad(static_cast<LinkId>(link)), load[link], kRel))
        << "link " << link;
  }
  for (const MirrorFlow& f : flows) {
    const double rate = solver.Rate(f.id);
    bool justified = rate >= f.rate_bound * (1 - kRel);
    for (LinkId link : f.path) {
      const bool saturated = load[link] >= capacities[link] * (1 - kRel);
      const bool top_level = rate / f.weight >= max_level[link] * (1 - kRel);
      justified = justified || (saturated && top_level);
    }
    EXPECT_TRUE(justified) << "flow " << f.id << " at rate " << rate
                           << " is neither bounded nor bottlenecked";
  }
}

class RandomInstance {
 public:
  explicit RandomInstance(std::mt19937& rng) : rng_(rng) {}

  void AddLink(MaxMinSolver& solver) {
    capacities_.push_back(RandomCapacity());
    solver.AddLink(capacities_.back());
  }

  void AddFlow(MaxMinSolver& solver) {
    const int num_links = static_cast<int>(capacities_.size());
    const int max_len = std::min(4, num_links);
    std::vector<LinkId> path;
    const int len = std::uniform_int_distribution<int>(0, max_len)(rng_);
    while (static_cast<int>(path.size()) < len) {
      const LinkId link =
          std::uniform_int_distribution<LinkId>(0, num_links - 1)(rng_);
      if (std::find(path.begin(), path.end(), link) == path.end()) {
        path.push_back(link);
      }
    }
    // Weights and bounds sometimes integers (ties), sometimes not.
    const double weight = Coin(0.5) ? Uniform(0.25, 4) : UniformInt(1, 3);
    double bound = kUnbounded;
    if (path.empty() || Coin(0.3)) {
      bound = Coin(0.5) ? Uniform(0.5, 50) : UniformInt(1, 20);
    }
    const FlowId id = solver.AddFlow(path, weight, bound);
    flows_.push_back(MirrorFlow{id, path, weight, bound});
  }

  void RemoveFlow(MaxMinSolver& solver) {
    if (flows_.empty()) return;
    const size_t i =
        std::uniform_int_distribution<size_t>(0, flows_.size() - 1)(rng_);
    solver.RemoveFlow(flows_[i].id);
    flows_.erase(flows_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  void SetCapacity(MaxMinSolver& solver) {
    const LinkId link = std::uniform_int_distribution<LinkId>(
        0, static_cast<LinkId>(capacities_.size()) - 1)(rng_);
    capacities_[link] = RandomCapacity();
    solver.SetLinkCapacity(link, capacities_[link]);
  }

  // A solver built from scratch with the same links and live flows (ids
  // renumbered in the same order).
  MaxMinSolver Fresh(std::vector<FlowId>& fresh_ids) const {
    MaxMinSolver fresh;
    for (double capacity : capacities_) fresh.AddLink(capacity);
    fresh_ids.clear();
    for (const MirrorFlow& f : flows_) {
      fresh_ids.push_back(fresh.AddFlow(f.path, f.weight, f.rate_bound));
    }
    fresh.Solve();
    return fresh;
  }

  const std::vector<double>& capacities() const { return capacities_; }
  const std::vector<MirrorFlow>& flows() const { return flows_; }

 private:
  double Uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }
  double UniformInt(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  bool Coin(double p) { return std::bernoulli_distribution(p)(rng_); }
  double RandomCapacity() {
    return Coin(0.5) ? Uniform(1, 100) : UniformInt(1, 30);
  }

  std::mt19937& rng_;
  std::vector<double> capacities_;
  std::vector<MirrorFlow> flows_;
};

TEST(MaxMinPropertyTest, RandomInstancesAreFairAndIncrementalMatchesFresh) {
  std::mt19937 rng(20240611);
  for (int instance = 0; instance < 200; ++instance) {
    SCOPED_TRACE(testing::Message() << "instance " << instance);
    MaxMinSolver solver;
    RandomInstance mirror(rng);
    const int num_links = std::uniform_int_distribution<int>(1, 12)(rng);
    const int num_flows = std::uniform_int_distribution<int>(1, 30)(rng);
    for (int i = 0; i < num_links; ++i) mirror.AddLink(solver);
    for (int i = 0; i < num_flows; ++i) mirror.AddFlow(solver);
    solver.Solve();
    ExpectMaxMinFair(solver, mirror.capacities(), mirror.flows());

    for (int round = 0; round < 10; ++round) {
      SCOPED_TRACE(testing::Message() << "round " << round);
      const int changes = std::uniform_int_distribution<int>(1, 4)(rng);
      for (int c = 0; c < changes; ++c) {
        switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
          case 0:
          case 1:
            mirror.AddFlow(solver);
            break;
          case 2:
            mirror.RemoveFlow(solver);
            break;
          default:
            mirror.SetCapacity(solver);
            break;
        }
      }
      solver.Solve();
      EXPECT_LE(solver.LastSolveFlowCount(), solver.NumActiveFlows());
      EXPECT_EQ(solver.NumActiveFlows(),
                static_cast<int>(mirror.flows().size()));
      ExpectMaxMinFair(solver, mirror.capacities(), mirror.flows());

      std::vector<FlowId> fresh_ids;
      const MaxMinSolver fresh = mirror.Fresh(fresh_ids);
      for (size_t i = 0; i < fresh_ids.size(); ++i) {
        const FlowId id = mirror.flows()[i].id;
        EXPECT_TRUE(NearRel(solver.Rate(id), fresh.Rate(fresh_ids[i]), 1e-9))
            << "flow " << id << ": incremental " << solver.Rate(id) << " fresh "
            << fresh.Rate(fresh_ids[i]);
      }
    }
  }
}

// Weights and capacities spanning many orders of magnitude: sums of weights
// lose precision by cancellation unless re-summed, which would show here as
// overloaded links and unjustified rates.
TEST(MaxMinPropertyTest, WideRangesStayFeasibleAndFair) {
  std::mt19937 rng(1234);
  auto log_uniform = [&rng](double lo_exp, double hi_exp) {
    return std::exp2(
        std::uniform_real_distribution<double>(lo_exp, hi_exp)(rng));
  };
  for (int instance = 0; instance < 300; ++instance) {
    SCOPED_TRACE(testing::Message() << "instance " << instance);
    MaxMinSolver solver;
    std::vector<double> capacities;
    std::vector<MirrorFlow> flows;
    const int num_links = std::uniform_int_distribution<int>(1, 20)(rng);
    const int num_flows = std::uniform_int_distribution<int>(1, 80)(rng);
    for (int i = 0; i < num_links; ++i) {
      capacities.push_back(log_uniform(-20, 40));
      solver.AddLink(capacities.back());
    }
    std::uniform_int_distribution<LinkId> pick_link(0, num_links - 1);
    for (int i = 0; i < num_flows; ++i) {
      std::vector<LinkId> path;
      const int len =
          std::uniform_int_distribution<int>(0, std::min(5, num_links))(rng);
      while (static_cast<int>(path.size()) < len) {
        const LinkId link = pick_link(rng);
        if (std::find(path.begin(), path.end(), link) == path.end()) {
          path.push_back(link);
        }
      }
      const double weight = log_uniform(-20, 20);
      const bool bounded =
          path.empty() || std::bernoulli_distribution(0.3)(rng);
      const double bound = bounded ? log_uniform(-20, 40) : kUnbounded;
      flows.push_back(
          MirrorFlow{solver.AddFlow(path, weight, bound), path, weight, bound});
    }
    solver.Solve();
    ExpectMaxMinFair(solver, capacities, flows);
  }
}

TEST(MaxMinDeathTest, PreconditionViolationsAbort) {
  MaxMinSolver solver;
  const LinkId link = solver.AddLink(10);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_DEATH(solver.AddLink(0), "capacity must be > 0");
  EXPECT_DEATH(solver.AddLink(nan), "capacity must be > 0");
  EXPECT_DEATH(solver.AddLink(kUnbounded), "capacity must be > 0");
  EXPECT_DEATH(solver.SetLinkCapacity(link, -1), "capacity must be > 0");
  EXPECT_DEATH(solver.SetLinkCapacity(5, 1), "no link 5");
  EXPECT_DEATH(solver.AddFlow(Path{7}), "no link 7");
  EXPECT_DEATH(solver.AddFlow(Path{link, link}), "more than once");
  EXPECT_DEATH(solver.AddFlow(Path{link}, 0), "weight must be > 0");
  EXPECT_DEATH(solver.AddFlow(Path{link}, nan), "weight must be > 0");
  EXPECT_DEATH(solver.AddFlow(Path{link}, 1, 0), "rate bound must be > 0");
  EXPECT_DEATH(solver.AddFlow(Path{link}, 1, nan), "rate bound must be > 0");
  EXPECT_DEATH(solver.AddFlow({}), "empty path needs a finite rate bound");
  const FlowId flow = solver.AddFlow(Path{link});
  solver.RemoveFlow(flow);
  EXPECT_DEATH(solver.Rate(flow), "no live flow");
  EXPECT_DEATH(solver.RemoveFlow(flow), "no live flow");
  EXPECT_DEATH(solver.Rate(-1), "no live flow");
}

}  // namespace
}  // namespace moesim::topology::flow
