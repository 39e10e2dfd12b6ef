#include "util/textproto.h"

#include <google/protobuf/struct.pb.h>
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

TEST(ReadFile, MissingFileIsAnError) {
  auto r = ReadFile("/nonexistent/moesim.textproto");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "/nonexistent/moesim.textproto: cannot read file");
}

}  // namespace
}  // namespace moesim::util
