// Helpers shared by the launcher's tests: a temporary directory, a base TaskSpec, the shared
// Launcher, and helper modes of the test binary itself (so the tests need nothing but /bin/sh
// and coreutils on the host):
//   launcher_test --alloc-mb N          allocates and touches N MiB, then exits 0
//   launcher_test --escape-session F    starts a child in a session of its own that writes its
//                                       pid to F and sleeps 300 s, then exits 0
// The helper modes run from a static initializer, before GoogleTest's main.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>

#include "backend/agent/launcher.h"

namespace lockstep::agent::testing {

// A fresh directory under /tmp, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The launcher all tests share (thread-safe); created on first use, which logs its cgroup note.
Launcher& SharedLauncher();

// A task as the current user in `dir`, with PATH=/usr/bin:/bin and stdout to dir/out.
TaskSpec BaseSpec(const TempDir& dir, std::vector<std::string> argv);

// The path of this test binary.
std::string SelfExe();

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);

// Waits up to `timeout` for `path` to hold a pid and returns it (0 if none came).
pid_t ReadPidFile(const std::string& path, std::chrono::milliseconds timeout);
// Waits up to `timeout` for text in a file to contain `needle`.
bool WaitForText(const std::string& path, const std::string& needle,
                 std::chrono::milliseconds timeout);

// Whether process pid has ended (gone or a zombie) within `timeout`.
bool WaitGone(pid_t pid, std::chrono::milliseconds timeout);

// A unique cgroup name for a test: "lockstep_test_<pid>_<n>/<leaf>".
std::string UniqueCgroupName(const std::string& leaf);

}  // namespace lockstep::agent::testing
