// `moesim calibrate fit` on small synthetic data: six 8-GPU runs measured
// under a known profile (gemm_efficiency 0.8, host_overhead_scale 1.5),
// fitted from the identity with 2-fold cross-validation. What it times is
// the replays (each evaluation replays every row) plus the solver, so its
// time over BM_ReplayAllRowsOnce is the evaluation count.
#include <benchmark/benchmark.h>

#include "tools/calibrate_fit.h"

namespace {

using moesim::calibration::Factor;
using moesim::studies::MeasuredRun;

MeasuredRun Run(const char* id, const char* model, const char* system, int ep,
                int seq, int tp) {
  MeasuredRun r;
  r.id = id;
  r.model = model;
  r.confidence = "high";
  r.tflops = 1;
  r.flags.model = model;
  r.flags.system = system;
  r.flags.gpus = 8;
  r.flags.ep = ep;
  r.flags.seq = seq;
  r.flags.tp = tp;
  r.flags.gbs = 16;
  return r;
}

std::vector<MeasuredRun> Measured() {
  std::vector<MeasuredRun> runs = {
      Run("dense-h100", "llama3-8b", "dgx-h100", 1, 4096, 1),
      Run("moe-h100", "qwen3-30b-a3b", "dgx-h100", 8, 4096, 1),
      Run("oss-h100", "gpt-oss-20b", "dgx-h100", 8, 4096, 1),
      Run("moe-b200-1k", "qwen3-30b-a3b", "dgx-b200", 8, 1024, 1),
      Run("moon-b200-512", "moonlight-16b-a3b", "dgx-b200", 8, 512, 1),
      Run("moe-b200-512-tp2", "qwen3-30b-a3b", "dgx-b200", 8, 512, 2)};
  moesim::calibration::Profile truth;
  truth.all.at(Factor::kGemm) = 0.8;
  truth.all.at(Factor::kHostOverhead) = 1.5;
  const moesim::studies::RunReplayer replayer(runs);
  const auto predicted = replayer.Simulate(truth, 1);
  for (size_t i = 0; i < runs.size(); ++i) runs[i].tflops = predicted[i].tflops;
  return runs;
}

void BM_ReplayAllRowsOnce(benchmark::State& state) {
  const std::vector<MeasuredRun> runs = Measured();
  const moesim::studies::RunReplayer replayer(runs);
  for (auto _ : state) {
    benchmark::DoNotOptimize(replayer.Simulate({}, 1).size());
  }
}
BENCHMARK(BM_ReplayAllRowsOnce)->Unit(benchmark::kMillisecond);

void BM_CalibrateFit(benchmark::State& state) {
  const std::vector<MeasuredRun> runs = Measured();
  moesim::studies::FitOptions options;
  options.factors = {Factor::kGemm, Factor::kHostOverhead};
  options.folds = 2;
  options.jobs = 1;
  for (auto _ : state) {
    auto fit = moesim::studies::FitCalibration(runs, options);
    if (!fit) {
      state.SkipWithError(fit.error().message.c_str());
      return;
    }
    state.counters["evaluations"] = fit->evaluations;
    state.counters["gemm_efficiency"] = fit->factors.at(Factor::kGemm);
    state.counters["host_overhead_scale"] =
        fit->factors.at(Factor::kHostOverhead);
    state.counters["cv_mape_pct"] = fit->cv_mape_pct;
    benchmark::DoNotOptimize(fit->cv_mape_pct);
  }
}
BENCHMARK(BM_CalibrateFit)->Unit(benchmark::kMillisecond);

}  // namespace
