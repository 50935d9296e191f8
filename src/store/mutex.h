// Annotated locking for the store (after leveldb's port::Mutex and abseil's thread_annotations.h).
// Clang checks the annotations with -Wthread-safety; other compilers ignore them. std::mutex
// carries no annotations in libstdc++, hence the thin wrappers below.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define LOCKSTEP_TSA(x) __attribute__((x))
#else
#define LOCKSTEP_TSA(x)
#endif

#define LOCKSTEP_CAPABILITY(x) LOCKSTEP_TSA(capability(x))
#define LOCKSTEP_SCOPED_CAPABILITY LOCKSTEP_TSA(scoped_lockable)
#define LOCKSTEP_GUARDED_BY(x) LOCKSTEP_TSA(guarded_by(x))
#define LOCKSTEP_PT_GUARDED_BY(x) LOCKSTEP_TSA(pt_guarded_by(x))
#define LOCKSTEP_REQUIRES(...) LOCKSTEP_TSA(requires_capability(__VA_ARGS__))
#define LOCKSTEP_EXCLUDES(...) LOCKSTEP_TSA(locks_excluded(__VA_ARGS__))
#define LOCKSTEP_ACQUIRE(...) LOCKSTEP_TSA(acquire_capability(__VA_ARGS__))
#define LOCKSTEP_RELEASE(...) LOCKSTEP_TSA(release_capability(__VA_ARGS__))

namespace lockstep::store {

// A std::mutex the thread-safety analysis knows about. Not copyable, not movable.
class LOCKSTEP_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() LOCKSTEP_ACQUIRE() { mu_.lock(); }
  void Unlock() LOCKSTEP_RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope.
class LOCKSTEP_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) LOCKSTEP_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() LOCKSTEP_RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable (after absl::CondVar): every wait names the Mutex it releases, which the
// caller holds, so the analysis can check it. Not copyable, not movable.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu` while waiting; may wake spuriously, so callers wait in a loop.
  void Wait(Mutex* mu) LOCKSTEP_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // As Wait, but returns false once `deadline` has passed.
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point deadline) LOCKSTEP_REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace lockstep::store
