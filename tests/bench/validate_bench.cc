// `moesim validate` over the shipped measured runs (every row resolved and
// replayed, the pairs predicted). Goal (issue 7): the whole file within 30 s
// on 2 cores.
#include <benchmark/benchmark.h>

#include "tools/validate_report.h"

namespace {

void BM_ValidateShippedRuns(benchmark::State& state) {
  moesim::tools::ValidateFlags flags;
  flags.pairs_file = "shipped";
  flags.json = true;
  for (auto _ : state) {
    auto report = moesim::tools::RunValidate(flags);
    if (!report) {
      state.SkipWithError(report.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(report->size());
  }
}
BENCHMARK(BM_ValidateShippedRuns)->Unit(benchmark::kMillisecond);

}  // namespace
