// A candidate row of a sweep shard checked against what EvaluateSweep
// writes (studies/sweep.h, CheckCandidateRow).
#include <cmath>
#include <string>
#include <string_view>

#include "scenarios/limits.h"
#include "scenarios/vocabulary.h"
#include "studies/physical_limits.h"
#include "studies/sweep.h"
#include "util/format.h"
#include "util/message.h"

namespace moesim::studies {

util::Result<void> CheckCandidateRow(const SweepCandidate& c) {
  namespace limits = scenarios;
  auto fail = [](std::string_view field, const std::string& rule) {
    return util::Fail(std::string(field) + ": " + rule);
  };
  const std::string& v = c.verdict();
  const bool ok = v == "ok", oom = v == "oom";
  if (!ok && !oom && v != "invalid" && v != "excluded" && v != "failed") {
    return fail("verdict",
                "must be ok, oom, invalid, excluded or failed, got '" +
                    util::Excerpt(v) + "'");
  }
  if (ok != c.reason().empty()) {
    return fail("reason", ok ? "must be empty when the verdict is ok"
                             : "must say why when the verdict is " + v);
  }
  const std::tuple<std::string_view, double, double> metrics[] = {
      {"tokens_per_sec_per_gpu", c.tokens_per_sec_per_gpu(),
       studies::kMaxTokensPerSecPerGpu},
      {"tflops_per_gpu", c.tflops_per_gpu(), studies::kMaxTflopsPerGpu},
      {"step_time_s", c.step_time_s(), studies::kMaxStepSeconds},
  };
  for (const auto& [field, value, max] : metrics) {
    if (ok && !(value > 0 && value <= max)) {
      return fail(field, "must be > 0 and at most " + util::Format("%g", max) +
                             " when the verdict is ok, got " +
                             util::Format("%.17g", value));
    }
    if (!ok && value != 0) {
      return fail(field, "must be 0 (not replayed) when the verdict is " + v +
                             ", got " + util::Format("%.17g", value));
    }
  }
  if (!(c.peak_memory_gib() >= 0 &&
        c.peak_memory_gib() <= studies::kMaxGibPerGpu) ||
      ((ok || oom) && c.peak_memory_gib() == 0)) {
    return fail("peak_memory_gib",
                std::string(ok || oom ? "must be > 0" : "must be >= 0") +
                    " and at most " +
                    util::Format("%g", studies::kMaxGibPerGpu) + ", got " +
                    util::Format("%.17g", c.peak_memory_gib()));
  }
  if (!std::isfinite(c.margin_gib()) ||
      std::fabs(c.margin_gib()) > studies::kMaxGibPerGpu ||
      (ok && c.margin_gib() < 0) || (oom && c.margin_gib() >= 0)) {
    return fail("margin_gib",
                std::string(ok    ? "must be >= 0 when the verdict is ok"
                            : oom ? "must be < 0 when the verdict is oom"
                                  : "must be finite") +
                    " (and within +-" +
                    util::Format("%g", studies::kMaxGibPerGpu) + "), got " +
                    util::Format("%.17g", c.margin_gib()));
  }
  const std::tuple<std::string_view, int64_t, int64_t> sizes[] = {
      {"num_gpus", c.num_gpus(), limits::kMaxGpus},
      {"seq_len", c.seq_len(), limits::kMaxSeqLength},
      {"tp", c.tp(), limits::kMaxGpus},
      {"cp", c.cp(), limits::kMaxGpus},
      {"ep", c.ep(), limits::kMaxGpus},
      {"etp", c.etp(), limits::kMaxGpus},
      {"pp", c.pp(), limits::kMaxLayers},
      {"vpp", c.vpp(), limits::kMaxLayers},
      {"mbs", c.mbs(), limits::kMaxGlobalBatch},
      {"gbs", c.gbs(), limits::kMaxGlobalBatch},
  };
  for (const auto& [field, value, max] : sizes) {
    // Invalid rows keep the layout as requested (0: left to the default).
    const int64_t min = v == "invalid" ? 0 : 1;
    if (value < min || value > max) {
      return fail(field, "must be in [" + std::to_string(min) + ", " +
                             std::to_string(max) + "], got " +
                             std::to_string(value));
    }
  }
  if (v != "invalid") {
    const int64_t attention = int64_t{c.tp()} * c.cp() * c.pp();
    const int64_t moe = int64_t{c.etp()} * c.ep() * c.pp();
    for (const auto& [mesh, size] :
         {std::pair{"tp*cp*pp", attention}, std::pair{"etp*ep*pp", moe}}) {
      if (c.num_gpus() % size != 0) {
        return fail("num_gpus", std::string("must be a multiple of ") + mesh +
                                    " = " + std::to_string(size) + ", got " +
                                    std::to_string(c.num_gpus()));
      }
    }
  }
  if (!(c.cpu_offload() >= 0 && c.cpu_offload() <= 1)) {
    return fail("cpu_offload", "must be in [0, 1], got " +
                                   util::Format("%.17g", c.cpu_offload()));
  }
  for (const auto& [kind, word] :
       {std::pair{"precision", &c.precision()},
        std::pair{"dispatcher", &c.dispatcher()},
        std::pair{"recompute", &c.recompute()},
        std::pair{"cuda_graph", &c.cuda_graph()},
        std::pair{"activation_offload", &c.activation_offload()}}) {
    // Parts written before the activation_offload column hold no value.
    if (word->empty() &&
        (v == "invalid" || kind == std::string_view("activation_offload")))
      continue;
    if (auto known = scenarios::CheckWord(kind, *word); !known)
      return fail(kind, known.error().message);
  }
  return {};
}

}  // namespace moesim::studies
