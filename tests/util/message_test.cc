#include "util/message.h"

#include <gtest/gtest.h>

#include <string>

namespace moesim::util {
namespace {

// Control characters from the input never reach the terminal raw: a CR
// would make a two-line error, ESC and BEL drive it, NUL cuts it.
TEST(ShowableMessage, EscapesControlCharacters) {
  const char raw[] = "a\rb\nc\td\x1b[31me\a\0f\x7f";
  EXPECT_EQ(ShowableMessage(std::string(raw, sizeof(raw) - 1)),
            "a\\rb\\nc\\td\\x1B[31me\\x07\\x00f\\x7F");
}

// Valid UTF-8 (a model called "qwen3-ß") stays; stray bytes are escaped.
TEST(ShowableMessage, KeepsValidUtf8AndEscapesInvalidBytes) {
  EXPECT_EQ(ShowableMessage("qwen3-\xc3\x9f"), "qwen3-\xc3\x9f");
  EXPECT_EQ(ShowableMessage("x\xff\xc3y"), "x\\xFF\\xC3y");
  EXPECT_EQ(ShowableMessage("\xed\xa0\x80"), "\\xED\\xA0\\x80");  // surrogate
}

// A 30 MiB name is cut in the middle: the start (file, field) and the end
// (the rule) stay, and the message is bounded.
TEST(ShowableMessage, CutsTheMiddleOfAHugeMessage) {
  const std::string name(30 << 20, 'x');
  const std::string shown =
      ShowableMessage("flags: --model: " + name + ": unknown model");
  EXPECT_LT(shown.size(), kMaxMessageBytes + 64);
  EXPECT_TRUE(shown.starts_with("flags: --model: xxx")) << shown.substr(0, 40);
  EXPECT_TRUE(shown.ends_with("xxx: unknown model"));
  EXPECT_NE(shown.find(" bytes cut] ... "), std::string::npos);
}

TEST(Excerpt, BoundsAndEscapes) {
  EXPECT_EQ(Excerpt("short"), "short");
  EXPECT_EQ(Excerpt(std::string(100, 'a'), 10), "aaaaaaaaaa...");
  EXPECT_EQ(Excerpt("a\rb"), "a\\rb");
}

}  // namespace
}  // namespace moesim::util
