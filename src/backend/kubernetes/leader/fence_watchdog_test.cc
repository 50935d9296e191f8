#include "backend/kubernetes/leader/fence_watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

#include "common/wait_for.h"

namespace lockstep::kube {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;
using lockstep::testing::WaitFor;

TEST(FenceWatchdogTest, FiresOnceTheDeadlinePassesUnrenewedAndNotBefore) {
  WriteFence fence;
  const Steady::time_point deadline = Steady::now() + milliseconds(200);
  fence.Extend(deadline);
  std::atomic<bool> fired{false};
  Steady::time_point fired_at;
  FenceWatchdog watchdog(fence, [&] {
    fired_at = Steady::now();
    fired = true;
  });
  ASSERT_TRUE(WaitFor([&] { return fired.load(); }, std::chrono::seconds(10)));
  EXPECT_GE(fired_at, deadline);
}

TEST(FenceWatchdogTest, ARenewedFenceThatIsClosedFiresAtOnce) {
  WriteFence fence;
  fence.Extend(Steady::now() + milliseconds(300));
  std::atomic<int> fired{0};
  FenceWatchdog watchdog(fence, [&] { ++fired; });
  fence.Extend(Steady::now() + std::chrono::hours(1));  // renewed: the deadline is far off
  fence.Close();                                         // then the lease is lost
  watchdog.Poke();
  ASSERT_TRUE(WaitFor([&] { return fired.load() == 1; }, std::chrono::seconds(10)));
}

TEST(FenceWatchdogTest, StoppingItBeforeTheDeadlineCallsNothing) {
  WriteFence fence;
  fence.Extend(Steady::now() + std::chrono::hours(1));
  std::atomic<bool> fired{false};
  { FenceWatchdog watchdog(fence, [&] { fired = true; }); }
  EXPECT_FALSE(fired.load());
}

}  // namespace
}  // namespace lockstep::kube
