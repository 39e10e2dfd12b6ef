// The scenario a command's flags describe: a scenario file, a launch input
// or flags alone, with the flags applied and what they changed named, and
// the routing histogram file a flag names (studies/scenario_flags.h).
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "scenarios/launch_file.h"
#include "scenarios/megatron_args.h"
#include "scenarios/vocabulary.h"
#include "studies/scenario_flags.h"
#include "studies/scenario_flags_internal.h"
#include "util/csv.h"
#include "util/format.h"
#include "util/message.h"
#include "util/textproto.h"

namespace moesim::studies {

using internal::ApplyFlags;
using internal::CheckRanges;
using util::Result;

namespace {

// The dotted paths of the fields whose values differ between `a` and `b`
// (messages of one type), singular messages entered field by field.
void ChangedPaths(const google::protobuf::Message& a,
                  const google::protobuf::Message& b, const std::string& prefix,
                  std::vector<std::string>& out) {
  using google::protobuf::FieldDescriptor;
  using google::protobuf::TextFormat;
  const google::protobuf::Descriptor* d = a.GetDescriptor();
  const google::protobuf::Reflection* ra = a.GetReflection();
  const google::protobuf::Reflection* rb = b.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path =
        prefix.empty() ? std::string(f->name()) : prefix + "." + f->name();
    if (!f->is_repeated() &&
        f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      ChangedPaths(ra->GetMessage(a, f), rb->GetMessage(b, f), path, out);
      continue;
    }
    auto value = [f](const google::protobuf::Message& m, int index) {
      std::string text;
      TextFormat::PrintFieldValueToString(m, f, index, &text);
      return text;
    };
    bool same;
    if (f->is_repeated()) {
      same = ra->FieldSize(a, f) == rb->FieldSize(b, f);
      for (int k = 0; same && k < ra->FieldSize(a, f); ++k)
        same = value(a, k) == value(b, k);
    } else {
      same = (!f->has_presence() || ra->HasField(a, f) == rb->HasField(b, f)) &&
             value(a, -1) == value(b, -1);
    }
    if (!same) out.push_back(path);
  }
}

}  // namespace

Result<FlagScenario> ScenarioFromFlags(const ScenarioFlags& flags) {
  if (auto ok = CheckRanges(flags); !ok) return std::unexpected(ok.error());
  FlagScenario out;
  if (!flags.scenario_file.empty()) {
    auto read = util::ReadFile(flags.scenario_file);
    if (!read) return std::unexpected(read.error());
    out.text = std::move(*read);
    auto parsed = scenarios::ParseScenario(out.text, flags.scenario_file);
    if (!parsed) return std::unexpected(parsed.error());
    out.spec = std::move(*parsed);
  }
  const scenarios::Scenario file_spec = out.spec;
  if (flags.megatron_args_file) {
    std::map<std::string, std::string> vars;
    for (const std::string& v : flags.vars) {
      const size_t eq = v.find('=');
      if (eq == 0 || eq == std::string::npos) {
        return util::Fail("flags: --var: '" + v.substr(0, 60) +
                          "' is not NAME=VALUE");
      }
      vars[v.substr(0, eq)] = v.substr(eq + 1);
    }
    auto read = util::ReadFile(*flags.megatron_args_file);
    if (!read) return std::unexpected(read.error());
    auto args =
        scenarios::ExtractMegatronArgs(*read, *flags.megatron_args_file, vars);
    if (!args) return std::unexpected(args.error());
    auto applied = scenarios::ApplyMegatronArgs(*args, out.spec);
    if (!applied) {
      // "--megatron-args: <flag>: <rule>" names the file instead.
      std::string message = applied.error().message;
      constexpr std::string_view kArgs = "--megatron-args: ";
      if (message.starts_with(kArgs)) message.erase(0, kArgs.size());
      return util::Fail(*flags.megatron_args_file + ": " + message);
    }
    out.warnings = std::move(*applied);
    out.any_flag = true;
  } else if (!flags.vars.empty()) {
    return util::Fail("flags: --var: needs --megatron-args-file");
  }
  if (flags.megatron_args) {
    auto applied = scenarios::ApplyMegatronArgs(*flags.megatron_args, out.spec);
    if (!applied)
      return std::unexpected(util::Error{"flags: " + applied.error().message});
    out.warnings.insert(out.warnings.end(), applied->begin(), applied->end());
    out.any_flag = true;
  }
  // A launch input that defines the model (a file, or an argument list
  // with no model named) is a Megatron-LM launch: its defaults apply.
  if (out.spec.defaults().empty() &&
      (flags.megatron_args_file ||
       (flags.megatron_args && out.spec.model().empty() && !flags.model)))
    out.spec.set_defaults("megatron-lm");
  auto any_flag = ApplyFlags(flags, out.spec);
  if (!any_flag) return std::unexpected(any_flag.error());
  out.any_flag = out.any_flag || *any_flag;
  if (!flags.scenario_file.empty() && out.any_flag)
    ChangedPaths(file_spec, out.spec, "", out.flag_paths);
  return out;
}

Result<scenarios::ResolvedScenario> ResolveFlags(const ScenarioFlags& flags) {
  auto built = ScenarioFromFlags(flags);
  if (!built) return std::unexpected(built.error());
  // A file's fields are cited file:line, the fields the command line set
  // name their flag; without a file the origin is "flags".
  auto resolved = !flags.scenario_file.empty()
                      ? scenarios::Resolve(built->spec, flags.scenario_file,
                                           built->text, built->flag_paths)
                      : scenarios::Resolve(built->spec, "flags");
  if (!resolved) return resolved;
  resolved->warnings.insert(resolved->warnings.begin(), built->warnings.begin(),
                            built->warnings.end());
  return resolved;
}

Result<std::vector<double>> ReadRoutingHistogram(const std::string& file) {
  auto text = util::ReadFile(file);
  if (!text) return std::unexpected(text.error());
  std::vector<double> counts;
  int line = 0;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    ++line;
    std::string_view row(text->data() + start, end - start);
    row = row.substr(0, row.find('#'));
    size_t at = 0;
    while (at < row.size()) {
      const size_t from = row.find_first_not_of(" \t\r,", at);
      if (from == std::string_view::npos) break;
      size_t to = row.find_first_of(" \t\r,", from);
      if (to == std::string_view::npos) to = row.size();
      const std::string_view token = row.substr(from, to - from);
      double value = 0;
      auto [ptr, ec] =
          std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || ptr != token.data() + token.size()) {
        // A short, printable token is quoted; anything else is described,
        // so a wrong file (/proc/self/environ) is not echoed.
        const bool showable =
            token.size() <= 24 &&
            std::all_of(token.begin(), token.end(),
                        [](char c) { return c > 0x20 && c < 0x7F; });
        return util::Fail(
            file + ":" + std::to_string(line) + ": moe_routing_histogram: " +
            (showable
                 ? util::Quoted(token)
                 : "a token of " + std::to_string(token.size()) + " bytes") +
            " is not a number");
      }
      counts.push_back(value);
      at = to;
    }
    start = end + 1;
  }
  if (counts.empty()) {
    return util::Fail(file + ": moe_routing_histogram: no values");
  }
  return counts;
}
}  // namespace moesim::studies
