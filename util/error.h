// Errors as values at module boundaries.
//
// Every input-dependent failure (a malformed file, an impossible layout, an
// unknown model) travels as an `Error` inside `Result<T>` up to `tools/`, whose
// main() prints the one-line message and exits with code 2. Library code never
// exits. The message names the file (or flag), the field and the rule, e.g.
//   scenarios/x.textproto:7: layout.context_parallel_size: seq_length 4096 is
//   not divisible by 2*context_parallel_size = 48
#ifndef MOESIM_UTIL_ERROR_H_
#define MOESIM_UTIL_ERROR_H_

#include <expected>
#include <string>
#include <utility>

namespace moesim::util {

struct Error {
  std::string message;
};

template <typename T>
using Result = std::expected<T, Error>;

// Shorthand for `return Fail("...")` in functions returning Result<T>.
inline std::unexpected<Error> Fail(std::string message) {
  return std::unexpected<Error>(Error{std::move(message)});
}

}  // namespace moesim::util

#endif  // MOESIM_UTIL_ERROR_H_
