// Launcher: a task whose own files block (a FIFO without a reader as its output, issue 27)
// holds only the thread that spawns it, and only until that thread gives up; other spawns go on.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <future>
#include <thread>

#include "backend/agent/launcher.h"
#include "backend/agent/launcher_test_util.h"
#include "common/wait_for.h"

namespace lockstep::agent {
namespace {

using namespace std::chrono_literals;
using testing::BaseSpec;
using testing::ReadFile;
using testing::SharedLauncher;
using testing::TempDir;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Whether a child of this process waits in the kernel for the other end of a FIFO.
bool AChildWaitsForAFifoPartner() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = ReadFile(entry.path().string() + "/stat");
    const std::size_t paren = stat.rfind(')');
    long ppid = 0;
    char state = 0;
    if (paren == std::string::npos ||
        std::sscanf(stat.c_str() + paren + 1, " %c %ld", &state, &ppid) != 2 ||
        ppid != ::getpid())
      continue;
    if (ReadFile(entry.path().string() + "/wchan") == "wait_for_partner") return true;
  }
  return false;
}

TEST(LauncherBlockingTest, AFifoOutputHoldsOnlyItsOwnSpawnUntilItGivesUp) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.File("fifo").c_str(), 0600), 0);
  TaskSpec blocked = BaseSpec(dir, {"/bin/sh", "-c", "echo never > never"});
  blocked.stdout_path = dir.File("fifo");
  std::atomic<bool> give_up{false};
  auto stuck = std::async(std::launch::async, [&] {
    return SharedLauncher().Spawn(blocked, [&] { return give_up.load(); });
  });
  // While it waits for a reader, other tasks start and end (their launch reports are not held
  // by the waiting child's copy of their pipes).
  for (int i = 0; i < 3; ++i) {
    TaskSpec other = BaseSpec(dir, {"/bin/echo", "other"});
    auto pid = SharedLauncher().Spawn(other);
    ASSERT_TRUE(pid.ok()) << pid.status().ToString();
    auto exit = SharedLauncher().Wait(*pid);
    ASSERT_TRUE(exit.ok());
    EXPECT_EQ(exit->exit_code, 0);
  }
  EXPECT_EQ(ReadFile(dir.File("out")), "other\n");
  ASSERT_TRUE(lockstep::testing::WaitFor(AChildWaitsForAFifoPartner, 10s));
  EXPECT_EQ(stuck.wait_for(0s), std::future_status::timeout);
  give_up = true;
  Result<pid_t> result = stuck.get();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(result.status().message(),
                       "it was still opening output file '" + dir.File("fifo") + "'"))
      << result.status().message();
  // The child is gone: a reader now finds no writer, and the program never ran.
  const int reader = ::open(dir.File("fifo").c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  char c;
  EXPECT_EQ(::read(reader, &c, 1), 0);  // EOF: nobody holds the write end
  ::close(reader);
  EXPECT_FALSE(std::filesystem::exists(dir.File("never")));
}

TEST(LauncherBlockingTest, AFifoWithAReaderIsWrittenAsAnyOutputFile) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.File("fifo").c_str(), 0600), 0);
  TaskSpec spec = BaseSpec(dir, {"/bin/echo", "through the fifo"});
  spec.stdout_path = dir.File("fifo");
  auto reader = std::async(std::launch::async, [&] { return ReadFile(dir.File("fifo")); });
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  EXPECT_EQ(reader.get(), "through the fifo\n");
  ASSERT_TRUE(SharedLauncher().Wait(*pid).ok());
}

TEST(LauncherBlockingTest, TheWorkingDirectoryIsCheckedByTheTaskAsItsUser) {
  TempDir dir;
  TaskSpec spec = BaseSpec(dir, {"/bin/true"});
  spec.cwd = dir.File("missing");
  auto pid = SharedLauncher().Spawn(spec);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(pid.status().message(),
                       "cannot change to working directory '" + dir.File("missing") + "' as uid"))
      << pid.status().message();
}

}  // namespace
}  // namespace lockstep::agent
