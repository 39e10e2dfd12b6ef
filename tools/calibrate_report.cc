#include "tools/calibrate_report.h"

#include <cmath>
#include <fstream>
#include <map>

#include "calibration/cost_model.h"
#include "calibration/nccl_tests.h"
#include "calibration/tables.h"
#include "tools/text_format.h"
#include "topology/system.h"
#include "util/csv.h"
#include "util/json_write.h"
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
  return util::Fail("flags: --gpu: unknown GPU '" + gpu + "' (known: " +
                    util::JoinList(topology::ShippedGpus()) + ")");
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
    using Layout = util::JsonWriter::Layout;
    util::JsonWriter w;
    w.BeginObject(Layout::kLines).Key("kinds").BeginArray(Layout::kLines);
    for (const auto& [key, g] : groups) {
      w.BeginObject().Key("gpu").String(key.first).Key("kind");
      w.String(key.second).Key("points").Number(g.points);
      w.Key("mape_pct").Number(g.sum_abs / g.points).EndObject();
    }
    w.EndArray().Key("rows").BeginArray(Layout::kLines);
    for (const KernelCheck& c : checks) {
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
  app.add_option("--group-size", f.group_size,
                 "Ranks in the communicator, for a log without rank lines "
                 "(checked against them where it has some)");
}

namespace {

// The GPU family a name gives ("H100" of "NVIDIA H100 80GB HBM3" and of
// "H100 SXM5 80GB"; "GB200" of "NVIDIA GB200"): the first word that is
// letters then three digits.
std::string GpuFamily(std::string_view name) {
  std::string word;
  for (size_t i = 0; i <= name.size(); ++i) {
    const char c = i < name.size() ? name[i] : ' ';
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      continue;
    }
    size_t letters = 0;
    while (letters < word.size() &&
           std::isalpha(static_cast<unsigned char>(word[letters])))
      ++letters;
    if (letters > 0 && word.size() - letters == 3 &&
        std::all_of(
            word.begin() + static_cast<long>(letters), word.end(),
            [](char d) { return std::isdigit(static_cast<unsigned char>(d)); }))
      return word;
    word.clear();
  }
  return "";
}

// A log must come from the system it is imported for, and its group must
// sit where --tier says: all in one NVLink domain for nvlink (one host
// where the domain is a node), across domains for net.
util::Result<void> CheckLogAgainstSystem(const std::string& log,
                                         const calibration::NcclLogFacts& facts,
                                         const topology::System& system,
                                         const std::string& tier) {
  const std::string log_gpu = GpuFamily(facts.gpu);
  const std::string system_gpu = GpuFamily(system.gpu().name());
  if (!log_gpu.empty() && !system_gpu.empty() && log_gpu != system_gpu &&
      !(log_gpu.ends_with(system_gpu) || system_gpu.ends_with(log_gpu))) {
    return util::Fail(log + ": GPU '" + facts.gpu.substr(0, 60) + "' is not " +
                      system.name() + "'s " + system.gpu().name() +
                      " (--system)");
  }
  const int domain = system.nvlink_domain_gpus();
  const bool node_domain = domain == system.gpus_per_node();
  if (tier == "nvlink") {
    if (facts.group_size > domain)
      return util::Fail(
          log + ": --tier nvlink: " + std::to_string(facts.group_size) +
          " ranks cannot share one NVLink domain of " + system.name() + " (" +
          std::to_string(domain) + " GPUs); use --tier net");
    if (node_domain && facts.hosts > 1)
      return util::Fail(log + ": --tier nvlink: the ranks run on " +
                        std::to_string(facts.hosts) + " hosts, and " +
                        system.name() +
                        "'s NVLink domain is one host; use --tier net");
  } else if (facts.group_size <= system.gpus_per_node() && facts.hosts <= 1) {
    return util::Fail(log +
                      ": --tier net: " + std::to_string(facts.group_size) +
                      " ranks on one host never leave its NVLink domain; "
                      "use --tier nvlink");
  }
  return {};
}

}  // namespace

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
  std::vector<calibration::CollectiveRow> rows;
  for (const std::string& log : f.logs) {
    auto text = util::ReadFile(log);
    if (!text) return std::unexpected(text.error());
    calibration::NcclLogFacts facts;
    auto parsed = calibration::ParseNcclTestsLog(
        *text, log, f.tier, "", f.group_size.value_or(0), &facts);
    if (!parsed) return std::unexpected(parsed.error());
    if (auto ok = CheckLogAgainstSystem(log, facts, *system, f.tier); !ok)
      return std::unexpected(ok.error());
    rows.insert(rows.end(), parsed->begin(), parsed->end());
  }
  const std::string csv = calibration::CollectiveRowsToCsv(rows);
  if (f.out.empty()) return csv;
  if (auto ok = util::WriteOutputFile(f.out, csv, "--out"); !ok)
    return std::unexpected(ok.error());
  return Format("wrote %zu rows to %s\n", rows.size(), f.out.c_str());
}

}  // namespace moesim::tools
