#include "tools/text_format.h"

#include <cmath>

namespace moesim::tools {

util::Error FlagError(std::string_view flag, std::string_view rule) {
  return util::Error{"flags: " + std::string(flag) + ": " + std::string(rule)};
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += Format("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) {
  // RFC 8259 has no NaN or infinity: a value that is not a number is null.
  if (!std::isfinite(v)) return "null";
  // Integers up to 2^53 (counts, sequence lengths, GPU counts) exactly:
  // %.6g would print 1048576 as 1.04858e+06.
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0)
    return Format("%.0f", v);
  return Format("%.6g", v);
}

std::string JsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + JsonString(items[i]);
  return out + "]";
}

}  // namespace moesim::tools
