#include "util/csv.h"

#include <gtest/gtest.h>

namespace moesim::util {
namespace {

TEST(CsvTable, QuotedFieldsKeepCommasQuotesAndNewlines) {
  auto table =
      CsvTable::Parse("a,b,c\n1,\"x, \"\"y\"\"\",\"two\nlines\"\n", "t.csv");
  ASSERT_TRUE(table) << table.error().message;
  ASSERT_EQ(table->num_rows(), 1u);
  EXPECT_EQ(table->Get(0, "b"), "x, \"y\"");
  EXPECT_EQ(table->Get(0, "c"), "two\nlines");
  EXPECT_EQ(table->Line(0), 2);
}

TEST(CsvTable, WrongFieldCountNamesFileAndLine) {
  auto table = CsvTable::Parse("a,b\n1,2\n3\n", "t.csv");
  ASSERT_FALSE(table);
  EXPECT_EQ(table.error().message, "t.csv:3: expected 2 fields, found 1");
}

TEST(CsvTable, UnterminatedQuoteIsAnError) {
  auto table = CsvTable::Parse("a\n\"open\n", "t.csv");
  ASSERT_FALSE(table);
  EXPECT_NE(table.error().message.find("unterminated quote"),
            std::string::npos);
}

TEST(CsvTable, MissingColumnReadsEmpty) {
  auto table = CsvTable::Parse("a\n1\n", "t.csv");
  ASSERT_TRUE(table);
  EXPECT_EQ(table->Column("zzz"), -1);
  EXPECT_EQ(table->Get(0, "zzz"), "");
}

TEST(SplitList, AcceptsCommasAndSemicolonsAndTrims) {
  EXPECT_EQ(SplitList(" mla_up_proj; layernorm,moe ,"),
            (std::vector<std::string>{"mla_up_proj", "layernorm", "moe"}));
}

}  // namespace
}  // namespace moesim::util
