#include "tools/sweep_spec.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unordered_set>
#include <utility>

#include "models/zoo.h"
#include "scenarios/pipeline_split.h"
#include "scenarios/vocabulary.h"
#include "tools/sweep_flags.h"
#include "tools/sweep_spec_internal.h"
#include "topology/system.h"
#include "util/csv.h"
#include "util/fnv.h"
#include "util/message.h"
#include "util/textproto.h"

namespace moesim::tools {
namespace {

using util::Result;

constexpr const char* kAxisNames[] = {"num_gpus",
                                      "seq_len",
                                      "tp",
                                      "cp",
                                      "ep",
                                      "etp",
                                      "pp",
                                      "vpp",
                                      "mbs",
                                      "gbs",
                                      "recompute",
                                      "precision",
                                      "dispatcher",
                                      "cpu_offload",
                                      "cuda_graph",
                                      "ep_overlap",
                                      "activation_offload",
                                      "offload_optimizer_states"};

using internal::CheckWords;
using internal::Expand;
using internal::WrittenEmpty;
using Namer = internal::SweepNamer;

// The base: base_file's scenario, then the fields written in `base`.
Result<scenarios::Scenario> LoadBase(const scenarios::Sweep& spec,
                                     const std::string& base_dir,
                                     const Namer& at) {
  scenarios::Scenario base;
  if (!spec.base_file().empty()) {
    std::filesystem::path path(spec.base_file());
    if (path.extension() != ".textproto") {
      return std::unexpected(at.Error(
          "base_file", util::Excerpt(spec.base_file()) +
                           ": a scenario file must end in .textproto"));
    }
    if (path.is_relative() && !base_dir.empty()) path = base_dir / path;
    auto loaded = scenarios::LoadScenario(path.string());
    if (!loaded) {
      std::string message = loaded.error().message;
      return std::unexpected(at.Error("base_file", message));
    }
    base = std::move(*loaded);
    if (spec.base().has_recompute()) base.clear_recompute();
    // The base's CP exchange replaces the file's whole: its type and its
    // hierarchical sizes (a2a+p2p's sizes mean nothing to another type).
    if (spec.base().hierarchical_context_parallel_sizes_size() > 0 ||
        !spec.base().cp_comm_type().empty())
      base.clear_hierarchical_context_parallel_sizes();
  }
  scenarios::Scenario own = spec.base();
  scenarios::ResolvePathsAgainst(own, base_dir);
  base.MergeFrom(own);
  return base;
}

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

Result<SweepSpace> SweepSpace::Load(const std::string& path) {
  auto text = util::ReadFile(path);
  if (!text) return std::unexpected(text.error());
  scenarios::Sweep spec;
  if (auto ok = util::ParseTextProto(*text, path, spec); !ok)
    return std::unexpected(ok.error());
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return Build(spec, path, *text, dir);
}

size_t SweepSpace::AxisSize(int axis) const {
  size_t n = 0;
  if (axis <= kGbs) n = ints_[axis].size();
  if (axis == kRecompute) n = recompute_.size();
  if (axis == kPrecision) n = precision_.size();
  if (axis == kDispatcher) n = dispatcher_.size();
  if (axis == kCpuOffload) n = cpu_offload_.size();
  if (axis == kCudaGraph) n = cuda_graph_.size();
  if (axis == kEpOverlap) n = ep_overlap_.size();
  if (axis == kActivationOffload) n = activation_offload_.size();
  if (axis == kOffloadOptimizerStates) n = offload_optimizer_states_.size();
  return std::max<size_t>(n, 1);
}

void SweepSpace::Apply(int axis, size_t i, scenarios::Scenario& s) const {
  scenarios::Layout& l = *s.mutable_layout();
  if (axis <= kGbs && ints_[axis].empty()) return;
  switch (axis) {
    case kNumGpus:
      s.set_num_gpus(ints_[axis][i]);
      break;
    case kSeqLen:
      s.set_seq_length(ints_[axis][i]);
      break;
    case kTp:
      l.set_tensor_model_parallel_size(ints_[axis][i]);
      break;
    case kCp:
      l.set_context_parallel_size(ints_[axis][i]);
      break;
    case kEp:
      l.set_expert_model_parallel_size(ints_[axis][i]);
      break;
    case kEtp:
      l.set_expert_tensor_parallel_size(ints_[axis][i]);
      break;
    case kPp:
      l.set_pipeline_model_parallel_size(ints_[axis][i]);
      break;
    case kVpp:
      l.set_virtual_pipeline_model_parallel_size(ints_[axis][i]);
      break;
    case kMbs:
      l.set_micro_batch_size(ints_[axis][i]);
      break;
    case kGbs:
      l.set_global_batch_size(ints_[axis][i]);
      break;
    case kRecompute:
      if (!recompute_.empty()) {
        // Checked by Build(), so it parses.
        scenarios::ApplyRecomputeSetting(
            *scenarios::ParseRecomputeSetting(recompute_[i]),
            *s.mutable_recompute());
      }
      break;
    case kPrecision:
      if (!precision_.empty()) s.set_precision(precision_[i]);
      break;
    case kDispatcher:
      if (!dispatcher_.empty()) s.set_dispatcher(dispatcher_[i]);
      break;
    case kCpuOffload:
      if (!cpu_offload_.empty())
        s.set_optimizer_offload_fraction(cpu_offload_[i]);
      break;
    case kCudaGraph:
      if (!cuda_graph_.empty()) s.set_cuda_graph(cuda_graph_[i]);
      break;
    case kEpOverlap:
      if (!ep_overlap_.empty())
        s.set_overlap_moe_expert_parallel_comm(ep_overlap_[i] != 0);
      break;
    case kActivationOffload:
      if (!activation_offload_.empty()) {
        // Checked by Build(), so it parses.
        scenarios::ApplyActivationOffloadSetting(
            *scenarios::ParseActivationOffloadSetting(activation_offload_[i]),
            s);
      }
      break;
    case kOffloadOptimizerStates:
      if (!offload_optimizer_states_.empty())
        s.set_offload_optimizer_states(offload_optimizer_states_[i] != 0);
      break;
  }
}

scenarios::Scenario SweepSpace::Candidate(int64_t index) const {
  scenarios::Scenario s = base_;
  if (pipeline_swept_) {
    s.mutable_layout()->clear_pipeline_model_parallel_layout();
    s.mutable_layout()->clear_num_layers_per_virtual_pipeline_stage();
  }
  for (int a = kNumAxes - 1; a >= 0; --a) {
    const int64_t n = static_cast<int64_t>(AxisSize(a));
    Apply(a, static_cast<size_t>(index % n), s);
    index /= n;
  }
  if (pipeline_swept_) {
    // A split Megatron cannot derive gets advise's explicit layout.
    const scenarios::Layout& l = s.layout();
    s.mutable_layout()->set_pipeline_model_parallel_layout(
        scenarios::LayoutForUnevenSplit(
            num_layers_, mtp_layers_,
            std::max(1, l.pipeline_model_parallel_size()),
            std::max(1, l.virtual_pipeline_model_parallel_size())));
  }
  return s;
}

std::string SweepSpace::Excluded(const scenarios::ResolvedScenario& r) const {
  const models::Parallelism& p = r.parallel;
  if (max_gpus_per_replica_ > 0 && p.tp * p.cp * p.pp > max_gpus_per_replica_) {
    return "constraint max_gpus_per_model_replica " +
           std::to_string(max_gpus_per_replica_) +
           ": TPxCPxPP = " + std::to_string(p.tp * p.cp * p.pp);
  }
  for (const SweepRule& rule : rules_) {
    if (std::string why = rule.Check(r); !why.empty()) return why;
  }
  return "";
}

void FillLayout(const scenarios::Scenario& s, SweepCandidate& c) {
  const scenarios::Layout& l = s.layout();
  c.set_num_gpus(s.num_gpus());
  c.set_seq_len(s.seq_length());
  c.set_tp(l.tensor_model_parallel_size());
  c.set_cp(l.context_parallel_size());
  c.set_ep(l.expert_model_parallel_size());
  c.set_etp(l.expert_tensor_parallel_size());
  c.set_pp(l.pipeline_model_parallel_size());
  c.set_vpp(l.virtual_pipeline_model_parallel_size());
  c.set_mbs(l.micro_batch_size());
  c.set_gbs(l.global_batch_size());
  const scenarios::Recompute& rc = s.recompute();
  if (rc.granularity() == "full") {
    c.set_recompute("full");
  } else if (rc.modules_size() > 0) {
    std::string modules;
    for (const std::string& m : rc.modules())
      modules += (modules.empty() ? "" : ",") + m;
    c.set_recompute(modules);
  } else {
    c.set_recompute("none");
  }
  c.set_precision(s.precision());
  c.set_dispatcher(s.dispatcher());
  c.set_cpu_offload(s.optimizer_offload_fraction());
  c.set_cuda_graph(s.cuda_graph());
  c.set_ep_overlap(s.overlap_moe_expert_parallel_comm());
  c.set_activation_offload(scenarios::ActivationOffloadSetting(s));
  c.set_offload_optimizer_states(s.offload_optimizer_states());
}

}  // namespace moesim::tools
