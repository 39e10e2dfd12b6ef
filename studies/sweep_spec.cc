#include "studies/sweep_spec.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unordered_set>
#include <utility>

#include "models/zoo.h"
#include "scenarios/pipeline_split.h"
#include "scenarios/vocabulary.h"
#include "studies/sweep_spec_internal.h"
#include "topology/system.h"
#include "util/csv.h"
#include "util/fnv.h"
#include "util/message.h"
#include "util/textproto.h"

namespace moesim::studies {

using util::Result;

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

namespace {

// Sweep field -> flag, for errors and SweepFieldFlag.
constexpr std::pair<std::string_view, std::string_view> kFlags[] = {
    {"num_gpus", "--gpus"},
    {"seq_len", "--seq"},
    {"tp", "--tp"},
    {"cp", "--cp"},
    {"ep", "--ep"},
    {"etp", "--etp"},
    {"pp", "--pp"},
    {"vpp", "--vpp"},
    {"mbs", "--mbs"},
    {"gbs", "--gbs"},
    {"recompute", "--recompute"},
    {"precision", "--precision"},
    {"dispatcher", "--dispatcher"},
    {"cpu_offload", "--cpu-offload"},
    {"cuda_graph", "--cuda-graph"},
    {"ep_overlap", "--ep-overlap"},
    {"base.model", "--model"},
    {"base.system", "--system"},
    {"base.num_gpus", "--gpus"},
    {"base.precision", "--precision"},
    {"base.dispatcher", "--dispatcher"},
    {"base.cuda_graph", "--cuda-graph"},
    {"constraints.rule", "--constraint"},
    {"constraints.max_gpus_per_model_replica", "--max-gpus-per-replica"},
};

}  // namespace

std::string SweepFieldFlag(std::string_view field) {
  for (auto [name, flag] : kFlags) {
    if (name == field) return std::string(flag);
  }
  return std::string(field);
}

}  // namespace moesim::studies
