// End to end: srun outside an allocation, its stdout and stderr pipes (as under a terminal or in
// a shell pipeline), the tasks' output streamed through lockstepd from every node.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

int CountLines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// `lockstep srun ...` as a child with its stdout and stderr on pipes the test reads.
class Srun {
 public:
  Srun(const Cluster& c, const std::vector<std::string>& args) {
    int out[2], err[2];
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      int in = ::open("/dev/null", O_RDONLY);
      ::dup2(in, 0), ::dup2(out[1], 1), ::dup2(err[1], 2);
      if (::chdir(c.work().c_str()) != 0) ::_exit(126);
      ::setenv("LOCKSTEP_STATE_DIR", c.dir().c_str(), 1);
      ::unsetenv("SLURM_JOB_ID");
      std::vector<std::string> argv = {std::string(LOCKSTEP_BIN_DIR) + "/lockstep", "srun"};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> a;
      for (std::string& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      ::execv(a[0], a.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    out_fd_ = out[0];
    err_fd_ = err[0];
  }
  ~Srun() {
    if (pid_ > 0 && exit_code_ < 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) ::close(out_fd_);
    if (err_fd_ >= 0) ::close(err_fd_);
  }

  // Reads until `done()` holds or `timeout` passes (or both pipes are closed); whether it held.
  template <typename Pred>
  bool ReadUntil(Pred done, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!done()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
      if (out_closed_ && err_closed_) return done();
      if (::poll(fds, 2, static_cast<int>(left)) <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (fds[i].revents == 0) continue;
        char buf[4096];
        ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        bool& closed = i == 0 ? out_closed_ : err_closed_;
        if (n <= 0) {
          closed = true;
          fds[i].fd = -1;
          int& fd = i == 0 ? out_fd_ : err_fd_;
          ::close(fd);
          fd = -1;  // poll ignores it
        } else {
          (i == 0 ? out_ : err_).append(buf, static_cast<std::size_t>(n));
        }
      }
    }
    return true;
  }
  // Reads to the end and waits for the exit code (-1 if it did not end in `timeout`).
  int Finish(std::chrono::milliseconds timeout) {
    ReadUntil([&] { return out_closed_ && err_closed_; }, timeout);
    int status = 0;
    if (!WaitFor([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, timeout, 20ms))
      return -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }
  bool Running() {
    int status = 0;
    return ::waitpid(pid_, &status, WNOHANG) == 0;
  }
  void Signal(int signo) { ::kill(pid_, signo); }
  // Waits until `signo` is no longer pending for srun (its handler has run), so that a second
  // one is a second delivery rather than merged into the first; whether it was within `timeout`.
  bool WaitDelivered(int signo, std::chrono::milliseconds timeout) {
    const unsigned long long bit = 1ULL << (signo - 1);
    auto delivered = [&] {
      std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
      unsigned long long pending = 0;
      for (std::string line; std::getline(status, line);)
        if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0)
          pending |= std::stoull(line.substr(7), nullptr, 16);
      return !(pending & bit);
    };
    return WaitFor(delivered, timeout, 1ms);
  }
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  bool out_closed_ = false, err_closed_ = false;
  std::string out_, err_;
  int exit_code_ = -1;
};

ClusterOptions TwoNodes() {
  ClusterOptions o;
  o.nodes = 2;
  o.gpus_per_node = 0;
  o.cpus_per_node = 4;
  return o;
}

// Whatever the old mechanism (srun following a file in the state dir) left behind.
std::vector<std::string> SpoolFilesIn(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("srun-", 0) == 0 || e.path().extension() == ".done") found.push_back(name);
  }
  return found;
}

TEST(Srun, TwoNodeStepStreamsStdoutAndStderrToPipesAndPropagatesTheExitCode) {
  Cluster c(TwoNodes());
  ASSERT_TRUE(c.Start());
  Srun s(c, {"-N", "2", "-n", "4", "sh", "-c",
             "echo rank=$SLURM_PROCID node=$SLURMD_NODENAME; echo problem=$SLURM_PROCID >&2; "
             "[ $SLURM_PROCID = 3 ] && exit 3; exit 0"});
  EXPECT_EQ(s.Finish(20s), 3) << s.err();
  EXPECT_EQ(CountLines(s.out()), 4) << s.out();
  for (int rank = 0; rank < 4; ++rank) {
    std::string node = rank < 2 ? "node1" : "node2";
    EXPECT_TRUE(Contains(s.out(), "rank=" + std::to_string(rank) + " node=" + node + "\n"))
        << s.out();
    EXPECT_TRUE(Contains(s.err(), "problem=" + std::to_string(rank) + "\n")) << s.err();
  }
  EXPECT_FALSE(Contains(s.out(), "problem=")) << s.out();
  // The allocation ended with the step's code.
  nlohmann::json jobs = c.Get("/api/v1/jobs?all=1");
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  nlohmann::json job = c.WaitJob(jobs["jobs"][0]["job_id"].get<unsigned long long>());
  EXPECT_EQ(job["state"], "FAILED");
  EXPECT_EQ(job["exit_code"], 3);

  // -l labels each line with the task's rank.
  Srun labelled(c, {"-l", "-n", "2", "sh", "-c", "printf 'a\\nb\\n'"});
  EXPECT_EQ(labelled.Finish(20s), 0) << labelled.err();
  for (const char* line : {"0: a\n", "0: b\n", "1: a\n", "1: b\n"})
    EXPECT_TRUE(Contains(labelled.out(), line)) << labelled.out();

  EXPECT_EQ(SpoolFilesIn(c.dir()), std::vector<std::string>{});
}

TEST(Srun, OutputArrivesWhileTheStepRunsAndCtrlCTwiceAbortsIt) {
  Cluster c(TwoNodes());
  ASSERT_TRUE(c.Start());
  {
    Srun s(c, {"-n", "1", "sh", "-c", "echo first; sleep 2; echo second"});
    ASSERT_TRUE(s.ReadUntil([&] { return Contains(s.out(), "first\n"); }, 10s)) << s.err();
    EXPECT_FALSE(Contains(s.out(), "second")) << s.out();
    EXPECT_TRUE(s.Running());
    EXPECT_EQ(s.Finish(20s), 0) << s.err();
    EXPECT_EQ(s.out(), "first\nsecond\n");
  }
  {
    // Slurm's Ctrl-C: the first prints the step's state, a second within a second ends it.
    Srun s(c, {"-N", "2", "-n", "2", "sh", "-c", "echo up; exec sleep 60"});
    ASSERT_TRUE(s.ReadUntil([&] { return CountLines(s.out()) == 2; }, 10s)) << s.err();
    s.Signal(SIGINT);
    ASSERT_TRUE(s.ReadUntil([&] { return Contains(s.err(), "tasks 0-1: running"); }, 5s))
        << s.err();
    EXPECT_TRUE(Contains(s.err(), "srun: interrupt (one more within 1 sec to abort)")) << s.err();
    EXPECT_TRUE(s.Running());
    s.Signal(SIGINT);  // a pair within a second, delivered one after the other
    ASSERT_TRUE(s.WaitDelivered(SIGINT, 500ms));
    s.Signal(SIGINT);
    const auto start = Clock::now();
    int code = s.Finish(15s);
    EXPECT_EQ(code, 128 + SIGTERM) << s.err();
    EXPECT_LT(Clock::now() - start, 10s);
  }
  EXPECT_EQ(SpoolFilesIn(c.dir()), std::vector<std::string>{});
}

}  // namespace
}  // namespace lockstep::testing
