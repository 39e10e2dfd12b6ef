// `moesim sweep` throughput: candidates judged (resolved, constrained,
// memory-estimated) and replayed per second on the shipped sweeps, one
// thread, so the figure does not depend on the machine's core count.
// Reported as the counter "layouts/s" (all candidates) and "replays/s".
// The NVL72 CP-vs-TP sweep also runs on two threads, as `moesim sweep
// FILE -j 2` does: issue 45's goal is 200 layouts/s there.
#include <benchmark/benchmark.h>

#include <string>

#include "tools/sweep.h"

namespace {

void BM_Sweep(benchmark::State& state, const std::string& file, int jobs = 1) {
  auto space = moesim::studies::SweepSpace::Load(
      std::string(MOESIM_SOURCE_DIR) + "/scenarios/sweeps/" + file);
  if (!space) {
    state.SkipWithError(space.error().message.c_str());
    return;
  }
  moesim::studies::SweepOptions options;
  options.jobs = jobs;
  int64_t layouts = 0, replays = 0;
  for (auto _ : state) {
    const moesim::studies::SweepOutcome o =
        moesim::studies::EvaluateSweep(*space, options);
    layouts += static_cast<int64_t>(o.candidates.size());
    for (const auto& c : o.candidates) replays += c.verdict() == "ok";
  }
  state.counters["layouts/s"] = benchmark::Counter(static_cast<double>(layouts),
                                                   benchmark::Counter::kIsRate);
  state.counters["replays/s"] = benchmark::Counter(static_cast<double>(replays),
                                                   benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_Sweep, qwen3_next_gb200, "qwen3-next-gb200.textproto")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Sweep, qwen3_235b_cp_vs_tp,
                  "qwen3-235b-gb200-nvl72-cp-vs-tp.textproto")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Sweep, qwen3_235b_cp_vs_tp_j2,
                  "qwen3-235b-gb200-nvl72-cp-vs-tp.textproto", 2)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Sweep, dsv3_h100_long_context,
                  "dsv3-h100-long-context.textproto")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace
