#include "backend/kubernetes/leader/fence_watchdog.h"

#include <utility>

namespace lockstep::kube {

FenceWatchdog::FenceWatchdog(const WriteFence& fence, std::function<void()> on_expired)
    : fence_(fence), on_expired_(std::move(on_expired)) {
  thread_ = std::thread([this] { Run(); });
}

FenceWatchdog::~FenceWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void FenceWatchdog::Poke() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    poked_ = true;
  }
  cv_.notify_all();
}

void FenceWatchdog::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!fence_.IsOpen()) {
      lock.unlock();
      on_expired_();
      return;
    }
    // Until the deadline as it stands; a renewal in between moves it, and the loop waits again.
    cv_.wait_until(lock, fence_.deadline(), [this] { return stop_ || poked_; });
    poked_ = false;
  }
}

}  // namespace lockstep::kube
