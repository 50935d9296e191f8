// srun's standard input on its way to a step's tasks (docs/api.md, "Step input"): srun posts
// what it reads (and its terminal's size, for --pty) to lockstepd, and the agent of each node
// with a task that reads it long-polls for the bytes and writes them into the task's pipe or
// pseudo-terminal. lockstepd relays: it keeps, per step, the bytes not yet taken by every
// reading node, bounded, so a task that reads slowly makes srun wait rather than lockstepd grow.
// Not durable: it lives in memory from the step's start to its end.
//
// Both sides go through the ordinary API (Unix socket or HTTPS with a token), so the relay
// needs no connection of its own and has the API's authentication, limits and deadlines.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"

namespace lockstep::controller {

// What srun asked for its step's input (POST .../steps: "input", "input_file", "pty", "rows",
// "cols"): srun's input to every task ("all"), to one ("0", "5"), to none ("none", the default),
// or a file each task opens (a Slurm filename pattern: %t, %j, %s, ...).
struct StepInputRequest {
  enum class Mode { kNone, kAll, kTask, kFile };
  Mode mode = Mode::kNone;
  int task = 0;
  std::string file;
  bool pty = false;  // task `task` (0) runs on a pseudo-terminal
  int rows = 0, cols = 0;
  bool Forwards(int rank) const {
    return mode == Mode::kAll || (mode == Mode::kTask && rank == task);
  }
};
Result<StepInputRequest> DecodeStepInputRequest(const nlohmann::json& step_request);

// What srun sends: bytes from `offset` of its input (a resend of bytes already taken is
// skipped), its end, and the terminal's size when it changed. Or what sattach sends
// (`append`): bytes added after whatever the step's input holds, offsets left to srun's own.
struct StepInputWrite {
  bool append = false;
  std::uint64_t offset = 0;
  std::string data;
  bool eof = false;
  std::optional<std::pair<int, int>> winsize;  // rows, columns
};

// Decodes srun's body {"offset", "data" (base64), "eof", "rows", "cols"}, or sattach's
// {"append": true, "data", "eof"}; errors name the field.
Result<StepInputWrite> DecodeStepInputWrite(const nlohmann::json& body);

// The input of every step whose stdin srun forwards, by (job, step). Thread-safe: its own lock,
// never held while an answer is given; `Close` may be called under the controller's lock (it
// only marks and wakes). Answers of long polls come from the calling thread when ready at once,
// else from its timer thread, once each. The destructor answers every waiter (closed).
class StepInputs {
 public:
  using Key = std::pair<std::uint64_t, std::int32_t>;
  using Done = std::function<void(Result<nlohmann::json>)>;
  static constexpr std::size_t kCapacity = 1 << 20;   // bytes held per step
  static constexpr std::size_t kReadMax = 256 << 10;  // bytes per answer to an agent

  StepInputs();
  ~StepInputs();
  StepInputs(const StepInputs&) = delete;
  StepInputs& operator=(const StepInputs&) = delete;

  // `readers`: the nodes whose agents read the input; the bytes stay until each has taken them.
  // rows/cols: the terminal's first size (0: none).
  void Open(Key key, std::vector<std::string> readers, int rows, int cols);
  // The step ended: waiters are answered {"closed": true}, the bytes go.
  void Close(Key key);
  bool IsOpen(Key key) const;

  // srun's write. Answers {"offset": end of what is taken of srun's input, "eof", "closed"};
  // when the buffer is full and `wait` > 0, once there is room (or the step closed, or the wait
  // ended). An append (sattach's) answers {"taken": bytes of it taken, "eof", "closed"}.
  void Write(Key key, StepInputWrite write, std::chrono::milliseconds wait, Done done);
  // An agent's read for `reader` from `offset` (which also says it took everything before):
  // {"data" (base64), "offset" (to ask next), "eof" (no more will come), "closed", "rows",
  // "cols", "winsize" (the size's version)}; waits up to `wait` for bytes, the end, or a size
  // newer than `winsize_seen`.
  void Read(Key key, const std::string& reader, std::uint64_t offset, std::uint64_t winsize_seen,
            std::chrono::milliseconds wait, Done done);

 private:
  using SteadyClock = std::chrono::steady_clock;
  struct Stream {
    std::string data;                            // the bytes not yet taken by every reader
    std::uint64_t base = 0;                      // the offset of data[0]
    std::uint64_t from_srun = 0;                 // srun's bytes taken: its offsets' end
    bool eof = false;                            // the input ended (srun's or sattach's)
    bool closed = false;                         // the step ended
    std::map<std::string, std::uint64_t> taken;  // per reader: the offset it asked from
    int rows = 0, cols = 0;
    std::uint64_t winsize_version = 0;
    std::uint64_t end() const { return base + data.size(); }
  };
  struct Waiter {
    Key key;
    bool writer = false;  // srun or sattach waiting for room; else an agent waiting for input
    bool append = false;  // the writer is sattach's
    std::string reader;
    std::uint64_t offset = 0, winsize_seen = 0;
    SteadyClock::time_point deadline;
    Done done;
  };
  // A write's answer: srun's offset, or how much of sattach's append was taken.
  static nlohmann::json WriteAnswer(const Stream& s, bool append, std::size_t taken);
  // Requires mu_: an answer when the waiter can be answered now, else nullopt.
  std::optional<Result<nlohmann::json>> TryAnswerLocked(Waiter& w, bool expired);
  void TimerLoop();

  mutable std::mutex mu_;
  std::map<Key, Stream> streams_;  // guarded by mu_
  std::vector<Waiter> waiters_;    // guarded by mu_
  bool stopping_ = false;          // guarded by mu_
  std::condition_variable changed_;
  std::thread timer_;
};

}  // namespace lockstep::controller
