#include "tools/scenario_flags.h"

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
#include "tools/text_format.h"
#include "util/csv.h"
#include "util/textproto.h"

namespace moesim::tools {
namespace {

// A double as %g prints it ("1.5", not std::to_string's "1.500000").
std::string FormatG(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

using util::Result;

// An integer flag, when given, must be >= min.
Result<void> AtLeast(const std::optional<int>& value, std::string_view flag,
                     int min) {
  if (value && *value < min) {
    return std::unexpected(FlagError(flag, "must be >= " + std::to_string(min) +
                                               ", got " +
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
        FlagError(kFlag, "needs comma-separated sizes, e.g. 8,4"));
  }
  std::vector<int> sizes;
  for (const std::string& item : items) {
    int64_t size = 0;
    auto [end, ec] =
        std::from_chars(item.data(), item.data() + item.size(), size);
    if (ec != std::errc() || end != item.data() + item.size() ||
        size > INT32_MAX) {
      return std::unexpected(FlagError(
          kFlag, "'" + item + "' is not an integer (sizes like 8,4)"));
    }
    if (size < 1) {
      return std::unexpected(
          FlagError(kFlag, "every size must be >= 1, got " + item));
    }
    sizes.push_back(static_cast<int>(size));
  }
  return sizes;
}

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
    return std::unexpected(
        FlagError("--ep-overlap",
                  "must be 0 or 1, got " + std::to_string(*f.ep_overlap)));
  }
  if (f.offload_overlap && *f.offload_overlap != 0 && *f.offload_overlap != 1) {
    return std::unexpected(
        FlagError("--offload-overlap",
                  "must be 0 or 1, got " + std::to_string(*f.offload_overlap)));
  }
  if (f.manual_gc && *f.manual_gc != 0 && *f.manual_gc != 1) {
    return std::unexpected(FlagError(
        "--manual-gc", "must be 0 or 1, got " + std::to_string(*f.manual_gc)));
  }
  if (f.batch_p2p_sync && *f.batch_p2p_sync != 0 && *f.batch_p2p_sync != 1) {
    return std::unexpected(
        FlagError("--batch-p2p-sync",
                  "must be 0 or 1, got " + std::to_string(*f.batch_p2p_sync)));
  }
  if (f.cpu_offload && !(*f.cpu_offload >= 0 && *f.cpu_offload <= 1)) {
    return std::unexpected(FlagError(
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

// --recompute: "none", "full", or modules separated by ',' or ';'.
Result<void> ApplyRecompute(const std::string& value,
                            scenarios::Scenario& spec) {
  auto setting = scenarios::ParseRecomputeSetting(value);
  if (!setting)
    return std::unexpected(FlagError("--recompute", setting.error().message));
  scenarios::ApplyRecomputeSetting(*setting, *spec.mutable_recompute());
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

}  // namespace

void AddScenarioBaseFlags(CLI::App& app, ScenarioFlags& flags) {
  app.add_option("--model", flags.model,
                 "Zoo model name, model .textproto or HF config.json");
  app.add_option("--system", flags.system,
                 "Shipped system name (dgx-h100, ...) or .textproto");
  app.add_option("--pp-layout", flags.pp_layout,
                 "Megatron pipeline layout string, e.g. \"Et|(tt|)*30mL\"");
  app.add_option("--num-layers", flags.num_layers,
                 "Override the model's decoder depth");
  app.add_option("--routing", flags.routing,
                 "force_balanced, dropless_natural, tokendrop");
  app.add_option("--routing-skew", flags.routing_skew,
                 "dropless_natural routing: Zipf exponent of tokens per "
                 "expert (0 = uniform)");
  app.add_option("--routing-histogram", flags.routing_histogram,
                 "dropless_natural routing: a file of tokens per expert, in "
                 "expert order (commas, spaces or newlines; # comments)");
  app.add_option("--offload-overlap", flags.offload_overlap,
                 "1 = overlap_cpu_optimizer_d2h_h2d");
  app.add_option("--manual-gc", flags.manual_gc,
                 "1 = manual_gc (default), 0 = Python's automatic GC");
  app.add_option("--batch-p2p-sync", flags.batch_p2p_sync,
                 "1 = Megatron's batch_p2p_sync (default): a device "
                 "synchronize after each pipeline exchange without VPP");
  app.add_option("--cp-comm-type", flags.cp_comm_type,
                 "Context-parallel communication: p2p (default), a2a, "
                 "allgather, a2a+p2p");
  app.add_option("--hierarchical-cp-sizes", flags.hierarchical_cp_sizes,
                 "a2a+p2p group sizes, inner (a2a) first, e.g. 8,4; their "
                 "product is --cp");
  app.add_option("--megatron-args", flags.megatron_args,
                 "Megatron-LM argument string (applied before the flags); "
                 "with the architecture flags it defines the model");
  app.add_option("--megatron-args-file", flags.megatron_args_file,
                 "A launch script (bash) or Megatron model_config.yaml whose "
                 "training arguments define the run (before "
                 "--megatron-args)");
  app.add_option("--var", flags.vars,
                 "NAME=VALUE: a shell variable of --megatron-args-file "
                 "(repeatable; wins over the file's own value)");
}

void AddScenarioFlags(CLI::App& app, ScenarioFlags& flags) {
  app.add_option("scenario", flags.scenario_file,
                 "Scenario .textproto (optional; flags override its fields)");
  AddScenarioBaseFlags(app, flags);
  app.add_option("--gpus", flags.gpus, "Number of GPUs");
  app.add_option("--seq", flags.seq, "Sequence length (default 4096)");
  app.add_option("--mbs", flags.mbs, "Micro-batch size (default 1)");
  app.add_option("--gbs", flags.gbs, "Global batch size (default MBS x DP)");
  app.add_option("--tp", flags.tp, "Tensor-parallel size");
  app.add_option("--cp", flags.cp, "Context-parallel size");
  app.add_option("--ep", flags.ep, "Expert-parallel size");
  app.add_option("--etp", flags.etp, "Expert tensor-parallel size");
  app.add_option("--pp", flags.pp, "Pipeline-parallel size");
  app.add_option("--vpp", flags.vpp,
                 "Virtual pipeline stages per pipeline rank");
  app.add_option("--precision", flags.precision,
                 scenarios::JoinWords(scenarios::PrecisionWords()));
  app.add_option("--dispatcher", flags.dispatcher,
                 scenarios::JoinWords(scenarios::DispatcherWords()));
  app.add_option("--recompute", flags.recompute,
                 "none, full, or MCore modules separated by ',' or ';' (" +
                     scenarios::JoinWords(scenarios::RecomputeModules()) + ")");
  app.add_option(
      "--cuda-graph", flags.cuda_graph,
      "none, full_iteration, te:<scope;scope>, local:transformer_layer");
  app.add_option("--cpu-offload", flags.cpu_offload,
                 "Optimizer CPU offload fraction, 0..1");
  app.add_option("--ep-overlap", flags.ep_overlap,
                 "1 = overlap_moe_expert_parallel_comm");
}

namespace {

// `value` as one shell word: bare when it holds only characters the shell
// leaves alone, otherwise single-quoted (a ' inside becomes '\'').
}  // namespace

std::string ShellWord(const std::string& value) {
  const bool bare =
      !value.empty() && value.find_first_not_of(
                            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU"
                            "VWXYZ0123456789._-/:,=+@%") == std::string::npos;
  if (bare) return value;
  std::string out = "'";
  for (char c : value)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Result<std::vector<double>> ReadRoutingHistogram(const std::string& file) {
  auto text = util::ReadFile(file);
  if (!text) return std::unexpected(text.error());
  std::vector<double> counts;
  int line = 0;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    ++line;
    std::string_view row(text->data() + start, end - start);
    row = row.substr(0, row.find('#'));
    size_t at = 0;
    while (at < row.size()) {
      const size_t from = row.find_first_not_of(" \t\r,", at);
      if (from == std::string_view::npos) break;
      size_t to = row.find_first_of(" \t\r,", from);
      if (to == std::string_view::npos) to = row.size();
      const std::string_view token = row.substr(from, to - from);
      double value = 0;
      auto [ptr, ec] =
          std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || ptr != token.data() + token.size()) {
        // A short, printable token is quoted; anything else is described,
        // so a wrong file (/proc/self/environ) is not echoed.
        const bool showable =
            token.size() <= 24 &&
            std::all_of(token.begin(), token.end(),
                        [](char c) { return c > 0x20 && c < 0x7F; });
        return util::Fail(
            file + ":" + std::to_string(line) + ": moe_routing_histogram: " +
            (showable
                 ? "'" + std::string(token) + "'"
                 : "a token of " + std::to_string(token.size()) + " bytes") +
            " is not a number");
      }
      counts.push_back(value);
      at = to;
    }
    start = end + 1;
  }
  if (counts.empty()) {
    return util::Fail(file + ": moe_routing_histogram: no values");
  }
  return counts;
}

std::string FlagsCommandLine(const ScenarioFlags& f) {
  std::string out;
  auto word = [&](const std::string& w) {
    out += (out.empty() ? "" : " ") + w;
  };
  auto text = [&](std::string_view flag, const std::optional<std::string>& v) {
    if (v) word(std::string(flag) + " " + ShellWord(*v));
  };
  auto integer = [&](std::string_view flag, const std::optional<int>& v) {
    if (v) word(std::string(flag) + " " + std::to_string(*v));
  };
  auto real = [&](std::string_view flag, const std::optional<double>& v) {
    if (!v) return;
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *v);  // round-trips
    word(std::string(flag) + " " + std::string(buf, end));
  };
  if (!f.scenario_file.empty()) word(ShellWord(f.scenario_file));
  text("--model", f.model);
  text("--system", f.system);
  text("--pp-layout", f.pp_layout);
  integer("--num-layers", f.num_layers);
  text("--routing", f.routing);
  real("--routing-skew", f.routing_skew);
  text("--routing-histogram", f.routing_histogram);
  integer("--offload-overlap", f.offload_overlap);
  integer("--manual-gc", f.manual_gc);
  integer("--batch-p2p-sync", f.batch_p2p_sync);
  text("--cp-comm-type", f.cp_comm_type);
  text("--hierarchical-cp-sizes", f.hierarchical_cp_sizes);
  text("--megatron-args-file", f.megatron_args_file);
  for (const std::string& v : f.vars) word("--var " + ShellWord(v));
  text("--megatron-args", f.megatron_args);
  integer("--gpus", f.gpus);
  integer("--seq", f.seq);
  integer("--mbs", f.mbs);
  integer("--gbs", f.gbs);
  integer("--tp", f.tp);
  integer("--cp", f.cp);
  integer("--ep", f.ep);
  integer("--etp", f.etp);
  integer("--pp", f.pp);
  integer("--vpp", f.vpp);
  text("--precision", f.precision);
  text("--dispatcher", f.dispatcher);
  text("--recompute", f.recompute);
  text("--cuda-graph", f.cuda_graph);
  real("--cpu-offload", f.cpu_offload);
  integer("--ep-overlap", f.ep_overlap);
  return out;
}

// The dotted paths of the fields whose values differ between `a` and `b`
// (messages of one type), singular messages entered field by field.
void ChangedPaths(const google::protobuf::Message& a,
                  const google::protobuf::Message& b, const std::string& prefix,
                  std::vector<std::string>& out) {
  using google::protobuf::FieldDescriptor;
  using google::protobuf::TextFormat;
  const google::protobuf::Descriptor* d = a.GetDescriptor();
  const google::protobuf::Reflection* ra = a.GetReflection();
  const google::protobuf::Reflection* rb = b.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path =
        prefix.empty() ? std::string(f->name()) : prefix + "." + f->name();
    if (!f->is_repeated() &&
        f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      ChangedPaths(ra->GetMessage(a, f), rb->GetMessage(b, f), path, out);
      continue;
    }
    auto value = [f](const google::protobuf::Message& m, int index) {
      std::string text;
      TextFormat::PrintFieldValueToString(m, f, index, &text);
      return text;
    };
    bool same;
    if (f->is_repeated()) {
      same = ra->FieldSize(a, f) == rb->FieldSize(b, f);
      for (int k = 0; same && k < ra->FieldSize(a, f); ++k)
        same = value(a, k) == value(b, k);
    } else {
      same = (!f->has_presence() || ra->HasField(a, f) == rb->HasField(b, f)) &&
             value(a, -1) == value(b, -1);
    }
    if (!same) out.push_back(path);
  }
}

Result<FlagScenario> ScenarioFromFlags(const ScenarioFlags& flags) {
  if (auto ok = CheckRanges(flags); !ok) return std::unexpected(ok.error());
  FlagScenario out;
  if (!flags.scenario_file.empty()) {
    auto read = util::ReadFile(flags.scenario_file);
    if (!read) return std::unexpected(read.error());
    out.text = std::move(*read);
    auto parsed = scenarios::ParseScenario(out.text, flags.scenario_file);
    if (!parsed) return std::unexpected(parsed.error());
    out.spec = std::move(*parsed);
  }
  const scenarios::Scenario file_spec = out.spec;
  if (flags.megatron_args_file) {
    std::map<std::string, std::string> vars;
    for (const std::string& v : flags.vars) {
      const size_t eq = v.find('=');
      if (eq == 0 || eq == std::string::npos) {
        return util::Fail("flags: --var: '" + v.substr(0, 60) +
                          "' is not NAME=VALUE");
      }
      vars[v.substr(0, eq)] = v.substr(eq + 1);
    }
    auto read = util::ReadFile(*flags.megatron_args_file);
    if (!read) return std::unexpected(read.error());
    auto args =
        scenarios::ExtractMegatronArgs(*read, *flags.megatron_args_file, vars);
    if (!args) return std::unexpected(args.error());
    auto applied = scenarios::ApplyMegatronArgs(*args, out.spec);
    if (!applied) {
      // "--megatron-args: <flag>: <rule>" names the file instead.
      std::string message = applied.error().message;
      constexpr std::string_view kArgs = "--megatron-args: ";
      if (message.starts_with(kArgs)) message.erase(0, kArgs.size());
      return util::Fail(*flags.megatron_args_file + ": " + message);
    }
    out.warnings = std::move(*applied);
    out.any_flag = true;
  } else if (!flags.vars.empty()) {
    return util::Fail("flags: --var: needs --megatron-args-file");
  }
  if (flags.megatron_args) {
    auto applied = scenarios::ApplyMegatronArgs(*flags.megatron_args, out.spec);
    if (!applied)
      return std::unexpected(util::Error{"flags: " + applied.error().message});
    out.warnings.insert(out.warnings.end(), applied->begin(), applied->end());
    out.any_flag = true;
  }
  // A launch input that defines the model (a file, or an argument list
  // with no model named) is a Megatron-LM launch: its defaults apply.
  if (out.spec.defaults().empty() &&
      (flags.megatron_args_file ||
       (flags.megatron_args && out.spec.model().empty() && !flags.model)))
    out.spec.set_defaults("megatron-lm");
  auto any_flag = ApplyFlags(flags, out.spec);
  if (!any_flag) return std::unexpected(any_flag.error());
  out.any_flag = out.any_flag || *any_flag;
  if (!flags.scenario_file.empty() && out.any_flag)
    ChangedPaths(file_spec, out.spec, "", out.flag_paths);
  return out;
}

Result<scenarios::ResolvedScenario> ResolveFlags(const ScenarioFlags& flags) {
  auto built = ScenarioFromFlags(flags);
  if (!built) return std::unexpected(built.error());
  // A file's fields are cited file:line, the fields the command line set
  // name their flag; without a file the origin is "flags".
  auto resolved = !flags.scenario_file.empty()
                      ? scenarios::Resolve(built->spec, flags.scenario_file,
                                           built->text, built->flag_paths)
                      : scenarios::Resolve(built->spec, "flags");
  if (!resolved) return resolved;
  resolved->warnings.insert(resolved->warnings.begin(), built->warnings.begin(),
                            built->warnings.end());
  return resolved;
}

}  // namespace moesim::tools
