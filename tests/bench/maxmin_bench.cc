// Max-min solver cost (topology/flow/maxmin.h) on a fabric-sized instance:
// 2,000 links and 10,000 flows over random paths of 2-6 distinct links, which
// is one connected component in practice, so every re-solve recomputes all
// flows. Goal (topology issue): under 5 ms per re-solve after one change.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "topology/flow/maxmin.h"

namespace {

using moesim::topology::flow::FlowId;
using moesim::topology::flow::LinkId;
using moesim::topology::flow::MaxMinSolver;

constexpr int kLinks = 2000;
constexpr int kFlows = 10000;
constexpr unsigned kSeed = 42;

// 200-800 Gb/s links, in bytes/s.
double RandomCapacity(std::mt19937& rng) {
  return std::uniform_real_distribution<double>(25e9, 100e9)(rng);
}

std::vector<LinkId> RandomPath(std::mt19937& rng) {
  const int length = std::uniform_int_distribution<int>(2, 6)(rng);
  std::uniform_int_distribution<LinkId> link(0, kLinks - 1);
  std::vector<LinkId> path;
  while (static_cast<int>(path.size()) < length) {
    const LinkId next = link(rng);
    if (std::find(path.begin(), path.end(), next) == path.end()) {
      path.push_back(next);
    }
  }
  return path;
}

struct Instance {
  MaxMinSolver solver;
  std::vector<FlowId> live;  // Live flow ids, for picking one to remove.
};

// Builds the instance (not solved).
Instance Build(std::mt19937& rng) {
  Instance instance;
  for (int i = 0; i < kLinks; ++i) instance.solver.AddLink(RandomCapacity(rng));
  for (int i = 0; i < kFlows; ++i) {
    instance.live.push_back(instance.solver.AddFlow(RandomPath(rng)));
  }
  return instance;
}

void BM_FullSolve(benchmark::State& state) {
  std::mt19937 rng(kSeed);
  for (auto _ : state) {
    state.PauseTiming();
    Instance instance = Build(rng);
    state.ResumeTiming();
    instance.solver.Solve();
    benchmark::DoNotOptimize(instance.solver.Rate(instance.live.front()));
    state.PauseTiming();
    instance = Instance();  // Destruction outside the timing.
    state.ResumeTiming();
  }
}
BENCHMARK(BM_FullSolve)->Unit(benchmark::kMillisecond);

// One flow leaves, a new random one arrives, then Solve().
void BM_ResolveAfterFlowChurn(benchmark::State& state) {
  std::mt19937 rng(kSeed);
  Instance instance = Build(rng);
  instance.solver.Solve();
  double recomputed = 0;
  for (auto _ : state) {
    const size_t victim =
        std::uniform_int_distribution<size_t>(0, instance.live.size() - 1)(rng);
    instance.solver.RemoveFlow(instance.live[victim]);
    instance.live[victim] = instance.solver.AddFlow(RandomPath(rng));
    instance.solver.Solve();
    recomputed += instance.solver.LastSolveFlowCount();
  }
  state.counters["recomputed_flows"] =
      benchmark::Counter(recomputed, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_ResolveAfterFlowChurn)->Unit(benchmark::kMillisecond);

// One link's capacity changes, then Solve().
void BM_ResolveAfterCapacityChange(benchmark::State& state) {
  std::mt19937 rng(kSeed);
  Instance instance = Build(rng);
  instance.solver.Solve();
  std::uniform_int_distribution<LinkId> link(0, kLinks - 1);
  double recomputed = 0;
  for (auto _ : state) {
    instance.solver.SetLinkCapacity(link(rng), RandomCapacity(rng));
    instance.solver.Solve();
    recomputed += instance.solver.LastSolveFlowCount();
  }
  state.counters["recomputed_flows"] =
      benchmark::Counter(recomputed, benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_ResolveAfterCapacityChange)->Unit(benchmark::kMillisecond);

}  // namespace
