#include "util/json_write.h"

#include <cmath>
#include <cstdio>

namespace moesim::util {

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x",
                    static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) {
  // RFC 8259 has no NaN or infinity: a value that is not a number is null.
  if (!std::isfinite(v)) return "null";
  char text[32];
  // Integers up to 2^53 (counts, sequence lengths, GPU counts) exactly:
  // %.6g would print 1048576 as 1.04858e+06.
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) {
    std::snprintf(text, sizeof(text), "%.0f", v);
  } else {
    std::snprintf(text, sizeof(text), "%.6g", v);
  }
  return text;
}

std::string JsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + JsonString(items[i]);
  return out + "]";
}

}  // namespace moesim::util
