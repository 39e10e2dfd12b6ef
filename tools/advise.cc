#include "tools/advise.h"

#include <algorithm>
#include <set>
#include <utility>

#include "models/memory.h"
#include "models/pipeline_schedules.h"
#include "scenarios/megatron_args.h"
#include "scenarios/pipeline_split.h"
#include "sim/step_stats.h"
#include "tools/cli_checks.h"
#include "tools/memory_report.h"
#include "tools/run_report.h"
#include "tools/scenario_flags.h"
#include "tools/text_format.h"
#include "util/csv.h"
#include "util/json_write.h"

namespace moesim::tools {

namespace {

using util::Result;

// The final layout as one Megatron-LM argument list, architecture included:
// pasted into --megatron-args without --model it resolves to the same run.
std::string LaunchArgs(const scenarios::ResolvedScenario& s) {
  return scenarios::FormatArchitectureArgs(s.model) + " " +
         scenarios::FormatMegatronArgs(s.spec);
}

void WriteStep(util::JsonWriter& w, const studies::AdviseStep& s) {
  w.BeginObject();
  w.Key("change").String(s.change).Key("wall").String(s.wall);
  w.Key("tokens_per_sec_per_gpu").Number(s.tokens_per_sec_per_gpu);
  w.Key("tflops_per_gpu").Number(s.tflops_per_gpu).Key("gain_pct");
  w.Number(s.gain_pct);
  w.Key("peak_memory_gib").Number(s.peak_memory_gib).Key("fits").Bool(s.fits);
  w.Key("candidates").Number(s.candidates).Key("invalid").Number(s.invalid);
  w.EndObject();
}

std::string StepRow(int n, const studies::AdviseStep& s) {
  return Format("%4d  %-44s %-14s %12.1f %10.1f %+8.2f %9.1f  %s\n", n,
                s.change.c_str(), s.wall.c_str(), s.tokens_per_sec_per_gpu,
                s.tflops_per_gpu, s.gain_pct, s.peak_memory_gib,
                s.fits ? "fits" : "OOM");
}

// Against the start, or when the start does not fit (its replayed speed is
// not reachable) against the first layout that fits; 0 when none fits.
double TotalGainPct(const studies::AdviseResult& r) {
  const studies::AdviseStep* base = r.start.fits ? &r.start : nullptr;
  for (const studies::AdviseStep& s : r.steps) {
    if (base == nullptr && s.fits) base = &s;
  }
  if (base == nullptr || base->tokens_per_sec_per_gpu <= 0) return 0;
  return 100 *
         (r.final_tokens_per_sec_per_gpu / base->tokens_per_sec_per_gpu - 1);
}

}  // namespace

void AddAdviseFlags(CLI::App& app, AdviseFlags& flags) {
  AddScenarioFlags(app, flags.scenario);
  app.add_flag("--json", flags.json, "Print JSON instead of a table");
  app.add_option("--max-steps", flags.max_steps,
                 "Most changes to keep (default 8)")
      ->check(IntInRange(0, 1000000));
  app.add_option("--max-candidates", flags.max_candidates,
                 "Most candidates replayed per step, in priority order "
                 "(default 0: all)")
      ->check(IntInRange(0, 1000000));
}

std::string FormatScenarioFlags(const scenarios::Scenario& s) {
  const scenarios::Layout& l = s.layout();
  std::string out = Format(
      "--model %s --system %s --gpus %d --seq %d --num-layers %d --tp %d "
      "--cp %d --ep %d --etp %d --pp %d --vpp %d",
      studies::ShellWord(s.model()).c_str(),
      studies::ShellWord(s.system()).c_str(), s.num_gpus(), s.seq_length(),
      s.num_layers(), l.tensor_model_parallel_size(), l.context_parallel_size(),
      l.expert_model_parallel_size(), l.expert_tensor_parallel_size(),
      l.pipeline_model_parallel_size(),
      l.virtual_pipeline_model_parallel_size());
  if (!l.pipeline_model_parallel_layout().empty())
    out += " --pp-layout " +
           studies::ShellWord(l.pipeline_model_parallel_layout());
  out +=
      Format(" --mbs %d --gbs %d", l.micro_batch_size(), l.global_batch_size());
  out += " --precision " + studies::ShellWord(s.precision()) +
         " --dispatcher " + studies::ShellWord(s.dispatcher()) + " --routing " +
         studies::ShellWord(s.routing()) + " --recompute " +
         studies::ShellWord(studies::RecomputeText(s.recompute())) +
         " --cuda-graph " + studies::ShellWord(s.cuda_graph());
  out += " --cpu-offload " + Format("%g", s.optimizer_offload_fraction());
  out += Format(" --ep-overlap %d", s.overlap_moe_expert_parallel_comm());
  out += " --cp-comm-type " + studies::ShellWord(s.cp_comm_type());
  if (s.hierarchical_context_parallel_sizes_size() > 0) {
    std::vector<std::string> sizes;
    for (int size : s.hierarchical_context_parallel_sizes())
      sizes.push_back(std::to_string(size));
    out += " --hierarchical-cp-sizes " + util::JoinList(sizes, ",");
  }
  // Named only when it is not Megatron's 1F1B, the default.
  const std::string_view one_f_one_b =
      models::TraitsOf(models::PipelineScheduleKind::kOneFOneB).word;
  if (s.pipeline_schedule() != one_f_one_b)
    out += " --pipeline-schedule " + studies::ShellWord(s.pipeline_schedule());
  return out;
}

std::string FormatAdviseText(const studies::AdviseResult& r) {
  const scenarios::ResolvedScenario& f = r.final_layout;
  std::string out =
      Format("advise: %s on %d x %s, seq %d\n\n", f.model.name().c_str(),
             f.spec.num_gpus(), f.system.name().c_str(), f.spec.seq_length());
  out += Format("%4s  %-44s %-14s %12s %10s %8s %9s  %s\n", "step", "change",
                "wall before", "tokens/s/GPU", "TFLOPS/GPU", "gain %",
                "peak GiB", "memory");
  out += StepRow(0, r.start);
  for (size_t i = 0; i < r.steps.size(); ++i)
    out += StepRow(static_cast<int>(i + 1), r.steps[i]);
  int candidates = 0, invalid = 0;
  for (const studies::AdviseStep& s : r.steps) {
    candidates += s.candidates;
    invalid += s.invalid;
  }
  out += Format(
      "\n%zu change(s) kept; %d candidate(s) proposed in kept steps, %d "
      "refused by the scenario rules\n",
      r.steps.size(), candidates, invalid);
  out += Format(
      "final layout (step %d, the fastest that fits): binding wall %s, "
      "%.1f tokens/s/GPU, %+.2f %% over %s\n",
      r.final_step, r.final_wall.c_str(), r.final_tokens_per_sec_per_gpu,
      TotalGainPct(r),
      r.start.fits ? "the start" : "the first layout that fits");
  out += LayoutLine(f) + "\n";
  out += "moesim flags:  " + FormatScenarioFlags(f.spec) + "\n";
  out += "megatron args: " + LaunchArgs(f) + "\n";
  // Megatron-LM runs 1F1B only: the zero-bubble authors' fork adds theirs.
  if (f.training.pipeline_schedule != models::PipelineScheduleKind::kOneFOneB) {
    out += "               (pipeline schedule " + f.spec.pipeline_schedule() +
           ": no Megatron-LM argument; these arguments run 1f1b)\n";
  }
  return out;
}

std::string FormatAdviseJson(const studies::AdviseResult& r) {
  using Layout = util::JsonWriter::Layout;
  const scenarios::ResolvedScenario& f = r.final_layout;
  util::JsonWriter w;
  w.BeginObject(Layout::kLines);
  WriteStep(w.Key("start"), r.start);
  w.Key("steps").BeginArray(Layout::kLines);
  for (const studies::AdviseStep& step : r.steps) WriteStep(w, step);
  w.EndArray();
  w.Key("final").BeginObject();
  w.Key("flags").String(FormatScenarioFlags(f.spec));
  w.Key("megatron_args").String(LaunchArgs(f)).Key("wall").String(r.final_wall);
  w.Key("tokens_per_sec_per_gpu").Number(r.final_tokens_per_sec_per_gpu);
  w.Key("tflops_per_gpu").Number(r.final_tflops_per_gpu);
  w.Key("peak_memory_gib").Number(r.final_peak_memory_gib);
  w.Key("fits").Bool(r.final_fits).Key("step").Number(r.final_step);
  w.Key("gain_pct_total").Number(TotalGainPct(r)).EndObject().EndObject();
  return std::move(w).Take();
}

Result<std::string> RunAdvise(const AdviseFlags& flags) {
  auto scenario = studies::ResolveFlags(flags.scenario);
  if (!scenario) return std::unexpected(scenario.error());
  auto result =
      studies::Advise(*scenario, flags.max_steps, flags.max_candidates);
  if (!result) return std::unexpected(result.error());
  return flags.json ? FormatAdviseJson(*result) : FormatAdviseText(*result);
}

}  // namespace moesim::tools
