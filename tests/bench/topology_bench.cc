// Benchmarks of the cluster graph (topology/cluster.h). Goal: building the
// graph of a 16,384-GPU cluster plus the placement of a layout on it stays
// under 200 ms (issue: topology graphs and placement).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <utility>
#include <vector>

#include "topology/cluster.h"
#include "topology/placement.h"
#include "topology/system.h"

namespace moesim::topology {
namespace {

System MustLoad(const char* name) {
  auto system = LoadSystem(name);
  if (!system) std::abort();
  return *std::move(system);
}

// 16,384 DGX H100 GPUs = 64 SU: 512 leaves, 512 spines, 256 cores.
void BM_BuildDgxH100(benchmark::State& state) {
  const System system = MustLoad("dgx-h100");
  for (auto _ : state) {
    auto cluster = Cluster::Build(system, static_cast<int>(state.range(0)));
    if (!cluster) std::abort();
    benchmark::DoNotOptimize(cluster->num_edges());
  }
}
BENCHMARK(BM_BuildDgxH100)->Arg(16384)->Unit(benchmark::kMillisecond);

// 16,416 GB200 GPUs = 228 NVL72 racks (the multiple of 72 nearest 16,384).
void BM_BuildGb200Nvl72(benchmark::State& state) {
  const System system = MustLoad("gb200-nvl72");
  for (auto _ : state) {
    auto cluster = Cluster::Build(system, static_cast<int>(state.range(0)));
    if (!cluster) std::abort();
    benchmark::DoNotOptimize(cluster->num_edges());
  }
}
BENCHMARK(BM_BuildGb200Nvl72)->Arg(16416)->Unit(benchmark::kMillisecond);

// Route() over 10,000 seeded random pairs of a 16,384-GPU DGX H100 cluster.
void BM_Route10kPairs(benchmark::State& state) {
  auto cluster = Cluster::Build(MustLoad("dgx-h100"), 16384);
  if (!cluster) std::abort();
  std::mt19937_64 rng(42);
  std::vector<std::pair<int, int>> pairs(10'000);
  for (auto& [src, dst] : pairs) {
    src = static_cast<int>(rng() % 16384);
    dst = static_cast<int>(rng() % 16384);
  }
  for (auto _ : state) {
    for (const auto& [src, dst] : pairs) {
      benchmark::DoNotOptimize(cluster->Route(src, dst));
    }
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(pairs.size()));
}
BENCHMARK(BM_Route10kPairs)->Unit(benchmark::kMillisecond);

// Graph and placement together: the DeepSeek-V3 seed layout (TP1 CP32 EP32
// PP8) scaled to 16,384 DGX H100 GPUs (dp = 16384 / 256 = 64), every group
// kind's span computed.
void BM_GraphAndPlacementDgxH100(benchmark::State& state) {
  const System system = MustLoad("dgx-h100");
  const int gpus = static_cast<int>(state.range(0));
  const MeshSizes sizes{.tp = 1,
                        .cp = 32,
                        .dp = gpus / 256,
                        .pp = 8,
                        .ep = 32,
                        .etp = 1,
                        .edp = gpus / 256};
  for (auto _ : state) {
    auto cluster = Cluster::Build(system, gpus);
    if (!cluster) std::abort();
    auto placement = Placement::Build(sizes, "tp-cp-ep-dp-pp", *cluster);
    if (!placement) std::abort();
    benchmark::DoNotOptimize(placement->spans().size());
  }
}
BENCHMARK(BM_GraphAndPlacementDgxH100)
    ->Arg(16384)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace moesim::topology
