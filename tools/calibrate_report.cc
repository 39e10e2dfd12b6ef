#include "tools/calibrate_report.h"

#include <string>
#include <vector>

#include "calibration/nccl_tests.h"
#include "studies/calibration_checks.h"
#include "tools/text_format.h"
#include "topology/system.h"
#include "util/json_write.h"
#include "util/output.h"

namespace moesim::tools {

void AddValidateKernelsFlags(CLI::App& app, ValidateKernelsFlags& f) {
  app.add_option("--gpu", f.gpu,
                 "h100, h200, b200, b300, gb200 or gb300 "
                 "(default: every GPU)");
  app.add_option("--tables", f.tables_dir,
                 "A folder of calibration CSVs to check instead of the "
                 "shipped tables (needs --gpu)");
  app.add_flag("--json", f.json, "Print JSON");
}

util::Result<std::string> RunValidateKernels(const ValidateKernelsFlags& f) {
  if (!f.tables_dir.empty() && f.gpu.empty())
    return std::unexpected(FlagError("--tables", "needs --gpu"));
  auto v = studies::ValidateKernels(
      f.gpu.empty() ? std::vector<std::string>{} : std::vector{f.gpu},
      f.tables_dir);
  if (!v) return std::unexpected(v.error());
  std::string out;
  if (f.json) {
    using Layout = util::JsonWriter::Layout;
    util::JsonWriter w;
    w.BeginObject(Layout::kLines).Key("kinds").BeginArray(Layout::kLines);
    for (const auto& [key, g] : v->groups) {
      w.BeginObject().Key("gpu").String(key.first).Key("kind");
      w.String(key.second).Key("points").Number(g.points);
      w.Key("mape_pct").Number(g.mape_pct()).EndObject();
    }
    w.EndArray().Key("rows").BeginArray(Layout::kLines);
    for (const calibration::KernelCheck& c : v->checks) {
      w.BeginObject().Key("gpu").String(c.gpu).Key("kind").String(c.kind);
      w.Key("impl").String(c.impl).Key("shape").String(c.shape);
      w.Key("measured").Number(c.measured).Key("predicted");
      w.Number(c.predicted).Key("error_pct").Number(c.error_pct);
      w.Key("source").String(c.source).EndObject();
    }
    w.EndArray().EndObject();
    return std::move(w).Take();
  }
  out +=
      "Leave-one-out: each measured row predicted from the others "
      "(TFLOPS; GB/s for memory-bound)\n";
  out += Format("%-6s %-20s %-26s %-48s %9s %9s %7s\n", "gpu", "kind", "impl",
                "shape", "measured", "moesim", "error");
  for (const calibration::KernelCheck& c : v->checks) {
    out +=
        Format("%-6s %-20s %-26s %-48s %9.1f %9.1f %+6.1f%%\n", c.gpu.c_str(),
               c.kind.c_str(), c.impl.c_str(), c.shape.substr(0, 48).c_str(),
               c.measured, c.predicted, c.error_pct);
  }
  out += "\nMAPE by GPU and kind\n";
  for (const auto& [key, g] : v->groups) {
    out += Format("  %-6s %-20s %4d rows  MAPE %5.1f%%\n", key.first.c_str(),
                  key.second.c_str(), g.points, g.mape_pct());
  }
  return out;
}

void AddImportNcclFlags(CLI::App& app, ImportNcclFlags& f) {
  app.add_option("logs", f.logs, "nccl-tests output files")->required();
  app.add_option("--system", f.system, "System the logs were measured on")
      ->required();
  app.add_option("--tier", f.tier,
                 "nvlink (one NVLink domain) or net (across domains)")
      ->required();
  app.add_option("--out", f.out,
                 "Write collectives.csv here (default: stdout)");
  app.add_option("--group-size", f.group_size,
                 "Ranks in the communicator, for a log without rank lines "
                 "(checked against them where it has some)");
}

util::Result<std::string> RunImportNccl(const ImportNcclFlags& f) {
  auto system = topology::LoadSystem(f.system);
  if (!system) return std::unexpected(system.error());
  if (f.tier != "nvlink" && f.tier != "net") {
    return std::unexpected(
        FlagError("--tier", "must be nvlink or net, got '" + f.tier + "'"));
  }
  if (f.group_size && (*f.group_size < 1 || *f.group_size > 1 << 20)) {
    return std::unexpected(FlagError(
        "--group-size",
        "must be in [1, 1048576], got " + std::to_string(*f.group_size)));
  }
  auto rows = studies::ImportNcclLogs(f.logs, *system, f.tier,
                                      f.group_size.value_or(0));
  if (!rows) return std::unexpected(rows.error());
  const std::string csv = calibration::CollectiveRowsToCsv(*rows);
  if (f.out.empty()) return csv;
  if (auto ok = util::WriteOutputFile(f.out, csv, "--out"); !ok)
    return std::unexpected(ok.error());
  return Format("wrote %zu rows to %s\n", rows->size(), f.out.c_str());
}

}  // namespace moesim::tools
