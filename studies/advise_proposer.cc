// The single-knob changes advise proposes for a wall
// (studies/advise_internal.h), after the optimization workflow's order.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/dispatchers.h"
#include "scenarios/pipeline_split.h"
#include "studies/advise.h"
#include "studies/advise_internal.h"
#include "util/csv.h"
#include "util/format.h"

namespace moesim::studies::internal {
namespace {

// The selective recompute modules the workflow tries first, in its order.
constexpr const char* kModules[] = {"core_attn", "mla_up_proj", "layernorm",
                                    "moe_act", "mlp"};

// Builds the candidate changes of one step, each a copy of the current spec
// with one knob turned, grouped by the wall they address.
class Proposer {
 public:
  explicit Proposer(const scenarios::ResolvedScenario& r)
      : r_(r), s_(r.spec), l_(r.spec.layout()) {}

  std::vector<Candidate> For(const std::string& wall, bool fits) {
    if (wall == "memory") {
      Memory();
      for (Candidate& c : out_) c.memory_fix = true;
    }
    if (!fits) return std::move(out_);
    if (s_.recompute().granularity() == "full") ReplaceFull();
    if (wall == "communication") Communication();
    if (wall == "host") Host();
    Compute();
    Communication();
    Host();
    return std::move(out_);
  }

 private:
  void Add(std::string change, scenarios::Scenario spec) {
    if (!labels_.insert(change).second) return;
    out_.push_back({std::move(change), std::move(spec)});
  }
  // A copy whose pipeline split Resolve() derives again.
  scenarios::Scenario Repiped(int pp, int vpp) const {
    scenarios::Scenario s = s_;
    scenarios::Layout& l = *s.mutable_layout();
    l.set_pipeline_model_parallel_size(pp);
    l.set_virtual_pipeline_model_parallel_size(vpp);
    l.clear_pipeline_model_parallel_layout();
    l.clear_num_layers_per_virtual_pipeline_stage();
    const int64_t layers = r_.model.num_layers();
    if (layers % (int64_t{pp} * vpp) != 0) {
      l.set_pipeline_model_parallel_layout(
          scenarios::SplitLayout(layers, r_.model.mtp_num_layers(), pp * vpp));
    }
    return s;
  }
  // `offload` > 0: also raise the optimizer offload to it (the one compound
  // change: selective recompute in place of full often fits only with the
  // optimizer state moved out, the workflow's memory fixes together).
  void Recompute(const std::string& change, std::vector<std::string> modules,
                 double offload = 0) {
    scenarios::Scenario s = s_;
    scenarios::Recompute& rc = *s.mutable_recompute();
    rc.Clear();
    if (!modules.empty()) {
      rc.set_granularity("selective");
      for (std::string& m : modules) rc.add_modules(std::move(m));
    }
    if (offload > 0) s.set_optimizer_offload_fraction(offload);
    Add(change, std::move(s));
  }
  std::vector<std::string> Modules() const {
    if (s_.recompute().granularity() != "selective") return {};
    return {s_.recompute().modules().begin(), s_.recompute().modules().end()};
  }

  void Memory() {
    if (s_.recompute().granularity() != "full") {
      for (const char* m : kModules) {
        std::vector<std::string> modules = Modules();
        if (std::find(modules.begin(), modules.end(), m) != modules.end())
          continue;
        modules.push_back(m);
        Recompute(util::Format("recompute +%s", m), std::move(modules));
      }
    }
    const int cp = l_.context_parallel_size();
    if (s_.seq_length() >= 8192) {
      scenarios::Scenario s = s_;
      s.mutable_layout()->set_context_parallel_size(2 * cp);
      Add(util::Format("cp %d -> %d", cp, 2 * cp), std::move(s));
    }
    // Experts are most of an MoE's weights: EP before PP (workflow phase 2,
    // "prefer EP over extra TP for experts").
    const int ep = l_.expert_model_parallel_size();
    if (ep < r_.model.num_moe_experts()) {
      scenarios::Scenario s = s_;
      s.mutable_layout()->set_expert_model_parallel_size(2 * ep);
      Add(util::Format("ep %d -> %d", ep, 2 * ep), std::move(s));
    }
    const int pp = l_.pipeline_model_parallel_size();
    const int vpp = l_.virtual_pipeline_model_parallel_size();
    Add(util::Format("pp %d -> %d", pp, 2 * pp), Repiped(2 * pp, vpp));
    if (vpp > 1)
      Add(util::Format("pp %d -> %d, vpp 1", pp, 2 * pp), Repiped(2 * pp, 1));
    for (double fraction : {0.5, 1.0}) {
      if (s_.optimizer_offload_fraction() >= fraction) continue;
      scenarios::Scenario s = s_;
      s.set_optimizer_offload_fraction(fraction);
      Add(util::Format("cpu-offload %g -> %g", s_.optimizer_offload_fraction(),
                       fraction),
          std::move(s));
    }
    if (s_.recompute().granularity() != "full") {
      scenarios::Scenario s = s_;
      s.mutable_recompute()->Clear();
      s.mutable_recompute()->set_granularity("full");
      s.mutable_recompute()->set_method("uniform");
      s.mutable_recompute()->set_num_layers(1);
      Add("recompute " + studies::RecomputeText(s_.recompute()) + " -> full",
          std::move(s));
    }
  }

  // Full recompute that fits: selective sets, largest first.
  // MCore's `moe` module (the whole MoE layer) is the larger alternative to
  // `moe_act`; the seed layout recomputes it with mla_up_proj, layernorm, mlp.
  void ReplaceFull() {
    std::vector<std::string> all(std::begin(kModules), std::end(kModules));
    std::vector<std::vector<std::string>> sets;
    for (size_t n = all.size(); n >= 1; --n)
      sets.emplace_back(all.begin(), all.begin() + n);
    // Without core_attn, whose recompute grows with the square of the
    // sequence (the card's fine-grained list: MLA up-proj, LayerNorm, SwiGLU).
    sets.push_back({"mla_up_proj", "layernorm", "moe_act", "mlp"});
    sets.push_back({"mla_up_proj", "layernorm", "moe", "mlp"});
    for (const std::vector<std::string>& modules : sets)
      Recompute("recompute full -> " + util::JoinList(modules, ","), modules);
    if (s_.optimizer_offload_fraction() >= 1) return;
    for (const std::vector<std::string>& modules : sets) {
      Recompute("recompute full -> " + util::JoinList(modules, ",") +
                    ", cpu-offload 1",
                modules, 1.0);
    }
  }

  void Communication() {
    const std::string& d = s_.dispatcher();
    for (const models::DispatcherTraits& t : models::Dispatchers()) {
      if (!t.fused || d == t.word) continue;
      scenarios::Scenario s = s_;
      s.set_dispatcher(std::string(t.word));
      Add("dispatcher " + d + " -> " + std::string(t.word), std::move(s));
    }
    if (!s_.overlap_moe_expert_parallel_comm()) {
      scenarios::Scenario s = s_;
      s.set_overlap_moe_expert_parallel_comm(true);
      Add("ep-overlap 0 -> 1", std::move(s));
    }
    if (const int ep = l_.expert_model_parallel_size(); ep > 1) {
      scenarios::Scenario s = s_;
      s.mutable_layout()->set_expert_model_parallel_size(ep / 2);
      Add(util::Format("ep %d -> %d", ep, ep / 2), std::move(s));
    }
    if (const int tp = l_.tensor_model_parallel_size(); tp > 1) {
      scenarios::Scenario s = s_;
      s.mutable_layout()->set_tensor_model_parallel_size(tp / 2);
      s.mutable_layout()->clear_sequence_parallel();
      Add(util::Format("tp %d -> %d", tp, tp / 2), std::move(s));
    }
    const int cp = l_.context_parallel_size();
    const int tp = l_.tensor_model_parallel_size();
    const int node = r_.system.gpus_per_node();
    const int inner = node / tp;
    if (s_.cp_comm_type() != "a2a+p2p" && cp * tp > node && inner >= 2 &&
        cp % inner == 0) {
      scenarios::Scenario s = s_;
      s.set_cp_comm_type("a2a+p2p");
      s.clear_hierarchical_context_parallel_sizes();
      s.add_hierarchical_context_parallel_sizes(inner);
      s.add_hierarchical_context_parallel_sizes(cp / inner);
      Add(util::Format("cp-comm-type %s -> a2a+p2p (%d,%d)",
                       s_.cp_comm_type().c_str(), inner, cp / inner),
          std::move(s));
    }
  }

  void Host() {
    const std::string& g = s_.cuda_graph();
    const std::string router = "te:moe_router;moe_preprocess";
    const std::string next = g == "none"   ? router
                             : g == router ? router + ";attn"
                                           : "";
    if (!next.empty()) {
      scenarios::Scenario s = s_;
      s.set_cuda_graph(next);
      Add("cuda-graph " + g + " -> " + next, std::move(s));
    }
    Mbs();
  }

  void Mbs() {
    const int mbs = l_.micro_batch_size();
    scenarios::Scenario s = s_;
    s.mutable_layout()->set_micro_batch_size(2 * mbs);
    Add(util::Format("mbs %d -> %d", mbs, 2 * mbs), std::move(s));
  }

  void Compute() {
    Mbs();
    const std::vector<std::string> modules = Modules();
    for (size_t i = 0; i < modules.size(); ++i) {
      std::vector<std::string> fewer = modules;
      fewer.erase(fewer.begin() + i);
      Recompute("recompute -" + modules[i], std::move(fewer));
    }
    const int pp = l_.pipeline_model_parallel_size();
    const int vpp = l_.virtual_pipeline_model_parallel_size();
    if (pp > 1) {
      Add(util::Format("pp %d -> %d", pp, pp / 2), Repiped(pp / 2, vpp));
      if (vpp > 1) {
        Add(util::Format("pp %d -> %d, vpp 1", pp, pp / 2), Repiped(pp / 2, 1));
      }
      Add(util::Format("vpp %d -> %d", vpp, 2 * vpp), Repiped(pp, 2 * vpp));
    }
    if (vpp > 1)
      Add(util::Format("vpp %d -> %d", vpp, vpp / 2), Repiped(pp, vpp / 2));
  }

  const scenarios::ResolvedScenario& r_;
  const scenarios::Scenario& s_;
  const scenarios::Layout& l_;
  std::vector<Candidate> out_;
  std::set<std::string> labels_;
};

}  // namespace

std::vector<Candidate> ProposeChanges(const scenarios::ResolvedScenario& r,
                                      const std::string& wall, bool fits) {
  return Proposer(r).For(wall, fits);
}

}  // namespace moesim::studies::internal

namespace moesim::studies {

std::string RecomputeText(const scenarios::Recompute& rc) {
  if (rc.granularity() == "full") return "full";
  if (rc.granularity() != "selective" || rc.modules_size() == 0) return "none";
  return util::JoinList(rc.modules(), ",");
}

}  // namespace moesim::studies
