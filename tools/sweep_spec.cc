#include "tools/sweep_spec.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "models/zoo.h"
#include "topology/system.h"
#include "util/csv.h"
#include "util/textproto.h"

namespace moesim::tools {
namespace {

using util::Result;

constexpr const char* kAxisNames[] = {
    "num_gpus",   "seq_len",     "tp",         "cp",
    "ep",         "etp",         "pp",         "vpp",
    "mbs",        "gbs",         "recompute",  "precision",
    "dispatcher", "cpu_offload", "cuda_graph", "ep_overlap"};

constexpr std::string_view kRuleNames[] = {"tp",  "cp",  "ep",       "etp",
                                           "pp",  "vpp", "dp",       "edp",
                                           "mbs", "gbs", "num_gpus", "seq_len"};

// Line (1-based) of `field` written at the top level of a text-format file
// (outside any `{ }`), or 0. Skips comments and quoted strings.
int TopLevelLine(std::string_view text, std::string_view field) {
  int depth = 0, line = 1;
  bool line_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      continue;
    }
    if (c == ' ' || c == '\t') continue;
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i) {
        if (text[i] == '\\') ++i;
      }
      line_start = false;
      continue;
    }
    if (c == '{' || c == '<') ++depth;
    if (c == '}' || c == '>') --depth;
    if (line_start && depth == 0 && text.substr(i).starts_with(field)) {
      std::string_view rest = text.substr(i + field.size());
      size_t next = rest.find_first_not_of(" \t");
      if (next != std::string_view::npos &&
          (rest[next] == ':' || rest[next] == '{'))
        return line;
    }
    line_start = false;
  }
  return 0;
}

// True when `field` is written at the top level as an empty list: "x: []".
bool WrittenEmpty(std::string_view text, std::string_view field) {
  const int line = TopLevelLine(text, field);
  if (line == 0) return false;
  size_t start = 0;
  for (int l = 1; l < line; ++l) start = text.find('\n', start) + 1;
  std::string_view row = text.substr(start, text.find('\n', start) - start);
  std::string compact;
  for (char c : row) {
    if (c == '#') break;
    if (c != ' ' && c != '\t') compact += c;
  }
  return compact == std::string(field) + ":[]";
}

// Names fields of the sweep file in errors.
class Namer {
 public:
  Namer(std::string_view origin, std::string_view text)
      : origin_(origin), text_(text) {}
  util::Error Error(std::string_view field, std::string_view rule) const {
    std::string where(origin_);
    const size_t dot = field.rfind('.');
    // A nested field's own line, else the line of the message holding it.
    int line = dot == std::string_view::npos
                   ? 0
                   : util::FieldLine(text_, field.substr(dot + 1));
    if (line == 0) line = TopLevelLine(text_, field.substr(0, field.find('.')));
    if (line > 0) where += ":" + std::to_string(line);
    return util::Error{where + ": " + std::string(field) + ": " +
                       std::string(rule)};
  }
  // Error() for a message of another module, keeping its first line and
  // dropping a leading "<leaf>: " that names the field again.
  util::Error Wrap(std::string_view field, std::string_view message) const {
    message = message.substr(0, message.find('\n'));
    const std::string leaf(field.substr(field.rfind('.') + 1));
    if (message.starts_with(leaf + ": "))
      message.remove_prefix(leaf.size() + 2);
    return Error(field, message);
  }

 private:
  std::string_view origin_;
  std::string_view text_;
};

// The values of an integer axis, in order, without duplicates.
Result<std::vector<int32_t>> Expand(const scenarios::IntAxis& axis,
                                    std::string_view name, const Namer& at) {
  std::vector<int32_t> out;
  auto add = [&](int64_t v) -> Result<void> {
    if (v < 1) {
      return std::unexpected(
          at.Error(name, "values must be >= 1, got " + std::to_string(v)));
    }
    if (std::find(out.begin(), out.end(), v) == out.end())
      out.push_back(static_cast<int32_t>(v));
    return {};
  };
  for (int32_t v : axis.values()) {
    if (auto ok = add(v); !ok) return std::unexpected(ok.error());
  }
  const bool range = axis.from() != 0 || axis.to() != 0 || axis.times() != 0 ||
                     axis.step() != 0;
  if (range) {
    if (axis.from() < 1 || axis.to() < axis.from()) {
      return std::unexpected(
          at.Error(name, "a range needs 1 <= from <= to, got from " +
                             std::to_string(axis.from()) + " to " +
                             std::to_string(axis.to())));
    }
    if ((axis.times() != 0) == (axis.step() != 0) || axis.times() < 0 ||
        axis.times() == 1 || axis.step() < 0) {
      return std::unexpected(at.Error(
          name, "a range needs exactly one of times >= 2 or step >= 1"));
    }
    for (int64_t v = axis.from(); v <= axis.to();
         v = axis.times() ? v * axis.times() : v + axis.step()) {
      if (out.size() >= static_cast<size_t>(kMaxSweepCandidates)) {
        return std::unexpected(
            at.Error(name, "more than " + std::to_string(kMaxSweepCandidates) +
                               " values (the limit of a sweep)"));
      }
      if (auto ok = add(v); !ok) return std::unexpected(ok.error());
    }
  }
  if (out.empty()) {
    return std::unexpected(at.Error(
        name, "empty axis: give values or a range (from, to, times|step)"));
  }
  return out;
}

// Checks a string axis against its vocabulary; `name` is the field.
Result<void> CheckWords(const std::vector<std::string>& values,
                        std::string_view name, const Namer& at) {
  auto one_of = [](std::string_view v,
                   std::initializer_list<std::string_view> words) {
    return std::find(words.begin(), words.end(), v) != words.end();
  };
  for (const std::string& v : values) {
    std::string bad;
    if (name == "precision" && !one_of(v, {"bf16", "fp8-cs", "fp8-delayed",
                                           "fp8-block", "mxfp8", "nvfp4"})) {
      bad = "unknown '" + v +
            "' (bf16, fp8-cs, fp8-delayed, fp8-block, mxfp8, nvfp4)";
    } else if (name == "dispatcher" &&
               !one_of(v, {"alltoall", "deepep", "hybridep"})) {
      bad = "unknown '" + v + "' (alltoall, deepep, hybridep)";
    } else if (name == "recompute" && v != "none" && v != "full") {
      std::vector<std::string> modules = util::SplitList(v, ",;");
      if (modules.empty()) bad = "'" + v + "' names no module";
      for (const std::string& m : modules) {
        if (!one_of(m, {"core_attn", "mla_up_proj", "layernorm", "moe_act",
                        "mlp", "moe", "shared_experts", "up_proj", "norm"})) {
          bad = "unknown module '" + m +
                "' (none, full, or core_attn, mla_up_proj, layernorm, "
                "moe_act, mlp, moe, shared_experts)";
          break;
        }
      }
    } else if (name == "cuda_graph" &&
               !one_of(v,
                       {"none", "full_iteration", "local:transformer_layer"})) {
      std::vector<std::string> scopes = v.starts_with("te:")
                                            ? util::SplitList(v.substr(3), ",;")
                                            : std::vector<std::string>{};
      if (scopes.empty()) {
        bad = "unknown '" + v +
              "' (none, full_iteration, te:<scope;scope>, "
              "local:transformer_layer)";
      }
      for (const std::string& s : scopes) {
        if (!one_of(s,
                    {"attn", "mlp", "moe", "moe_router", "moe_preprocess"})) {
          bad = "unknown TE scope '" + s +
                "' (attn, mlp, moe, moe_router, moe_preprocess)";
          break;
        }
      }
    }
    if (!bad.empty()) return std::unexpected(at.Error(name, bad));
  }
  return {};
}

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

Result<std::vector<SweepSpace::Factor>> ParseProduct(std::string_view side,
                                                     const std::string& rule,
                                                     const Namer& at) {
  constexpr std::string_view kField = "constraints.rule";
  std::vector<SweepSpace::Factor> out;
  size_t start = 0;
  while (true) {
    const size_t star = side.find('*', start);
    const std::string word = Trim(side.substr(
        start, star == std::string_view::npos ? side.npos : star - start));
    SweepSpace::Factor f;
    int64_t value = 0;
    auto [end, ec] =
        std::from_chars(word.data(), word.data() + word.size(), value);
    if (!word.empty() && ec == std::errc() &&
        end == word.data() + word.size()) {
      if (value < 0) {
        return std::unexpected(at.Error(
            kField, "'" + rule + "': numbers must be >= 0, got " + word));
      }
      f.value = value;
    } else if (std::find(std::begin(kRuleNames), std::end(kRuleNames), word) !=
               std::end(kRuleNames)) {
      f.name = word;
    } else {
      return std::unexpected(at.Error(
          kField, "'" + rule + "': unknown term '" + word +
                      "' (a product of tp, cp, ep, etp, pp, vpp, dp, edp, "
                      "mbs, gbs, num_gpus, seq_len and integers)"));
    }
    out.push_back(std::move(f));
    if (star == std::string_view::npos) break;
    start = star + 1;
  }
  return out;
}

Result<SweepSpace::Rule> ParseRule(const std::string& text, const Namer& at) {
  SweepSpace::Rule rule;
  rule.text = Trim(text);
  for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"}) {
    const size_t pos = text.find(op);
    if (pos == std::string::npos) continue;
    rule.op = op;
    auto lhs =
        ParseProduct(std::string_view(text).substr(0, pos), rule.text, at);
    if (!lhs) return std::unexpected(lhs.error());
    auto rhs = ParseProduct(std::string_view(text).substr(pos + op.size()),
                            rule.text, at);
    if (!rhs) return std::unexpected(rhs.error());
    rule.lhs = std::move(*lhs);
    rule.rhs = std::move(*rhs);
    return rule;
  }
  return std::unexpected(at.Error(
      "constraints.rule",
      "'" + rule.text + "': needs a comparison (<=, <, >=, >, ==, !=)"));
}

int64_t Evaluate(const std::vector<SweepSpace::Factor>& product,
                 const scenarios::ResolvedScenario& r) {
  const models::Parallelism& p = r.parallel;
  int64_t out = 1;
  for (const SweepSpace::Factor& f : product) {
    int64_t v = f.value;
    if (f.name == "tp") v = p.tp;
    if (f.name == "cp") v = p.cp;
    if (f.name == "ep") v = p.ep;
    if (f.name == "etp") v = p.etp;
    if (f.name == "pp") v = p.pp;
    if (f.name == "vpp") v = p.vpp;
    if (f.name == "dp") v = p.dp;
    if (f.name == "edp") v = p.edp;
    if (f.name == "mbs") v = r.training.micro_batch_size;
    if (f.name == "gbs") v = r.training.global_batch_size;
    if (f.name == "num_gpus") v = r.spec.num_gpus();
    if (f.name == "seq_len") v = r.training.seq_length;
    out *= v;
  }
  return out;
}

bool Compare(int64_t a, std::string_view op, int64_t b) {
  if (op == "<=") return a <= b;
  if (op == ">=") return a >= b;
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == "<") return a < b;
  return a > b;
}

void Fnv(uint64_t& h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= 0xff;  // separator
  h *= 1099511628211ull;
}

void ApplyRecompute(const std::string& value, scenarios::Scenario& s) {
  scenarios::Recompute& rc = *s.mutable_recompute();
  if (value == "none") {
    rc.Clear();
    return;
  }
  if (value == "full") {
    rc.set_granularity("full");
    rc.clear_modules();
    if (rc.method().empty()) rc.set_method("uniform");
    if (rc.num_layers() == 0) rc.set_num_layers(1);
    return;
  }
  rc.Clear();
  rc.set_granularity("selective");
  for (std::string& m : util::SplitList(value, ",;"))
    rc.add_modules(std::move(m));
}

// The base: base_file's scenario, then the fields written in `base`.
Result<scenarios::Scenario> LoadBase(const scenarios::Sweep& spec,
                                     const std::string& base_dir,
                                     const Namer& at) {
  scenarios::Scenario base;
  if (!spec.base_file().empty()) {
    std::filesystem::path path(spec.base_file());
    if (path.is_relative() && !base_dir.empty()) path = base_dir / path;
    auto loaded = scenarios::LoadScenario(path.string());
    if (!loaded) {
      std::string message = loaded.error().message;
      return std::unexpected(at.Error("base_file", message));
    }
    base = std::move(*loaded);
    if (spec.base().has_recompute()) base.clear_recompute();
    if (spec.base().hierarchical_context_parallel_sizes_size() > 0)
      base.clear_hierarchical_context_parallel_sizes();
  }
  base.MergeFrom(spec.base());
  return base;
}

}  // namespace

Result<SweepSpace> SweepSpace::Build(const scenarios::Sweep& spec,
                                     std::string_view origin,
                                     std::string_view text,
                                     const std::string& base_dir) {
  const Namer at(origin, text);
  SweepSpace space;
  auto base = LoadBase(spec, base_dir, at);
  if (!base) return std::unexpected(base.error());
  space.base_ = std::move(*base);
  const scenarios::Scenario& b = space.base_;
  if (b.model().empty())
    return std::unexpected(at.Error("base.model", "required"));
  if (auto model = models::LoadModel(b.model()); !model)
    return std::unexpected(at.Wrap("base.model", model.error().message));
  if (b.system().empty())
    return std::unexpected(at.Error("base.system", "required"));
  if (auto system = topology::LoadSystem(b.system()); !system)
    return std::unexpected(at.Wrap("base.system", system.error().message));
  if (b.num_gpus() == 0 && !spec.has_num_gpus()) {
    return std::unexpected(
        at.Error("base.num_gpus", "required (here or as the num_gpus axis)"));
  }

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
    space.ints_[a] = std::move(*values);
  }
  space.pipeline_swept_ = spec.has_pp() || spec.has_vpp();

  auto strings = [&](const auto& field, int axis,
                     std::vector<std::string>& out) -> Result<void> {
    const char* name = kAxisNames[axis];
    if (field.empty() && WrittenEmpty(text, name)) {
      return std::unexpected(at.Error(
          name, "empty list: give at least one value or leave it out"));
    }
    out.assign(field.begin(), field.end());
    return CheckWords(out, name, at);
  };
  if (auto ok = strings(spec.recompute(), kRecompute, space.recompute_); !ok)
    return std::unexpected(ok.error());
  if (auto ok = strings(spec.precision(), kPrecision, space.precision_); !ok)
    return std::unexpected(ok.error());
  if (auto ok = strings(spec.dispatcher(), kDispatcher, space.dispatcher_); !ok)
    return std::unexpected(ok.error());
  if (auto ok = strings(spec.cuda_graph(), kCudaGraph, space.cuda_graph_); !ok)
    return std::unexpected(ok.error());
  for (const char* name : {"cpu_offload", "ep_overlap"}) {
    const bool empty = name == std::string_view("cpu_offload")
                           ? spec.cpu_offload().empty()
                           : spec.ep_overlap().empty();
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
  space.cpu_offload_.assign(spec.cpu_offload().begin(),
                            spec.cpu_offload().end());
  space.ep_overlap_.assign(spec.ep_overlap().begin(), spec.ep_overlap().end());

  const scenarios::Constraints& c = spec.constraints();
  if (c.max_gpus_per_model_replica() < 0) {
    return std::unexpected(at.Error(
        "constraints.max_gpus_per_model_replica",
        "must be >= 1, got " + std::to_string(c.max_gpus_per_model_replica())));
  }
  space.max_gpus_per_replica_ = c.max_gpus_per_model_replica();
  for (const std::string& text_rule : c.rule()) {
    auto rule = ParseRule(text_rule, at);
    if (!rule) return std::unexpected(rule.error());
    space.rules_.push_back(std::move(*rule));
  }

  // The size, refused above the limit before anything is enumerated. Each
  // axis holds at most kMaxSweepCandidates values (Expand), so the product
  // of the 16 axes is exact enough in a long double to print.
  long double size = 1;
  int largest = 0;
  std::string factors;
  for (int a = 0; a < kNumAxes; ++a) {
    const size_t n = space.AxisSize(a);
    if (n > space.AxisSize(largest)) largest = a;
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
  space.size_ = static_cast<int64_t>(size);

  uint64_t h = 14695981039346656037ull;
  std::string base_bytes;
  (void)space.base_.SerializeToString(&base_bytes);
  Fnv(h, base_bytes);
  for (int a = 0; a <= kGbs; ++a) {
    for (int32_t v : space.ints_[a]) Fnv(h, std::to_string(v));
    Fnv(h, kAxisNames[a]);
  }
  for (const auto* list : {&space.recompute_, &space.precision_,
                           &space.dispatcher_, &space.cuda_graph_}) {
    for (const std::string& v : *list) Fnv(h, v);
    Fnv(h, "|");
  }
  for (double v : space.cpu_offload_) Fnv(h, std::to_string(v));
  for (int v : space.ep_overlap_) Fnv(h, std::to_string(v));
  Fnv(h, std::to_string(space.max_gpus_per_replica_));
  for (const Rule& r : space.rules_) Fnv(h, r.text);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx",
                static_cast<unsigned long long>(h));
  space.fingerprint_ = hex;
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
      if (!recompute_.empty()) ApplyRecompute(recompute_[i], s);
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
  return s;
}

std::string SweepSpace::Excluded(const scenarios::ResolvedScenario& r) const {
  const models::Parallelism& p = r.parallel;
  if (max_gpus_per_replica_ > 0 && p.tp * p.cp * p.pp > max_gpus_per_replica_) {
    return "constraint max_gpus_per_model_replica " +
           std::to_string(max_gpus_per_replica_) +
           ": TPxCPxPP = " + std::to_string(p.tp * p.cp * p.pp);
  }
  for (const Rule& rule : rules_) {
    const int64_t lhs = Evaluate(rule.lhs, r), rhs = Evaluate(rule.rhs, r);
    if (!Compare(lhs, rule.op, rhs)) {
      return "constraint " + rule.text + ": " + std::to_string(lhs) + " " +
             rule.op + " " + std::to_string(rhs) + " is false";
    }
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
}

}  // namespace moesim::tools
