// Crash tests: nothing acknowledged may be lost when the process is killed (fork + SIGKILL) or
// when the machine loses power (FaultInjectionVfs drops every unsynced write).
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "store/fault_vfs.h"
#include "store/store.h"
#include "store/test_util.h"

namespace lockstep::store {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr int kWriterThreads = 4;

// What a writer learned was acknowledged: keys whose Put returned ok, and the end (one past the
// last) of every id range AllocateIds returned.
struct Acknowledged {
  std::vector<std::string> keys;
  std::uint64_t id_end = 1;
};

void ExpectAllPresent(const StoreOptions& options, const Acknowledged& acked) {
  auto store = OpenForTest(options);
  ASSERT_NE(store, nullptr);
  std::size_t missing = 0;
  for (const std::string& key : acked.keys) {
    Result<std::optional<std::string>> value = store->Get("jobs", key);
    ASSERT_TRUE(value.ok()) << value.status().ToString();
    if (!value->has_value()) {
      ++missing;
    } else {
      EXPECT_EQ(**value, "job " + key);
    }
  }
  EXPECT_EQ(missing, 0u) << "of " << acked.keys.size() << " acknowledged keys";
  Result<std::uint64_t> next = store->AllocateIds("job", 1);
  ASSERT_TRUE(next.ok());
  EXPECT_GE(*next, acked.id_end) << "an acknowledged id would be handed out again";
}

// --- Process crash: the child writes and reports each acknowledgement down a pipe. ---

// Runs in the forked child; never returns. Each line written to `fd` is one acknowledgement:
// "k <key>" or "i <end of id range>". Lines are shorter than PIPE_BUF, so writes are atomic.
[[noreturn]] void RunWriterChild(const StoreOptions& options, int round, int fd) {
  Result<std::unique_ptr<Store>> opened = Store::Open(options);
  if (!opened.ok()) _exit(3);
  Store& store = **opened;
  auto report = [fd](const std::string& line) {
    if (write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(5);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriterThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0;; ++i) {
        const std::string key = fmt::format("r{}-t{}-{}", round, t, i);
        if (!store.Put({{"jobs", key, "job " + key}}).ok()) _exit(4);
        report("k " + key + "\n");
      }
    });
  }
  threads.emplace_back([&] {
    for (std::uint64_t count = 1;; count = count % 3 + 1) {
      Result<std::uint64_t> first = store.AllocateIds("job", count);
      if (!first.ok()) _exit(4);
      report("i " + std::to_string(*first + count) + "\n");
    }
  });
  for (;;) pause();
}

// Reads what `fd` has within `timeout` (forever when negative), appending to `out`. Returns false
// at end of file.
bool ReadSome(int fd, std::string* out, milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  const int ready = poll(&p, 1, static_cast<int>(timeout.count()));
  if (ready < 0) return errno == EINTR;
  if (ready == 0) return true;
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0) return errno == EINTR;
  out->append(buf, static_cast<std::size_t>(n));
  return n > 0;
}

void Parse(const std::string& lines, Acknowledged* acked) {
  std::istringstream in(lines);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // a line without its newline was never completely reported
    if (line.rfind("k ", 0) == 0) acked->keys.push_back(line.substr(2));
    if (line.rfind("i ", 0) == 0) {
      acked->id_end = std::max<std::uint64_t>(acked->id_end, std::stoull(line.substr(2)));
    }
  }
}

TEST(StoreCrashTest, KilledProcessLosesNothingAcknowledged) {
  TempDir dir;
  StoreOptions options;
  options.path = dir.File("lockstep.db");
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 random(seed);
  Acknowledged acked;  // over all rounds: every round recovers the previous rounds' crashes
  for (int round = 0; round < 4; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(fds[0]);
      RunWriterChild(options, round, fds[1]);
    }
    close(fds[1]);
    // Kill at a random moment after the first acknowledgement.
    std::string lines;
    bool open = true;
    while (open && lines.find('\n') == std::string::npos) {
      open = ReadSome(fds[0], &lines, milliseconds(-1));
    }
    const auto deadline = steady_clock::now() + milliseconds(random() % 300);
    while (open && steady_clock::now() < deadline) {
      open = ReadSome(fds[0], &lines,
                      std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now()));
    }
    ASSERT_EQ(kill(child, SIGKILL), 0);
    while (open) open = ReadSome(fds[0], &lines, milliseconds(-1));  // reported before dying
    close(fds[0]);
    int wstatus = 0;
    ASSERT_EQ(waitpid(child, &wstatus, 0), child);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited early with status " << wstatus;
    const std::size_t before = acked.keys.size();
    Parse(lines, &acked);
    EXPECT_GT(acked.keys.size(), before);
    ExpectAllPresent(options, acked);
  }
}

// --- Power loss: only what SQLite fsync'd survives. ---

// Writes from several threads until the power is cut at a random moment (once a random number of
// writes, 1 to 100, is acknowledged: a point in the stream, not a delay, so that a slow machine
// cuts mid-stream too); returns what was acknowledged. The store is closed (uncleanly, every write failing) before it returns.
Acknowledged WriteUntilPowerCut(const StoreOptions& options, FaultInjectionVfs* vfs,
                                std::mt19937* random) {
  Acknowledged acked;
  std::mutex mu;
  std::condition_variable acked_more;
  const std::size_t cut_after = 1 + (*random)() % 100;
  auto store = OpenForTest(options);
  if (store == nullptr) return acked;
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriterThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; !failed; ++i) {
        const std::string key = fmt::format("t{}-{}", t, i);
        if (!store->Put({{"jobs", key, "job " + key}}).ok()) break;
        {
          std::lock_guard<std::mutex> lock(mu);
          acked.keys.push_back(key);
        }
        acked_more.notify_all();
      }
      failed = true;
      { std::lock_guard<std::mutex> lock(mu); }
      acked_more.notify_all();
    });
  }
  threads.emplace_back([&] {
    while (!failed) {
      Result<std::uint64_t> first = store->AllocateIds("job", 2);
      if (!first.ok()) break;
      std::lock_guard<std::mutex> lock(mu);
      acked.id_end = std::max(acked.id_end, *first + 2);
    }
    failed = true;
    { std::lock_guard<std::mutex> lock(mu); }  // a waiter between its check and its wait sees it
    acked_more.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    acked_more.wait(lock, [&] { return failed || acked.keys.size() >= cut_after; });
  }
  vfs->CutPower();
  for (std::thread& t : threads) t.join();
  // After the cut every write fails, and the store refuses further writes with that error.
  const Status after = store->Put({{"jobs", "after", "x"}});
  EXPECT_EQ(after.code(), StatusCode::kIoError) << after.ToString();
  store.reset();
  return acked;
}

TEST(StoreCrashTest, PowerLossLosesNothingAcknowledgedWithSync) {
  TempDir dir;
  FaultInjectionVfs vfs("lockstep-fault-sync");
  StoreOptions options;
  options.path = dir.File("lockstep.db");
  options.vfs = vfs.name();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  std::mt19937 random(seed);
  for (int round = 0; round < 3; ++round) {
    Acknowledged acked = WriteUntilPowerCut(options, &vfs, &random);
    ASSERT_FALSE(acked.keys.empty());
    ASSERT_TRUE(vfs.DropUnsyncedWrites().ok());
    StoreOptions plain = options;
    plain.vfs.clear();
    ExpectAllPresent(plain, acked);
  }
  EXPECT_GT(vfs.syncs(), 0u);
}

// The power-loss test has teeth: without fsync, acknowledged writes are lost.
TEST(StoreCrashTest, PowerLossLosesAcknowledgedWritesWithoutSync) {
  TempDir dir;
  FaultInjectionVfs vfs("lockstep-fault-nosync");
  StoreOptions options;
  options.path = dir.File("lockstep.db");
  options.vfs = vfs.name();
  options.sync = false;
  std::mt19937 random(1);
  Acknowledged acked = WriteUntilPowerCut(options, &vfs, &random);
  ASSERT_FALSE(acked.keys.empty());
  ASSERT_TRUE(vfs.DropUnsyncedWrites().ok());
  options.vfs.clear();
  auto store = OpenForTest(options);
  ASSERT_NE(store, nullptr);
  Result<std::vector<Record>> jobs = store->Scan("jobs");
  ASSERT_TRUE(jobs.ok());
  EXPECT_LT(jobs->size(), acked.keys.size());
}

}  // namespace
}  // namespace lockstep::store
