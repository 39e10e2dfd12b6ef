// Reading a sweep spec's axes and naming its fields in errors
// (studies/sweep_spec_internal.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unordered_set>
#include <vector>

#include "scenarios/scenario.h"
#include "scenarios/vocabulary.h"
#include "studies/sweep_spec.h"
#include "studies/sweep_spec_internal.h"
#include "util/message.h"
#include "util/textproto.h"

namespace moesim::studies::internal {

using util::Result;

// Line (1-based) of `field` written at the top level of a text-format file
// (outside any `{ }`), or 0. Skips comments and quoted strings.
int TopLevelLine(std::string_view text, std::string_view field) {
  int depth = 0, line = 1;
  bool line_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = true;
      continue;
    }
    if (c == ' ' || c == '\t') continue;
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c && text[i] != '\n'; ++i) {
        if (text[i] == '\\') ++i;
      }
      line_start = false;
      continue;
    }
    if (c == '{' || c == '<') ++depth;
    if (c == '}' || c == '>') --depth;
    if (line_start && depth == 0 && text.substr(i).starts_with(field)) {
      std::string_view rest = text.substr(i + field.size());
      size_t next = rest.find_first_not_of(" \t");
      if (next != std::string_view::npos &&
          (rest[next] == ':' || rest[next] == '{'))
        return line;
    }
    line_start = false;
  }
  return 0;
}

// True when `field` is written at the top level as an empty list: "x: []".
bool WrittenEmpty(std::string_view text, std::string_view field) {
  const int line = TopLevelLine(text, field);
  if (line == 0) return false;
  size_t start = 0;
  for (int l = 1; l < line; ++l) start = text.find('\n', start) + 1;
  std::string_view row = text.substr(start, text.find('\n', start) - start);
  std::string compact;
  for (char c : row) {
    if (c == '#') break;
    if (c != ' ' && c != '\t') compact += c;
  }
  return compact == std::string(field) + ":[]";
}

util::Error SweepNamer::Error(std::string_view field,
                              std::string_view rule) const {
  if (origin_ == "flags") {
    return util::Error{"flags: " + SweepFieldFlag(field) + ": " +
                       std::string(rule)};
  }
  std::string where(origin_);
  const size_t dot = field.rfind('.');
  // A nested field's own line, else the line of the message holding it.
  int line = dot == std::string_view::npos
                 ? 0
                 : util::FieldLine(text_, field.substr(dot + 1));
  if (line == 0) line = TopLevelLine(text_, field.substr(0, field.find('.')));
  if (line > 0) where.append(":").append(std::to_string(line));
  return util::Error{where + ": " + std::string(field) + ": " +
                     std::string(rule)};
}

util::Error SweepNamer::Wrap(std::string_view field,
                             std::string_view message) const {
  message = message.substr(0, message.find('\n'));
  const std::string leaf(field.substr(field.rfind('.') + 1));
  if (message.starts_with(leaf + ": ")) message.remove_prefix(leaf.size() + 2);
  return Error(field, message);
}

// The values of an integer axis, in order, without duplicates. Sizes are
// counted before anything is built (a range's by arithmetic), and duplicates
// are dropped in linear time, so a hostile axis is refused at once.
Result<std::vector<int32_t>> Expand(const scenarios::IntAxis& axis,
                                    std::string_view name,
                                    const SweepNamer& at) {
  const bool range = axis.from() != 0 || axis.to() != 0 || axis.times() != 0 ||
                     axis.step() != 0;
  int64_t range_size = 0;
  if (range) {
    if (axis.from() < 1 || axis.to() < axis.from()) {
      return std::unexpected(
          at.Error(name, "a range needs 1 <= from <= to, got from " +
                             std::to_string(axis.from()) + " to " +
                             std::to_string(axis.to())));
    }
    if ((axis.times() != 0) == (axis.step() != 0) || axis.times() < 0 ||
        axis.times() == 1 || axis.step() < 0) {
      return std::unexpected(at.Error(
          name, "a range needs exactly one of times >= 2 or step >= 1"));
    }
    if (axis.step() != 0) {
      range_size = (int64_t{axis.to()} - axis.from()) / axis.step() + 1;
    } else {
      for (int64_t v = axis.from(); v <= axis.to(); v *= axis.times())
        ++range_size;  // at most 31 steps
    }
  }
  if (int64_t{axis.values_size()} + range_size > kMaxSweepCandidates) {
    return std::unexpected(
        at.Error(name, "more than " + std::to_string(kMaxSweepCandidates) +
                           " values (the limit of a sweep)"));
  }

  std::vector<int32_t> out;
  std::unordered_set<int32_t> seen;
  out.reserve(static_cast<size_t>(axis.values_size() + range_size));
  seen.reserve(out.capacity());
  auto add = [&](int64_t v) -> Result<void> {
    if (v < 1) {
      return std::unexpected(
          at.Error(name, "values must be >= 1, got " + std::to_string(v)));
    }
    if (seen.insert(static_cast<int32_t>(v)).second)
      out.push_back(static_cast<int32_t>(v));
    return {};
  };
  for (int32_t v : axis.values()) {
    if (auto ok = add(v); !ok) return std::unexpected(ok.error());
  }
  if (range) {
    for (int64_t v = axis.from(); v <= axis.to();
         v = axis.times() ? v * axis.times() : v + axis.step()) {
      if (auto ok = add(v); !ok) return std::unexpected(ok.error());
    }
  }
  if (out.empty()) {
    return std::unexpected(at.Error(
        name, "empty axis: give values or a range (from, to, times|step)"));
  }
  return out;
}

// Checks a string axis against its vocabulary (scenarios/vocabulary.h);
// `name` is the field.
// `kind` is the axis ("precision"), `field` where the words are written.
Result<void> CheckWords(const std::vector<std::string>& values,
                        std::string_view kind, std::string_view field,
                        const SweepNamer& at) {
  for (const std::string& v : values) {
    if (auto ok = scenarios::CheckWord(kind, v); !ok)
      return std::unexpected(at.Error(field, ok.error().message));
  }
  return {};
}

// The base: base_file's scenario, then the fields written in `base`.
Result<scenarios::Scenario> LoadBase(const scenarios::Sweep& spec,
                                     const std::string& base_dir,
                                     const SweepNamer& at) {
  scenarios::Scenario base;
  if (!spec.base_file().empty()) {
    std::filesystem::path path(spec.base_file());
    if (path.extension() != ".textproto") {
      return std::unexpected(at.Error(
          "base_file", util::Excerpt(spec.base_file()) +
                           ": a scenario file must end in .textproto"));
    }
    if (path.is_relative() && !base_dir.empty()) path = base_dir / path;
    auto loaded = scenarios::LoadScenario(path.string());
    if (!loaded) {
      std::string message = loaded.error().message;
      return std::unexpected(at.Error("base_file", message));
    }
    base = std::move(*loaded);
    if (spec.base().has_recompute()) base.clear_recompute();
    // The base's CP exchange replaces the file's whole: its type and its
    // hierarchical sizes (a2a+p2p's sizes mean nothing to another type).
    if (spec.base().hierarchical_context_parallel_sizes_size() > 0 ||
        !spec.base().cp_comm_type().empty())
      base.clear_hierarchical_context_parallel_sizes();
  }
  scenarios::Scenario own = spec.base();
  scenarios::ResolvePathsAgainst(own, base_dir);
  base.MergeFrom(own);
  return base;
}

}  // namespace moesim::studies::internal
