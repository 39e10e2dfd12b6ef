// Evaluating a sweep: every candidate resolved and judged on several
// threads, then the ones that fit replayed (studies/sweep.h, EvaluateSweep).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "models/memory.h"
#include "scenarios/limits.h"
#include "sim/replay.h"
#include "studies/jobs.h"
#include "studies/physical_limits.h"
#include "studies/sweep.h"
#include "util/format.h"
#include "util/thread_errors.h"

namespace moesim::studies {
namespace {

using util::Result;

// Resolve()'s origin for candidates; stripped from the rule text.
constexpr std::string_view kOrigin = "sweep";

// Runs work(i) for i in [0, n) on `jobs` threads; with `progress`, the
// calling thread draws a bar on stderr while they run.
template <typename Work>
void ParallelFor(size_t n, int jobs, bool progress, const char* what,
                 Work work) {
  std::atomic<size_t> next{0}, done{0};
  util::ThreadErrors errors;
  auto worker = [&] {
    errors.Run([&] {
      for (size_t i = next++; i < n && !errors.failed(); i = next++) {
        work(i);
        ++done;
      }
    });
  };
  std::vector<std::thread> pool;
  const int threads = progress ? jobs : jobs - 1;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  if (progress) {
    constexpr int kWidth = 40;
    while (done < n && !errors.failed()) {
      const size_t d = done;
      const int filled = n ? static_cast<int>(kWidth * d / n) : kWidth;
      std::fprintf(stderr, "\r%-10s [%s%s] %zu/%zu", what,
                   std::string(filled, '#').c_str(),
                   std::string(kWidth - filled, ' ').c_str(), d, n);
      std::fflush(stderr);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  } else {
    worker();
  }
  for (std::thread& t : pool) t.join();
  errors.Rethrow();
}

std::string StripOrigin(const std::string& message) {
  const std::string prefix = std::string(kOrigin) + ": ";
  return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
}

}  // namespace

SweepOutcome EvaluateSweep(const SweepSpace& space,
                           const SweepOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  SweepOutcome out;
  out.model = space.model();
  out.system = space.system();
  out.fingerprint = space.fingerprint();
  out.total = space.size();
  for (int64_t i = options.shard; i < space.size(); i += options.num_shards) {
    out.candidates.emplace_back().set_index(i);
  }
  const size_t n = out.candidates.size();

  // 1. Resolve, constrain, estimate memory: each result in its slot.
  std::vector<std::optional<scenarios::ResolvedScenario>> runnable(n);
  ParallelFor(n, options.jobs, options.progress, "judging", [&](size_t i) {
    SweepCandidate& c = out.candidates[i];
    const scenarios::Scenario spec = space.Candidate(c.index());
    auto r = scenarios::Resolve(spec, kOrigin);
    if (!r) {
      FillLayout(spec, c);
      c.set_verdict("invalid");
      c.set_reason(StripOrigin(r.error().message));
      return;
    }
    FillLayout(r->spec, c);
    if (std::string why = space.Excluded(*r); !why.empty()) {
      c.set_verdict("excluded");
      c.set_reason(why);
      return;
    }
    const models::MemoryEstimate m =
        models::EstimateMemory(r->model, r->pipeline, r->parallel, r->training,
                               r->system.gpu().memory_gib() * models::kGiB);
    c.set_peak_memory_gib(m.peak_bytes / models::kGiB);
    c.set_margin_gib(m.margin_bytes / models::kGiB);
    if (!m.fits) {
      c.set_verdict("oom");
      c.set_reason(util::Format(
          "out of memory by %.1f GiB (peak %.1f of %.1f GiB, "
          "pp%d)",
          -m.margin_bytes / models::kGiB, m.peak_bytes / models::kGiB,
          m.capacity_bytes / models::kGiB, m.busiest_rank));
      return;
    }
    runnable[i] = std::move(*r);
  });

  // 2. One platform per (system, GPU count), read-only from here on.
  std::map<std::pair<std::string, int>, Result<sim::Platform>> platforms;
  std::vector<size_t> to_replay;
  for (size_t i = 0; i < n; ++i) {
    if (!runnable[i]) continue;
    const auto key =
        std::pair{runnable[i]->system.name(), runnable[i]->spec.num_gpus()};
    auto it = platforms.find(key);
    if (it == platforms.end())
      it = platforms.emplace(key, sim::BuildPlatform(*runnable[i])).first;
    if (!it->second) {
      out.candidates[i].set_verdict("failed");
      out.candidates[i].set_reason(it->second.error().message);
      runnable[i].reset();
      continue;
    }
    to_replay.push_back(i);
  }

  // 3. Replay.
  ParallelFor(to_replay.size(), options.jobs, options.progress, "replaying",
              [&](size_t k) {
                const size_t i = to_replay[k];
                const scenarios::ResolvedScenario& s = *runnable[i];
                SweepCandidate& c = out.candidates[i];
                const auto key = std::pair{s.system.name(), s.spec.num_gpus()};
                auto step = sim::Replay(s, *platforms.at(key), {});
                if (!step) {
                  c.set_verdict("failed");
                  c.set_reason(StripOrigin(step.error().message));
                } else {
                  c.set_verdict("ok");
                  c.set_tokens_per_sec_per_gpu(step->tokens_per_sec_per_gpu);
                  c.set_tflops_per_gpu(step->tflops_per_gpu);
                  c.set_step_time_s(step->step_time_s);
                }
                runnable[i].reset();  // free the model as we go
              });
  out.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return out;
}

}  // namespace moesim::studies
