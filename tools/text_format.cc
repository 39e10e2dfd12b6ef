#include "tools/text_format.h"

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

std::string JsonNumber(double v) { return Format("%.6g", v); }

std::string JsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + JsonString(items[i]);
  return out + "]";
}

}  // namespace moesim::tools
