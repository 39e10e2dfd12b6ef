#include "sim/periodic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "models/pipeline.h"
#include "sim/core/time.h"

namespace moesim::sim::internal {
namespace {

// Micro-batches in a period of the schedule (models::OneFOneBSchedule runs
// the interleaved schedule's micro-batches in groups of pp).
int64_t Period(int pp, int vpp) { return vpp > 1 ? pp : 1; }

// Sums of many seconds differ in their last bits with the order they were
// added in; a second difference within this share of the figure is zero.
constexpr double kRelativeSlack = 1e-9;

// A time on the engine's clock back in whole picoseconds.
int64_t Picos(double seconds) { return std::llround(seconds * 1e12); }

// Extends figures given at three counts a period apart by `periods` more
// periods past the third, and remembers whether any was not affine.
class Affine {
 public:
  explicit Affine(int64_t periods) : periods_(periods) {}
  bool ok() const { return ok_; }

  // Seconds summed from many ops.
  double Sum(double a, double b, double c) {
    const double scale = std::max({std::abs(a), std::abs(b), std::abs(c)});
    if (!(std::abs(a - 2 * b + c) <= kRelativeSlack * scale)) ok_ = false;
    return c + static_cast<double>(periods_) * (c - b);
  }
  // A time on the engine's clock: whole picoseconds, affine exactly.
  double Instant(double a, double b, double c) {
    const int64_t pa = Picos(a), pb = Picos(b), pc = Picos(c);
    if (pa - 2 * pb + pc != 0) ok_ = false;
    return Time::Picos(pc + periods_ * (pc - pb)).seconds();
  }
  int64_t Count(int64_t a, int64_t b, int64_t c) {
    if (a - 2 * b + c != 0) ok_ = false;
    return c + periods_ * (c - b);
  }
  template <typename T>
  const T& Same(const T& a, const T& b, const T& c) {
    if (!(a == b && b == c)) ok_ = false;
    return c;
  }
  // Maps with the same keys, figure by figure (`extend` for one figure).
  template <typename V, typename Extend>
  std::map<std::string, V> Map(const std::map<std::string, V>& a,
                               const std::map<std::string, V>& b,
                               const std::map<std::string, V>& c,
                               Extend extend) {
    std::map<std::string, V> out;
    if (a.size() != c.size() || b.size() != c.size()) ok_ = false;
    for (const auto& [key, value] : c) {
      const auto ia = a.find(key), ib = b.find(key);
      if (ia == a.end() || ib == b.end()) {
        ok_ = false;
        continue;
      }
      out[key] = extend(ia->second, ib->second, value);
    }
    return out;
  }
  std::map<std::string, double> SumMap(const std::map<std::string, double>& a,
                                       const std::map<std::string, double>& b,
                                       const std::map<std::string, double>& c) {
    return Map(a, b, c,
               [this](double x, double y, double z) { return Sum(x, y, z); });
  }
  CommTime Comm(const CommTime& a, const CommTime& b, const CommTime& c) {
    return {Sum(a.total_s, b.total_s, c.total_s),
            Sum(a.exposed_s, b.exposed_s, c.exposed_s)};
  }

 private:
  int64_t periods_;
  bool ok_ = true;
};

StageTime ExtendStage(Affine& f, const StageTime& a, const StageTime& b,
                      const StageTime& c) {
  StageTime out;
  out.pp_rank = f.Same(a.pp_rank, b.pp_rank, c.pp_rank);
  out.compute_s = f.Sum(a.compute_s, b.compute_s, c.compute_s);
  out.idle_s = f.Sum(a.idle_s, b.idle_s, c.idle_s);
  out.host_busy_s = f.Sum(a.host_busy_s, b.host_busy_s, c.host_busy_s);
  out.host_wait_s = f.Sum(a.host_wait_s, b.host_wait_s, c.host_wait_s);
  out.memory_peak_bytes =
      f.Sum(a.memory_peak_bytes, b.memory_peak_bytes, c.memory_peak_bytes);
  for (size_t k = 0; k < out.comm.size(); ++k) {
    out.comm[k] = f.Comm(a.comm[k], b.comm[k], c.comm[k]);
  }
  out.ranks = f.Same(a.ranks, b.ranks, c.ranks);
  out.slowest_rank = f.Same(a.slowest_rank, b.slowest_rank, c.slowest_rank);
  out.slowest_compute_s =
      f.Sum(a.slowest_compute_s, b.slowest_compute_s, c.slowest_compute_s);
  return out;
}

RankTime ExtendRank(Affine& f, const RankTime& a, const RankTime& b,
                    const RankTime& c) {
  return {f.Same(a.rank, b.rank, c.rank),
          f.Same(a.pp_rank, b.pp_rank, c.pp_rank),
          f.Sum(a.compute_s, b.compute_s, c.compute_s),
          f.Sum(a.grouped_gemm_s, b.grouped_gemm_s, c.grouped_gemm_s),
          f.Instant(a.finish_s, b.finish_s, c.finish_s)};
}

// Schedule steps a period apart: a period's forwards and backwards.
int64_t Stride(int pp, int vpp) { return 2 * Period(pp, vpp) * vpp; }

}  // namespace

std::vector<int64_t> SteadyWindow(int r, int pp, int vpp,
                                  int64_t microbatches) {
  const models::OneFOneBSchedule schedule(r, pp, vpp, microbatches);
  const int64_t period = Period(pp, vpp), stride = Stride(pp, vpp);
  // Steps [warmup, size - warmup) alternate forward and backward; the window
  // ends where that phase's last step has no successor a period on.
  const int64_t first = schedule.warmup();
  const int64_t last = schedule.size() - schedule.warmup();  // exclusive
  const int64_t want = std::max(stride, schedule.warmup() + 2);
  std::vector<int64_t> window;
  // A window's length of steady steps before it, for the pipeline to fill.
  for (int64_t i = last - stride - 1;
       i >= first + want && static_cast<int64_t>(window.size()) < want; --i) {
    // The first and the last micro-batches have work of their own (the
    // parameter gathers, the gradient reductions).
    if (schedule[i].microbatch >= period &&
        schedule[i + stride].microbatch < microbatches - period) {
      window.push_back(i);
    }
  }
  if (static_cast<int64_t>(window.size()) < want) window.clear();
  return window;
}

std::optional<std::array<int64_t, 3>> PeriodicSamples(int pp, int vpp,
                                                      int64_t microbatches,
                                                      int64_t at_least) {
  const int64_t period = Period(pp, vpp);
  // Stage 0's warmup is the longest: its forwards before the first
  // backward, in micro-batches.
  const int64_t warmup_steps =
      models::OneFOneBSchedule(0, pp, vpp, microbatches).warmup();
  const int64_t warmup = (warmup_steps + vpp - 1) / vpp;
  const int64_t least =
      std::max(warmup + kPeriodicWarmupPeriods * period, at_least);
  // The smallest count >= least in microbatches' class mod the period (so
  // the last group of an interleaved schedule has the step's own size)
  // whose longest sample has a steady window on every stage.
  for (int64_t m0 = least + ((microbatches - least) % period + period) % period;
       3 * (m0 + period) < microbatches;  // the three replays' cost
       m0 += period) {
    bool fits = true;
    for (int r = 0; r < pp && fits; ++r) {
      fits = !SteadyWindow(r, pp, vpp, m0 + 2 * period).empty();
    }
    if (fits) return std::array<int64_t, 3>{m0, m0 + period, m0 + 2 * period};
  }
  return std::nullopt;
}

std::optional<Time> SteadyShift(const Engine& engine,
                                const std::vector<StepSpan>& spans, int pp,
                                int vpp, int64_t microbatches) {
  const int64_t stride = Stride(pp, vpp);
  std::vector<std::vector<const StepSpan*>> by_stage(pp);
  for (const StepSpan& span : spans) by_stage[span.stage].push_back(&span);
  std::optional<Time> shift;
  for (int r = 0; r < pp; ++r) {
    const std::vector<const StepSpan*>& steps = by_stage[r];
    const std::vector<int64_t> window = SteadyWindow(r, pp, vpp, microbatches);
    if (window.empty() ||
        static_cast<int64_t>(steps.size()) <= window.front() + stride) {
      return std::nullopt;
    }
    for (const int64_t i : window) {
      const StepSpan &x = *steps[i], &y = *steps[i + stride];
      if (x.emitted_end - x.emitted_begin != y.emitted_end - y.emitted_begin ||
          x.kind != y.kind || x.chunk != y.chunk) {
        return std::nullopt;
      }
      for (OpId k = 0; k < x.emitted_end - x.emitted_begin; ++k) {
        const OpId ox = x.emitted_begin + k, oy = y.emitted_begin + k;
        const OpTiming &tx = engine.timing(ox), &ty = engine.timing(oy);
        const Time d = ty.start - tx.start;
        if (engine.op_stream(ox) != engine.op_stream(oy) ||
            ty.finish - tx.finish != d) {
          return std::nullopt;
        }
        if (!shift || d > *shift) shift = d;
      }
    }
  }
  return shift;
}

std::optional<StepResult> ExtrapolateStep(const StepResult& a,
                                          const StepResult& b,
                                          const StepResult& c,
                                          const std::array<int64_t, 3>& samples,
                                          int64_t microbatches,
                                          std::optional<Time> shift) {
  const int64_t period = samples[2] - samples[1];
  Affine f((microbatches - samples[2]) / period);
  if (a.stages.size() != c.stages.size() ||
      b.stages.size() != c.stages.size() || a.ranks.size() != c.ranks.size() ||
      b.ranks.size() != c.ranks.size()) {
    return std::nullopt;
  }
  StepResult out;
  out.step_time_s = f.Instant(a.step_time_s, b.step_time_s, c.step_time_s);
  out.host_idle_s = f.Sum(a.host_idle_s, b.host_idle_s, c.host_idle_s);
  out.host_busy_s = f.Sum(a.host_busy_s, b.host_busy_s, c.host_busy_s);
  out.comm_s = f.Map(a.comm_s, b.comm_s, c.comm_s,
                     [&f](const CommTime& x, const CommTime& y,
                          const CommTime& z) { return f.Comm(x, y, z); });
  out.critical_path_s =
      f.SumMap(a.critical_path_s, b.critical_path_s, c.critical_path_s);
  out.time_by_op_class_s = f.SumMap(a.time_by_op_class_s, b.time_by_op_class_s,
                                    c.time_by_op_class_s);
  for (size_t i = 0; i < c.stages.size(); ++i) {
    out.stages.push_back(ExtendStage(f, a.stages[i], b.stages[i], c.stages[i]));
  }
  for (size_t i = 0; i < c.ranks.size(); ++i) {
    out.ranks.push_back(ExtendRank(f, a.ranks[i], b.ranks[i], c.ranks[i]));
  }
  out.ops = static_cast<size_t>(f.Count(static_cast<int64_t>(a.ops),
                                        static_cast<int64_t>(b.ops),
                                        static_cast<int64_t>(c.ops)));
  out.full = f.Same(a.full, b.full, c.full);
  out.slowest_rank = f.Same(a.slowest_rank, b.slowest_rank, c.slowest_rank);
  out.warnings = f.Same(a.warnings, b.warnings, c.warnings);
  out.cp_ring = f.Same(a.cp_ring, b.cp_ring, c.cp_ring);
  if (!f.ok()) return std::nullopt;
  if (!shift || shift->picos() != Picos(c.step_time_s) - Picos(b.step_time_s)) {
    return std::nullopt;
  }
  // Affine at three counts is not yet the steady state when a stream works
  // more each period than the step grows: it ran ahead with a lead that
  // later periods use up (a host that launches slower than the GPU runs
  // but started first), and once the lead is gone it binds. In the steady
  // state no stream's busy time grows faster than the step.
  const double growth = c.step_time_s - b.step_time_s;
  const double limit = growth * (1 + kRelativeSlack) + 1e-12;
  auto outgrows = [&](double vb, double vc) { return vc - vb > limit; };
  for (size_t i = 0; i < c.stages.size(); ++i) {
    const StageTime &sb = b.stages[i], &sc = c.stages[i];
    if (outgrows(sb.compute_s, sc.compute_s) ||
        outgrows(sb.host_busy_s, sc.host_busy_s)) {
      return std::nullopt;
    }
    for (size_t k = 0; k < sc.comm.size(); ++k) {
      if (outgrows(sb.comm[k].total_s, sc.comm[k].total_s)) return std::nullopt;
    }
  }
  for (size_t i = 0; i < c.ranks.size(); ++i) {
    if (outgrows(b.ranks[i].compute_s, c.ranks[i].compute_s)) {
      return std::nullopt;
    }
  }
  // As SummarizeStep derives it: the mean over stages of idle / step.
  const double stages = static_cast<double>(out.stages.size());
  for (const StageTime& st : out.stages) {
    out.bubble_fraction += st.idle_s / out.step_time_s / stages;
  }
  return out;
}

}  // namespace moesim::sim::internal
