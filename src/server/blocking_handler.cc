#include "server/blocking_handler.h"

#include <system_error>
#include <thread>
#include <utility>

namespace lockstep::server {

WorkerPool::WorkerPool(std::size_t max_threads, std::chrono::milliseconds idle_exit)
    : max_threads_(max_threads), idle_exit_(idle_exit) {}

WorkerPool::~WorkerPool() {
  std::deque<std::function<void()>> dropped;
  {
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;
    dropped.swap(queue_);
    work_or_stop_.notify_all();
    thread_ended_.wait(lock, [&] { return threads_ == 0; });
  }
}

void WorkerPool::Post(std::function<void()> work) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  queue_.push_back(std::move(work));
  // Idle threads take one piece of work each; start a thread for the rest.
  if (queue_.size() <= idle_ || threads_ >= max_threads_) {
    work_or_stop_.notify_one();
    return;
  }
  try {
    std::thread([this] { WorkerLoop(); }).detach();
    ++threads_;
  } catch (const std::system_error&) {
    // No thread now: a running thread takes the work when it is free.
    work_or_stop_.notify_one();
  }
}

void WorkerPool::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    bool woke =
        work_or_stop_.wait_for(lock, idle_exit_, [&] { return !queue_.empty() || stopping_; });
    --idle_;
    if (!woke || stopping_) break;
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    work();
    work = nullptr;  // its captures (a Responder, say) go before the lock is taken again
    lock.lock();
  }
  // The last touch of the pool: the destructor may return as soon as it sees threads_ == 0.
  --threads_;
  thread_ended_.notify_all();
}

std::size_t WorkerPool::threads() {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_;
}

bool WorkerPool::WaitForThreadsAtMostForTest(std::size_t n, std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mu_);
  return thread_ended_.wait_for(lock, limit, [&] { return threads_ <= n; });
}

BlockingHandler::BlockingHandler(WorkerPool& pool, Function function)
    : pool_(pool), function_(std::move(function)) {}

void BlockingHandler::Handle(Request request, Caller caller, Responder respond) {
  pool_.Post([this, request = std::move(request), caller = std::move(caller), respond] {
    Response response;
    try {
      response = function_(request, caller);
    } catch (...) {
      response = JsonError(boost::beast::http::status::internal_server_error,
                           "internal error while handling the request");
    }
    respond.Respond(std::move(response));
  });
}

}  // namespace lockstep::server
