// main() of every benchmark binary: the allocator set as `moesim` sets it
// (util::TuneAllocator, first thing in tools/main.cc), so a benchmark times
// what the command line runs.
#include <benchmark/benchmark.h>

#include "util/allocator.h"

int main(int argc, char** argv) {
  moesim::util::TuneAllocator();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
