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

// A key twice in one object is refused where the second one starts (RFC
// 8259 s4: readers then differ on which value wins); the same key in
// different objects, nested or side by side, is fine.
TEST(CheckStrictJson, RefusesAKeyTwiceInOneObject) {
  EXPECT_EQ(ErrorOf("{\"wall\": \"a\",\n \"wall\": \"b\"}"),
            "f.json:2:2: malformed JSON: key \"wall\" twice in one object");
  EXPECT_EQ(ErrorOf("{\"a\": {\"b\": 1}, \"c\": {\"b\": 2}, \"b\": 3}"), "");
  EXPECT_EQ(ErrorOf("[{\"a\": 1}, {\"a\": 2}]"), "");
  EXPECT_EQ(ErrorOf("{\"a\": {\"a\": {}}, \"x\": {\"y\": 1, \"x\": {}}}"), "");
  EXPECT_EQ(ErrorOf("{\"a\": {}, \"b\": [], \"a\": 1}"),
            "f.json:1:20: malformed JSON: key \"a\" twice in one object");
}

// An object of 200,000 keys is checked in linear time (past 16 keys a
// level hashes them), and a repeat among them is still found.
TEST(CheckStrictJson, ManyKeysStayLinearAndRepeatsAreFound) {
  std::string many = "{";
  for (int i = 0; i < 200'000; ++i) {
    many += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":{\"k1\":1}";
  }
  EXPECT_EQ(ErrorOf(many + "}"), "");
  const std::string repeat = many + ",\"k20\":0}";
  EXPECT_EQ(ErrorOf(repeat),
            "f.json:1:" + std::to_string(repeat.size() - 7) +
                ": malformed JSON: key \"k20\" twice in one object");
}

// Depth is bounded without recursion: a million brackets cost no stack.
TEST(CheckStrictJson, DeepNestingIsRefusedWithoutRecursion) {
  const std::string deep(1'000'000, '[');
  EXPECT_EQ(ErrorOf(deep, 32),
            "f.json:1:33: malformed JSON: nested deeper than 32 levels");
}

}  // namespace
}  // namespace moesim::util
