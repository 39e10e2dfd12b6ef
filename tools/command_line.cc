#include "tools/command_line.h"

#include <CLI/CLI.hpp>
#include <sstream>
#include <string>
#include <utility>

#include "studies/scenario_flags.h"
#include "tools/advise.h"
#include "tools/calibrate_fit.h"
#include "tools/calibrate_report.h"
#include "tools/cli_checks.h"
#include "tools/memory_report.h"
#include "tools/run_report.h"
#include "tools/scenario_flags.h"
#include "tools/sweep.h"
#include "tools/topo_report.h"
#include "tools/validate_report.h"
#include "util/message.h"

namespace moesim::tools {
namespace {

constexpr int kInputError = 2;
CommandResult Fail(const std::string& message) {
  return {kInputError, "", "moesim: " + util::ShowableMessage(message) + "\n"};
}

CommandResult Print(std::string report) { return {0, std::move(report), ""}; }

// CLI11's parse errors in moesim's form: "flags: " first, and its
// "Could not convert: --gpus = 99999999999" as "--gpus: '99999999999' is
// out of range (integers up to 2147483647)" (every integer flag is an int).
std::string FlagParseMessage(std::string_view what) {
  constexpr std::string_view kConvert = "Could not convert: ";
  std::string message(what);
  if (message.starts_with(kConvert)) {
    const std::string rest = message.substr(kConvert.size());
    const size_t eq = rest.find(" = ");
    if (eq != std::string::npos) {
      const std::string value = rest.substr(eq + 3);
      const bool integer =
          !value.empty() &&
          value.find_first_not_of("-0123456789") == std::string::npos;
      message = rest.substr(0, eq) + ": '" + util::Excerpt(value) + "' " +
                (integer ? "is out of range (integers up to 2147483647)"
                         : "is not a number");
    }
  }
  return "flags: " + message;
}

// CLI11's help, captured.
CommandResult Help(const CLI::App& app, const CLI::Error& e) {
  std::ostringstream out, err;
  const int status = app.exit(e, out, err);
  return {status, out.str(), err.str()};
}

// Every command's flags and its CLI11 subcommand.
struct Commands {
  RunFlags run_flags;
  CLI::App* run = nullptr;
  ValidateFlags validate_flags;
  CLI::App* validate = nullptr;
  studies::ScenarioFlags memory_flags;
  bool memory_json = false;
  CLI::App* memory = nullptr;
  TopoFlags topo_flags;
  CLI::App* topo = nullptr;
  ValidateKernelsFlags vk_flags;
  CLI::App* validate_kernels = nullptr;
  SweepFlags sweep_flags;
  CLI::App* sweep = nullptr;
  SweepMergeFlags merge_flags;
  CLI::App* sweep_merge = nullptr;
  AdviseFlags advise_flags;
  CLI::App* advise = nullptr;
  CLI::App* calibrate = nullptr;
  ImportNcclFlags nccl_flags;
  CLI::App* import_nccl = nullptr;
  CalibrateFitFlags fit_flags;
  CLI::App* fit = nullptr;
};

// The subcommands and their flags, on `app`.
void AddCommands(CLI::App& app, Commands& c) {
  c.run = app.add_subcommand(
      "run",
      "Replay one training step: step time, TFLOPS/GPU, tokens/s/GPU, "
      "bubble, exposed communication, memory; --trace for Perfetto");
  AddRunFlags(*c.run, c.run_flags);

  c.validate = app.add_subcommand(
      "validate",
      "Replay every measured run of a runs CSV and compare: TFLOPS/GPU, step "
      "time, memory; MAPE by group; --pairs for one-knob A/B pairs");
  AddValidateFlags(*c.validate, c.validate_flags);

  c.memory = app.add_subcommand(
      "memory",
      "Parameters, model FLOPs and per-GPU memory per pipeline stage");
  AddScenarioFlags(*c.memory, c.memory_flags);
  c.memory->add_flag("--json", c.memory_json, "Print JSON instead of tables");

  c.topo = app.add_subcommand(
      "topo",
      "Cluster graph of a system at N GPUs and where each parallel group's "
      "traffic goes");
  AddTopoFlags(*c.topo, c.topo_flags);

  c.validate_kernels = app.add_subcommand(
      "validate-kernels",
      "Predict every measured kernel row with that row left out; MAPE per "
      "GPU and kernel kind");
  AddValidateKernelsFlags(*c.validate_kernels, c.vk_flags);

  c.sweep = app.add_subcommand(
      "sweep",
      "Enumerate a space of layouts, judge each (invalid, excluded, oom), "
      "replay the rest; ranked table, Pareto fronts, CSV, JSON, HTML");
  AddSweepFlags(*c.sweep, c.sweep_flags);
  c.sweep_merge = c.sweep->add_subcommand(
      "merge", "Join the partial results of `sweep --shard K/N`");
  AddSweepMergeFlags(*c.sweep_merge, c.merge_flags);

  c.advise = app.add_subcommand(
      "advise",
      "Walk the optimization workflow: diagnose the binding wall, try its "
      "single-knob fixes in priority order, keep the best; trail and final "
      "layout as flags and Megatron arguments");
  AddAdviseFlags(*c.advise, c.advise_flags);

  c.calibrate =
      app.add_subcommand("calibrate", "Calibration tables: import and fit");
  c.calibrate->require_subcommand(1);
  c.import_nccl = c.calibrate->add_subcommand(
      "import-nccl-tests", "nccl-tests logs to collectives.csv rows");
  AddImportNcclFlags(*c.import_nccl, c.nccl_flags);
  c.fit = c.calibrate->add_subcommand(
      "fit",
      "Fit a calibration profile (named correction factors) to measured "
      "runs; reports cross-validated MAPE beside the training MAPE");
  AddCalibrateFitFlags(*c.fit, c.fit_flags);
}

// The parsed command, run.
CommandResult Dispatch(Commands& c, int argc, char** argv, bool join_mpi) {
  if (c.run->parsed()) {
    auto report = RunCommand(c.run_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (c.validate->parsed()) {
    auto report = RunValidate(c.validate_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (c.memory->parsed()) {
    auto scenario = studies::ResolveFlags(c.memory_flags);
    if (!scenario) return Fail(scenario.error().message);
    const studies::MemoryReport report = studies::BuildMemoryReport(*scenario);
    return Print(c.memory_json ? FormatMemoryJson(*scenario, report)
                               : FormatMemoryText(*scenario, report));
  }
  if (c.topo->parsed()) {
    if (c.topo_flags.check) {
      // Exit 1 when a prediction is off by more than 15% (not an input error).
      auto check = RunTopoCheck(15.0, c.topo_flags.json);
      if (!check) return Fail(check.error().message);
      return {check->all_within ? 0 : 1, check->text, ""};
    }
    auto report = RunTopo(c.topo_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (c.sweep_merge->parsed()) {
    auto report = RunSweepMerge(c.merge_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (c.sweep->parsed()) {
    // Under mpirun (a MOESIM_MPI build) the ranks divide the space; rank 0
    // alone prints, errors included (every rank meets the same one).
    auto group = join_mpi ? JoinSweepGroup(&argc, &argv) : nullptr;
    const bool quiet = group != nullptr && group->rank() != 0;
    auto report = RunSweep(c.sweep_flags, group.get());
    if (!report) {
      return quiet ? CommandResult{kInputError, "", ""}
                   : Fail(report.error().message);
    }
    return Print(*report);
  }
  if (c.advise->parsed()) {
    auto report = RunAdvise(c.advise_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (c.validate_kernels->parsed()) {
    auto report = RunValidateKernels(c.vk_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (c.import_nccl->parsed()) {
    auto report = RunImportNccl(c.nccl_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (c.fit->parsed()) {
    auto report = RunCalibrateFit(c.fit_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  return Fail("no command given; try --help");
}

}  // namespace

CommandResult RunCommandLine(int argc, char** argv, bool join_mpi) {
  CLI::App app{"moesim: discrete-event simulator of long-context MoE training"};
  app.require_subcommand(1);
  Commands c;
  AddCommands(app, c);
  RequireDecimalIntegers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return Help(app, e);
  } catch (const CLI::CallForAllHelp& e) {
    return Help(app, e);
  } catch (const CLI::ParseError& e) {
    // One line naming the flag and what was wrong, as every flag error:
    // "flags: --gpus: ...".
    return Fail(FlagParseMessage(e.what()));
  }
  return Dispatch(c, argc, argv, join_mpi);
}

}  // namespace moesim::tools
