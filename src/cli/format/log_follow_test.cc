#include "cli/format/log_follow.h"

#include <gtest/gtest.h>

namespace lockstep::cli {
namespace {

TEST(LogFollower, OneSourcePrintsCompleteLinesAsTheyCome) {
  LogFollower f(7);
  EXPECT_EQ(f.Next("a\nb", false), "a\n");
  EXPECT_EQ(f.Next("a\nb", false), "");
  EXPECT_EQ(f.Next("a\nbc\nd\n", false), "bc\nd\n");
  EXPECT_EQ(f.Next("a\nbc\nd\ne", true), "e\n");
  EXPECT_EQ(f.Next("a\nbc\nd\ne", true), "");
}

TEST(LogFollower, SeveralPodsGrowEachInItsBlock) {
  LogFollower f(12);
  EXPECT_EQ(f.Next("lockstep-12-0: r0 a\nlockstep-12-1: r1 a\n", false),
            "lockstep-12-0: r0 a\nlockstep-12-1: r1 a\n");
  // Pod 0 wrote a line: it is in the middle of the text, and it is the only new one.
  EXPECT_EQ(f.Next("lockstep-12-0: r0 a\nlockstep-12-0: r0 b\nlockstep-12-1: r1 a\n", false),
            "lockstep-12-0: r0 b\n");
}

TEST(LogFollower, OutputThatLooksLikeAPrefixIsNotAPod) {
  LogFollower f(12);
  // Another job's pod name and a plain "key: value" are one source's lines.
  EXPECT_EQ(f.Next("lockstep-13-0: x\nnote: y\n", false), "lockstep-13-0: x\nnote: y\n");
  EXPECT_EQ(f.Next("lockstep-13-0: x\nnote: y\nz\n", false), "z\n");
}

TEST(LogFollower, AShorterBlockIsANewRun) {
  LogFollower f(3);
  EXPECT_EQ(f.Next("one\ntwo\n", false), "one\ntwo\n");
  EXPECT_EQ(f.Next("again\n", false), "again\n");
}

}  // namespace
}  // namespace lockstep::cli
