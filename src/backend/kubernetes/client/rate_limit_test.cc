#include "backend/kubernetes/client/rate_limit.h"

#include <gtest/gtest.h>

namespace lockstep::kube {
namespace {

using std::chrono::milliseconds;

TEST(RateLimiter, BurstThenQps) {
  RateLimiter r(10, 3);  // 10 per second: a token every 100 ms
  const Clock::time_point t0 = Clock::now();
  EXPECT_TRUE(r.TryAcquire(t0));
  EXPECT_TRUE(r.TryAcquire(t0));
  EXPECT_TRUE(r.TryAcquire(t0));
  EXPECT_FALSE(r.TryAcquire(t0));
  EXPECT_FALSE(r.TryAcquire(t0 + milliseconds(50)));
  EXPECT_TRUE(r.TryAcquire(t0 + milliseconds(100)));
  EXPECT_FALSE(r.TryAcquire(t0 + milliseconds(150)));
  // A long pause refills only up to the burst.
  const Clock::time_point t1 = t0 + milliseconds(10'000);
  EXPECT_TRUE(r.TryAcquire(t1));
  EXPECT_TRUE(r.TryAcquire(t1));
  EXPECT_TRUE(r.TryAcquire(t1));
  EXPECT_FALSE(r.TryAcquire(t1));
}

TEST(RateLimiter, ReservationsQueueInOrder) {
  RateLimiter r(10, 1);
  const Clock::time_point t0 = Clock::now();
  EXPECT_EQ(r.Reserve(t0), Clock::duration::zero());
  EXPECT_NEAR(std::chrono::duration<double>(r.Reserve(t0)).count(), 0.1, 1e-6);
  EXPECT_NEAR(std::chrono::duration<double>(r.Reserve(t0)).count(), 0.2, 1e-6);
  EXPECT_NEAR(std::chrono::duration<double>(r.Reserve(t0 + milliseconds(200))).count(), 0.1, 1e-6);
}

TEST(RateLimiter, DisabledPassesEverything) {
  RateLimiter r(0, 0);
  EXPECT_FALSE(r.enabled());
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < 10'000; ++i) ASSERT_EQ(r.Reserve(t0), Clock::duration::zero());
}

TEST(RateLimiter, AcquireSleeps) {
  RateLimiter r(100, 1);
  const Clock::time_point t0 = Clock::now();
  for (int i = 0; i < 6; ++i) r.Acquire();
  EXPECT_GE(Clock::now() - t0, milliseconds(45));
}

TEST(Backoff, DoublesUpToTheCapWithJitter) {
  Backoff b({milliseconds(100), milliseconds(1000), 2.0, 0.0}, 1);
  EXPECT_EQ(b.Next(), milliseconds(100));
  EXPECT_EQ(b.Next(), milliseconds(200));
  EXPECT_EQ(b.Next(), milliseconds(400));
  EXPECT_EQ(b.Next(), milliseconds(800));
  EXPECT_EQ(b.Next(), milliseconds(1000));
  EXPECT_EQ(b.Next(), milliseconds(1000));
  EXPECT_EQ(b.attempts(), 6);
  b.Reset();
  EXPECT_EQ(b.Next(), milliseconds(100));

  Backoff j({milliseconds(1000), milliseconds(100'000), 2.0, 0.2}, 42);
  bool varied = false;
  for (int i = 0; i < 20; ++i) {
    j.Reset();
    const milliseconds d = j.Next();
    EXPECT_GE(d, milliseconds(800));
    EXPECT_LE(d, milliseconds(1200));
    if (d != milliseconds(1000)) varied = true;
  }
  EXPECT_TRUE(varied);
}

TEST(Backoff, HugeAttemptCountsDoNotOverflow) {
  Backoff b({milliseconds(10), milliseconds(500), 2.0, 0.0}, 1);
  for (int i = 0; i < 200; ++i) EXPECT_LE(b.Next(), milliseconds(500));
}

}  // namespace
}  // namespace lockstep::kube
