// Small formatting helpers shared by the command reports: printf into a
// std::string, and JSON scalars (the reports write JSON by hand so key order
// and number formatting are fixed: same input, same bytes).
#ifndef MOESIM_TOOLS_TEXT_FORMAT_H_
#define MOESIM_TOOLS_TEXT_FORMAT_H_

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"
#include "util/json_write.h"

namespace moesim::tools {

// printf into a string; output longer than 511 bytes is cut.
template <typename... Args>
std::string Format(const char* fmt, Args... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), fmt, args...);
  return buffer;
}

// "flags: <flag>: <rule>", the one-line error of a bad command-line value.
util::Error FlagError(std::string_view flag, std::string_view rule);

// The JSON scalars every report writes (util/json_write.h).
using util::JsonNumber;
using util::JsonString;

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_TEXT_FORMAT_H_
