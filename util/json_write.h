// JSON scalars as moesim writes them (the reports and the Chrome trace write
// JSON text directly, so key order and number formatting are fixed: same
// input, same bytes). RFC 8259: no NaN or infinity, strings escaped.
#ifndef MOESIM_UTIL_JSON_WRITE_H_
#define MOESIM_UTIL_JSON_WRITE_H_

#include <string>
#include <string_view>
#include <vector>

namespace moesim::util {

// A JSON string literal: quotes and backslashes escaped, control bytes as
// \u00XX.
std::string JsonString(std::string_view s);
// Integers (up to 2^53) exactly, others with 6 significant digits; NaN and
// infinities as null, since RFC 8259 JSON has neither.
std::string JsonNumber(double v);
// A JSON array of string literals.
std::string JsonList(const std::vector<std::string>& items);

}  // namespace moesim::util

#endif  // MOESIM_UTIL_JSON_WRITE_H_
