// srun's standard input (docs/commands.md, "srun: input and --pty"): which tasks read it
// (--input: "all", "none", a task id, or a file each task opens; by default task 0, as Slurm),
// and, while the step runs, a thread that reads srun's stdin and posts it to lockstepd, which
// relays it to the agents (docs/api.md, "Step input"). With --pty the task runs on a
// pseudo-terminal: srun's own terminal goes raw, so Ctrl-C, Ctrl-Z and every key reach the
// task's terminal, and its size follows srun's (SIGWINCH).
#pragma once

#include <termios.h>

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/status.h"

namespace lockstep::cli {

// Adds the step request's "input", "input_file", "pty", "rows" and "cols" from srun's options
// (--input, --pty) and srun's stdin: a stdin that is /dev/null or closed is not forwarded.
Status AddStepInputFields(const std::map<std::string, std::string>& srun_options,
                          nlohmann::json& request);

// srun's terminal in raw mode while it lives (nothing when stdin is not a terminal); restored
// by the destructor.
class RawTerminal {
 public:
  RawTerminal();
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

 private:
  bool active_ = false;
  termios saved_{};
};

// The size of the terminal on stdin or stdout; false when neither is one.
bool TerminalSize(int& rows, int& cols);

// stdin is /dev/null or not open: there is nothing to forward.
bool StdinIsEmpty();

// Reads srun's stdin on a thread of its own and posts it to the step's input, with the
// terminal's size when `pty` and it changes. Ends at stdin's end (posting it), when the step
// ends, or when destroyed. kAttached is sattach's: its bytes are appended after whatever the
// input holds, leaving the offsets of the step's own srun alone (docs/api.md, "Step input").
class StdinForwarder {
 public:
  enum class Writer { kSrun, kAttached };
  StdinForwarder(unsigned long long job, int step, bool pty, Writer writer = Writer::kSrun);
  // srun's protocol to another input: a login session's (docs/api.md, "Login").
  StdinForwarder(std::string target, bool pty);
  ~StdinForwarder();
  StdinForwarder(const StdinForwarder&) = delete;
  StdinForwarder& operator=(const StdinForwarder&) = delete;

 private:
  StdinForwarder(std::string target, bool pty, Writer writer);
  void Loop();
  const std::string where_;
  const bool pty_;
  const Writer writer_;
  std::atomic<bool> stopping_{false};
  int wake_[2] = {-1, -1};  // the destructor and SIGWINCH write to it
  std::thread thread_;
};

}  // namespace lockstep::cli
