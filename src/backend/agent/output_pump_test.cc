// OutputPump: a task's stdout and stderr, read through pipes as the task writes them.
#include "backend/agent/output_pump.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>

#include "backend/agent/launcher_test_util.h"

namespace lockstep::agent {
namespace {

using namespace std::chrono_literals;
using testing::BaseSpec;
using testing::SharedLauncher;
using testing::TempDir;

// What the pump delivered, per task and stream, and which tasks it closed.
class Collected {
 public:
  OutputPump::Options Options(bool ack = true) {
    OutputPump::Options o;
    o.sink = [this, ack](std::vector<OutputChunk> chunks) {
      std::lock_guard<std::mutex> lock(mu_);
      ++batches_;
      for (OutputChunk& c : chunks) {
        text_[{c.task, c.stream}] += c.data;
        if (ack) acked_ += c.data.size();
      }
      changed_.notify_all();
    };
    o.closed = [this](std::uint64_t task) {
      std::lock_guard<std::mutex> lock(mu_);
      closed_.push_back(task);
      changed_.notify_all();
    };
    return o;
  }
  bool WaitFor(std::uint64_t task, int stream, const std::string& text,
               std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return text_[{task, stream}] == text; });
  }
  bool WaitClosed(std::uint64_t task, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, timeout, [&] {
      return std::find(closed_.begin(), closed_.end(), task) != closed_.end();
    });
  }
  std::string Text(std::uint64_t task, int stream) {
    std::lock_guard<std::mutex> lock(mu_);
    return text_[{task, stream}];
  }
  int batches() {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::pair<std::uint64_t, int>, std::string> text_;
  std::vector<std::uint64_t> closed_;
  std::size_t acked_ = 0;
  int batches_ = 0;
};

struct Pipe {
  UniqueFd read, write;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read = UniqueFd(fds[0]);
    write = UniqueFd(fds[1]);
  }
};

TEST(OutputPumpTest, DeliversATasksOutputAsItComesAndClosesAfterTheLastByte) {
  TempDir dir;
  Collected got;
  OutputPump pump(got.Options());
  Pipe out, err;
  TaskSpec spec =
      BaseSpec(dir, {"/bin/sh", "-c", "echo first; echo oops >&2; sleep 1; echo second"});
  spec.stdout_fd = out.write.get();
  spec.stderr_fd = err.write.get();
  Launcher& l = SharedLauncher();
  Result<pid_t> pid = l.Spawn(spec);
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  out.write.Reset();
  err.write.Reset();
  pump.Add(7, std::move(out.read), std::move(err.read));
  // The first line arrives while the task still sleeps.
  EXPECT_TRUE(got.WaitFor(7, 1, "first\n", 800ms)) << got.Text(7, 1);
  EXPECT_TRUE(got.WaitFor(7, 2, "oops\n", 800ms)) << got.Text(7, 2);
  EXPECT_FALSE(got.WaitClosed(7, 100ms));
  Result<TaskExit> exit = l.Wait(*pid);
  ASSERT_TRUE(exit.ok());
  EXPECT_TRUE(got.WaitClosed(7, 2s));
  EXPECT_EQ(got.Text(7, 1), "first\nsecond\n");
  EXPECT_EQ(got.Text(7, 2), "oops\n");
}

TEST(OutputPumpTest, BatchesManySmallWrites) {
  Collected got;
  OutputPump::Options o = got.Options();
  o.flush_interval = 200ms;
  OutputPump pump(o);
  Pipe p;
  pump.Add(1, std::move(p.read), UniqueFd());
  std::string expected;
  for (int i = 0; i < 200; ++i) {
    std::string line = "line " + std::to_string(i) + "\n";
    expected += line;
    ASSERT_EQ(::write(p.write.get(), line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
  p.write.Reset();
  EXPECT_TRUE(got.WaitClosed(1, 2s));
  EXPECT_EQ(got.Text(1, 1), expected);
  EXPECT_LE(got.batches(), 3);  // not one per line
}

TEST(OutputPumpTest, StopsReadingWhileTooMuchIsUnacknowledgedAndGoesOnAfterAck) {
  Collected got;
  OutputPump::Options o = got.Options(/*ack=*/false);
  o.max_unacked_bytes = 1000;
  o.flush_interval = 10ms;
  OutputPump pump(o);
  Pipe p;
  ::fcntl(p.write.get(), F_SETFL, O_NONBLOCK);
  pump.Add(1, std::move(p.read), UniqueFd());
  std::string block(1500, 'x');
  ASSERT_EQ(::write(p.write.get(), block.data(), block.size()), 1500);
  EXPECT_TRUE(got.WaitFor(1, 1, block, 1s));
  // Past the bound: the pump leaves the next bytes in the pipe.
  ASSERT_EQ(::write(p.write.get(), "more", 4), 4);
  EXPECT_FALSE(got.WaitFor(1, 1, block + "more", 200ms));
  pump.Ack(1500);
  EXPECT_TRUE(got.WaitFor(1, 1, block + "more", 1s));
}

TEST(OutputPumpTest, AbandonReadsWhatIsThereAndClosesAPipeThatStaysOpen) {
  Collected got;
  OutputPump pump(got.Options());
  Pipe p;
  pump.Add(3, std::move(p.read), UniqueFd());
  ASSERT_EQ(::write(p.write.get(), "left\n", 5), 5);
  EXPECT_TRUE(got.WaitFor(3, 1, "left\n", 1s));
  ASSERT_EQ(::write(p.write.get(), "behind\n", 7), 7);
  pump.Abandon(3);  // the write end stays open
  EXPECT_TRUE(got.WaitClosed(3, 1s));
  EXPECT_EQ(got.Text(3, 1), "left\nbehind\n");
}

TEST(OutputPumpTest, ATaskWithoutPipesIsClosedAtOnce) {
  Collected got;
  OutputPump pump(got.Options());
  pump.Add(9, UniqueFd(), UniqueFd());
  EXPECT_TRUE(got.WaitClosed(9, 1s));
}

}  // namespace
}  // namespace lockstep::agent
