// srun's standard input for the tasks of one step on one node (docs/api.md, "Step input"):
// a thread that long-polls lockstepd for the bytes srun sent and writes them into the tasks'
// stdin pipes, or into the pseudo-terminal of `srun --pty`, whose size it keeps as srun's
// terminal's (TIOCSWINSZ: the kernel then sends SIGWINCH to the task's foreground group).
// Ctrl-C and Ctrl-Z need nothing more: srun's terminal is raw, the bytes reach the task's
// terminal, and its line discipline signals the foreground group, as on a local terminal.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "backend/agent/cgroup.h"  // UniqueFd

namespace lockstep::agent {

class InputFeeder {
 public:
  struct Options {
    std::string server;  // lockstepd (the agent's socket or URL)
    std::uint64_t job = 0;
    std::int32_t step = 0;
    std::string node;  // the reader lockstepd knows: the node these tasks run on
  };
  // `pipes`: write ends of the tasks' stdin pipes; `pty`: the master of a task's terminal (or
  // empty). Both are owned from here on; the thread starts at once.
  InputFeeder(Options options, std::vector<UniqueFd> pipes, UniqueFd pty);
  ~InputFeeder();  // Stop, then waits for the thread (at most one poll's wait)
  InputFeeder(const InputFeeder&) = delete;
  InputFeeder& operator=(const InputFeeder&) = delete;

  void Stop() { stop_ = true; }  // the tasks are gone: returns at once, the thread follows
  bool done() const { return done_; }

 private:
  void Loop();
  // Writes all of `data` to fd, waiting while it is full; false when the reader went away
  // (or Stop was called).
  bool WriteAll(int fd, const std::string& data);

  const Options options_;
  std::vector<UniqueFd> pipes_;  // only the thread touches them after the constructor
  UniqueFd pty_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace lockstep::agent
