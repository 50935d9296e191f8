// Crash-only fencing for a leader: calls `on_expired` once when the WriteFence its elector keeps
// open passes its deadline unrenewed (or is closed), so that a replica that can no longer renew
// its lease exits instead of serving on. The store already refuses commits from that instant
// (it checks the fence itself); the watchdog ends the process, whose acknowledged work is
// durable and whose running pods the next leader adopts.
//
//   FenceWatchdog watchdog(fence, [] { log::Error("..."); std::_Exit(1); });
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "common/write_fence.h"

namespace lockstep::kube {

// Owns one thread, started by the constructor and joined by the destructor (which does not call
// `on_expired`). Waits in real time (steady_clock): the fence must read the system's clock.
// Does not own `fence`, which must outlive it. `on_expired` runs on the watchdog's thread.
class FenceWatchdog {
 public:
  FenceWatchdog(const WriteFence& fence, std::function<void()> on_expired);
  ~FenceWatchdog();
  FenceWatchdog(const FenceWatchdog&) = delete;
  FenceWatchdog& operator=(const FenceWatchdog&) = delete;

  // Wakes the watchdog to look at the fence now (after Close(), say) rather than at its deadline.
  void Poke();

 private:
  void Run();

  const WriteFence& fence_;
  const std::function<void()> on_expired_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;    // guarded by mu_
  bool poked_ = false;   // guarded by mu_
  std::thread thread_;
};

}  // namespace lockstep::kube
