// `moesim memory` accounting cost per zoo model: resolve + params + FLOPs +
// memory estimate. Goal (issue 2): under 10 ms for any zoo model.
#include <benchmark/benchmark.h>

#include "models/flops.h"
#include "models/memory.h"
#include "models/params.h"
#include "models/zoo.h"
#include "scenarios/scenario.h"

namespace {

void BM_MemoryAccounting(benchmark::State& state, std::string model, int gpus,
                         int pp, int vpp, int ep, int cp, std::string layout) {
  moesim::scenarios::Scenario spec;
  spec.set_model(model);
  spec.set_system("dgx-h100");
  spec.set_num_gpus(gpus);
  spec.set_seq_length(4096 * cp);
  spec.mutable_layout()->set_pipeline_model_parallel_size(pp);
  spec.mutable_layout()->set_virtual_pipeline_model_parallel_size(vpp);
  spec.mutable_layout()->set_expert_model_parallel_size(ep);
  spec.mutable_layout()->set_context_parallel_size(cp);
  spec.mutable_layout()->set_pipeline_model_parallel_layout(layout);
  spec.mutable_layout()->set_global_batch_size(gpus / pp / cp * 64);
  for (auto _ : state) {
    auto s = moesim::scenarios::Resolve(spec, "bench");
    if (!s) {
      state.SkipWithError(s.error().message.c_str());
      break;
    }
    auto params = moesim::models::CountParams(s->model);
    double flops = moesim::models::ModelFlopsPerSequence(
        s->model, s->training.seq_length, 1);
    auto memory =
        moesim::models::EstimateMemory(s->model, s->pipeline, s->parallel,
                                       s->training, 80 * moesim::models::kGiB);
    benchmark::DoNotOptimize(params);
    benchmark::DoNotOptimize(flops);
    benchmark::DoNotOptimize(memory);
  }
}

BENCHMARK_CAPTURE(BM_MemoryAccounting, deepseek_v3_128k_256gpu, "deepseek-v3",
                  256, 8, 4, 32, 32, "Et|(tt|)*30mL")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MemoryAccounting, kimi_k2_1024gpu, "kimi-k2", 1024, 1, 1,
                  64, 1, "")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MemoryAccounting, qwen3_235b_256gpu, "qwen3-235b-a22b",
                  256, 2, 1, 32, 1, "")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_MemoryAccounting, llama31_405b_16384gpu, "llama3.1-405b",
                  16384, 2, 1, 1, 1, "")
    ->Unit(benchmark::kMillisecond);

}  // namespace
