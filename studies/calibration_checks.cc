#include "studies/calibration_checks.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "util/csv.h"
#include "util/textproto.h"

namespace moesim::studies {
namespace {

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

util::Result<KernelValidation> ValidateKernels(std::vector<std::string> gpus,
                                               const std::string& tables_dir) {
  if (gpus.empty()) gpus = calibration::TableGpus();
  KernelValidation v;
  for (const std::string& gpu : gpus) {
    auto peaks = PeaksFor(gpu);
    if (!peaks) return std::unexpected(peaks.error());
    auto tables = tables_dir.empty()
                      ? calibration::LoadTables(gpu)
                      : calibration::LoadTablesFromDir(tables_dir, gpu);
    if (!tables) return std::unexpected(tables.error());
    std::vector<calibration::KernelCheck> c =
        calibration::LeaveOneOut(*tables, *peaks);
    v.checks.insert(v.checks.end(), c.begin(), c.end());
  }
  for (const calibration::KernelCheck& c : v.checks) {
    KernelGroup& g = v.groups[{c.gpu, c.kind}];
    ++g.points;
    g.sum_abs += std::abs(c.error_pct);
  }
  return v;
}

util::Result<std::vector<calibration::CollectiveRow>> ImportNcclLogs(
    const std::vector<std::string>& files, const topology::System& system,
    const std::string& tier, int group_size) {
  std::vector<calibration::CollectiveRow> rows;
  for (const std::string& log : files) {
    auto text = util::ReadFile(log);
    if (!text) return std::unexpected(text.error());
    calibration::NcclLogFacts facts;
    auto parsed = calibration::ParseNcclTestsLog(*text, log, tier, "",
                                                 group_size, &facts);
    if (!parsed) return std::unexpected(parsed.error());
    if (auto ok = CheckLogAgainstSystem(log, facts, system, tier); !ok)
      return std::unexpected(ok.error());
    rows.insert(rows.end(), parsed->begin(), parsed->end());
  }
  return rows;
}

}  // namespace moesim::studies
