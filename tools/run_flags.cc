// The `run` command's flags (tools/run_report.h).
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "scenarios/limits.h"
#include "tools/run_report.h"  // IWYU pragma: associated
#include "tools/scenario_flags.h"
#include "tools/text_format.h"
#include "util/message.h"

namespace moesim::tools {

void AddRunFlags(CLI::App& app, RunFlags& f) {
  AddScenarioFlags(app, f.scenario);
  app.add_flag("--json", f.json, "Print JSON instead of tables");
  app.add_option("--trace", f.trace_file,
                 "Write the step's timeline as Chrome trace-event JSON "
                 "(opens in ui.perfetto.dev)");
  app.add_option("--network", f.network,
                 "analytical (alpha-beta per collective, default) or flow "
                 "(flows share links by max-min fairness)")
      ->check(CLI::IsMember({"analytical", "flow"}));
  app.add_flag("--full", f.full,
               "Replay every GPU rank (not one per stage): imbalance, "
               "stragglers, a check of the symmetric mode; up to " +
                   std::to_string(sim::kMaxFullRanks) + " GPUs");
  app.add_flag("--every-microbatch", f.every_microbatch,
               "Replay every micro-batch; by default a step of many is "
               "extended from three shorter replays when its steady state "
               "is periodic (docs/replay.md)");
  app.add_flag("--every-ring-step", f.every_ring_step,
               "Replay each step of a p2p CP ring as its own ops; by default "
               "a ring's identical steady steps run as one (docs/replay.md)");
  app.add_option("--straggler", f.stragglers,
                 "RANK:FACTOR: that GPU's kernels take FACTOR (>= 1) times "
                 "longer; repeatable; needs --full")
      ->allow_extra_args(false);
  app.add_option("--calibration", f.calibration_file,
                 "Apply a calibration profile (.textproto, as `moesim "
                 "calibrate fit` writes)");
}

util::Result<std::vector<sim::Straggler>> ParseStragglers(const RunFlags& f,
                                                          int num_gpus) {
  constexpr std::string_view kFlag = "--straggler";
  std::vector<sim::Straggler> out;
  if (!f.stragglers.empty() && !f.full) {
    return std::unexpected(FlagError(
        kFlag, "needs --full (only the full mode replays each rank)"));
  }
  for (const std::string& value : f.stragglers) {
    const size_t colon = value.find(':');
    const std::string rank_text = value.substr(0, colon);
    int64_t rank = -1;
    auto [end, ec] = std::from_chars(rank_text.data(),
                                     rank_text.data() + rank_text.size(), rank);
    if (colon == std::string::npos || rank_text.empty() || ec != std::errc() ||
        end != rank_text.data() + rank_text.size()) {
      return std::unexpected(FlagError(
          kFlag, "must be RANK:FACTOR (e.g. 12:1.5), got '" + value + "'"));
    }
    const std::string factor_text = value.substr(colon + 1);
    char* factor_end = nullptr;
    const double factor = std::strtod(factor_text.c_str(), &factor_end);
    if (factor_text.empty() ||
        factor_end != factor_text.c_str() + factor_text.size()) {
      return std::unexpected(FlagError(
          kFlag, "must be RANK:FACTOR (e.g. 12:1.5), got '" + value + "'"));
    }
    if (!std::isfinite(factor) || factor < 1 ||
        factor > scenarios::kMaxStragglerFactor) {
      return std::unexpected(FlagError(
          kFlag,
          "factor must be a number in [1, " +
              std::to_string(static_cast<int>(scenarios::kMaxStragglerFactor)) +
              "], got '" + util::Excerpt(factor_text) + "'"));
    }
    if (rank < 0 || rank >= num_gpus) {
      return std::unexpected(
          FlagError(kFlag, "rank " + rank_text + " must be a GPU rank in [0, " +
                               std::to_string(num_gpus) + ")"));
    }
    out.push_back({static_cast<int>(rank), factor});
  }
  return out;
}

}  // namespace moesim::tools
