// The value lists of `moesim sweep`'s axis flags
// (tools/sweep_flags_internal.h).
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/sweep_flags_internal.h"
#include "tools/text_format.h"
#include "util/csv.h"

namespace moesim::tools::internal {

using util::Result;

// Every occurrence split at commas (or taken whole, `split` false). Empty
// items stay ("1,2," has a third, empty one), so that the axis's parser
// refuses them rather than a typo passing unseen.
std::vector<std::string> Items(const std::vector<std::string>& occurrences,
                               bool split) {
  std::vector<std::string> out;
  for (const std::string& o : occurrences) {
    if (!split || util::SplitList(o, ",").empty()) {
      out.push_back(o);
      continue;
    }
    for (size_t start = 0;;) {
      const size_t comma = o.find(',', start);
      std::string item = o.substr(start, comma - start);
      const size_t b = item.find_first_not_of(" \t");
      item = b == std::string::npos
                 ? std::string()
                 : item.substr(b, item.find_last_not_of(" \t") - b + 1);
      out.push_back(std::move(item));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

namespace {

std::optional<int32_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() ||
      v < INT32_MIN || v > INT32_MAX)
    return std::nullopt;
  return static_cast<int32_t>(v);
}

}  // namespace

// An integer axis: "1,2,4", "1:8", "4096:131072", "1,3:9:3".
Result<scenarios::IntAxis> ParseIntAxis(const std::vector<std::string>& given,
                                        std::string_view flag) {
  scenarios::IntAxis axis;
  bool range = false;
  for (const std::string& item : Items(given, true)) {
    const std::vector<std::string> parts = util::SplitList(item, ":");
    std::vector<int32_t> numbers;
    for (const std::string& p : parts) {
      auto v = ParseInt(p);
      if (!v) break;
      numbers.push_back(*v);
    }
    const bool well_formed = numbers.size() == parts.size() && !parts.empty() &&
                             parts.size() <= 3 &&
                             item.find("::") == std::string::npos &&
                             !item.starts_with(':') && !item.ends_with(':');
    if (!well_formed) {
      return std::unexpected(FlagError(
          flag, "'" + item +
                    "' is not an integer or a range (values like 1,2,4; "
                    "a:b doubles from a to b; a:b:s steps by s)"));
    }
    if (numbers.size() == 1) {
      axis.add_values(numbers[0]);
      continue;
    }
    if (range) {
      return std::unexpected(FlagError(
          flag, "at most one range a:b or a:b:s, got a second '" + item + "'"));
    }
    range = true;
    axis.set_from(numbers[0]);
    axis.set_to(numbers[1]);
    if (numbers.size() == 3) {
      // A step of 0 or less: the range check of SweepSpace::Build refuses.
      axis.set_step(numbers[2] >= 1 ? numbers[2] : -1);
    } else {
      axis.set_times(2);
    }
  }
  return axis;
}

Result<std::vector<double>> ParseFractions(
    const std::vector<std::string>& given) {
  std::vector<double> out;
  for (const std::string& item : Items(given, true)) {
    double v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size()) {
      return std::unexpected(
          FlagError("--cpu-offload", "'" + item +
                                         "' is not a number (values like "
                                         "0,0.5,1)"));
    }
    out.push_back(v);
  }
  return out;
}

Result<std::vector<bool>> ParseBits(const std::vector<std::string>& given) {
  std::vector<bool> out;
  for (const std::string& item : Items(given, true)) {
    if (item != "0" && item != "1") {
      return std::unexpected(
          FlagError("--ep-overlap", "must be 0 or 1, got '" + item + "'"));
    }
    out.push_back(item == "1");
  }
  return out;
}

}  // namespace moesim::tools::internal
