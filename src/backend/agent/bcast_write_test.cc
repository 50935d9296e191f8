// sbcast's writer on a node (bcast_write.h): pieces in order, Slurm's refusals, links never
// followed. It writes as the calling process; the user switch is run_as_user's (tested beside
// it) and the end-to-end tests' (tests/sbcast_test.cc).
#include "backend/agent/bcast_write.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace lockstep::agent {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class BroadcastWriteTest : public ::testing::Test {
 protected:
  BroadcastWriteTest() {
    char tmpl[] = "/tmp/lockstep-bcast-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  ~BroadcastWriteTest() override { std::filesystem::remove_all(dir_); }
  BroadcastPiece Piece(const std::string& name, std::uint64_t offset, bool last) const {
    BroadcastPiece p;
    p.path = dir_ + "/" + name;
    p.offset = offset;
    p.last = last;
    return p;
  }
  std::string dir_;
};

TEST_F(BroadcastWriteTest, PiecesInOrderMakeTheFileWithTheSourcesModeAtTheEnd) {
  BroadcastPiece first = Piece("f", 0, false);
  ASSERT_TRUE(WriteBroadcastPiece(first, "hello ").ok());
  struct stat st {};
  ASSERT_EQ(::stat(first.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);  // Slurm's while it is written
  BroadcastPiece last = Piece("f", 6, true);
  last.mode = 0751;
  ASSERT_TRUE(WriteBroadcastPiece(last, "world").ok());
  EXPECT_EQ(Slurp(first.path), "hello world");
  ASSERT_EQ(::stat(first.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0751u);
}

TEST_F(BroadcastWriteTest, PreserveSetsTheTimes) {
  BroadcastPiece p = Piece("t", 0, true);
  p.mode = 0644;
  p.atime = 1000000000;
  p.mtime = 1234567890;
  ASSERT_TRUE(WriteBroadcastPiece(p, "x").ok());
  struct stat st {};
  ASSERT_EQ(::stat(p.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mtime, 1234567890);
  EXPECT_EQ(st.st_atime, 1000000000);
}

TEST_F(BroadcastWriteTest, AnExistingFileIsRefusedUnlessForced) {
  BroadcastPiece p = Piece("e", 0, true);
  p.mode = 0600;
  ASSERT_TRUE(WriteBroadcastPiece(p, "first, and longer").ok());
  Status again = WriteBroadcastPiece(p, "second");
  EXPECT_EQ(again.message(), "File exists");
  EXPECT_EQ(Slurp(p.path), "first, and longer");
  p.force = true;
  ASSERT_TRUE(WriteBroadcastPiece(p, "second").ok());
  EXPECT_EQ(Slurp(p.path), "second");  // truncated, not overlaid
}

TEST_F(BroadcastWriteTest, ALinkAtTheNameIsNeverFollowedEvenForced) {
  const std::string target = dir_ + "/roots-file";
  { std::ofstream(target) << "root's"; }
  ASSERT_EQ(::symlink(target.c_str(), (dir_ + "/link").c_str()), 0);
  BroadcastPiece p = Piece("link", 0, true);
  EXPECT_EQ(WriteBroadcastPiece(p, "planted").message(), "File exists");
  p.force = true;
  EXPECT_EQ(WriteBroadcastPiece(p, "planted").message(), "Too many levels of symbolic links");
  p.offset = 3;  // a later piece does not follow it either
  EXPECT_EQ(WriteBroadcastPiece(p, "planted").message(), "Too many levels of symbolic links");
  EXPECT_EQ(Slurp(target), "root's");
}

TEST_F(BroadcastWriteTest, OnlyARegularFileIsWritten) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  BroadcastPiece p = Piece("fifo", 0, true);
  p.force = true;
  EXPECT_EQ(WriteBroadcastPiece(p, "x").message(), "Not a regular file");
  EXPECT_EQ(WriteBroadcastPiece(Piece("no-such-dir/f", 0, true), "x").message(),
            "No such file or directory");
}

TEST(BroadcastPieceArgs, RoundTripAndRefuseWhatIsNotAPiece) {
  BroadcastPiece p;
  p.path = "/tmp/a b";
  p.offset = 1u << 30;
  p.force = true;
  p.mode = 0755;
  p.atime = 5, p.mtime = 6;
  Result<BroadcastPiece> back = ParseBroadcastPieceArgs(BroadcastPieceArgs(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->path, p.path);
  EXPECT_EQ(back->offset, p.offset);
  EXPECT_TRUE(back->force);
  EXPECT_FALSE(back->last);
  EXPECT_EQ(back->mode, 0755u);
  EXPECT_EQ(back->mtime, 6);
  std::vector<std::string> bad = BroadcastPieceArgs(p);
  bad[1] = "-1";
  EXPECT_FALSE(ParseBroadcastPieceArgs(bad).ok());
  bad = BroadcastPieceArgs(p);
  bad[4] = "4095";  // beyond 0777
  EXPECT_FALSE(ParseBroadcastPieceArgs(bad).ok());
  EXPECT_FALSE(ParseBroadcastPieceArgs({"/x"}).ok());
}

}  // namespace
}  // namespace lockstep::agent
