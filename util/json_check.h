// RFC 8259 syntax, strictly: what protobuf's lenient JSON parser would also
// accept (trailing commas, single quotes, comments, bare words) is refused
// before it is parsed.
#ifndef MOESIM_UTIL_JSON_CHECK_H_
#define MOESIM_UTIL_JSON_CHECK_H_

#include <google/protobuf/struct.pb.h>

#include <string_view>

#include "util/error.h"

namespace moesim::util {

// Checks that `text` is one RFC 8259 JSON value (surrounded by blanks
// only), nested at most `max_depth` levels, with no key twice in one object
// (RFC 8259 leaves such objects' meaning to the reader; compared as
// written, escapes undecoded). Iterative: depth costs no stack.
// Errors: "<file>:<line>:<col>: malformed JSON: <what>", e.g. "trailing
// comma before '}'", "single-quoted string (JSON strings take \")",
// "key \"wall\" twice in one object".
[[nodiscard]] Result<void> CheckStrictJson(std::string_view text,
                                           std::string_view file,
                                           int max_depth);

// CheckStrictJson, then the value as a protobuf Struct (the object it must
// be). Errors: CheckStrictJson's, or "<file>: malformed JSON: <what>" (the
// first line of protobuf's message), one line.
[[nodiscard]] Result<google::protobuf::Struct> ParseStrictJsonObject(
    std::string_view text, std::string_view file, int max_depth);

}  // namespace moesim::util

#endif  // MOESIM_UTIL_JSON_CHECK_H_
