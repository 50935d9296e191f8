// Leader election with a coordination.k8s.io/v1 Lease, as client-go's leaderelection package
// does it, so that two or more lockstepd replicas can run and exactly one acts:
//
//   LeaderElector elector(client, {.ns = "lockstep"}, [&] { StartScheduling(); },
//                         [&] { StopScheduling(); });
//   elector.Start();
//   ...
//   elector.Stop();  // steps down: the lease is released, a standby takes over at once
//
// A candidate creates the Lease if it is absent (AlreadyExists: another was faster), takes it
// over once it has expired (its record unchanged for leaseDurationSeconds of this process's own
// monotonic clock, so clock skew does not matter) or been released, and, once leader, renews it
// every retry_period. Writes are conditional on the resourceVersion read (409 Conflict: another
// candidate won the race). A takeover increments leaseTransitions. A leader that cannot renew
// within renew_deadline gives up: IsLeader() turns false and on_stopped_leading is called; it is
// then a candidate again. Since renew_deadline < lease_duration, it has stopped acting before any
// other replica may take over (provided callbacks return promptly).
//
// With a WriteFence (common/write_fence.h) in the options, every successful acquire or renew
// opens it until the write's start + renew_deadline, and losing the lease closes it for good:
// a store given that fence stops committing on time even while a renewal hangs (fencing).
//
// The decision itself is the pure function DecideLeaseAction (lease_record.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/leader/lease_record.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/status.h"
#include "common/write_fence.h"

namespace lockstep::kube {

// Defaults are component-base's (15 s / 10 s / 2 s). Durations are milliseconds so that tests
// can use short ones; assigning std::chrono::seconds works as well. lease_duration must be whole
// seconds (it is written into the Lease), and lease_duration > renew_deadline >
// 1.2 * retry_period > 0 (client-go's rule).
struct LeaderElectionOptions {
  std::string ns = "lockstep";
  std::string name = "lockstepd";
  std::string identity;  // default: hostname + "_" + pid
  std::chrono::milliseconds lease_duration{15'000};
  std::chrono::milliseconds renew_deadline{10'000};
  std::chrono::milliseconds retry_period{2'000};
  // The monotonic clock every decision reads (the lease's expiry as observed, the renew
  // deadline, IsLeader()); the waits between tries stay real time, and the times written into
  // the Lease (MicroTime, for other holders to read) are the system's wall clock. Must outlive
  // the elector.
  lockstep::Clock* clock = &SystemClock();
  // Opened to (start of the last successful write) + renew_deadline, closed when leadership
  // ends; null: none. Must read the same clock as `clock`. Not owned; outlives the elector.
  WriteFence* fence = nullptr;
};

// InvalidArgument naming the option when the durations break the rule above.
Status ValidateLeaderElectionOptions(const LeaderElectionOptions& options);

// $POD_NAME (else the host name) + "_" + pid.
std::string DefaultLeaderIdentity();

// Client options for the elector's own KubeClient: requests that fail fast (one retry, timeouts
// of half the renew deadline), so a hung request cannot outlast the renew deadline unnoticed.
ClientOptions LeaderElectionClientOptions(const LeaderElectionOptions& options);

// Owns one thread, started by Start() and joined by Stop() (or the destructor). Does not own
// `client`, which must outlive it. The callbacks run on that thread, never concurrently, and
// must return promptly (within renew_deadline); they must not call Stop(). IsLeader() is
// thread-safe. Aborts (LOCKSTEP_CHECK) on options that ValidateLeaderElectionOptions rejects:
// validate user input first.
class LeaderElector {
 public:
  LeaderElector(KubeClient* client, LeaderElectionOptions o,
                std::function<void()> on_started_leading, std::function<void()> on_stopped_leading);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // Starts campaigning. Once only.
  void Start();
  // Stops campaigning and waits for the thread. A leader calls on_stopped_leading, then releases
  // the lease (holderIdentity empty, leaseDurationSeconds 1, as client-go's ReleaseOnCancel), so
  // a standby takes over within its retry period. Idempotent.
  void Stop();
  // True while this process holds the lease and renewed it less than renew_deadline ago (turns
  // false on time even while a request hangs).
  bool IsLeader() const;

  const std::string& identity() const { return options_.identity; }
  const LeaderElectionOptions& options() const { return options_; }

  // Test hook: while set, every request fails at once as if the apiserver were unreachable (a
  // network partition of this replica); the elector keeps running.
  void SetUnreachableForTest(bool unreachable) { unreachable_.store(unreachable); }
  // Tries to acquire or renew made so far (each ends before this counts it): tests wait for
  // "two more tries" instead of sleeping for them.
  std::int64_t TriesForTest() const { return tries_.load(); }

 private:
  void Run();
  // One look at the Lease and, if the decision says so, one write. True: we hold the lease now.
  bool TryAcquireOrRenew();  // counts the try
  bool TryAcquireOrRenewOnce();
  void Release();
  // Sleeps `d`; false when Stop() was called.
  bool Sleep(std::chrono::steady_clock::duration d);
  bool stopping();
  std::string LeasePath() const;
  // One line at `level` (common/log.h), unless it repeats the previous one.
  void Log(log::Level level, const std::string& message);

  KubeClient* const client_;
  LeaderElectionOptions options_;
  const std::function<void()> on_started_leading_;
  const std::function<void()> on_stopped_leading_;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;

  std::atomic<bool> leading_{false};
  std::atomic<int64_t> renewed_at_ns_{0};  // steady clock, start of the last successful write
  std::atomic<bool> unreachable_{false};
  std::atomic<std::int64_t> tries_{0};

  // The elector thread's own state.
  LeaseObservation observed_;
  nlohmann::json lease_;  // the Lease object as last read or written (its resourceVersion)
  std::string last_log_;
};

}  // namespace lockstep::kube
