#include "util/json_check.h"

#include <gtest/gtest.h>

#include <string>

namespace moesim::util {
namespace {

std::string ErrorOf(std::string_view text, int depth = 32) {
  auto r = CheckStrictJson(text, "f.json", depth);
  return r ? "" : r.error().message;
}

// RFC 8259 values pass, nested and blank-surrounded.
TEST(CheckStrictJson, AcceptsRfc8259) {
  for (std::string_view ok :
       {R"({"a": [1, -2.5e+3, 0, true, false, null, "x\u00e9\n"], "b": {}})",
        "[]", " 7 ", R"({"a": []})", R"("s")"}) {
    EXPECT_EQ(ErrorOf(ok), "") << ok;
  }
}

// What protobuf's lenient parser would take, each refused at its place
// (line:column of the offending character).
TEST(CheckStrictJson, RefusesWhatLenientParsersTake) {
  EXPECT_EQ(ErrorOf("{\"a\": 1,\n}"),
            "f.json:2:1: malformed JSON: trailing comma before '}'");
  EXPECT_EQ(ErrorOf("[1,]"),
            "f.json:1:4: malformed JSON: trailing comma before ']'");
  EXPECT_EQ(
      ErrorOf("{'a': 1}"),
      "f.json:1:2: malformed JSON: single-quoted key (JSON keys take \")");
  EXPECT_EQ(ErrorOf("{\"a\": 'x'}"),
            "f.json:1:7: malformed JSON: single-quoted string (JSON strings "
            "take \")");
  EXPECT_EQ(ErrorOf("{\"a\": 01}"),
            "f.json:1:8: malformed JSON: number with a leading zero");
  EXPECT_EQ(ErrorOf("{\"a\": NaN}"),
            "f.json:1:7: malformed JSON: expected a value");
  EXPECT_EQ(ErrorOf("{} {}"),
            "f.json:1:4: malformed JSON: text after the JSON value");
  EXPECT_EQ(ErrorOf("[1 2]"),
            "f.json:1:4: malformed JSON: expected ',' or ']'");
  EXPECT_EQ(ErrorOf("{\"a\" 1}"),
            "f.json:1:6: malformed JSON: expected ':' after the key");
  EXPECT_EQ(ErrorOf("{\"a\": 1"),
            "f.json:1:8: malformed JSON: unexpected end of input");
}

// Depth is bounded without recursion: a million brackets cost no stack.
TEST(CheckStrictJson, DeepNestingIsRefusedWithoutRecursion) {
  const std::string deep(1'000'000, '[');
  EXPECT_EQ(ErrorOf(deep, 32),
            "f.json:1:33: malformed JSON: nested deeper than 32 levels");
}

}  // namespace
}  // namespace moesim::util
