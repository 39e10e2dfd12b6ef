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

}  // namespace moesim::tools
