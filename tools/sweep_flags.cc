#include "tools/sweep_flags.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>

#include "tools/scenario_flags.h"
#include "tools/sweep_flags_internal.h"
#include "tools/text_format.h"
#include "util/csv.h"

namespace moesim::tools {
namespace {

using internal::Items;
using internal::ParseBits;
using internal::ParseFractions;
using internal::ParseIntAxis;
using util::Result;

}  // namespace

std::string SweepSpaceFlags::FirstGiven() const {
  for (const CLI::Option* o : options) {
    if (o->count() > 0) return o->get_name();
  }
  return "";
}

void AddSweepSpaceFlags(CLI::App& app, SweepSpaceFlags& f) {
  const size_t before = app.get_options().size();
  AddScenarioBaseFlags(app, f.base);
  auto list = [&](const char* name, std::vector<std::string>& into,
                  const std::string& help) {
    app.add_option(name, into, help)->allow_extra_args(false);
  };
  const std::string ints =
      ": comma list and/or one range a:b (a, 2a, 4a, ... <= b) or a:b:s";
  list("--gpus", f.gpus, "GPU counts" + ints);
  list("--seq", f.seq, "Sequence lengths" + ints);
  list("--tp", f.tp, "Tensor-parallel sizes" + ints);
  list("--cp", f.cp, "Context-parallel sizes" + ints);
  list("--ep", f.ep, "Expert-parallel sizes" + ints);
  list("--etp", f.etp, "Expert tensor-parallel sizes" + ints);
  list("--pp", f.pp, "Pipeline-parallel sizes" + ints);
  list("--vpp", f.vpp, "Virtual pipeline stages" + ints);
  list("--mbs", f.mbs, "Micro-batch sizes" + ints);
  list("--gbs", f.gbs, "Global batch sizes" + ints);
  list("--precision", f.precision, "Precisions, comma list");
  list("--dispatcher", f.dispatcher, "Dispatchers, comma list");
  list("--recompute", f.recompute,
       "One recompute setting per occurrence (none, full, modules)");
  list("--cuda-graph", f.cuda_graph, "One CUDA-graph scope per occurrence");
  list("--cpu-offload", f.cpu_offload,
       "Optimizer offload fractions, comma list");
  list("--ep-overlap", f.ep_overlap, "EP overlap, comma list of 0 and 1");
  list("--constraint", f.constraints,
       "A rule every candidate meets, e.g. \"tp*cp <= 8\"; repeatable");
  app.add_option("--max-gpus-per-replica", f.max_gpus_per_replica,
                 "Exclude layouts whose TP x CP x PP is above this");
  const auto& all = app.get_options();
  for (size_t i = before; i < all.size(); ++i) f.options.push_back(all[i]);
}

Result<scenarios::Sweep> SweepFromFlags(const SweepSpaceFlags& f) {
  const std::pair<const std::vector<std::string>*, std::string_view> lists[] = {
      {&f.gpus, "--gpus"},
      {&f.seq, "--seq"},
      {&f.tp, "--tp"},
      {&f.cp, "--cp"},
      {&f.ep, "--ep"},
      {&f.etp, "--etp"},
      {&f.pp, "--pp"},
      {&f.vpp, "--vpp"},
      {&f.mbs, "--mbs"},
      {&f.gbs, "--gbs"},
      {&f.precision, "--precision"},
      {&f.dispatcher, "--dispatcher"},
      {&f.recompute, "--recompute"},
      {&f.cuda_graph, "--cuda-graph"},
      {&f.cpu_offload, "--cpu-offload"},
      {&f.ep_overlap, "--ep-overlap"}};
  for (auto [given, flag] : lists) {
    for (const std::string& occurrence : *given) {
      if (util::SplitList(occurrence, ",").empty()) {
        return std::unexpected(FlagError(
            flag, "empty: give at least one value or leave the flag out"));
      }
    }
  }
  // A flag with one plain value sets the base, as `moesim run` would; more
  // values, or a range, make it an axis.
  scenarios::Sweep spec;
  studies::ScenarioFlags base = f.base;
  const std::tuple<const std::vector<std::string>*, std::string_view,
                   scenarios::IntAxis* (scenarios::Sweep::*)(),
                   std::optional<int>*>
      ints[] = {
          {&f.gpus, "--gpus", &scenarios::Sweep::mutable_num_gpus, &base.gpus},
          {&f.seq, "--seq", &scenarios::Sweep::mutable_seq_len, &base.seq},
          {&f.tp, "--tp", &scenarios::Sweep::mutable_tp, &base.tp},
          {&f.cp, "--cp", &scenarios::Sweep::mutable_cp, &base.cp},
          {&f.ep, "--ep", &scenarios::Sweep::mutable_ep, &base.ep},
          {&f.etp, "--etp", &scenarios::Sweep::mutable_etp, &base.etp},
          {&f.pp, "--pp", &scenarios::Sweep::mutable_pp, &base.pp},
          {&f.vpp, "--vpp", &scenarios::Sweep::mutable_vpp, &base.vpp},
          {&f.mbs, "--mbs", &scenarios::Sweep::mutable_mbs, &base.mbs},
          {&f.gbs, "--gbs", &scenarios::Sweep::mutable_gbs, &base.gbs}};
  for (auto [given, flag, axis_of, base_value] : ints) {
    if (given->empty()) continue;
    auto parsed = ParseIntAxis(*given, flag);
    if (!parsed) return std::unexpected(parsed.error());
    const bool range = parsed->times() != 0 || parsed->step() != 0;
    if (!range && parsed->values_size() == 1) {
      *base_value = parsed->values(0);
    } else {
      *(spec.*axis_of)() = std::move(*parsed);
    }
  }
  auto words = [](const std::vector<std::string>& given, bool split,
                  std::optional<std::string>& base_word,
                  google::protobuf::RepeatedPtrField<std::string>& axis) {
    std::vector<std::string> items = Items(given, split);
    if (items.size() == 1) {
      base_word = items[0];
    } else {
      for (std::string& v : items) axis.Add(std::move(v));
    }
  };
  words(f.precision, true, base.precision, *spec.mutable_precision());
  words(f.dispatcher, true, base.dispatcher, *spec.mutable_dispatcher());
  words(f.recompute, false, base.recompute, *spec.mutable_recompute());
  words(f.cuda_graph, false, base.cuda_graph, *spec.mutable_cuda_graph());
  auto fractions = ParseFractions(f.cpu_offload);
  if (!fractions) return std::unexpected(fractions.error());
  if (fractions->size() == 1) {
    base.cpu_offload = fractions->front();
  } else {
    for (double v : *fractions) spec.add_cpu_offload(v);
  }
  auto bits = ParseBits(f.ep_overlap);
  if (!bits) return std::unexpected(bits.error());
  if (bits->size() == 1) {
    base.ep_overlap = bits->front() ? 1 : 0;
  } else {
    for (bool v : *bits) spec.add_ep_overlap(v);
  }
  for (const std::string& rule : f.constraints)
    spec.mutable_constraints()->add_rule(rule);
  spec.mutable_constraints()->set_max_gpus_per_model_replica(
      f.max_gpus_per_replica);
  if (f.constraints.empty() && f.max_gpus_per_replica == 0)
    spec.clear_constraints();

  auto built = studies::ScenarioFromFlags(base);
  if (!built) return std::unexpected(built.error());
  *spec.mutable_base() = std::move(built->spec);
  return spec;
}

}  // namespace moesim::tools
