// The agent's reader of task output: the stdout and stderr pipes of the tasks of steps whose
// output srun follows (docs/api.md, "Step output"). It reads them on a thread of its own as the
// tasks write and hands the bytes on in batches, so that lockstepd gets a few requests a second
// per agent rather than one per line.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/agent/cgroup.h"  // UniqueFd

namespace lockstep::agent {

// Bytes one task wrote to one of its streams, in the order written.
struct OutputChunk {
  std::uint64_t task = 0;  // the id the caller gave in Add
  int stream = 1;          // 1: stdout, 2: stderr
  std::string data;
};

// Reads the pipes it is given and calls `sink` with what came: every `flush_interval`, or at
// once when `flush_bytes` are waiting. Bytes of one task and stream reach the sink in order.
// Memory is bounded: once `max_unacked_bytes` went to the sink without being acknowledged
// (Ack), the pump stops reading, and tasks that write more block in write() until the sink
// catches up, as they would on a slow terminal.
//
// Thread-safe. The pump owns the read ends given to Add and closes them. The callbacks run on
// the pump's thread, one at a time, without the pump's lock held: they may call its methods.
class OutputPump {
 public:
  struct Options {
    std::chrono::milliseconds flush_interval{50};
    std::size_t flush_bytes = 64 * 1024;
    std::size_t max_unacked_bytes = 4 << 20;
    std::function<void(std::vector<OutputChunk>)> sink;
    // Once both pipes of a task are closed (end of file, or Abandon) and all it wrote went to
    // the sink.
    std::function<void(std::uint64_t task)> closed;
  };

  explicit OutputPump(Options options);
  ~OutputPump();  // stops the thread; pipes still open are closed without reading further
  OutputPump(const OutputPump&) = delete;
  OutputPump& operator=(const OutputPump&) = delete;

  // Starts reading a task's pipes; either may be empty (UniqueFd()).
  void Add(std::uint64_t task, UniqueFd out, UniqueFd err);
  // Reads what is in the task's pipes now and closes them, without waiting for end of file: for
  // a task whose processes are gone while something it started (outside its process group)
  // still holds a pipe open.
  void Abandon(std::uint64_t task);
  // The sink delivered `bytes` (of data) further: the pump may read that much more.
  void Ack(std::size_t bytes);

 private:
  struct Stream {
    std::uint64_t task = 0;
    int stream = 1;
    UniqueFd fd;
  };
  void Loop();
  void Wake();
  // Reads one stream once; false at end of file or an error (the stream is then closed).
  bool ReadOnce(Stream& s);
  void Flush();

  const Options options_;
  UniqueFd wake_;  // eventfd: Add, Abandon, Ack and the destructor wake the loop
  std::thread thread_;

  std::mutex mu_;
  bool stopping_ = false;            // guarded by mu_
  std::vector<Stream> incoming_;     // guarded by mu_
  std::set<std::uint64_t> abandon_;  // guarded by mu_
  std::size_t unacked_ = 0;          // guarded by mu_

  // Only the pump's thread touches these.
  std::vector<Stream> streams_;
  std::map<std::uint64_t, int> open_per_task_;
  std::vector<OutputChunk> pending_;
  std::size_t pending_bytes_ = 0;
  std::vector<std::uint64_t> closed_tasks_;  // to report after the next flush
  std::chrono::steady_clock::time_point first_pending_;
};

}  // namespace lockstep::agent
