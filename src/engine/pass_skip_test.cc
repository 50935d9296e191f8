// The queue in blocks (queue_blocks.h) and the blocks a pass skips (pass_skip.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "engine/limits.h"
#include "engine/plan_checker.h"
#include "engine/queue_blocks.h"
#include "engine/scheduler.h"
#include "engine/snapshot_builder.h"

namespace lockstep::engine {
namespace {

QueueEntry Entry(std::uint32_t priority, JobId id) {
  return {0, priority, 0, id, static_cast<std::uint32_t>(id)};
}

std::vector<JobId> Ids(const QueueBlocks& q) {
  std::vector<JobId> ids;
  for (const QueueEntry& e : q.Flatten()) ids.push_back(e.id);
  return ids;
}

TEST(QueueBlocks, KeepsTheOrderThroughInsertionsErasuresAndMerges) {
  std::mt19937_64 rng(5);
  QueueBlocks q(4);
  std::vector<QueueEntry> want;
  auto sorted = [&] {
    std::vector<JobId> ids;
    for (const QueueEntry& e : want) ids.push_back(e.id);
    return ids;
  };
  JobId next = 1;
  for (int step = 0; step < 2000; ++step) {
    const int kind = static_cast<int>(rng() % 10);
    if (kind < 5 || want.empty()) {
      QueueEntry e = Entry(static_cast<std::uint32_t>(rng() % 50), next++);
      q.Insert(e);
      want.insert(std::upper_bound(want.begin(), want.end(), e, QueueBefore), e);
    } else if (kind < 9) {
      QueueEntry e = want[rng() % want.size()];
      ASSERT_TRUE(q.Erase(e));
      want.erase(std::find_if(want.begin(), want.end(),
                              [&](const QueueEntry& w) { return w.id == e.id; }));
      EXPECT_FALSE(q.Erase(e)) << "erased twice";
    } else {
      std::vector<QueueEntry> burst;
      for (int n = static_cast<int>(rng() % 40); n > 0; --n)
        burst.push_back(Entry(static_cast<std::uint32_t>(rng() % 50), next++));
      std::stable_sort(burst.begin(), burst.end(), QueueBefore);
      q.Merge(burst);
      for (const QueueEntry& e : burst)
        want.insert(std::upper_bound(want.begin(), want.end(), e, QueueBefore), e);
    }
    ASSERT_EQ(Ids(q), sorted()) << "step " << step;
    ASSERT_EQ(q.size(), want.size());
    for (const QueueBlocks::Block& b : q.blocks()) {
      ASSERT_FALSE(b.entries.empty());
      ASSERT_LE(b.entries.size(), 4u);
    }
  }
  for (const QueueEntry& e : want) {
    QueueEntry* found = q.Find(e);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(found->id, e.id);
  }
  EXPECT_EQ(q.Find(Entry(7, 999999)), nullptr);
}

TEST(QueueBlocks, AnInsertionForgetsItsBlockSummaryAnErasureKeepsIt) {
  QueueBlocks q(4);
  q.Assign({Entry(9, 1), Entry(8, 2), Entry(7, 3), Entry(6, 4), Entry(5, 5), Entry(4, 6)});
  ASSERT_EQ(q.blocks().size(), 2u);
  for (QueueBlocks::Block& b : q.blocks()) b.summary.valid = true;
  ASSERT_TRUE(q.Erase(Entry(8, 2)));
  EXPECT_TRUE(q.blocks()[0].summary.valid) << "what is left is a subset of what it described";
  q.Insert(Entry(4, 7));
  EXPECT_TRUE(q.blocks()[0].summary.valid);
  EXPECT_FALSE(q.blocks()[1].summary.valid) << "a job it does not describe";
  q.ForgetSummaries();
  EXPECT_FALSE(q.blocks()[0].summary.valid);
}

// Two nodes of 8 GPUs, 64 CPUs and 512 GiB, both half busy: n0 until 3,600 s (4 GPUs, 40 CPUs
// and 400 GiB taken), n1 until 7,200 s (4 GPUs, 32 CPUs, 384 GiB). The head asks for both nodes
// whole and holds a reservation from 7,200 s; the free halves take jobs that end by then.
struct Case {
  std::string name;
  JobRequest fails;   // cannot start now
  JobRequest starts;  // at least as big as `fails` in everything but one thing
};

JobRequest Request(int nodes, int gpus, int cpus, std::int64_t mem_gib, Seconds limit) {
  JobRequest r;
  r.min_nodes = nodes;
  r.ntasks = nodes;
  r.gpus_per_node = gpus;
  r.cpus_per_task = cpus;
  r.mem_per_node_mb = mem_gib * 1024;
  r.time_limit = limit;
  return r;
}

Snapshot HalfBusyCluster() {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(2, 64, 512 * 1024, 8);
  b.Running(100, {0}, 4, 3600, 0, 40).allocation.nodes[0].mem_mb = 400 * 1024;
  b.Running(101, {1}, 4, 7200, 0, 32).allocation.nodes[0].mem_mb = 384 * 1024;
  b.Pending(1, 2, 8, 3600, 1);  // the head
  return b.Build();
}

// A job smaller than one that failed in one respect may start although it is larger in every
// other: the pass must visit its block, not skip it.
TEST(PassSkip, AJobSmallerInOneRespectThanAFailedOneIsVisited) {
  const Case cases[] = {
      // Each `fails` passes the partition's free sums (n0 and n1 together have 56 CPUs and 8
      // GPUs free) but no node can take it.
      {"memory", Request(1, 1, 1, 200, 3600), Request(1, 2, 2, 100, 3600)},
      {"CPUs", Request(1, 1, 48, 1, 3600), Request(1, 2, 30, 2, 3600)},
      {"GPUs", Request(1, 6, 1, 1, 3600), Request(1, 3, 2, 2, 3600)},
      {"nodes", Request(2, 3, 26, 1, 3600), Request(1, 3, 27, 2, 3600)},
      {"time limit", Request(1, 1, 1, 1, 3 * 3600), Request(1, 2, 2, 2, 3600)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Snapshot s = HalfBusyCluster();
    Job fails = s.pending[0], starts = s.pending[0], bigger = s.pending[0];
    fails.id = 2, fails.submit_time = 2, fails.req = c.fails;
    starts.id = 3, starts.submit_time = 3, starts.req = c.starts;
    // Larger than `fails` in everything: it cannot start either, and its block is skipped.
    bigger.id = 4, bigger.submit_time = 4, bigger.req = c.fails;
    bigger.req.gpus_per_node += 1, bigger.req.time_limit += 60;
    s.pending.push_back(fails);
    s.pending.push_back(starts);
    s.pending.push_back(bigger);
    PolicyOptions o;
    o.estimate_starts = false;
    const std::string want = DescribePlan(plan(s, o), PlanDetail::kDecisions);
    ASSERT_NE(want.find("start 3"), std::string::npos) << want;
    ASSERT_EQ(want.find("start 2"), std::string::npos) << want;
    ASSERT_EQ(want.find("start 4"), std::string::npos) << want;

    Scheduler sched(s, o);
    sched.SetQueueBlockCapacityForTest(1);
    // The first pass writes the blocks' summaries; the second may skip. The starts are not
    // applied, so both must find the same.
    for (int pass = 0; pass < 2; ++pass) {
      Plan p = sched.Plan(s.now, PlanDetail::kDecisions);
      EXPECT_EQ(DescribePlan(p, PlanDetail::kDecisions), want) << "pass " << pass;
    }
    EXPECT_EQ(sched.SkippedJobsForTest(), 1u) << "job 4 cannot start: its block is skipped";
  }
}

// A full plan says why every job waits: nothing is skipped.
TEST(PassSkip, AFullPlanSkipsNothing) {
  Snapshot s = HalfBusyCluster();
  for (JobId id = 2; id < 40; ++id) {
    Job j = s.pending[0];
    j.id = id;
    j.submit_time = static_cast<Time>(id);
    j.req = Request(1, 8, 8, 64, 3600);
    s.pending.push_back(j);
  }
  PolicyOptions o;
  Scheduler sched(s, o);
  sched.SetQueueBlockCapacityForTest(4);
  sched.Plan(s.now, PlanDetail::kDecisions);
  sched.Plan(s.now, PlanDetail::kDecisions);
  EXPECT_GT(sched.SkippedJobsForTest(), 30u);
  Plan full = sched.Plan(s.now, PlanDetail::kFull);
  EXPECT_EQ(sched.SkippedJobsForTest(), 0u);
  EXPECT_EQ(DescribePlan(full), DescribePlan(plan(s, o)));
}

// Binds says which jobs a usage limit can hold back: only those leave their block to visit.
TEST(LimitTracker, BindsTheJobsOfALimitedQosAssociationOrAccountTreeOnly) {
  auto cluster = [] {
    SnapshotBuilder b;
    b.Partition("gpu").Nodes(1, 64, 1 << 20, 8);
    b.snapshot().accounts.push_back({"a", 0, 1, {}});   // 1, under root
    b.snapshot().accounts.push_back({"a1", 1, 1, {}});  // 2, under a
    b.snapshot().accounts.push_back({"b", 0, 1, {}});   // 3, under root
    b.snapshot().qos.emplace_back().name = "other";     // QoS 1
    b.User(10, 2).User(11, 3);                          // associations 0 (a1), 1 (b)
    return b.Build();
  };
  Job in_a1;
  in_a1.assoc = 0, in_a1.user = 10;
  Job in_b = in_a1;
  in_b.assoc = 1, in_b.user = 11;
  Job other_qos = in_b;
  other_qos.qos = 1;
  {
    Snapshot s = cluster();
    EXPECT_FALSE(LimitTracker(s).Binds(in_a1)) << "no limit at all";
  }
  struct Limit {
    const char* what;
    void (*set)(Snapshot&);
    bool a1, b, other;
  };
  const Limit limits[] = {
      {"QoS MaxTRESPerUser", [](Snapshot& s) { s.qos[0].max_tres_per_user.gpus = 8; }, true, true,
       false},
      {"QoS GrpJobs", [](Snapshot& s) { s.qos[0].grp_jobs = 4; }, true, true, false},
      {"QoS MaxJobsPerAccount", [](Snapshot& s) { s.qos[1].max_jobs_per_account = 4; }, false,
       false, true},
      {"account GrpTRES up the tree", [](Snapshot& s) { s.accounts[1].grp_tres.nodes = 2; }, true,
       false, false},
      {"account GrpJobs", [](Snapshot& s) { s.accounts[3].grp_jobs = 2; }, false, true, true},
      {"account MaxJobs, inherited", [](Snapshot& s) { s.accounts[1].max_jobs = 2; }, true, false,
       false},
      {"association MaxJobs", [](Snapshot& s) { s.associations[1].max_jobs = 2; }, false, true,
       true},
  };
  for (const Limit& l : limits) {
    SCOPED_TRACE(l.what);
    Snapshot s = cluster();
    l.set(s);
    LimitTracker tracker(s);
    EXPECT_EQ(tracker.Binds(in_a1), l.a1);
    EXPECT_EQ(tracker.Binds(in_b), l.b);
    EXPECT_EQ(tracker.Binds(other_qos), l.other);
  }
}

}  // namespace
}  // namespace lockstep::engine
