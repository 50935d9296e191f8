// The framed input of steps without a terminal (exec_steps.h): the exec's stdin cannot be closed
// alone, so the task runs under `sh -c` that unframes it. Checked here with this host's sh, as a
// pod's would run it: every byte arrives, in order, and "0\n" ends the command's input.
#include "backend/kubernetes/backend/exec_steps.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace lockstep::kube {
namespace {

// Starts `argv` (execvp, no shell) with its stdout on a pipe, and its stdin read from
// `stdin_path` when one is given; the pid and the pipe's read end.
std::pair<pid_t, int> Spawn(const std::vector<std::string>& argv,
                            const char* stdin_path = nullptr) {
  int out[2];
  EXPECT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (stdin_path != nullptr && std::freopen(stdin_path, "r", stdin) == nullptr) ::_exit(126);
    ::dup2(out[1], 1);
    ::close(out[0]);
    std::vector<char*> a;
    for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execvp(a[0], a.data());
    ::_exit(127);
  }
  ::close(out[1]);
  return {pid, out[0]};
}

// Runs `argv` with `input` on stdin; its stdout.
std::string RunWithInput(const std::vector<std::string>& argv, const std::string& input) {
  char in_path[] = "/tmp/exec-steps-test-XXXXXX";
  const int fd = ::mkstemp(in_path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, input.data(), input.size()), static_cast<ssize_t>(input.size()));
  ::close(fd);
  auto [pid, out] = Spawn(argv, in_path);
  std::string result;
  char buf[4096];
  for (ssize_t n; (n = ::read(out, buf, sizeof buf)) > 0;) result.append(buf, n);
  ::close(out);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::unlink(in_path);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  return result;
}

TEST(FramedStdin, ChunksArePrefixedWithTheirLengthAndZeroEnds) {
  EXPECT_EQ(FrameStdinChunk("hi\n"), "3\nhi\n");
  EXPECT_EQ(FrameStdinChunk(""), "0\n");
  const std::vector<std::string> argv = FramedStdinArgv({"cat", "-"});
  ASSERT_EQ(argv.size(), 6u);
  EXPECT_EQ(argv[0], "sh");
  EXPECT_EQ(argv[4], "cat");
  EXPECT_EQ(argv[5], "-");
}

TEST(FramedStdin, TheShellUnframesEveryByteAndEndsTheCommandsInput) {
  // Lines, a chunk without a newline, binary bytes, digits that look like a length, and bytes
  // after the end that the command must not see.
  const std::string a = "first line\n", b = "no newline", c = std::string("\x00\xff\n", 3);
  const std::string d = "12\n34\n";
  const std::string framed = FrameStdinChunk(a) + FrameStdinChunk(b) + FrameStdinChunk(c) +
                             FrameStdinChunk(d) + FrameStdinChunk("") + "5\nafter";
  EXPECT_EQ(RunWithInput(FramedStdinArgv({"cat"}), framed), a + b + c + d);
  // A command that counts its input's bytes sees its end (wc ends).
  EXPECT_NE(RunWithInput(FramedStdinArgv({"wc", "-c"}), framed).find("30"), std::string::npos);
}

// Reads from `fd` until `text` has come (or the pipe closes); what was read.
std::string ReadUntil(int fd, const std::string& text) {
  std::string got;
  char buf[256];
  while (got.find(text) == std::string::npos) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

int ExitCode(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(TaskSignals, TheWrapperRecordsTheCommandsPidAndKillSignalsIt) {
  char dir[] = "/tmp/exec-steps-signal-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string pid_file = std::string(dir) + "/task.pid";
  EXPECT_EQ(TaskPidFile(7, 2, 1), "/tmp/.lockstep-step-7.2.1.pid");
  // A task that reports SIGUSR1 and ends; the wrapper becomes it (its PID is the file's).
  auto [pid, out] = Spawn(PidFileArgv(
      pid_file, {"sh", "-c", "trap 'echo got-usr1; exit 4' USR1; echo ready; while :; do sleep 1; done"}));
  ASSERT_NE(ReadUntil(out, "ready\n").find("ready"), std::string::npos);
  std::ifstream in(pid_file);
  pid_t recorded = 0;
  in >> recorded;
  EXPECT_EQ(recorded, pid);
  auto [killer, killer_out] = Spawn(KillArgv(pid_file, SIGUSR1));
  EXPECT_EQ(ExitCode(killer), 0);
  ::close(killer_out);
  EXPECT_NE(ReadUntil(out, "got-usr1").find("got-usr1"), std::string::npos);
  EXPECT_EQ(ExitCode(pid), 4);
  ::close(out);
  // No PID file (the task never started): the kill says so with its exit code, and sends nothing.
  ::unlink(pid_file.c_str());
  auto [none, none_out] = Spawn(KillArgv(pid_file, SIGKILL));
  EXPECT_EQ(ExitCode(none), 3);
  ::close(none_out);
  ::rmdir(dir);
}

}  // namespace
}  // namespace lockstep::kube
