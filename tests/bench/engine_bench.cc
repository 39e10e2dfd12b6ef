// Event-engine throughput (sim/event_queue.h, sim/engine.h).
//
// BM_EventQueueScheduleAndRun: 1,000,000 events at seeded random times in
// [0, 1 s), scheduled up front, then run to exhaustion; items/s = events/s.
// BM_EventQueueHold: the classic "hold" model: 1,000 pending events, each run
// schedules one more a random delay later, 1,000,000 runs in all.
// BM_EngineRun: 100,000 ops over 64 streams, each with 0-3 deps on seeded
// random earlier ops, built then run; items/s = ops/s (build excluded).
// BM_EngineRunTransfers: the same graph with every 10th op a transfer on a
// network model that takes a fixed 20 us per transfer and answers in O(1),
// so it measures the engine's side of the NetworkModel seam (the poll event,
// AdvanceTo before Start, finish events); items/s = ops/s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sim/core/event_queue.h"
#include "sim/core/time.h"
#include "sim/engine.h"
#include "topology/network_model.h"

namespace {

using moesim::sim::Engine;
using moesim::sim::EventQueue;
using moesim::sim::OpId;
using moesim::sim::StreamId;
using moesim::sim::Time;

constexpr unsigned kSeed = 42;

void BM_EventQueueScheduleAndRun(benchmark::State& state) {
  const int64_t events = state.range(0);
  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<int64_t> at_ps(0, 1'000'000'000'000 - 1);
  std::vector<Time> times(events);
  for (Time& t : times) t = Time::Picos(at_ps(rng));
  int64_t runs = 0;
  for (auto _ : state) {
    EventQueue queue;
    for (const Time t : times) queue.Schedule(t, [&runs] { ++runs; });
    queue.RunAll();
  }
  benchmark::DoNotOptimize(runs);
  state.SetItemsProcessed(state.iterations() * events);
}
BENCHMARK(BM_EventQueueScheduleAndRun)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond);

void BM_EventQueueHold(benchmark::State& state) {
  constexpr int kPending = 1000;
  const int64_t runs = state.range(0);
  for (auto _ : state) {
    std::mt19937 rng(kSeed);
    std::uniform_int_distribution<int64_t> delay_ps(1, 1'000'000);
    EventQueue queue;
    int64_t left = runs;
    std::function<void()> hold = [&] {
      if (--left >= kPending) {
        queue.Schedule(queue.now() + Time::Picos(delay_ps(rng)),
                       [&] { hold(); });
      }
    };
    for (int i = 0; i < kPending; ++i) {
      queue.Schedule(Time::Picos(delay_ps(rng)), [&] { hold(); });
    }
    queue.RunAll();
    benchmark::DoNotOptimize(left);
  }
  state.SetItemsProcessed(state.iterations() * runs);
}
BENCHMARK(BM_EventQueueHold)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

// Every transfer takes kTransferSeconds. Start times never decrease, so
// transfers finish in start order: a queue of finish times is enough.
class FixedLatencyNetwork final : public moesim::topology::NetworkModel {
 public:
  static constexpr double kTransferSeconds = 20e-6;

  int Start(double now_s,
            const moesim::topology::CollectiveRequest& /*request*/) override {
    running_.push_back(now_s + kTransferSeconds);
    return next_id_++;
  }
  std::optional<double> NextEventTime() const override {
    if (running_.empty()) return std::nullopt;
    return running_.front();
  }
  std::vector<int> AdvanceTo(double now_s) override {
    std::vector<int> done;
    while (!running_.empty() && running_.front() <= now_s) {
      running_.pop_front();
      done.push_back(first_running_++);
    }
    return done;
  }

 private:
  std::deque<double> running_;
  int next_id_ = 0;
  int first_running_ = 0;
};

// `transfer_every` > 0: every such op is a transfer instead.
Engine RandomEngine(int ops, int streams, int transfer_every = 0) {
  std::mt19937 rng(kSeed);
  Engine engine;
  std::vector<StreamId> ids;
  for (int s = 0; s < streams; ++s) {
    ids.push_back(engine.Stream("rank" + std::to_string(s / 8) + "/stream" +
                                std::to_string(s % 8)));
  }
  std::uniform_int_distribution<int> stream(0, streams - 1);
  std::uniform_int_distribution<int> dep_count(0, 3);
  std::uniform_int_distribution<int64_t> duration_ns(1, 100'000);
  for (int i = 0; i < ops; ++i) {
    std::vector<OpId> deps;
    if (i > 0) {
      std::uniform_int_distribution<OpId> earlier(0, i - 1);
      for (int k = dep_count(rng); k > 0; --k) deps.push_back(earlier(rng));
    }
    // Drawn in the order GCC evaluated them as arguments of one Add call
    // before transfers existed, so BM_EngineRun's graph is unchanged.
    const Time duration = Time::Nanos(duration_ns(rng));
    const StreamId on = ids[stream(rng)];
    if (transfer_every > 0 && i % transfer_every == 0) {
      engine.AddTransfer(on, {}, std::move(deps), "transfer");
    } else {
      engine.Add(on, duration, std::move(deps), "op");
    }
  }
  return engine;
}

void BM_EngineRun(benchmark::State& state) {
  const int ops = static_cast<int>(state.range(0));
  Time makespan;
  for (auto _ : state) {
    state.PauseTiming();
    Engine engine = RandomEngine(ops, 64);
    state.ResumeTiming();
    if (!engine.Run()) state.SkipWithError("engine run failed");
    makespan = engine.makespan();
  }
  state.SetItemsProcessed(state.iterations() * ops);
  state.SetLabel("makespan " + makespan.ToString());
}
BENCHMARK(BM_EngineRun)->Arg(100'000)->Unit(benchmark::kMillisecond);

void BM_EngineRunTransfers(benchmark::State& state) {
  const int ops = static_cast<int>(state.range(0));
  Time makespan;
  for (auto _ : state) {
    state.PauseTiming();
    Engine engine = RandomEngine(ops, 64, 10);
    FixedLatencyNetwork network;
    state.ResumeTiming();
    if (!engine.Run(&network)) state.SkipWithError("engine run failed");
    makespan = engine.makespan();
  }
  state.SetItemsProcessed(state.iterations() * ops);
  state.SetLabel("makespan " + makespan.ToString());
}
BENCHMARK(BM_EngineRunTransfers)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace
