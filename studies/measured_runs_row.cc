// One row of a measured-runs CSV as a run (studies/measured_runs_internal.h).
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "models/flops.h"
#include "studies/measured_runs_internal.h"
#include "studies/physical_limits.h"
#include "topology/system.h"
#include "util/message.h"

namespace moesim::studies::internal {
namespace {

// The measured columns and their ceilings (studies/physical_limits.h).
struct MeasuredLimit {
  const char* column;
  double max;
  const char* what;
};
constexpr MeasuredLimit kMeasuredLimits[] = {
    {"measured_tflops_per_gpu", kMaxTflopsPerGpu, "TFLOPS per GPU"},
    {"measured_step_time_s", kMaxStepSeconds, "seconds per step"},
    {"measured_peak_mem_gib", kMaxGibPerGpu, "GiB per GPU"},
    {"measured_tokens_per_sec_per_gpu", kMaxTokensPerSecPerGpu,
     "tokens per second per GPU"},
};

// A measured value: empty, or > 0 and at most its column's ceiling.
util::Result<std::optional<double>> Measured(const util::CsvTable& t, size_t i,
                                             const std::string& file, int line,
                                             const MeasuredLimit& limit) {
  const std::string& text = t.Get(i, limit.column);
  auto v = ParseRunNumber(text, file, line, limit.column);
  if (!v || !*v) return v;
  if (!(**v > 0) || **v > limit.max) {
    char max[32];
    std::snprintf(max, sizeof(max), "%g", limit.max);
    return std::unexpected(RowError(file, line, limit.column,
                                    "must be > 0 and at most " +
                                        std::string(max) + " " + limit.what +
                                        ", got " + util::Excerpt(text)));
  }
  return v;
}

// The layout, knob and word columns as `run` flags (ParseRow).
util::Result<void> ReadLayoutColumns(const util::CsvTable& t, size_t i,
                                     const std::string& file,
                                     const util::Result<std::string>& system,
                                     MeasuredRun& r) {
  ScenarioFlags& f = r.flags;
  f.model = r.model;
  if (system) f.system = *system;
  struct IntColumn {
    const char* column;
    std::optional<int>* flag;
  };
  const IntColumn ints[] = {{"num_gpus", &f.gpus},
                            {"seq_len", &f.seq},
                            {"mbs", &f.mbs},
                            {"gbs", &f.gbs},
                            {"tp", &f.tp},
                            {"cp", &f.cp},
                            {"ep", &f.ep},
                            {"etp", &f.etp},
                            {"pp", &f.pp},
                            {"vpp", &f.vpp},
                            {"ep_overlap", &f.ep_overlap}};
  for (const IntColumn& c : ints) {
    auto v = Integer(t.Get(i, c.column), file, r.line, c.column);
    if (!v) return std::unexpected(v.error());
    *c.flag = *v;
  }
  if (f.ep_overlap && *f.ep_overlap > 1) {
    return std::unexpected(RowError(
        file, r.line, "ep_overlap",
        "must be 0 or 1, got " + util::Excerpt(t.Get(i, "ep_overlap"))));
  }
  auto offload =
      ParseRunNumber(t.Get(i, "cpu_offload"), file, r.line, "cpu_offload");
  if (!offload) return std::unexpected(offload.error());
  if (*offload && !(**offload >= 0 && **offload <= 1)) {
    return std::unexpected(
        RowError(file, r.line, "cpu_offload",
                 "must be in [0, 1] (a fraction of the optimizer state), got " +
                     util::Excerpt(t.Get(i, "cpu_offload"))));
  }
  f.cpu_offload = *offload;
  if (auto ok = CheckWords(t, i, file, r.line); !ok)
    return std::unexpected(ok.error());
  auto set = [&](const char* column, std::optional<std::string>& flag) {
    if (!t.Get(i, column).empty()) flag = t.Get(i, column);
  };
  set("precision", f.precision);
  set("dispatcher", f.dispatcher);
  set("cuda_graph", f.cuda_graph);
  set("routing", f.routing);
  set("pp_layout", f.pp_layout);
  if (const std::string& rc = t.Get(i, "recompute"); !rc.empty()) {
    f.recompute = rc;
  }
  return {};
}

// The flops_formula column: a formula the row's model can be counted by.
util::Result<void> ReadFlopsFormula(const util::CsvTable& t, size_t i,
                                    const std::string& file,
                                    const models::Model& model,
                                    MeasuredRun& r) {
  if (const std::string& word = t.Get(i, "flops_formula"); !word.empty()) {
    const std::optional<models::FlopsFormula> formula =
        models::ParseFlopsFormula(word);
    if (!formula) {
      return std::unexpected(RowError(
          file, r.line, "flops_formula",
          "unknown '" + word + "' (" + models::FlopsFormulaWords() + ")"));
    }
    if (!models::CanCountAs(model, *formula)) {
      return std::unexpected(RowError(
          file, r.line, "flops_formula",
          word +
              " counts dense llama-family models only (NeMo's llama2 / "
              "llama3 formula), not '" +
              r.model + "'"));
    }
    r.flops_formula = *formula;
  }
  return {};
}

// The extra column's keys (packed sequences; the rest as Megatron
// arguments) and mtp_layers.
util::Result<void> ReadExtraColumns(const util::CsvTable& t, size_t i,
                                    const std::string& file, MeasuredRun& r) {
  ScenarioFlags& f = r.flags;
  for (const std::string& kv : util::SplitList(t.Get(i, "extra"), ";")) {
    if (kv == "packed_sequences=thd" && r.unexpressible.empty()) {
      // A packed batch's attention is causal within each document, and
      // the documents' lengths are not published; the row is kept, not
      // replayed.
      r.unexpressible =
          "THD-packed sequences (document lengths not published): packed "
          "batches are not modelled";
    }
  }
  std::string args = ExtraArgs(t.Get(i, "extra"), f);
  auto mtp = Integer(t.Get(i, "mtp_layers"), file, r.line, "mtp_layers");
  if (!mtp) return std::unexpected(mtp.error());
  if (*mtp) args += " --mtp-num-layers " + std::to_string(**mtp);
  if (!args.empty()) f.megatron_args = args;
  return {};
}

}  // namespace

util::Result<MeasuredRun> ParseRow(const util::CsvTable& t, size_t i,
                                   const std::string& file) {
  MeasuredRun r;
  r.line = t.Line(i);
  r.id = t.Get(i, "id");
  r.model = t.Get(i, "model");
  r.gpu = t.Get(i, "gpu");
  r.precision = t.Get(i, "precision");
  r.confidence = t.Get(i, "confidence");
  r.container = t.Get(i, "container");
  r.source = t.Get(i, "source");
  if (r.id.empty())
    return std::unexpected(RowError(file, r.line, "id", "is empty"));
  const std::vector<std::string> zoo = models::ZooNames();
  if (std::find(zoo.begin(), zoo.end(), r.model) == zoo.end()) {
    return std::unexpected(
        RowError(file, r.line, "model", "unknown model '" + r.model + "'"));
  }
  // runs.csv's GPU column -> the shipped system of that GPU.
  const util::Result<std::string> system = topology::SystemForGpu(r.gpu);
  if (r.gpu.empty()) {
    r.unexpressible = "the row publishes no GPU";
  } else if (!system) {
    return std::unexpected(
        RowError(file, r.line, "gpu",
                 "unknown GPU '" + r.gpu + "' (" +
                     util::JoinList(topology::ShippedGpus()) + ")"));
  }
  if (auto ok = ReadLayoutColumns(t, i, file, system, r); !ok)
    return std::unexpected(ok.error());
  // The zoo name was checked above; the model's architecture is needed by
  // the CP exchange's head rules and the FLOPs formula's family check.
  auto model = models::LoadModel(r.model);
  if (!model) return std::unexpected(model.error());
  if (auto cp = CpExchange(t, i, file, *model, r); !cp)
    return std::unexpected(cp.error());
  if (auto ok = ReadFlopsFormula(t, i, file, *model, r); !ok)
    return std::unexpected(ok.error());
  if (auto ok = ReadExtraColumns(t, i, file, r); !ok)
    return std::unexpected(ok.error());
  std::optional<double>* outs[] = {&r.tflops, &r.step_s, &r.mem_gib,
                                   &r.tokens_per_s};
  for (size_t k = 0; k < std::size(kMeasuredLimits); ++k) {
    auto v = Measured(t, i, file, r.line, kMeasuredLimits[k]);
    if (!v) return std::unexpected(v.error());
    *outs[k] = *v;
  }
  return r;
}

}  // namespace moesim::studies::internal
