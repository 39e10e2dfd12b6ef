// The `moesim run` command line that sets exactly the given scenario flags
// (studies/scenario_flags.h: FlagsCommandLine, ShellWord).
#include <charconv>
#include <string>
#include <string_view>

#include "studies/scenario_flags.h"

namespace moesim::studies {

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
  text("--pipeline-schedule", f.pipeline_schedule);
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

}  // namespace moesim::studies
