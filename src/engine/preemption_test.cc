#include <gtest/gtest.h>

#include "engine/model.h"
#include "engine/plan_checker.h"
#include "engine/snapshot_builder.h"

namespace lockstep::engine {
namespace {

// Two partitions over the same 2 nodes: "scavenger" (tier 1, preemptable) and "prod" (tier 2).
SnapshotBuilder TwoTiers(PreemptMode mode, Seconds grace) {
  SnapshotBuilder b;
  b.Now(1000).Partition("scavenger", 1, mode).Partition("prod", 2).Nodes(2, 64, 1 << 20, 8);
  b.snapshot().partitions[0].grace_time = grace;
  for (auto& p : b.snapshot().partitions) p.nodes = {0, 1};
  return b;
}

Plan PlanChecked(const Snapshot& s, const PolicyOptions& o) {
  Plan p = plan(s, o);
  Status st = CheckPlan(s, o, p);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return p;
}

PolicyOptions ByPartition() {
  PolicyOptions o;
  o.preempt = PreemptType::kPartitionPriority;
  return o;
}

TEST(Preemption, HigherTierEvictsTheFewestLowerTierJobs) {
  SnapshotBuilder b = TwoTiers(PreemptMode::kRequeue, 0);
  b.Running(10, {0}, 4, 7200, 100);
  b.Running(11, {0}, 4, 7200, 200);
  b.Running(12, {1}, 8, 7200, 300);  // the youngest
  b.Pending(1, 1, 8, 600).partition = 1;
  Plan p = PlanChecked(b.Build(), ByPartition());
  ASSERT_EQ(p.preemptions.size(), 1u) << "one whole-node victim is enough";
  EXPECT_EQ(p.preemptions[0].victim, 12u);
  EXPECT_EQ(p.preemptions[0].for_job, 1u);
  EXPECT_EQ(p.preemptions[0].mode, PreemptMode::kRequeue);
  ASSERT_EQ(p.pending.size(), 1u);
  EXPECT_TRUE(p.pending[0].reserved);
  EXPECT_EQ(p.pending[0].expected_start, 1001) << "once the victim is gone";
}

TEST(Preemption, GraceTimeDelaysTheStartAndNonRequeueableJobsAreCancelled) {
  SnapshotBuilder b = TwoTiers(PreemptMode::kRequeue, 60);
  b.Running(10, {0}, 8, 7200, 100).requeue = false;
  b.Running(11, {1}, 8, 7200, 100).requeue = false;
  b.Pending(1, 1, 8, 600).partition = 1;
  Plan p = PlanChecked(b.Build(), ByPartition());
  ASSERT_EQ(p.preemptions.size(), 1u);
  EXPECT_EQ(p.preemptions[0].mode, PreemptMode::kCancel);
  EXPECT_EQ(p.preemptions[0].grace, 60);
  EXPECT_EQ(p.pending[0].expected_start, 1060);
}

TEST(Preemption, NothingIsEvictedForAJobThatWouldStillNotStart) {
  SnapshotBuilder b = TwoTiers(PreemptMode::kRequeue, 0);
  b.Running(10, {0}, 8, 7200, 100);
  b.Running(11, {1}, 8, 7200, 100).partition = 1;  // prod itself: not preemptable
  b.Pending(1, 2, 8, 600).partition = 1;           // needs both nodes
  Plan p = PlanChecked(b.Build(), ByPartition());
  EXPECT_TRUE(p.preemptions.empty());
}

TEST(Preemption, OffModeAndEqualTiersAreNeverPreempted) {
  SnapshotBuilder b = TwoTiers(PreemptMode::kOff, 0);
  b.Running(10, {0}, 8, 7200, 100);
  b.Running(11, {1}, 8, 7200, 100);
  b.Pending(1, 1, 8, 600).partition = 1;
  EXPECT_TRUE(PlanChecked(b.Build(), ByPartition()).preemptions.empty());
  PolicyOptions off;
  SnapshotBuilder c = TwoTiers(PreemptMode::kRequeue, 0);
  c.Running(10, {0}, 8, 7200, 100);
  c.Running(11, {1}, 8, 7200, 100);
  c.Pending(1, 1, 8, 600).partition = 1;
  EXPECT_TRUE(PlanChecked(c.Build(), off).preemptions.empty());
}

TEST(Preemption, QosPreemptListDecides) {
  SnapshotBuilder b;
  b.Now(1000).Partition("gpu").Nodes(1, 64, 1 << 20, 8);
  Snapshot& s = b.snapshot();
  s.qos.emplace_back().name = "scavenger";
  s.qos[1].preempt_mode = PreemptMode::kCancel;
  s.qos.emplace_back().name = "high";
  s.qos[2].preempts = {1};
  b.Running(10, {0}, 8, 7200, 100).qos = 1;
  b.Pending(1, 1, 8, 600).qos = 2;
  b.Pending(2, 1, 8, 600).qos = 0;  // normal may not preempt
  PolicyOptions o;
  o.preempt = PreemptType::kQos;
  Plan p = PlanChecked(s, o);
  ASSERT_EQ(p.preemptions.size(), 1u);
  EXPECT_EQ(p.preemptions[0].for_job, 1u);
  EXPECT_EQ(p.preemptions[0].mode, PreemptMode::kCancel);
}

}  // namespace
}  // namespace lockstep::engine
