#include "controller/step_output.h"

#include <gtest/gtest.h>

namespace lockstep::controller {
namespace {

std::string Joined(const StepOutputBuffer::Read& r) {
  std::string s;
  for (const auto& c : r.chunks) s += c.data;
  return s;
}

TEST(StepOutputBufferTest, ReadsByOffsetWithRankAndStream) {
  StepOutputBuffer b(1 << 20);
  b.Append(0, false, "hello\n");
  b.Append(1, true, "oops\n");
  b.Append(1, true, "again\n");  // merged with the chunk before
  StepOutputBuffer::Read r = b.ReadFrom(0, 1 << 20);
  ASSERT_EQ(r.chunks.size(), 2u);
  EXPECT_EQ(r.chunks[0].rank, 0);
  EXPECT_FALSE(r.chunks[0].is_stderr);
  EXPECT_EQ(r.chunks[1].data, "oops\nagain\n");
  EXPECT_TRUE(r.chunks[1].is_stderr);
  EXPECT_EQ(r.next, 17u);
  EXPECT_EQ(r.dropped, 0u);
  // From the middle of a chunk, and at most max_bytes.
  r = b.ReadFrom(3, 5);
  EXPECT_EQ(Joined(r), "lo\noo");
  EXPECT_EQ(r.next, 8u);
  EXPECT_TRUE(b.ReadFrom(17, 100).chunks.empty());
}

TEST(StepOutputBufferTest, DropsTheOldestBytesAndSaysHowManyAReaderMissed) {
  StepOutputBuffer b(10);
  b.Append(0, false, "0123456789");
  b.Append(1, false, "abcd");
  StepOutputBuffer::Read r = b.ReadFrom(0, 100);
  EXPECT_EQ(r.dropped, 4u);
  EXPECT_EQ(Joined(r), "456789abcd");
  EXPECT_EQ(r.next, 14u);
  EXPECT_EQ(b.end(), 14u);
}

// scontrol notify's messages: numbered in order, read from a number, the last 64 kept.
TEST(StepOutputBufferTest, NoticesAreNumberedAndTheOldestGoPastTheLimit) {
  StepOutputBuffer b(10);
  EXPECT_TRUE(b.NoticesFrom(0).empty());
  b.AddNotice("one");
  b.AddNotice("two");
  EXPECT_EQ(b.notice_end(), 2u);
  EXPECT_EQ(b.NoticesFrom(0), (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(b.NoticesFrom(1), (std::vector<std::string>{"two"}));
  EXPECT_TRUE(b.NoticesFrom(2).empty());
  for (int i = 0; i < 100; ++i) b.AddNotice(std::to_string(i));
  EXPECT_EQ(b.notice_end(), 102u);
  const std::vector<std::string> kept = b.NoticesFrom(0);
  ASSERT_EQ(kept.size(), StepOutputBuffer::kMaxNotices);
  EXPECT_EQ(kept.front(), "36");
  EXPECT_EQ(kept.back(), "99");
  EXPECT_EQ(b.end(), 0u) << "notices are not output";
}

}  // namespace
}  // namespace lockstep::controller
