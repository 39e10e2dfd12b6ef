// moesim: the command line. Every util::Error and every flag-parsing error
// becomes one line on stderr (control characters escaped, length bounded:
// util/message.h) and exit code 2; a report that cannot be written to stdout
// (a closed pipe, a full disk) exits 1 with the reason; a valid scenario that
// does not fit in memory is a verdict printed on stdout with exit code 0.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <new>

#include "tools/advise.h"
#include "tools/calibrate_fit.h"
#include "tools/calibrate_report.h"
#include "tools/memory_report.h"
#include "tools/run_report.h"
#include "tools/scenario_flags.h"
#include "tools/sweep.h"
#include "tools/topo_report.h"
#include "tools/validate_report.h"
#include "util/allocator.h"
#include "util/message.h"
#include "util/output.h"

namespace {

constexpr int kInputError = 2;
// stdout could not take the report (a closed pipe, a full disk): not an
// input error, but no success either.
constexpr int kOutputError = 1;

int Fail(const std::string& message) {
  std::cerr << "moesim: " << moesim::util::ShowableMessage(message) << "\n";
  return kInputError;
}

// Prints a command's report; exit 0 only when all of it reached stdout.
int Print(const std::string& report) {
  if (auto ok = moesim::util::WriteStdout(report); !ok) {
    std::cerr << "moesim: " << ok.error().message << "\n";
    return kOutputError;
  }
  return 0;
}

// Integer flags take decimal digits only: CLI11 would read --gpus 0x10 as
// 16 and --gpus 010 as octal 8, which no user means.
void RequireDecimalIntegers(CLI::App& app) {
  static const CLI::Validator kDecimal(
      [](std::string& value) -> std::string {
        const size_t start = !value.empty() && value[0] == '-' ? 1 : 0;
        const bool digits =
            value.size() > start &&
            value.find_first_not_of("0123456789", start) == std::string::npos;
        const bool leading_zero =
            value.size() > start + 1 && value[start] == '0';
        if (digits && !leading_zero) return "";
        return "'" + moesim::util::Excerpt(value) +
               "' is not a decimal integer";
      },
      "DECIMAL");
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type.starts_with("INT") || type.starts_with("UINT"))
      option->check(kDecimal);
  }
  for (CLI::App* sub : app.get_subcommands({})) RequireDecimalIntegers(*sub);
}

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
      message = rest.substr(0, eq) + ": '" + moesim::util::Excerpt(value) +
                "' " +
                (integer ? "is out of range (integers up to 2147483647)"
                         : "is not a number");
    }
  }
  return "flags: " + message;
}

}  // namespace

int Main(int argc, char** argv) {
  moesim::util::InstallOutputSignalHandlers();
  CLI::App app{"moesim: discrete-event simulator of long-context MoE training"};
  app.require_subcommand(1);

  moesim::tools::RunFlags run_flags;
  CLI::App* run = app.add_subcommand(
      "run",
      "Replay one training step: step time, TFLOPS/GPU, tokens/s/GPU, "
      "bubble, exposed communication, memory; --trace for Perfetto");
  moesim::tools::AddRunFlags(*run, run_flags);

  moesim::tools::ValidateFlags validate_flags;
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Replay every measured run of a runs CSV and compare: TFLOPS/GPU, step "
      "time, memory; MAPE by group; --pairs for one-knob A/B pairs");
  moesim::tools::AddValidateFlags(*validate, validate_flags);

  moesim::tools::ScenarioFlags memory_flags;
  bool memory_json = false;
  CLI::App* memory = app.add_subcommand(
      "memory",
      "Parameters, model FLOPs and per-GPU memory per pipeline stage");
  moesim::tools::AddScenarioFlags(*memory, memory_flags);
  memory->add_flag("--json", memory_json, "Print JSON instead of tables");

  moesim::tools::TopoFlags topo_flags;
  CLI::App* topo = app.add_subcommand(
      "topo",
      "Cluster graph of a system at N GPUs and where each parallel group's "
      "traffic goes");
  moesim::tools::AddTopoFlags(*topo, topo_flags);

  moesim::tools::ValidateKernelsFlags vk_flags;
  CLI::App* validate_kernels = app.add_subcommand(
      "validate-kernels",
      "Predict every measured kernel row with that row left out; MAPE per "
      "GPU and kernel kind");
  moesim::tools::AddValidateKernelsFlags(*validate_kernels, vk_flags);

  moesim::tools::SweepFlags sweep_flags;
  CLI::App* sweep = app.add_subcommand(
      "sweep",
      "Enumerate a space of layouts, judge each (invalid, excluded, oom), "
      "replay the rest; ranked table, Pareto fronts, CSV, JSON, HTML");
  moesim::tools::AddSweepFlags(*sweep, sweep_flags);
  moesim::tools::SweepMergeFlags merge_flags;
  CLI::App* sweep_merge = sweep->add_subcommand(
      "merge", "Join the partial results of `sweep --shard K/N`");
  moesim::tools::AddSweepMergeFlags(*sweep_merge, merge_flags);

  moesim::tools::AdviseFlags advise_flags;
  CLI::App* advise = app.add_subcommand(
      "advise",
      "Walk the optimization workflow: diagnose the binding wall, try its "
      "single-knob fixes in priority order, keep the best; trail and final "
      "layout as flags and Megatron arguments");
  moesim::tools::AddAdviseFlags(*advise, advise_flags);

  CLI::App* calibrate =
      app.add_subcommand("calibrate", "Calibration tables: import and fit");
  calibrate->require_subcommand(1);
  moesim::tools::ImportNcclFlags nccl_flags;
  CLI::App* import_nccl = calibrate->add_subcommand(
      "import-nccl-tests", "nccl-tests logs to collectives.csv rows");
  moesim::tools::AddImportNcclFlags(*import_nccl, nccl_flags);
  moesim::tools::CalibrateFitFlags fit_flags;
  CLI::App* fit = calibrate->add_subcommand(
      "fit",
      "Fit a calibration profile (named correction factors) to measured "
      "runs; reports cross-validated MAPE beside the training MAPE");
  moesim::tools::AddCalibrateFitFlags(*fit, fit_flags);

  RequireDecimalIntegers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line naming the flag and what was wrong, as every flag error:
    // "flags: --gpus: ...".
    return Fail(FlagParseMessage(e.what()));
  }

  if (run->parsed()) {
    auto report = moesim::tools::RunCommand(run_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (validate->parsed()) {
    auto report = moesim::tools::RunValidate(validate_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (memory->parsed()) {
    auto scenario = moesim::tools::ResolveFlags(memory_flags);
    if (!scenario) return Fail(scenario.error().message);
    const moesim::tools::MemoryReport report =
        moesim::tools::BuildMemoryReport(*scenario);
    return Print(memory_json
                     ? moesim::tools::FormatMemoryJson(*scenario, report)
                     : moesim::tools::FormatMemoryText(*scenario, report));
  }
  if (topo->parsed()) {
    if (topo_flags.check) {
      // Exit 1 when a prediction is off by more than 15% (not an input error).
      auto check = moesim::tools::RunTopoCheck(15.0);
      if (!check) return Fail(check.error().message);
      if (const int rc = Print(check->text); rc != 0) return rc;
      return check->all_within ? 0 : 1;
    }
    auto report = moesim::tools::RunTopo(topo_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (sweep_merge->parsed()) {
    auto report = moesim::tools::RunSweepMerge(merge_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (sweep->parsed()) {
    // Under mpirun (a MOESIM_MPI build) the ranks divide the space; rank 0
    // alone prints, errors included (every rank meets the same one).
    auto group = moesim::tools::JoinSweepGroup(&argc, &argv);
    const bool quiet = group != nullptr && group->rank() != 0;
    auto report = moesim::tools::RunSweep(sweep_flags, group.get());
    if (!report) return quiet ? kInputError : Fail(report.error().message);
    return Print(*report);
  }
  if (advise->parsed()) {
    auto report = moesim::tools::RunAdvise(advise_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (validate_kernels->parsed()) {
    auto report = moesim::tools::RunValidateKernels(vk_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (import_nccl->parsed()) {
    auto report = moesim::tools::RunImportNccl(nccl_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  if (fit->parsed()) {
    auto report = moesim::tools::RunCalibrateFit(fit_flags);
    if (!report) return Fail(report.error().message);
    return Print(*report);
  }
  return Fail("no command given; try --help");
}

// Out of memory (a machine or `ulimit -v` smaller than the run needs) is one
// line and exit 1, not an uncaught std::bad_alloc; worker threads carry it
// here (util/thread_errors.h).
int main(int argc, char** argv) {
  moesim::util::TuneAllocator();
  try {
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    // Not an input error (exit 2): the same input runs on a larger machine.
    std::fputs(
        "moesim: out of memory: the run needs more than this process may "
        "allocate (ulimit -v, the machine); try a smaller step (--gbs), "
        "fewer threads (-j) or no --trace\n",
        stderr);
    return kOutputError;
  }
}
