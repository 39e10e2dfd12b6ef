#include "util/textproto.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/wrappers.pb.h>
#include <gtest/gtest.h>

namespace moesim::util {
namespace {

TEST(ParseTextProto, ErrorNamesFileLineAndColumn) {
  google::protobuf::Value value;
  auto r =
      ParseTextProto("number_value: 1\nbogus_field: 2\n", "x.textproto", value);
  ASSERT_FALSE(r);
  // Line 2, column 1: the parser reports the unknown field where it starts.
  EXPECT_EQ(r.error().message.rfind("x.textproto:2:", 0), 0u)
      << r.error().message;
  EXPECT_NE(r.error().message.find("bogus_field"), std::string::npos);
}

TEST(FieldLine, FindsFieldAtLineStart) {
  constexpr std::string_view text =
      "model: \"x\"\nlayout {\n  context_parallel_size: 3\n}\n";
  EXPECT_EQ(FieldLine(text, "layout"), 2);
  EXPECT_EQ(FieldLine(text, "context_parallel_size"), 3);
  EXPECT_EQ(FieldLine(text, "missing"), 0);
}

TEST(FindOutOfRange, NamesTheFirstBrokenFieldWithItsPathAndValue) {
  // Nested and repeated: list_value.values[1].number_value = -2.
  google::protobuf::Value value;
  ASSERT_TRUE(ParseTextProto(
      "list_value { values { number_value: 1 } values { number_value: -2 } }",
      "v.textproto", value));
  auto bad = FindOutOfRange(value, 10);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->path, "list_value.values.number_value");
  EXPECT_EQ(bad->field, "number_value");
  EXPECT_EQ(bad->rule, "must be finite, >= 0 and <= 10, got -2");

  for (const char* text :
       {"number_value: nan", "number_value: inf", "number_value: 10.5"}) {
    google::protobuf::Value v;
    ASSERT_TRUE(ParseTextProto(text, "v.textproto", v));
    EXPECT_TRUE(FindOutOfRange(v, 10)) << text;
  }
  google::protobuf::Value in_range;
  ASSERT_TRUE(ParseTextProto("number_value: 10", "v.textproto", in_range));
  EXPECT_FALSE(FindOutOfRange(in_range, 10));

  // Integers print as written: a double would round 2^63 - 1 to 2^63.
  google::protobuf::Int64Value huge;
  huge.set_value(INT64_MAX);
  auto h = FindOutOfRange(huge, 2147483648.0);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->rule,
            "must be finite, >= 0 and <= 2147483648, got 9223372036854775807");
}

TEST(CheckNumericRanges, ErrorNamesFileLineFieldAndRule) {
  google::protobuf::Value value;
  const std::string text = "\nnumber_value: -1\n";
  ASSERT_TRUE(ParseTextProto(text, "v.textproto", value));
  auto r = CheckNumericRanges(value, "v.textproto", text, 5);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "v.textproto:2: number_value: must be finite, >= 0 and <= 5, got "
            "-1");
}

TEST(ReadFile, MissingFileIsAnError) {
  auto r = ReadFile("/nonexistent/moesim.textproto");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "/nonexistent/moesim.textproto: cannot read file");
}

}  // namespace
}  // namespace moesim::util
