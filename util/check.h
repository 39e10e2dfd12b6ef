// Invariant checks: a broken invariant is a programming error, so it prints
// the failed condition with its call site and aborts. Input-dependent
// failures never come here; they return util::Result.
#ifndef MOESIM_UTIL_CHECK_H_
#define MOESIM_UTIL_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <string_view>

namespace moesim::util {

[[noreturn]] inline void CheckFailed(
    std::string_view message,
    std::source_location where = std::source_location::current()) {
  std::fprintf(stderr, "%s:%u: CHECK failed: %.*s\n", where.file_name(),
               static_cast<unsigned>(where.line()),
               static_cast<int>(message.size()), message.data());
  std::abort();
}

// Aborts with `message` and the caller's location unless `condition`.
constexpr void CheckOrDie(
    bool condition, std::string_view message,
    std::source_location where = std::source_location::current()) {
  if (!condition) CheckFailed(message, where);
}

}  // namespace moesim::util

#endif  // MOESIM_UTIL_CHECK_H_
