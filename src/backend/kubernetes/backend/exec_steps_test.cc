// The framed input of steps without a terminal (exec_steps.h): the exec's stdin cannot be closed
// alone, so the task runs under `sh -c` that unframes it. Checked here with this host's sh, as a
// pod's would run it: every byte arrives, in order, and "0\n" ends the command's input.
#include "backend/kubernetes/backend/exec_steps.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace lockstep::kube {
namespace {

// Runs `argv` (through /bin/sh's quoting-free execvp) with `input` on stdin; its stdout.
std::string RunWithInput(const std::vector<std::string>& argv, const std::string& input) {
  char in_path[] = "/tmp/exec-steps-test-XXXXXX";
  const int fd = ::mkstemp(in_path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::write(fd, input.data(), input.size()), static_cast<ssize_t>(input.size()));
  ::close(fd);
  int out[2];
  EXPECT_EQ(::pipe(out), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    FILE* f = std::freopen(in_path, "r", stdin);
    if (f == nullptr) ::_exit(126);
    ::dup2(out[1], 1);
    ::close(out[0]);
    std::vector<char*> a;
    for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execvp(a[0], a.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string result;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) result.append(buf, n);
  ::close(out[0]);
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

}  // namespace
}  // namespace lockstep::kube
