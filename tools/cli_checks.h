// CLI11 validators for moesim's integer flags, with messages in moesim's
// words ("must be >= 1, got 0"), not CLI11's ("Value 0 not in range
// 0.000000 to 1.79769e+308").
#ifndef MOESIM_TOOLS_CLI_CHECKS_H_
#define MOESIM_TOOLS_CLI_CHECKS_H_

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

#include "util/message.h"

namespace moesim::tools {

// An integer in [lo, hi]; hi = int64 max reads "must be >= lo".
inline CLI::Validator IntInRange(
    int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max()) {
  const std::string want = hi == std::numeric_limits<int64_t>::max()
                               ? "must be >= " + std::to_string(lo)
                               : "must be in [" + std::to_string(lo) + ", " +
                                     std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, want](std::string& value) -> std::string {
        int64_t v = 0;
        const auto [end, ec] =
            std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec == std::errc() && end == value.data() + value.size() &&
            v >= lo && v <= hi)
          return "";
        return want + ", got " + util::Excerpt(value);
      },
      hi == std::numeric_limits<int64_t>::max()
          ? ">=" + std::to_string(lo)
          : "[" + std::to_string(lo) + "," + std::to_string(hi) + "]");
}

// Integer flags take decimal digits only: CLI11 would read --gpus 0x10 as
// 16 and --gpus 010 as octal 8, which no user means.
inline void RequireDecimalIntegers(CLI::App& app) {
  static const CLI::Validator kDecimal(
      [](std::string& value) -> std::string {
        const size_t start = !value.empty() && value[0] == '-' ? 1 : 0;
        const bool digits =
            value.size() > start &&
            value.find_first_not_of("0123456789", start) == std::string::npos;
        const bool leading_zero =
            value.size() > start + 1 && value[start] == '0';
        if (digits && !leading_zero) return "";
        return "'" + util::Excerpt(value) + "' is not a decimal integer";
      },
      "DECIMAL");
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type.starts_with("INT") || type.starts_with("UINT"))
      option->check(kDecimal);
  }
  for (CLI::App* sub : app.get_subcommands({})) RequireDecimalIntegers(*sub);
}

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_CLI_CHECKS_H_
