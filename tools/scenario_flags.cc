#include "tools/scenario_flags.h"

#include <string>

#include "scenarios/vocabulary.h"

namespace moesim::tools {

void AddScenarioBaseFlags(CLI::App& app, studies::ScenarioFlags& flags) {
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
  app.add_option("--pipeline-schedule", flags.pipeline_schedule,
                 "Pipeline schedule: " +
                     scenarios::JoinWords(scenarios::PipelineScheduleWords()) +
                     " (zb-h1: zero bubble, weight gradients split off the "
                     "backward)");
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

void AddScenarioFlags(CLI::App& app, studies::ScenarioFlags& flags) {
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

}  // namespace moesim::tools
