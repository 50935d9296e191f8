// No silent caps on the search for a reservation: the earliest start of a blocked job is found
// however many moments the search has to try, and a bound, when a policy sets one, is reported
// as the job's pending reason (ReservationSearchLimit), never as "no reservation".
#include <gtest/gtest.h>

#include "engine/plan_checker.h"
#include "engine/scheduler.h"
#include "engine/snapshot_builder.h"

namespace lockstep::engine {
namespace {

constexpr int kLeaves = 1250;
constexpr int kNodesPerLeaf = 8;
constexpr std::uint32_t kTargetLeaf = 500;
constexpr int kEarlyLeaves = 500;  // three nodes each free early: never a whole leaf
constexpr Time kNow = 1'000'000;

// 10,000 one-GPU nodes in 1,250 leaf switches of 8, every node busy. 1,500 nodes of leaves
// 0..499 (three per leaf) free up at 1,500 distinct moments; then the eight nodes of leaf 500,
// one at a time; every other node only much later, each at a moment of its own. A job that
// wants one leaf's eight nodes can start only when leaf 500 is free: after more than 1,500
// moments at which some node's availability changes.
Snapshot ManyEndTimes() {
  SnapshotBuilder b;
  b.Now(kNow).Partition("batch");
  for (int l = 0; l < kLeaves; ++l) b.Switch("leaf" + std::to_string(l), kLeaves);
  b.Switch("spine");
  for (int l = 0; l < kLeaves; ++l) b.Nodes(kNodesPerLeaf, 4, 16 * 1024, 1, l);
  b.User(0);
  Time early = kNow + 100;
  JobId id = 1'000'000;
  auto run_until = [&](std::uint32_t node, Time end) {
    b.Running(id++, {node}, 1, end - (kNow - 10), kNow - 10);
  };
  Time late = kNow + 1'000'000;
  for (std::uint32_t l = 0; l < kLeaves; ++l) {
    for (std::uint32_t k = 0; k < kNodesPerLeaf; ++k) {
      std::uint32_t node = l * kNodesPerLeaf + k;
      if (l < kEarlyLeaves && k < 3)
        run_until(node, early++);
      else if (l != kTargetLeaf)
        run_until(node, late++);
    }
  }
  for (std::uint32_t k = 0; k < kNodesPerLeaf; ++k)
    run_until(kTargetLeaf * kNodesPerLeaf + k, early + 10 * (k + 1));
  Job& head = b.Pending(1, kNodesPerLeaf, 1, 3600, kNow - 5);
  head.req.max_switches = 1;
  return b.Build();
}

TEST(ReservationSearch, FindsTheStartAfterThousandsOfEndTimesOnTenThousandNodes) {
  Snapshot s = ManyEndTimes();
  PolicyOptions o;
  o.estimate_starts = false;
  Plan p = plan(s, o);
  ASSERT_TRUE(CheckPlan(s, o, p).ok());
  ASSERT_EQ(p.pending.size(), 1u);
  const Pending& head = p.pending[0];
  EXPECT_TRUE(head.reserved) << PendingReasonName(head.reason);
  EXPECT_EQ(head.reason, PendingReason::kResources);
  // The last of leaf 500's nodes ends at early + 80: 1,508 distinct moments from now.
  EXPECT_EQ(head.expected_start, kNow + 100 + 3 * kEarlyLeaves + 80);
  ASSERT_EQ(head.reservation.nodes.size(), static_cast<std::size_t>(kNodesPerLeaf));
  for (const NodeAllocation& a : head.reservation.nodes)
    EXPECT_EQ(a.node / kNodesPerLeaf, kTargetLeaf) << "node " << a.node;

  // The Scheduler finds the same.
  Scheduler sched(s, o);
  Plan again = sched.Plan(s.now);
  ASSERT_EQ(again.pending.size(), 1u);
  EXPECT_EQ(again.pending[0].expected_start, head.expected_start);
}

TEST(ReservationSearch, ABoundIsAPolicyAndTheJobItStopsSaysSo) {
  Snapshot s = ManyEndTimes();
  PolicyOptions o;
  o.estimate_starts = false;
  o.max_reservation_rounds = 256;  // the bound the engine used to apply without a word
  Plan p = plan(s, o);
  ASSERT_EQ(p.pending.size(), 1u);
  EXPECT_FALSE(p.pending[0].reserved);
  EXPECT_EQ(p.pending[0].reason, PendingReason::kReservationSearchLimit);
  EXPECT_STREQ(PendingReasonName(p.pending[0].reason), "ReservationSearchLimit");
}

}  // namespace
}  // namespace lockstep::engine
