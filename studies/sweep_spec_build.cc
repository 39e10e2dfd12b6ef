// Building a sweep's space from its spec (SweepSpace::Build and its parts:
// the base, the axes, the constraints, the size and the fingerprint).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unordered_set>
#include <utility>

#include "models/zoo.h"
#include "scenarios/pipeline_split.h"
#include "scenarios/vocabulary.h"
#include "studies/sweep_spec.h"
#include "studies/sweep_spec_internal.h"
#include "topology/system.h"
#include "util/csv.h"
#include "util/fnv.h"
#include "util/message.h"
#include "util/textproto.h"

namespace moesim::studies {
namespace {

using util::Result;

using internal::CheckWords;
using internal::Expand;
using internal::kAxisNames;
using internal::LoadBase;
using internal::WrittenEmpty;
using Namer = internal::SweepNamer;

}  // namespace

Result<void> SweepSpace::ReadBase(const scenarios::Sweep& spec,
                                  const std::string& base_dir,
                                  const Namer& at) {
  auto base = LoadBase(spec, base_dir, at);
  if (!base) return std::unexpected(base.error());
  base_ = std::move(*base);
  const scenarios::Scenario& b = base_;
  if (b.model().empty())
    return std::unexpected(at.Error("base.model", "required"));
  auto model = models::LoadModel(b.model());
  if (!model)
    return std::unexpected(at.Wrap("base.model", model.error().message));
  num_layers_ = b.num_layers() > 0 ? b.num_layers() : model->num_layers();
  mtp_layers_ =
      b.has_mtp_num_layers() ? b.mtp_num_layers() : model->mtp_num_layers();
  if (b.system().empty())
    return std::unexpected(at.Error("base.system", "required"));
  if (auto system = topology::LoadSystem(b.system()); !system)
    return std::unexpected(at.Wrap("base.system", system.error().message));
  // The base's words, up front like the axes' (else one typo would make
  // every candidate invalid).
  for (const auto& [kind, word] :
       {std::pair<std::string, std::string>{"precision", b.precision()},
        {"dispatcher", b.dispatcher()},
        {"cuda_graph", b.cuda_graph()}}) {
    if (word.empty()) continue;
    if (auto ok = CheckWords({word}, kind, "base." + kind, at); !ok)
      return std::unexpected(ok.error());
  }
  if (b.num_gpus() == 0 && !spec.has_num_gpus()) {
    return std::unexpected(
        at.Error("base.num_gpus", "required (here or as the num_gpus axis)"));
  }
  return {};
}

Result<void> SweepSpace::ReadAxes(const scenarios::Sweep& spec,
                                  std::string_view text, const Namer& at) {
  const scenarios::IntAxis* int_axes[] = {
      spec.has_num_gpus() ? &spec.num_gpus() : nullptr,
      spec.has_seq_len() ? &spec.seq_len() : nullptr,
      spec.has_tp() ? &spec.tp() : nullptr,
      spec.has_cp() ? &spec.cp() : nullptr,
      spec.has_ep() ? &spec.ep() : nullptr,
      spec.has_etp() ? &spec.etp() : nullptr,
      spec.has_pp() ? &spec.pp() : nullptr,
      spec.has_vpp() ? &spec.vpp() : nullptr,
      spec.has_mbs() ? &spec.mbs() : nullptr,
      spec.has_gbs() ? &spec.gbs() : nullptr};
  for (int a = 0; a <= kGbs; ++a) {
    if (!int_axes[a]) continue;
    auto values = Expand(*int_axes[a], kAxisNames[a], at);
    if (!values) return std::unexpected(values.error());
    ints_[a] = std::move(*values);
  }
  pipeline_swept_ = spec.has_pp() || spec.has_vpp();

  auto strings = [&](const auto& field, int axis,
                     std::vector<std::string>& out) -> Result<void> {
    const char* name = kAxisNames[axis];
    if (field.empty() && WrittenEmpty(text, name)) {
      return std::unexpected(at.Error(
          name, "empty list: give at least one value or leave it out"));
    }
    out.assign(field.begin(), field.end());
    return CheckWords(out, name, name, at);
  };
  if (auto ok = strings(spec.recompute(), kRecompute, recompute_); !ok)
    return std::unexpected(ok.error());
  if (auto ok = strings(spec.precision(), kPrecision, precision_); !ok)
    return std::unexpected(ok.error());
  if (auto ok = strings(spec.dispatcher(), kDispatcher, dispatcher_); !ok)
    return std::unexpected(ok.error());
  if (auto ok = strings(spec.cuda_graph(), kCudaGraph, cuda_graph_); !ok)
    return std::unexpected(ok.error());
  if (auto ok = strings(spec.activation_offload(), kActivationOffload,
                        activation_offload_);
      !ok)
    return std::unexpected(ok.error());
  for (const auto& [name, empty] :
       {std::pair{"cpu_offload", spec.cpu_offload().empty()},
        std::pair{"ep_overlap", spec.ep_overlap().empty()},
        std::pair{"offload_optimizer_states",
                  spec.offload_optimizer_states().empty()}}) {
    if (empty && WrittenEmpty(text, name)) {
      return std::unexpected(at.Error(
          name, "empty list: give at least one value or leave it out"));
    }
  }
  for (double v : spec.cpu_offload()) {
    if (!(v >= 0 && v <= 1)) {
      char value[32];
      std::snprintf(value, sizeof(value), "%g", v);
      return std::unexpected(
          at.Error("cpu_offload",
                   std::string("must be in [0, 1] (a fraction of the optimizer "
                               "state), got ") +
                       value));
    }
  }
  cpu_offload_.assign(spec.cpu_offload().begin(), spec.cpu_offload().end());
  ep_overlap_.assign(spec.ep_overlap().begin(), spec.ep_overlap().end());
  offload_optimizer_states_.assign(spec.offload_optimizer_states().begin(),
                                   spec.offload_optimizer_states().end());

  return {};
}

Result<void> SweepSpace::ReadConstraints(const scenarios::Sweep& spec,
                                         const Namer& at) {
  const scenarios::Constraints& c = spec.constraints();
  if (c.max_gpus_per_model_replica() < 0) {
    return std::unexpected(at.Error(
        "constraints.max_gpus_per_model_replica",
        "must be >= 1, got " + std::to_string(c.max_gpus_per_model_replica())));
  }
  max_gpus_per_replica_ = c.max_gpus_per_model_replica();
  for (const std::string& text_rule : c.rule()) {
    auto rule = SweepRule::Parse(text_rule);
    if (!rule)
      return std::unexpected(
          at.Error("constraints.rule", rule.error().message));
    rules_.push_back(std::move(*rule));
  }

  return {};
}

Result<void> SweepSpace::CheckSize(const Namer& at) {
  // The size, refused above the limit before anything is enumerated. Each
  // axis holds at most kMaxSweepCandidates values (Expand), so the product
  // of the 16 axes is exact enough in a long double to print.
  long double size = 1;
  int largest = 0;
  std::string factors;
  for (int a = 0; a < kNumAxes; ++a) {
    const size_t n = AxisSize(a);
    if (n > AxisSize(largest)) largest = a;
    if (n > 1) {
      factors += (factors.empty() ? "" : " x ") + std::to_string(n) + " " +
                 kAxisNames[a];
    }
    size *= static_cast<long double>(n);
  }
  if (size > kMaxSweepCandidates) {
    char count[64];
    std::snprintf(count, sizeof(count), "%.0Lf", size);
    return std::unexpected(at.Error(
        kAxisNames[largest],
        "the space has " + std::string(count) + " candidates (" + factors +
            "), more than the limit of " + std::to_string(kMaxSweepCandidates) +
            "; narrow the axes or split the sweep"));
  }
  size_ = static_cast<int64_t>(size);

  return {};
}

std::string SweepSpace::Fingerprint() const {
  uint64_t h = util::kFnvOffsetBasis;
  std::string base_bytes;
  (void)base_.SerializeToString(&base_bytes);
  util::FnvAddValue(h, base_bytes);
  for (int a = 0; a <= kGbs; ++a) {
    for (int32_t v : ints_[a]) util::FnvAddValue(h, std::to_string(v));
    util::FnvAddValue(h, kAxisNames[a]);
  }
  for (const auto* list :
       {&recompute_, &precision_, &dispatcher_, &cuda_graph_}) {
    for (const std::string& v : *list) util::FnvAddValue(h, v);
    util::FnvAddValue(h, "|");
  }
  for (double v : cpu_offload_) util::FnvAddValue(h, std::to_string(v));
  for (int v : ep_overlap_) util::FnvAddValue(h, std::to_string(v));
  // The offload axes enter only when written, so that older specs keep
  // their fingerprints.
  if (!activation_offload_.empty() || !offload_optimizer_states_.empty()) {
    for (const std::string& v : activation_offload_) util::FnvAddValue(h, v);
    util::FnvAddValue(h, "|");
    for (int v : offload_optimizer_states_)
      util::FnvAddValue(h, std::to_string(v));
  }
  util::FnvAddValue(h, std::to_string(max_gpus_per_replica_));
  for (const SweepRule& r : rules_) util::FnvAddValue(h, r.text());
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(h));
  return hex;
}

Result<SweepSpace> SweepSpace::Build(const scenarios::Sweep& spec,
                                     std::string_view origin,
                                     std::string_view text,
                                     const std::string& base_dir) {
  const Namer at(origin, text);
  SweepSpace space;
  if (auto ok = space.ReadBase(spec, base_dir, at); !ok)
    return std::unexpected(ok.error());
  if (auto ok = space.ReadAxes(spec, text, at); !ok)
    return std::unexpected(ok.error());
  if (auto ok = space.ReadConstraints(spec, at); !ok)
    return std::unexpected(ok.error());
  if (auto ok = space.CheckSize(at); !ok) return std::unexpected(ok.error());
  space.fingerprint_ = space.Fingerprint();
  return space;
}

}  // namespace moesim::studies
