// Client-side flow control for the Kubernetes API: a token-bucket rate limiter (client-go's
// flowcontrol.TokenBucketRateLimiter) and exponential backoff with jitter (client-go's
// wait.Backoff). Both take time as an argument where it matters, so tests need no clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>

namespace lockstep::kube {

using Clock = std::chrono::steady_clock;

// A token bucket of `burst` tokens refilled at `qps` per second. Thread-safe.
// qps <= 0 disables it: every request passes at once.
class RateLimiter {
 public:
  RateLimiter(double qps, int burst);
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Takes one token at `now` and returns how long the caller must wait before using it (zero when
  // one was available). Tokens may go negative, so waiters are served in order (as Go's
  // rate.Limiter reservations are).
  Clock::duration Reserve(Clock::time_point now);
  // Takes a token only if one is available at `now`.
  bool TryAcquire(Clock::time_point now);
  // Reserve(now) and sleep for the wait.
  void Acquire();

  bool enabled() const { return qps_ > 0; }

 private:
  void Refill(Clock::time_point now);

  const double qps_;
  const double burst_;
  std::mutex mu_;
  double tokens_;             // guarded by mu_
  Clock::time_point last_{};  // guarded by mu_
  bool started_ = false;      // guarded by mu_
};

struct BackoffOptions {
  std::chrono::milliseconds initial{200};
  std::chrono::milliseconds max{10'000};
  double multiplier = 2.0;
  double jitter = 0.2;  // each delay is scaled by a uniform factor in [1 - jitter, 1 + jitter]
};

// Exponential backoff: initial, initial*multiplier, ... capped at max, with jitter. Not
// thread-safe: one per retry loop. Cheap to make: every request has one, and most never wait.
class Backoff {
 public:
  // Without `seed`, the first delay seeds the jitter from std::random_device.
  explicit Backoff(BackoffOptions options = {}, std::optional<uint64_t> seed = std::nullopt);

  // The delay before the next attempt; advances the exponent.
  std::chrono::milliseconds Next();
  void Reset() { attempts_ = 0; }
  int attempts() const { return attempts_; }

 private:
  BackoffOptions options_;
  std::optional<uint64_t> seed_;
  std::optional<std::mt19937_64> rng_;  // made at the first delay
  int attempts_ = 0;
};

}  // namespace lockstep::kube
