#include "engine/planner.h"

#include <gtest/gtest.h>

#include "engine/snapshot_builder.h"

namespace lockstep::engine {
namespace {

NodeNeed Gpus(int n) {
  NodeNeed need;
  need.cpus = 1;
  need.gpus = n;
  return need;
}

TEST(AvailabilityPlanner, RunningJobsFreeTheirGpusAtTheirLimit) {
  SnapshotBuilder b;
  b.Now(1000).Partition("p").Nodes(1, 8, 1000, 8);
  b.Running(1, {0}, 6, 500, 900);  // ends at 1400
  Snapshot s = b.Build();
  AvailabilityPlanner p(s, {1400});
  EXPECT_EQ(p.node(0).free_now.gpus[0], 2);
  EXPECT_TRUE(p.FitAt(0, Gpus(2), 1000, 100).has_value());
  EXPECT_FALSE(p.FitAt(0, Gpus(3), 1000, 100).has_value());
  EXPECT_EQ(p.EarliestFit(0, Gpus(8), 1000, 100), 1400);
}

TEST(AvailabilityPlanner, ReservationsBlockOnlyTheirWindow) {
  SnapshotBuilder b;
  b.Now(0).Partition("p").Nodes(1, 8, 1000, 8);
  Snapshot s = b.Build();
  AvailabilityPlanner p(s, {});
  ResourceVec six;
  six.cpus = 1;
  six.gpus[0] = 6;
  p.Reserve(0, six, 100, 200, 7);
  EXPECT_TRUE(p.FitAt(0, Gpus(8), 0, 100).has_value());   // ends as the reservation begins
  EXPECT_FALSE(p.FitAt(0, Gpus(8), 0, 101).has_value());  // overlaps it by a second
  EXPECT_TRUE(p.FitAt(0, Gpus(2), 0, 1000).has_value());  // fits beside it
  EXPECT_EQ(p.EarliestFit(0, Gpus(4), 50, 100), 200);     // after it
  EXPECT_EQ(p.NextChangeAfter(0, 0), 100);
  EXPECT_EQ(p.NextChangeAfter(0, 100), 200);
}

// FitsUntil answers FitAt for every window starting now at once: the window fits exactly when
// it ends by the answer.
TEST(AvailabilityPlanner, FitsUntilIsTheLongestWindowFromNow) {
  SnapshotBuilder b;
  b.Now(0).Partition("p").Nodes(1, 8, 1000, 8);
  b.Running(1, {0}, 2, 500, 0);  // 2 GPUs until 300
  Snapshot s = b.Build();
  AvailabilityPlanner p(s, {300});
  EXPECT_EQ(p.FitsUntil(0, Gpus(6)), kInfiniteTime);  // no reservation: it only gains
  EXPECT_EQ(p.FitsUntil(0, Gpus(7)), AvailabilityPlanner::kNoWindow);
  ResourceVec four;
  four.cpus = 1;
  four.gpus[0] = 4;
  p.Reserve(0, four, 100, 200, 7);  // 6 free now, 2 over [100, 200), then 8
  EXPECT_EQ(p.FitsUntil(0, Gpus(2)), kInfiniteTime);
  EXPECT_EQ(p.FitsUntil(0, Gpus(3)), 100);
  for (Seconds d : {99, 100, 101, 1000}) {
    EXPECT_EQ(p.FitAt(0, Gpus(3), 0, d).has_value(), d <= 100) << d;
    EXPECT_EQ(p.FitAt(0, Gpus(2), 0, d).has_value(), true) << d;
  }
}

// A memo of the planner's answers keys on base_version() with changes_in_pass() == 0: running
// holds and usability move the base; a pass's own changes count apart and are undone.
TEST(AvailabilityPlanner, BaseVersionMovesWithRunningHoldsNotWithThePass) {
  SnapshotBuilder b;
  b.Now(0).Partition("p").Nodes(2, 8, 1000, 8);
  Snapshot s = b.Build();
  AvailabilityPlanner p(s, {});
  const std::uint64_t base = p.base_version();
  p.BeginPass();
  ResourceVec one;
  one.cpus = 1;
  one.gpus[0] = 1;
  p.StartNow(0, one, 100, 0);
  p.Reserve(1, one, 50, 100, 1);
  EXPECT_EQ(p.changes_in_pass(), 2u);
  EXPECT_EQ(p.base_version(), base);
  p.Rollback();
  EXPECT_EQ(p.changes_in_pass(), 0u);
  EXPECT_EQ(p.base_version(), base);
  p.SetNow(10);  // the clock alone changes no answer about the future
  EXPECT_EQ(p.base_version(), base);
  NodeAllocation a{0, 1, 0, 0b1, 1};
  p.AddRunning(0, a, 100, 0);
  EXPECT_NE(p.base_version(), base);
  const std::uint64_t after_start = p.base_version();
  p.SetUsable(1, false);
  EXPECT_NE(p.base_version(), after_start);
}

TEST(AvailabilityPlanner, StartNowTakesTheLowestFreeDevices) {
  SnapshotBuilder b;
  b.Now(0).Partition("p").Nodes(1, 8, 1000, 4);
  b.Running(1, {0}, 1, 500, 0);  // device 0
  Snapshot s = b.Build();
  AvailabilityPlanner p(s, {500});
  ResourceVec two;
  two.cpus = 1;
  two.gpus[0] = 2;
  EXPECT_EQ(p.StartNow(0, two, 100, 9), 0b0110u);
  EXPECT_EQ(p.node(0).free_devices, 0b1000u);
}

TEST(AvailabilityPlanner, TypedRequestsNeedTheirType) {
  SnapshotBuilder b;
  b.Now(0).Partition("p").Nodes(1, 8, 1000, 2, kNone, 0);
  Snapshot s = b.Build();
  s.gpu_types.push_back("a100_3g.20gb");
  s.nodes[0].gpus.push_back({2, 1, 0, "MIG-x"});
  s.nodes[0].gpus.push_back({3, 1, 0, "MIG-y"});
  AvailabilityPlanner p(s, {});
  NodeNeed mig = Gpus(2);
  mig.gpu_type = 1;
  EXPECT_TRUE(p.FitAt(0, mig, 0, 10).has_value());
  mig.gpus = 3;
  EXPECT_FALSE(p.FitAt(0, mig, 0, 10).has_value());
  NodeNeed any = Gpus(4);  // untyped takes whole GPUs and slices alike
  EXPECT_TRUE(p.FitAt(0, any, 0, 10).has_value());
}

TEST(AvailabilityPlanner, ExclusiveNeedsTheWholeNode) {
  SnapshotBuilder b;
  b.Now(0).Partition("p").Nodes(1, 8, 1000, 8);
  b.Running(1, {0}, 1, 50, 0);
  Snapshot s = b.Build();
  AvailabilityPlanner p(s, {50});
  NodeNeed whole = Gpus(1);
  whole.exclusive = true;
  EXPECT_FALSE(p.FitAt(0, whole, 0, 10).has_value());
  EXPECT_EQ(p.EarliestFit(0, whole, 0, 10), 50);
}

}  // namespace
}  // namespace lockstep::engine
