#include "backend/kubernetes/client/rate_limit.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace lockstep::kube {

RateLimiter::RateLimiter(double qps, int burst)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)) {}

void RateLimiter::Refill(Clock::time_point now) {
  if (!started_) {
    started_ = true;
    last_ = now;
    return;
  }
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
  last_ = now;
}

Clock::duration RateLimiter::Reserve(Clock::time_point now) {
  if (qps_ <= 0) return Clock::duration::zero();
  std::lock_guard<std::mutex> lock(mu_);
  Refill(now);
  tokens_ -= 1;
  if (tokens_ >= 0) return Clock::duration::zero();
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

bool RateLimiter::TryAcquire(Clock::time_point now) {
  if (qps_ <= 0) return true;
  std::lock_guard<std::mutex> lock(mu_);
  Refill(now);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

void RateLimiter::Acquire() {
  const Clock::duration wait = Reserve(Clock::now());
  if (wait > Clock::duration::zero()) std::this_thread::sleep_for(wait);
}

Backoff::Backoff(BackoffOptions options, std::optional<uint64_t> seed)
    : options_(options), seed_(seed) {}

std::chrono::milliseconds Backoff::Next() {
  const double base = static_cast<double>(options_.initial.count()) *
                      std::pow(options_.multiplier, std::min(attempts_, 62));
  ++attempts_;
  const double capped = std::min(base, static_cast<double>(options_.max.count()));
  double factor = 1.0;
  if (options_.jitter > 0) {
    if (!rng_) rng_.emplace(seed_ ? *seed_ : std::random_device{}());
    std::uniform_real_distribution<double> dist(1.0 - options_.jitter, 1.0 + options_.jitter);
    factor = dist(*rng_);
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(capped * factor)));
}

}  // namespace lockstep::kube
