// Running blocking request functions without blocking the server: a bounded pool of worker
// threads (WorkerPool) and the Handler that hands each request to it (BlockingHandler). This
// is how a route function written in the blocking style (one request in, one response out,
// maybe waiting for an event) serves behind the asynchronous Server.
//
// Threads: BlockingHandler::Handle is called on a server I/O thread and only queues the work;
// the function runs on one of the pool's threads, which answers through the Responder. At most
// `max_threads` functions run at once; more requests wait in the queue (at most one per open
// connection, so the server's connection cap bounds it).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

#include "server/handler.h"

namespace lockstep::server {

// Threads for blocking work, started on demand up to a maximum: work runs in the order it was
// posted, on an idle thread or a new one; a thread idle for `idle_exit` ends. So a quiet
// server holds few threads, and a burst of long polls gets one each, up to the maximum
// (beyond it, work waits in the queue).
//
// Ownership: owns its threads. The destructor drops work not yet started (a dropped request
// is answered 500 by its Responder, or not at all when the server is gone) and waits for the
// work that is running to end.
// Thread-safety: Post and threads may be called from any thread.
class WorkerPool {
 public:
  explicit WorkerPool(std::size_t max_threads,
                      std::chrono::milliseconds idle_exit = std::chrono::seconds(30));
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Post(std::function<void()> work);
  std::size_t max_threads() const { return max_threads_; }
  // Threads now started (running work or idle).
  std::size_t threads();
  // Waits until at most `n` threads are left; false after `limit`.
  bool WaitForThreadsAtMostForTest(std::size_t n, std::chrono::milliseconds limit);

 private:
  void WorkerLoop();

  const std::size_t max_threads_;
  const std::chrono::milliseconds idle_exit_;
  std::mutex mu_;
  std::condition_variable work_or_stop_;  // queue_ not empty, or stopping_
  std::condition_variable thread_ended_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  std::size_t threads_ = 0;                  // guarded by mu_
  std::size_t idle_ = 0;                     // guarded by mu_: threads waiting for work
  bool stopping_ = false;                    // guarded by mu_
};

// A Handler that runs `function` for each request on a WorkerPool and answers with what it
// returns. The function may block (a store read, a long poll); it must not throw (if it does,
// the client gets 500 with no detail).
//
// Ownership: borrows the pool, which must outlive this handler's last request.
// Thread-safety: Handle may be called from any number of threads; `function` runs on up to
// pool.max_threads() threads at once and must be safe for that.
class BlockingHandler : public Handler {
 public:
  using Function = std::function<Response(const Request&, const Caller&)>;
  BlockingHandler(WorkerPool& pool, Function function);

  void Handle(Request request, Caller caller, Responder respond) override;

 private:
  WorkerPool& pool_;
  Function function_;
};

}  // namespace lockstep::server
