// Checking the scenario flags' ranges and applying them to a scenario
// (studies/scenario_flags_internal.h).
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "scenarios/launch_file.h"
#include "scenarios/megatron_args.h"
#include "scenarios/vocabulary.h"
#include "studies/scenario_flags.h"
#include "studies/scenario_flags_internal.h"
#include "util/csv.h"
#include "util/format.h"
#include "util/textproto.h"

namespace moesim::studies {

using util::Result;

namespace {

// A double as %g prints it ("1.5", not std::to_string's "1.500000").
std::string FormatG(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

// An integer flag, when given, must be >= min.
Result<void> AtLeast(const std::optional<int>& value, std::string_view flag,
                     int min) {
  if (value && *value < min) {
    return std::unexpected(
        util::FlagError(flag, "must be >= " + std::to_string(min) + ", got " +
                                  std::to_string(*value)));
  }
  return {};
}

// --hierarchical-cp-sizes: comma-separated sizes >= 1, inner first ("8,4").
Result<std::vector<int>> ParseSizes(const std::string& value) {
  constexpr std::string_view kFlag = "--hierarchical-cp-sizes";
  std::vector<std::string> items = util::SplitList(value, ",");
  if (items.empty()) {
    return std::unexpected(
        util::FlagError(kFlag, "needs comma-separated sizes, e.g. 8,4"));
  }
  std::vector<int> sizes;
  for (const std::string& item : items) {
    int64_t size = 0;
    auto [end, ec] =
        std::from_chars(item.data(), item.data() + item.size(), size);
    if (ec != std::errc() || end != item.data() + item.size() ||
        size > INT32_MAX) {
      return std::unexpected(util::FlagError(
          kFlag, "'" + item + "' is not an integer (sizes like 8,4)"));
    }
    if (size < 1) {
      return std::unexpected(
          util::FlagError(kFlag, "every size must be >= 1, got " + item));
    }
    sizes.push_back(static_cast<int>(size));
  }
  return sizes;
}

// --recompute: "none", "full", or modules separated by ',' or ';'.
Result<void> ApplyRecompute(const std::string& value,
                            scenarios::Scenario& spec) {
  auto setting = scenarios::ParseRecomputeSetting(value);
  if (!setting)
    return std::unexpected(
        util::FlagError("--recompute", setting.error().message));
  scenarios::ApplyRecomputeSetting(*setting, *spec.mutable_recompute());
  return {};
}

}  // namespace

namespace internal {

Result<void> CheckRanges(const ScenarioFlags& f) {
  const std::pair<const std::optional<int>*, std::string_view> kPositive[] = {
      {&f.gpus, "--gpus"},
      {&f.seq, "--seq"},
      {&f.mbs, "--mbs"},
      {&f.gbs, "--gbs"},
      {&f.tp, "--tp"},
      {&f.cp, "--cp"},
      {&f.ep, "--ep"},
      {&f.etp, "--etp"},
      {&f.pp, "--pp"},
      {&f.vpp, "--vpp"},
      {&f.num_layers, "--num-layers"},
  };
  for (auto [value, flag] : kPositive) {
    if (auto ok = AtLeast(*value, flag, 1); !ok) return ok;
  }
  if (f.ep_overlap && *f.ep_overlap != 0 && *f.ep_overlap != 1) {
    return std::unexpected(util::FlagError(
        "--ep-overlap",
        "must be 0 or 1, got " + std::to_string(*f.ep_overlap)));
  }
  if (f.offload_overlap && *f.offload_overlap != 0 && *f.offload_overlap != 1) {
    return std::unexpected(util::FlagError(
        "--offload-overlap",
        "must be 0 or 1, got " + std::to_string(*f.offload_overlap)));
  }
  if (f.manual_gc && *f.manual_gc != 0 && *f.manual_gc != 1) {
    return std::unexpected(util::FlagError(
        "--manual-gc", "must be 0 or 1, got " + std::to_string(*f.manual_gc)));
  }
  if (f.batch_p2p_sync && *f.batch_p2p_sync != 0 && *f.batch_p2p_sync != 1) {
    return std::unexpected(util::FlagError(
        "--batch-p2p-sync",
        "must be 0 or 1, got " + std::to_string(*f.batch_p2p_sync)));
  }
  if (f.cpu_offload && !(*f.cpu_offload >= 0 && *f.cpu_offload <= 1)) {
    return std::unexpected(util::FlagError(
        "--cpu-offload",
        "must be in [0, 1] (a fraction of the optimizer state), got " +
            FormatG(*f.cpu_offload)));
  }
  if (f.hierarchical_cp_sizes) {
    if (auto sizes = ParseSizes(*f.hierarchical_cp_sizes); !sizes)
      return std::unexpected(sizes.error());
  }
  return {};
}

// Applies the individual flags on top of `spec`; true when any was given.
Result<bool> ApplyFlags(const ScenarioFlags& f, scenarios::Scenario& spec) {
  bool any = false;
  auto set_string = [&](const std::optional<std::string>& value,
                        std::string* field) {
    if (!value) return;
    *field = *value;
    any = true;
  };
  set_string(f.model, spec.mutable_model());
  set_string(f.system, spec.mutable_system());
  set_string(f.precision, spec.mutable_precision());
  set_string(f.dispatcher, spec.mutable_dispatcher());
  set_string(f.pipeline_schedule, spec.mutable_pipeline_schedule());
  set_string(f.cuda_graph, spec.mutable_cuda_graph());
  set_string(f.routing, spec.mutable_routing());
  set_string(f.cp_comm_type, spec.mutable_cp_comm_type());
  // --cp-comm-type replaces the file's exchange whole: a2a+p2p sizes from
  // the file mean nothing to another type (--hierarchical-cp-sizes, below,
  // sets new ones).
  if (f.cp_comm_type) spec.clear_hierarchical_context_parallel_sizes();
  scenarios::Layout& l = *spec.mutable_layout();
  set_string(f.pp_layout, l.mutable_pipeline_model_parallel_layout());

  auto set_int = [&](const std::optional<int>& value, auto setter) {
    if (!value) return;
    setter(*value);
    any = true;
  };
  set_int(f.gpus, [&](int v) { spec.set_num_gpus(v); });
  set_int(f.seq, [&](int v) { spec.set_seq_length(v); });
  set_int(f.num_layers, [&](int v) { spec.set_num_layers(v); });
  set_int(f.mbs, [&](int v) { l.set_micro_batch_size(v); });
  set_int(f.gbs, [&](int v) { l.set_global_batch_size(v); });
  set_int(f.tp, [&](int v) { l.set_tensor_model_parallel_size(v); });
  set_int(f.cp, [&](int v) { l.set_context_parallel_size(v); });
  set_int(f.ep, [&](int v) { l.set_expert_model_parallel_size(v); });
  set_int(f.etp, [&](int v) { l.set_expert_tensor_parallel_size(v); });
  set_int(f.pp, [&](int v) { l.set_pipeline_model_parallel_size(v); });
  set_int(f.vpp, [&](int v) {
    l.set_virtual_pipeline_model_parallel_size(v);
    l.clear_num_layers_per_virtual_pipeline_stage();
  });
  set_int(f.ep_overlap,
          [&](int v) { spec.set_overlap_moe_expert_parallel_comm(v == 1); });
  if (f.cpu_offload) {
    spec.set_optimizer_offload_fraction(*f.cpu_offload);
    any = true;
  }
  if (f.routing_skew) {
    spec.set_moe_routing_skew(*f.routing_skew);
    any = true;
  }
  if (f.routing_histogram) {
    auto counts = ReadRoutingHistogram(*f.routing_histogram);
    if (!counts) return std::unexpected(counts.error());
    spec.clear_moe_routing_histogram();
    for (double c : *counts) spec.add_moe_routing_histogram(c);
    any = true;
  }
  set_int(f.offload_overlap,
          [&](int v) { spec.set_overlap_cpu_optimizer_d2h_h2d(v == 1); });
  set_int(f.manual_gc, [&](int v) { spec.set_manual_gc(v == 1); });
  set_int(f.batch_p2p_sync, [&](int v) { spec.set_batch_p2p_sync(v == 1); });
  if (f.hierarchical_cp_sizes) {
    auto sizes = ParseSizes(*f.hierarchical_cp_sizes);
    if (!sizes) return std::unexpected(sizes.error());
    spec.clear_hierarchical_context_parallel_sizes();
    for (int size : *sizes) spec.add_hierarchical_context_parallel_sizes(size);
    any = true;
  }
  if (f.recompute) {
    if (auto ok = ApplyRecompute(*f.recompute, spec); !ok)
      return std::unexpected(ok.error());
    any = true;
  }
  return any;
}

}  // namespace internal

}  // namespace moesim::studies
