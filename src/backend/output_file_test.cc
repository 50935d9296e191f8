// Issue 17: `lockstep logs` on an output path a user replaced with a FIFO blocked a lockstepd
// thread forever (open without O_NONBLOCK waits for a writer). Each thing a path can be replaced
// with is refused at once with a message saying what it is.
#include "backend/output_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace lockstep::backend {
namespace {

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "/output_file_test.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);  // other users look in as themselves
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  static std::uint32_t Me() { return ::geteuid(); }

  std::string dir_;
};

std::string Refusal(const Result<std::string>& r) {
  EXPECT_FALSE(r.ok());
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << r.status().ToString();
  return r.status().message();
}

TEST_F(OutputFileTest, ReadsTheOwnersRegularFile) {
  std::ofstream(Path("slurm-1.out")) << "hello\n";
  Result<std::string> r = ReadOwnOutput(Path("slurm-1.out"), Me());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "hello\n");
}

TEST_F(OutputFileTest, KeepsOnlyTheLastFourMegabytes) {
  {
    std::ofstream out(Path("big.out"));
    out << std::string(kMaxOutputBytes, 'a') << "tail";
  }
  Result<std::string> r = ReadOwnOutput(Path("big.out"), Me());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->size(), static_cast<std::size_t>(kMaxOutputBytes));
  EXPECT_EQ(r->substr(r->size() - 6), "aatail");
}

// Before the fix this test never returned: open(O_RDONLY) of a FIFO waits for a writer.
TEST_F(OutputFileTest, RegressionAFifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(::mkfifo(Path("slurm-2.out").c_str(), 0644), 0);
  EXPECT_EQ(Refusal(ReadOwnOutput(Path("slurm-2.out"), Me())),
            Path("slurm-2.out") +
                " is a FIFO, not a regular file: only a job's own output file can be read");
}

TEST_F(OutputFileTest, ADeviceThroughASymbolicLinkIsRefused) {
  ASSERT_EQ(::symlink("/dev/zero", Path("slurm-3.out").c_str()), 0);
  EXPECT_NE(Refusal(ReadOwnOutput(Path("slurm-3.out"), Me())).find("a symbolic link"),
            std::string::npos);
}

TEST_F(OutputFileTest, ADeviceOrADirectoryNamedDirectlyIsRefused) {
  EXPECT_NE(Refusal(ReadOwnOutput("/dev/zero", 0)).find("is a character device"),
            std::string::npos);
  ASSERT_EQ(::mkdir(Path("dir").c_str(), 0755), 0);
  EXPECT_NE(Refusal(ReadOwnOutput(Path("dir"), Me())).find("is a directory"), std::string::npos);
}

TEST_F(OutputFileTest, AFileOfAnotherUserIsRefused) {
  std::ofstream(Path("theirs.out")) << "secret\n";
  EXPECT_EQ(Refusal(ReadOwnOutput(Path("theirs.out"), Me() + 1)),
            Path("theirs.out") + " is not a file of the job's user");
}

// Issue 27: lockstepd (root) looked at the user's path as root, so `lockstep logs` said "not a
// file of the job's user" for a file in a directory the user may not search and "No such file"
// for a missing one: whether root's files exist, through -o PATH. The path is now looked at as
// the job's user, and both get the one answer, also through a symbolic link to the directory.
TEST_F(OutputFileTest, RegressionNothingBeyondADirectoryTheUserCannotSearchIsTold) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, as lockstepd runs";
  constexpr std::uint32_t kNobody = 65534;
  ASSERT_EQ(::mkdir(Path("private").c_str(), 0700), 0);
  std::ofstream(Path("private/exists")) << "root's\n";
  ASSERT_EQ(::mkdir(Path("mine").c_str(), 0755), 0);
  ASSERT_EQ(::chown(Path("mine").c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::symlink(Path("private").c_str(), Path("mine/link").c_str()), 0);
  for (const std::string& via : {Path("private"), Path("mine/link")}) {
    Result<std::string> there = ReadOwnOutput(via + "/exists", kNobody);
    Result<std::string> missing = ReadOwnOutput(via + "/missing", kNobody);
    ASSERT_FALSE(there.ok());
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(there.status().code(), StatusCode::kPermissionDenied) << there.status().ToString();
    EXPECT_EQ(missing.status().code(), there.status().code()) << missing.status().ToString();
    EXPECT_EQ(there.status().message(),
              via + "/exists: Permission denied (for the job's user)");
    EXPECT_EQ(missing.status().message(),
              via + "/missing: Permission denied (for the job's user)");
  }
  // The user's own file, in a directory the user may search, is read as before.
  std::ofstream(Path("mine/slurm-4.out")) << "own\n";
  ASSERT_EQ(::chown(Path("mine/slurm-4.out").c_str(), kNobody, kNobody), 0);
  Result<std::string> own = ReadOwnOutput(Path("mine/slurm-4.out"), kNobody);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(*own, "own\n");
}

TEST_F(OutputFileTest, AMissingFileIsNotFound) {
  Result<std::string> r = ReadOwnOutput(Path("none.out"), Me());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace lockstep::backend
