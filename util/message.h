// Error messages safe to show on a terminal: one line, no control
// characters from the input, bounded length.
#ifndef MOESIM_UTIL_MESSAGE_H_
#define MOESIM_UTIL_MESSAGE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace moesim::util {

// The longest message moesim prints: 1,000 bytes, well above any rule's
// text with its file path; a longer one is an input echoed (a 30 MiB name).
inline constexpr size_t kMaxMessageBytes = 1000;

// `message` with every control character (CR, LF, ESC, BEL, NUL, DEL ...)
// and every byte of invalid UTF-8 written as \xNN (\r, \n and \t by name),
// and, when longer than kMaxMessageBytes, its middle cut to
// " ... [N bytes cut] ... " so that the field at its start and the rule
// at its end stay.
std::string ShowableMessage(std::string_view message);

// A short excerpt of an input value for a message: ShowableMessage's escaping,
// at most `max_bytes` of it, "..." when cut.
std::string Excerpt(std::string_view value, size_t max_bytes = 80);

// Excerpt(value) in single quotes: "'<excerpt>'". Out of line: GCC 12's
// -Wrestrict misfires on "'" + std::string once inlined (GCC bug 105329).
std::string Quoted(std::string_view value);

}  // namespace moesim::util

#endif  // MOESIM_UTIL_MESSAGE_H_
