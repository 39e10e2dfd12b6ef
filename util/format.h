// printf into a std::string, and the one-line error of a bad command-line
// value; shared by the studies and the command line.
#ifndef MOESIM_UTIL_FORMAT_H_
#define MOESIM_UTIL_FORMAT_H_

#include <cstdio>
#include <string>
#include <string_view>

#include "util/error.h"

namespace moesim::util {

// printf into a string; output longer than 511 bytes is cut.
template <typename... Args>
std::string Format(const char* fmt, Args... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), fmt, args...);
  return buffer;
}

// "flags: <flag>: <rule>", the one-line error of a bad command-line value.
Error FlagError(std::string_view flag, std::string_view rule);

}  // namespace moesim::util

#endif  // MOESIM_UTIL_FORMAT_H_
