#include "calibration/profile.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "calibration/profile.pb.h"
#include "calibration/tables.h"
#include "util/csv.h"
#include "util/textproto.h"

namespace moesim::calibration {

namespace {

using google::protobuf::TextFormat;

constexpr const char* kFactorNames[kNumFactors] = {
    "gemm_efficiency",        "grouped_gemm_efficiency",
    "attention_efficiency",   "memory_bound_efficiency",
    "nvlink_comm_efficiency", "network_comm_efficiency",
    "dispatcher_efficiency",  "host_overhead_scale"};

// 1-based line of `field` (index `index` when repeated) in `tree`, or 0.
int LineOf(const TextFormat::ParseInfoTree* tree,
           const google::protobuf::FieldDescriptor* field, int index = -1) {
  if (tree == nullptr) return 0;
  const auto location = tree->GetLocation(field, index);
  return location.line >= 0 ? location.line + 1 : 0;
}

util::Error FieldError(std::string_view file, int line, std::string_view field,
                       std::string_view rule) {
  return util::Error{std::string(file) + ":" + std::to_string(line) + ": " +
                     std::string(field) + ": " + std::string(rule)};
}

std::string Number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// The factors of one Factors message, each checked against the bounds.
// `prefix` is its path ("factors", "gpu[1].factors") and `tree` where its
// fields stand.
util::Result<Corrections> ReadFactors(const Factors& message,
                                      const TextFormat::ParseInfoTree* tree,
                                      std::string_view file,
                                      const std::string& prefix) {
  Corrections c;
  const auto* descriptor = message.GetDescriptor();
  const auto* reflection = message.GetReflection();
  for (Factor f : kFactors) {
    const auto* field = descriptor->FindFieldByName(FactorName(f));
    if (!reflection->HasField(message, field)) continue;
    const double v = reflection->GetDouble(message, field);
    if (!std::isfinite(v) || v < kMinFactor || v > kMaxFactor) {
      return std::unexpected(
          FieldError(file, LineOf(tree, field), prefix + "." + FactorName(f),
                     "must be a finite factor in [" + Number(kMinFactor) +
                         ", " + Number(kMaxFactor) + "], got " + Number(v)));
    }
    c.at(f) = v;
  }
  return c;
}

void AppendFactors(const Corrections& c, const std::string& indent,
                   std::string& out) {
  for (Factor f : kFactors) {
    if (c.at(f) == 1) continue;
    char line[96];
    std::snprintf(line, sizeof line, "%s  %s: %.4f\n", indent.c_str(),
                  FactorName(f), c.at(f));
    out += line;
  }
}

}  // namespace

const char* FactorName(Factor factor) {
  return kFactorNames[static_cast<int>(factor)];
}

util::Result<Factor> ParseFactor(std::string_view name) {
  std::string known;
  for (Factor f : kFactors) {
    if (name == FactorName(f)) return f;
    known += (known.empty() ? "" : ", ") + std::string(FactorName(f));
  }
  return util::Fail("unknown factor '" + std::string(name) + "' (" + known +
                    ")");
}

bool Corrections::IsIdentity() const {
  return std::all_of(values.begin(), values.end(),
                     [](double v) { return v == 1; });
}

Corrections Corrections::operator*(const Corrections& other) const {
  Corrections c;
  for (int i = 0; i < kNumFactors; ++i)
    c.values[i] = values[i] * other.values[i];
  return c;
}

Corrections Profile::For(std::string_view gpu) const {
  for (const auto& [name, corrections] : by_gpu) {
    if (name == gpu) return all * corrections;
  }
  return all;
}

util::Result<Profile> ParseProfile(std::string_view text,
                                   std::string_view file) {
  CalibrationProfile message;
  TextFormat::ParseInfoTree tree;
  if (auto parsed = util::ParseTextProto(text, file, message, &tree); !parsed) {
    return std::unexpected(parsed.error());
  }
  Profile profile;
  profile.name = message.name();
  const auto* descriptor = message.GetDescriptor();
  const auto* factors_field = descriptor->FindFieldByName("factors");
  auto all =
      ReadFactors(message.factors(), tree.GetTreeForNested(factors_field, -1),
                  file, "factors");
  if (!all) return std::unexpected(all.error());
  profile.all = *all;
  const auto* gpu_field = descriptor->FindFieldByName("gpu");
  const std::vector<std::string> gpus = TableGpus();
  for (int i = 0; i < message.gpu_size(); ++i) {
    const GpuFactors& entry = message.gpu(i);
    const TextFormat::ParseInfoTree* entry_tree =
        tree.GetTreeForNested(gpu_field, i);
    const std::string path = "gpu[" + std::to_string(i) + "]";
    const int line =
        LineOf(entry_tree, GpuFactors::descriptor()->FindFieldByName("gpu"));
    const int entry_line = line > 0 ? line : LineOf(&tree, gpu_field, i);
    if (std::find(gpus.begin(), gpus.end(), entry.gpu()) == gpus.end()) {
      return std::unexpected(FieldError(
          file, entry_line, path + ".gpu",
          "unknown GPU '" + entry.gpu() + "' (" + util::JoinList(gpus) + ")"));
    }
    for (const auto& [name, corrections] : profile.by_gpu) {
      if (name == entry.gpu()) {
        return std::unexpected(
            FieldError(file, entry_line, path + ".gpu",
                       "GPU '" + entry.gpu() + "' listed twice"));
      }
    }
    const TextFormat::ParseInfoTree* factors_tree =
        entry_tree == nullptr
            ? nullptr
            : entry_tree->GetTreeForNested(
                  GpuFactors::descriptor()->FindFieldByName("factors"), -1);
    auto c =
        ReadFactors(entry.factors(), factors_tree, file, path + ".factors");
    if (!c) return std::unexpected(c.error());
    profile.by_gpu.push_back({entry.gpu(), *c});
  }
  return profile;
}

util::Result<Profile> LoadProfile(const std::string& path) {
  auto text = util::ReadFile(path);
  if (!text) return std::unexpected(text.error());
  return ParseProfile(*text, path);
}

std::string FormatProfile(const Profile& profile,
                          const std::vector<std::string>& header) {
  std::string out;
  for (const std::string& line : header) {
    out += line.empty() ? "#\n" : "# " + line + "\n";
  }
  if (!profile.name.empty()) {
    std::string escaped;
    for (char ch : profile.name) {
      if (ch == '"' || ch == '\\') escaped += '\\';
      escaped += ch;
    }
    out += "name: \"" + escaped + "\"\n";
  }
  if (!profile.all.IsIdentity()) {
    out += "factors {\n";
    AppendFactors(profile.all, "", out);
    out += "}\n";
  }
  for (const auto& [gpu, corrections] : profile.by_gpu) {
    out += "gpu {\n  gpu: \"" + gpu + "\"\n";
    if (!corrections.IsIdentity()) {
      out += "  factors {\n";
      AppendFactors(corrections, "  ", out);
      out += "  }\n";
    }
    out += "}\n";
  }
  return out;
}

}  // namespace moesim::calibration
