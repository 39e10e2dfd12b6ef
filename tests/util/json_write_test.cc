#include "util/json_write.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "util/json_check.h"

namespace moesim::util {
namespace {

using Layout = JsonWriter::Layout;

// The layout every report uses: a kLines object one member a line, nested
// containers inline unless opened kLines; the text parses as strict JSON.
TEST(JsonWriter, LinesAndInlineContainers) {
  JsonWriter w;
  w.BeginObject(Layout::kLines);
  w.Key("model").String("deepseek-v3");
  w.Key("layout").BeginObject().Key("tp").Number(2).Key("pp").Number(8);
  w.EndObject();
  w.Key("stages").BeginArray(Layout::kLines);
  w.BeginObject().Key("pp_rank").Number(0).Key("peak").Fixed(51.6507, 3);
  w.EndObject();
  w.BeginObject().Key("pp_rank").Number(1).Key("peak").Fixed(1, 3);
  w.EndObject();
  w.EndArray();
  w.Key("fits").Bool(true).Key("none").Null();
  w.Key("warnings").Strings({"a \"b\"", "c"});
  w.Key("empty").BeginArray(Layout::kLines).EndArray();
  w.EndObject();
  const std::string text = std::move(w).Take();
  EXPECT_EQ(text,
            "{\n"
            "  \"model\": \"deepseek-v3\",\n"
            "  \"layout\": {\"tp\": 2, \"pp\": 8},\n"
            "  \"stages\": [\n"
            "    {\"pp_rank\": 0, \"peak\": 51.651},\n"
            "    {\"pp_rank\": 1, \"peak\": 1.000}\n"
            "  ],\n"
            "  \"fits\": true,\n"
            "  \"none\": null,\n"
            "  \"warnings\": [\"a \\\"b\\\"\", \"c\"],\n"
            "  \"empty\": []\n"
            "}\n");
  EXPECT_TRUE(CheckStrictJson(text, "w.json", 8));
}

// Numbers as JsonNumber writes them: integers exactly, others to six
// significant digits, and no NaN or infinity (RFC 8259 has neither).
TEST(JsonWriter, NumbersStayJson) {
  JsonWriter w;
  w.BeginArray();
  w.Number(1048576).Number(0.1234567).Number(std::nan(""));
  w.Number(std::numeric_limits<double>::infinity()).Fixed(std::nan(""), 3);
  w.EndArray();
  EXPECT_EQ(std::move(w).Take(), "[1048576, 0.123457, null, null, null]\n");
}

}  // namespace
}  // namespace moesim::util
