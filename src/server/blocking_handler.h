// Running blocking request functions without blocking the server: a bounded pool of worker
// threads (WorkerPool) and the Handler that hands each request to it (BlockingHandler). This
// is how a route function written in the blocking style (one request in, one response out,
// maybe waiting for an event) serves behind the asynchronous Server.
//
// Threads: BlockingHandler::Handle is called on a server I/O thread and only queues the work;
// the function runs on one of the pool's threads, which answers through the Responder. At most
// `threads` functions run at once; more requests wait in the queue (at most one per open
// connection, so the server's connection cap bounds it).
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <cstddef>
#include <functional>

#include "server/handler.h"

namespace lockstep::server {

// A fixed number of threads running queued work in order.
//
// Ownership: owns its threads. The destructor drops work not yet started (a dropped request
// is answered 500 by its Responder, or not at all when the server is gone) and waits for the
// work that is running.
// Thread-safety: Post may be called from any thread.
class WorkerPool {
 public:
  explicit WorkerPool(std::size_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Post(std::function<void()> work);
  std::size_t threads() const { return threads_; }

 private:
  std::size_t threads_;
  boost::asio::thread_pool pool_;
};

// A Handler that runs `function` for each request on a WorkerPool and answers with what it
// returns. The function may block (a store read, a long poll); it must not throw (if it does,
// the client gets 500 with no detail).
//
// Ownership: borrows the pool, which must outlive this handler's last request.
// Thread-safety: Handle may be called from any number of threads; `function` runs on up to
// pool.threads() threads at once and must be safe for that.
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
