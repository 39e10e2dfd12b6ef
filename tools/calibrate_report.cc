#include "tools/calibrate_report.h"

#include <cmath>
#include <fstream>
#include <map>

#include "calibration/cost_model.h"
#include "calibration/nccl_tests.h"
#include "calibration/tables.h"
#include "tools/text_format.h"
#include "topology/system.h"
#include "util/output.h"
#include "util/textproto.h"

namespace moesim::tools {
namespace {

using calibration::KernelCheck;

// Peaks of the shipped system whose gpu.calibration is `gpu`.
util::Result<calibration::GpuPeaks> PeaksFor(const std::string& gpu) {
  for (const std::string& name : topology::SystemNames()) {
    auto s = topology::LoadSystem(name);
    if (!s) return std::unexpected(s.error());
    if (s->gpu().calibration() != gpu) continue;
    const topology::Gpu& g = s->gpu();
    return calibration::GpuPeaks{g.bf16_dense_tflops(), g.fp8_dense_tflops(),
                                 g.fp4_dense_tflops(),  g.tf32_dense_tflops(),
                                 g.hbm_tbps(),          g.sm_count()};
  }
  return util::Fail("flags: --gpu: unknown GPU '" + gpu +
                    "' (known: h100, h200, b200, b300, gb200, gb300)");
}

struct Group {
  int points = 0;
  double sum_abs = 0;
};

}  // namespace

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
  std::vector<std::string> gpus =
      f.gpu.empty() ? calibration::TableGpus() : std::vector{f.gpu};
  std::vector<KernelCheck> checks;
  for (const std::string& gpu : gpus) {
    auto peaks = PeaksFor(gpu);
    if (!peaks) return std::unexpected(peaks.error());
    auto tables = f.tables_dir.empty()
                      ? calibration::LoadTables(gpu)
                      : calibration::LoadTablesFromDir(f.tables_dir, gpu);
    if (!tables) return std::unexpected(tables.error());
    std::vector<KernelCheck> c = calibration::LeaveOneOut(*tables, *peaks);
    checks.insert(checks.end(), c.begin(), c.end());
  }
  std::map<std::pair<std::string, std::string>, Group> groups;
  for (const KernelCheck& c : checks) {
    Group& g = groups[{c.gpu, c.kind}];
    ++g.points;
    g.sum_abs += std::abs(c.error_pct);
  }
  std::string out;
  if (f.json) {
    out = "{\n  \"kinds\": [";
    bool first = true;
    for (const auto& [key, g] : groups) {
      out += first ? "\n" : ",\n";
      first = false;
      out += Format(
          "    {\"gpu\": \"%s\", \"kind\": \"%s\", \"points\": %d, "
          "\"mape_pct\": %s}",
          key.first.c_str(), key.second.c_str(), g.points,
          JsonNumber(g.sum_abs / g.points).c_str());
    }
    out += "\n  ],\n  \"rows\": [";
    first = true;
    for (const KernelCheck& c : checks) {
      out += first ? "\n" : ",\n";
      first = false;
      out += "    {\"gpu\": " + JsonString(c.gpu) +
             ", \"kind\": " + JsonString(c.kind) +
             ", \"impl\": " + JsonString(c.impl) +
             ", \"shape\": " + JsonString(c.shape) +
             ", \"measured\": " + JsonNumber(c.measured) +
             ", \"predicted\": " + JsonNumber(c.predicted) +
             ", \"error_pct\": " + JsonNumber(c.error_pct) +
             ", \"source\": " + JsonString(c.source) + "}";
    }
    return out + "\n  ]\n}\n";
  }
  out +=
      "Leave-one-out: each measured row predicted from the others "
      "(TFLOPS; GB/s for memory-bound)\n";
  out += Format("%-6s %-20s %-26s %-48s %9s %9s %7s\n", "gpu", "kind", "impl",
                "shape", "measured", "moesim", "error");
  for (const KernelCheck& c : checks) {
    out +=
        Format("%-6s %-20s %-26s %-48s %9.1f %9.1f %+6.1f%%\n", c.gpu.c_str(),
               c.kind.c_str(), c.impl.c_str(), c.shape.substr(0, 48).c_str(),
               c.measured, c.predicted, c.error_pct);
  }
  out += "\nMAPE by GPU and kind\n";
  for (const auto& [key, g] : groups) {
    out += Format("  %-6s %-20s %4d rows  MAPE %5.1f%%\n", key.first.c_str(),
                  key.second.c_str(), g.points, g.sum_abs / g.points);
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
}

util::Result<std::string> RunImportNccl(const ImportNcclFlags& f) {
  auto system = topology::LoadSystem(f.system);
  if (!system) return std::unexpected(system.error());
  if (f.tier != "nvlink" && f.tier != "net") {
    return std::unexpected(
        FlagError("--tier", "must be nvlink or net, got '" + f.tier + "'"));
  }
  std::vector<calibration::CollectiveRow> rows;
  for (const std::string& log : f.logs) {
    auto text = util::ReadFile(log);
    if (!text) return std::unexpected(text.error());
    auto parsed = calibration::ParseNcclTestsLog(*text, log, f.tier);
    if (!parsed) return std::unexpected(parsed.error());
    rows.insert(rows.end(), parsed->begin(), parsed->end());
  }
  const std::string csv = calibration::CollectiveRowsToCsv(rows);
  if (f.out.empty()) return csv;
  if (auto ok = util::WriteOutputFile(f.out, csv, "--out"); !ok)
    return std::unexpected(ok.error());
  return Format("wrote %zu rows to %s\n", rows.size(), f.out.c_str());
}

}  // namespace moesim::tools
