// Issue 17: lockstepd.db and its WAL were 0644 in a traversable directory, so any local user
// read every job's script and environment with sqlite3. The store's files are now 0600 and its
// directory closed to listing, both when created and when found open at start.
#include "store/private_files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>

#include "store/test_util.h"

namespace lockstep::store {
namespace {

unsigned ModeOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// Whether uid 65534 (nobody) can open `path` for reading, tried in a child process. Only root
// can become nobody; others get nullopt.
std::optional<bool> NobodyCanRead(const std::string& path) {
  if (::geteuid() != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    const int fd = ::open(path.c_str(), O_RDONLY);
    ::_exit(fd >= 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 2);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class PrivateFilesTest : public testing::Test {
 protected:
  std::string Db() const { return dir_.File("state/lockstepd.db"); }
  std::string Dir() const { return dir_.File("state"); }

  void SetUp() override {
    // The temporary directory lets others pass (as /var/lib does), so that only the store's own
    // modes stand between nobody and the files.
    ASSERT_EQ(::chmod(dir_.File("").c_str(), 0711), 0);
    ASSERT_EQ(::mkdir(Dir().c_str(), 0755), 0);
  }

  // Opens a store and writes a record, so that -wal and -shm exist; checks every mode while
  // it is open.
  void OpenWriteAndCheckModes() {
    StoreOptions options;
    options.path = Db();
    std::unique_ptr<Store> store = OpenForTest(options);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Put({{"scripts", "1", "#!/bin/sh\nexport TOKEN=secret\n"}}).ok());
    EXPECT_EQ(ModeOf(Db()), 0600u);
    EXPECT_EQ(ModeOf(Db() + "-wal"), 0600u);
    EXPECT_EQ(ModeOf(Db() + "-shm"), 0600u);
    EXPECT_EQ(ModeOf(Dir()) & 0066u, 0u) << std::oct << ModeOf(Dir());
    for (const std::string& f : {Db(), Db() + "-wal", Db() + "-shm"}) {
      std::optional<bool> readable = NobodyCanRead(f);
      if (readable) EXPECT_FALSE(*readable) << f;
    }
  }

  TempDir dir_;
};

TEST_F(PrivateFilesTest, RegressionNewStoreFilesAreReadableByTheirOwnerOnly) {
  const mode_t old = ::umask(0);  // the most permissive umask: modes must not depend on it
  OpenWriteAndCheckModes();
  ::umask(old);
}

TEST_F(PrivateFilesTest, FilesAndDirectoryLeftOpenByAnEarlierVersionAreFixedAtStart) {
  OpenWriteAndCheckModes();
  // What an earlier lockstepd left: world-readable files in a listable directory.
  ASSERT_EQ(::chmod(Db().c_str(), 0644), 0);
  std::ofstream(Db() + "-wal").flush();  // a stale WAL (empty: SQLite ignores it)
  ASSERT_EQ(::chmod((Db() + "-wal").c_str(), 0644), 0);
  ASSERT_EQ(::chmod(Dir().c_str(), 0777), 0);
  OpenWriteAndCheckModes();
}

TEST_F(PrivateFilesTest, ASymbolicLinkInPlaceOfTheDatabaseIsRefused) {
  const std::string target = dir_.File("elsewhere");
  std::ofstream(target) << "";
  ASSERT_EQ(::chmod(target.c_str(), 0644), 0);
  ASSERT_EQ(::symlink(target.c_str(), Db().c_str()), 0);
  Status st = MakeStoreFilesPrivate(Db());
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st.ToString();
  EXPECT_EQ(ModeOf(target), 0644u);  // untouched
}

}  // namespace
}  // namespace lockstep::store
