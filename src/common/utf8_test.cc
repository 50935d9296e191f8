#include "common/utf8.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

TEST(Utf8Test, AcceptsUtf8Text) {
  for (std::string_view text : {"", "plain ascii", "caf\xc3\xa9", "\xe2\x82\xac 5",
                                "\xf0\x9f\x9a\x80", "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf"})
    EXPECT_FALSE(FirstNonUtf8Byte(text).has_value()) << text;
}

TEST(Utf8Test, FindsTheFirstByteThatIsNotUtf8) {
  EXPECT_EQ(FirstNonUtf8Byte("caf\xe9"), 3u);           // Latin-1 é
  EXPECT_EQ(FirstNonUtf8Byte("ab\xe2\x82"), 2u);        // cut inside a sequence
  EXPECT_EQ(FirstNonUtf8Byte("\xc0\xaf"), 0u);          // overlong '/'
  EXPECT_EQ(FirstNonUtf8Byte("x\xed\xa0\x80"), 1u);     // a surrogate
  EXPECT_EQ(FirstNonUtf8Byte("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(FirstNonUtf8Byte("ok\xc3\xa9\x80"), 4u);    // a stray continuation byte
}

TEST(Utf8Test, ReplacesEachBadByteAsGoEncodingJsonDoes) {
  EXPECT_EQ(CoercedToUtf8("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(CoercedToUtf8("caf\xe9!"), "caf\xef\xbf\xbd!");
  // Go's utf8.DecodeRune takes one byte of a cut sequence at a time: two bytes, two U+FFFD.
  EXPECT_EQ(CoercedToUtf8("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(Utf8Test, DescribesWhereTextStopsBeingUtf8) {
  EXPECT_EQ(DescribeNonUtf8("# caf\xe9\n"), "byte 0xe9 at offset 5");
}

}  // namespace
}  // namespace lockstep
