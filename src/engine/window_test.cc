// Reservations' windows (Snapshot::windows): no job runs into a window it is not of, the time
// before one is backfilled, a window's own jobs run only on its nodes while it is in force, and
// its nodes are everyone's again after it; the Scheduler moves from one to the next by itself as
// the clock passes a window's start and end, and agrees with plan() throughout.
#include <gtest/gtest.h>

#include "engine/plan_checker.h"
#include "engine/scheduler.h"
#include "engine/snapshot_builder.h"

namespace lockstep::engine {
namespace {

constexpr std::uint32_t kMaint = 7;

Plan PlanChecked(const Snapshot& s, const PolicyOptions& o = {}) {
  Plan p = plan(s, o);
  Status st = CheckPlan(s, o, p);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return p;
}

const Start* FindStart(const Plan& p, JobId id) {
  for (const Start& s : p.starts)
    if (s.job == id) return &s;
  return nullptr;
}

const Pending* FindPending(const Plan& p, JobId id) {
  for (const Pending& x : p.pending)
    if (x.job == id) return &x;
  return nullptr;
}

std::vector<std::uint32_t> NodesOf(const Start* s) {
  std::vector<std::uint32_t> out;
  if (s)
    for (const NodeAllocation& a : s->allocation.nodes) out.push_back(a.node);
  return out;
}

// Two nodes of 8 GPUs; a maintenance window on node 1 from t=3600 to t=7200.
SnapshotBuilder TwoNodes(Time now) {
  SnapshotBuilder b;
  b.Now(now).Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  return b;
}

Window Maint() { return {kMaint, 3600, 7200, {1}}; }

TEST(Windows, NoJobRunsIntoAWindowAndTheTimeBeforeItIsBackfilled) {
  SnapshotBuilder b = TwoNodes(0);
  b.Running(100, {0}, 8, 10'000, 0);  // node 0 busy past the window
  b.Pending(1, 1, 8, 7200);           // two hours: would run into the window on node 1
  b.Pending(2, 1, 8, 1800);           // half an hour: ends before it
  Snapshot s = b.Build();
  s.windows = {Maint()};
  Plan p = PlanChecked(s);
  EXPECT_EQ(FindStart(p, 1), nullptr) << "it would run into the window";
  ASSERT_NE(FindStart(p, 2), nullptr) << "the time before the window is backfilled";
  EXPECT_EQ(NodesOf(FindStart(p, 2)), std::vector<std::uint32_t>{1});
  // Job 1's reservation is after the window (node 1 at 7200), not in it.
  const Pending* one = FindPending(p, 1);
  ASSERT_NE(one, nullptr);
  EXPECT_GE(one->expected_start, 7200);
}

TEST(Windows, InForceItsNodesAreItsJobsAloneAndItsJobsStayOnThem) {
  SnapshotBuilder b = TwoNodes(4000);  // the window is in force
  b.Pending(1, 1, 8, 600);             // another job: node 0 only
  b.Pending(2, 1, 8, 600).reservation = kMaint;
  b.Pending(3, 1, 8, 600);             // another again: no node left
  b.Pending(4, 1, 8, 600).reservation = kMaint;  // the window's node is taken by job 2
  Snapshot s = b.Build();
  s.windows = {Maint()};
  Plan p = PlanChecked(s);
  EXPECT_EQ(NodesOf(FindStart(p, 1)), std::vector<std::uint32_t>{0});
  EXPECT_EQ(NodesOf(FindStart(p, 2)), std::vector<std::uint32_t>{1});
  EXPECT_EQ(FindStart(p, 3), nullptr);
  EXPECT_EQ(FindStart(p, 4), nullptr) << "a window's job never goes outside it";
  // Job 3 may have node 1 once the window ends.
  const Pending* three = FindPending(p, 3);
  ASSERT_NE(three, nullptr);
  EXPECT_GE(three->expected_start, 4600);
}

TEST(Windows, AWindowsJobWaitsForItsStartAndOthersGetItsNodesAfterItsEnd) {
  SnapshotBuilder b = TwoNodes(0);
  b.Pending(1, 1, 8, 600).reservation = kMaint;
  Snapshot s = b.Build();
  s.windows = {Maint()};
  EXPECT_EQ(FindStart(PlanChecked(s), 1), nullptr) << "before the window starts";
  s.now = 3600;
  Plan at_start = PlanChecked(s);
  EXPECT_EQ(NodesOf(FindStart(at_start, 1)), std::vector<std::uint32_t>{1});
  s.now = 7200;
  s.pending[0].reservation = kNone;
  Plan after = PlanChecked(s);
  EXPECT_NE(FindStart(after, 1), nullptr) << "the node is everyone's again";
}

// The Scheduler, kept between passes, passes from before the window, to in force, to after
// by itself, and plans as plan() does at each step.
TEST(Windows, TheSchedulerFollowsTheClockThroughAWindow) {
  SnapshotBuilder b = TwoNodes(0);
  b.Running(100, {0}, 8, 100'000, 0);
  Snapshot s = b.Build();
  Scheduler sched(s, {});
  sched.SetWindows({Maint()});
  SnapshotBuilder jobs;
  Job others = jobs.Pending(1, 1, 8, 1200);
  Job own = jobs.Pending(2, 1, 8, 1200);
  own.reservation = kMaint;
  sched.SetPending(others);
  sched.SetPending(own);
  auto same_as_oracle = [&](Time now) {
    Snapshot o = sched.snapshot();
    o.now = now;
    Plan fast = sched.Plan(now);
    Plan slow = PlanChecked(o);
    EXPECT_EQ(NodesOf(FindStart(fast, 1)), NodesOf(FindStart(slow, 1))) << "at " << now;
    EXPECT_EQ(NodesOf(FindStart(fast, 2)), NodesOf(FindStart(slow, 2))) << "at " << now;
    return fast;
  };
  // 20 minutes from the window: job 1 would run into it; job 2 waits for it.
  Plan p = same_as_oracle(3600 - 1200 + 1);
  EXPECT_EQ(FindStart(p, 1), nullptr);
  EXPECT_EQ(FindStart(p, 2), nullptr);
  // In force: job 2 starts on node 1; job 1 still may not.
  p = same_as_oracle(3600);
  EXPECT_EQ(NodesOf(FindStart(p, 2)), std::vector<std::uint32_t>{1});
  EXPECT_EQ(FindStart(p, 1), nullptr);
  // After the end: job 1 gets node 1 (job 2 never started here: it was only planned).
  p = same_as_oracle(7200);
  EXPECT_EQ(NodesOf(FindStart(p, 1)), std::vector<std::uint32_t>{1});
}

// FLEX (Slurm's): a window's job may also run on nodes outside it, and after it; others still
// keep out of the window's nodes.
TEST(Windows, AFlexWindowsJobsMayAlsoRunOutsideIt) {
  SnapshotBuilder b = TwoNodes(4000);  // the window is in force
  b.Running(100, {1}, 8, 10'000, 0);  // the window's node is busy with one of its jobs
  b.Pending(1, 1, 8, 600).reservation = kMaint;
  Snapshot s = b.Build();
  Window w = Maint();
  w.flex = true;
  s.windows = {w};
  Plan p = PlanChecked(s);
  EXPECT_EQ(NodesOf(FindStart(p, 1)), std::vector<std::uint32_t>{0});
  s.windows[0].flex = false;  // the same job of a plain window waits for the window's node
  EXPECT_EQ(FindStart(PlanChecked(s), 1), nullptr);
}

}  // namespace
}  // namespace lockstep::engine
