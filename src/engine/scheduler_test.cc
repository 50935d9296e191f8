// plan(): the scheduling pass, scenario by scenario. Every plan is also checked against the
// invariants of plan_checker.h.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/model.h"
#include "engine/plan_checker.h"
#include "engine/snapshot_builder.h"

namespace lockstep::engine {
namespace {

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

PendingReason ReasonOf(const Plan& p, JobId id) {
  const Pending* x = FindPending(p, id);
  return x ? x->reason : PendingReason::kNone;
}

TEST(Plan, StartsWhatFitsWithDevicesAndPacksNodes) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  b.Running(100, {1}, 6, 3600, 0);  // n1 has 2 GPUs free, n0 has 8
  b.Pending(1, 1, 2, 600);
  Plan p = PlanChecked(b.Build());
  const Start* st = FindStart(p, 1);
  ASSERT_NE(st, nullptr);
  ASSERT_EQ(st->allocation.nodes.size(), 1u);
  EXPECT_EQ(st->allocation.nodes[0].node, 1u) << "best fit fills the fuller node";
  EXPECT_EQ(st->allocation.nodes[0].gpus, 0b11000000u);
  EXPECT_FALSE(st->backfilled);
}

// An exclusive job leaves nothing on any node it takes, so best fit falls to the lowest index,
// whatever the nodes' sizes (the free-node index visits the smaller node first).
TEST(Plan, ExclusiveJobTakesTheLowestIndexedNodeAmongUnequalOnes) {
  SnapshotBuilder b;
  b.Partition("cpu").Nodes(1, 16, 1 << 16, 0).Nodes(1, 8, 1 << 16, 0);
  b.Pending(1, 1, 0, 600).req.exclusive = true;
  Plan p = PlanChecked(b.Build());
  const Start* st = FindStart(p, 1);
  ASSERT_NE(st, nullptr);
  ASSERT_EQ(st->allocation.nodes.size(), 1u);
  EXPECT_EQ(st->allocation.nodes[0].node, 0u);
}

TEST(Plan, GangGetsAllItsNodesOrNoneAndReservesAtTheBlockersEnd) {
  SnapshotBuilder b;
  b.Now(1000).Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  b.Running(100, {1}, 8, 3600, 0);  // ends at 3600
  b.Pending(1, 2, 8, 600);
  Plan p = PlanChecked(b.Build());
  EXPECT_TRUE(p.starts.empty()) << "one free node of two must not start a 2-node job";
  const Pending* x = FindPending(p, 1);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->reason, PendingReason::kResources);
  EXPECT_TRUE(x->reserved);
  EXPECT_EQ(x->expected_start, 3600);
  EXPECT_EQ(x->reservation.nodes.size(), 2u);
  EXPECT_EQ(x->blocked_by, std::vector<JobId>{100});
}

TEST(Plan, EasyBackfillsShortJobsButNotOnesThatDelayTheHead) {
  SnapshotBuilder b;
  b.Now(0).Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  b.Running(100, {1}, 8, 3600, 0);
  b.Pending(1, 2, 8, 600, 1);   // head: needs both nodes at 3600
  b.Pending(2, 1, 8, 7200, 2);  // would hold n0 past 3600: no
  b.Pending(3, 1, 4, 3000, 3);  // ends before 3600: yes
  Plan p = PlanChecked(b.Build());
  EXPECT_EQ(FindStart(p, 2), nullptr);
  ASSERT_NE(FindStart(p, 3), nullptr);
  EXPECT_TRUE(FindStart(p, 3)->backfilled);
  EXPECT_EQ(ReasonOf(p, 2), PendingReason::kPriority);
  EXPECT_EQ(FindPending(p, 1)->expected_start, 3600);
}

TEST(Plan, FifoStartsNothingBehindABlockedJob) {
  SnapshotBuilder b;
  b.Now(0).Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  b.Running(100, {1}, 8, 3600, 0);
  b.Pending(1, 2, 8, 600, 1);
  b.Pending(3, 1, 4, 60, 3);
  PolicyOptions fifo;
  fifo.reservation_depth = 0;
  Plan p = PlanChecked(b.Build(), fifo);
  EXPECT_TRUE(p.starts.empty());
  EXPECT_EQ(ReasonOf(p, 3), PendingReason::kPriority);
  EXPECT_FALSE(FindPending(p, 1)->reserved);
}

TEST(Plan, ConservativeProtectsEveryReservationEasyOnlyTheFirst) {
  SnapshotBuilder b;
  b.Now(0).Partition("gpu").Nodes(3, 64, 1 << 20, 8);
  b.Running(100, {0}, 8, 1000, 0);
  b.Running(101, {1}, 8, 2000, 0);
  b.Running(102, {2}, 4, 5000, 0);  // n2 has 4 GPUs free
  b.Pending(1, 2, 8, 1000, 1);      // head: n0+n1 at 2000
  b.Pending(2, 1, 8, 1500, 2);      // next: a whole node; [1000, 2500) on n0 would delay 1: 3000
  b.Pending(3, 1, 4, 2500, 3);      // fits now on n2 (the free half)
  b.Pending(4, 1, 2, 4000, 4);      // could it take n0/n1 until 4000? delays 1: never
  Snapshot s = b.Build();
  PolicyOptions easy;
  Plan pe = PlanChecked(s, easy);
  EXPECT_NE(FindStart(pe, 3), nullptr);
  PolicyOptions cons;
  cons.reservation_depth = 10;
  Plan pc = PlanChecked(s, cons);
  EXPECT_NE(FindStart(pc, 3), nullptr);
  EXPECT_TRUE(FindPending(pc, 1)->reserved);
  EXPECT_TRUE(FindPending(pc, 2)->reserved);
  EXPECT_EQ(FindPending(pc, 1)->expected_start, 2000);
  EXPECT_EQ(FindPending(pc, 2)->expected_start, 3000);
  EXPECT_FALSE(FindPending(pe, 2)->reserved);
}

TEST(Plan, ReasonsForJobsThatMayNotRunYet) {
  SnapshotBuilder b;
  b.Now(100).Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  Snapshot& s = b.snapshot();
  s.partitions[0].max_time = 3600;
  s.qos[0].max_wall = 1800;
  b.Pending(1, 1, 1, 600).held_by_user = true;
  b.Pending(2, 1, 1, 600).held_by_admin = true;
  b.Pending(3, 1, 1, 600).begin_time = 500;
  b.Pending(4, 1, 1, 7200);                  // over the partition's MaxTime
  b.Pending(5, 1, 1, 2000);                  // over the QoS MaxWall
  b.Pending(6, 3, 8, 600);                   // more nodes than the partition has
  b.Pending(7, 1, 16, 600);                  // more GPUs than a node has
  b.Pending(8, 1, 1, 600).req.features = 1;  // a feature no node has
  s.features.push_back("ib");
  Plan p = PlanChecked(s);
  EXPECT_EQ(ReasonOf(p, 1), PendingReason::kJobHeldUser);
  EXPECT_EQ(ReasonOf(p, 2), PendingReason::kJobHeldAdmin);
  EXPECT_EQ(ReasonOf(p, 3), PendingReason::kBeginTime);
  EXPECT_EQ(ReasonOf(p, 4), PendingReason::kPartitionTimeLimit);
  EXPECT_EQ(ReasonOf(p, 5), PendingReason::kQOSMaxWallDurationPerJobLimit);
  EXPECT_EQ(ReasonOf(p, 6), PendingReason::kPartitionConfig);
  EXPECT_EQ(ReasonOf(p, 7), PendingReason::kPartitionConfig);
  EXPECT_EQ(ReasonOf(p, 8), PendingReason::kBadConstraints);
  EXPECT_TRUE(p.starts.empty());
}

TEST(Plan, DownAndDrainedNodesTakeNothing) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  b.snapshot().nodes[0].state = NodeState::kDrain;
  b.snapshot().nodes[1].state = NodeState::kDown;
  b.Pending(1, 1, 1, 600);
  Plan p = PlanChecked(b.Build());
  EXPECT_TRUE(p.starts.empty());
  EXPECT_EQ(ReasonOf(p, 1), PendingReason::kReqNodeNotAvail);
}

TEST(Plan, DependenciesFollowTheirTargets) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(4, 64, 1 << 20, 8);
  Snapshot& s = b.snapshot();
  s.finished = {{50, Outcome::kCompleted}, {51, Outcome::kFailed}};
  b.Running(60, {3}, 1, 600, 0);
  b.Pending(1, 1, 1, 600).dependencies = {{DependencyKind::kAfterOk, 50}};
  b.Pending(2, 1, 1, 600).dependencies = {{DependencyKind::kAfterOk, 51}};
  b.Pending(3, 1, 1, 600).dependencies = {{DependencyKind::kAfterNotOk, 51}};
  b.Pending(4, 1, 1, 600).dependencies = {{DependencyKind::kAfterAny, 60}};
  b.Pending(5, 1, 1, 600).dependencies = {{DependencyKind::kAfter, 60}};
  b.Pending(6, 1, 1, 600).dependencies = {{DependencyKind::kAfterOk, 1}};
  Job& any = b.Pending(7, 1, 1, 600);
  any.dependencies = {{DependencyKind::kAfterOk, 51}, {DependencyKind::kAfterAny, 50}};
  any.dependencies_any = true;
  Plan p = PlanChecked(s);
  EXPECT_NE(FindStart(p, 1), nullptr);
  EXPECT_EQ(ReasonOf(p, 2), PendingReason::kDependencyNeverSatisfied);
  EXPECT_NE(FindStart(p, 3), nullptr);
  EXPECT_EQ(ReasonOf(p, 4), PendingReason::kDependency);
  EXPECT_NE(FindStart(p, 5), nullptr) << "after: the target has started";
  EXPECT_EQ(ReasonOf(p, 6), PendingReason::kDependency);
  EXPECT_NE(FindStart(p, 7), nullptr) << "one of two ?-joined dependencies suffices";
}

TEST(Plan, AfterWithADelayWaitsThatLongAfterTheTargetStarted) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(4, 64, 1 << 20, 8).Now(1000);
  Snapshot& s = b.snapshot();
  b.Running(60, {3}, 1, 3600, 900);
  // Cancelled while pending at 950: the delay counts from then.
  s.finished = {{70, Outcome::kCancelled, 950}};
  b.Pending(1, 1, 1, 600).dependencies = {{DependencyKind::kAfter, 60, 300}};  // 1200
  b.Pending(2, 1, 1, 600).dependencies = {{DependencyKind::kAfter, 60, 60}};   // 960
  b.Pending(3, 1, 1, 600).dependencies = {{DependencyKind::kAfter, 70, 120}};  // 1070
  b.Pending(4, 1, 1, 600).dependencies = {{DependencyKind::kAfter, 70, 50}};   // 1000
  Plan p = PlanChecked(s);
  EXPECT_EQ(ReasonOf(p, 1), PendingReason::kDependency) << "60 started 100 s ago, not 300";
  EXPECT_NE(FindStart(p, 2), nullptr);
  EXPECT_EQ(ReasonOf(p, 3), PendingReason::kDependency);
  EXPECT_NE(FindStart(p, 4), nullptr) << "the delay is over at exactly 950 + 50";

  s.now = 1200;
  p = PlanChecked(s);
  EXPECT_NE(FindStart(p, 1), nullptr) << "at 900 + 300 the delay is over";
}

TEST(Plan, MemZeroTakesAllOfANodesMemory) {
  SnapshotBuilder b;
  b.Partition("cpu").Nodes(3, 64, 1000, 0);
  Snapshot& s = b.snapshot();
  b.Running(60, {0}, 0, 3600, 0).allocation.nodes[0].mem_mb = 100;
  Job& whole = b.Pending(1, 1, 0, 600);
  whole.req.mem_whole_node = true;
  b.Pending(2, 1, 0, 600, 1).req.mem_per_node_mb = 10;
  Job& second = b.Pending(3, 1, 0, 600, 2);
  second.req.mem_whole_node = true;
  Job& third = b.Pending(4, 1, 0, 600, 3);
  third.req.mem_whole_node = true;
  Plan p = PlanChecked(s);
  const Start* a = FindStart(p, 1);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->allocation.nodes.size(), 1u);
  EXPECT_NE(a->allocation.nodes[0].node, 0u) << "node 0 has 100 MB taken";
  EXPECT_EQ(a->allocation.nodes[0].mem_mb, 1000) << "the node's whole memory";
  const Start* small = FindStart(p, 2);
  ASSERT_NE(small, nullptr);
  const Start* b2 = FindStart(p, 3);
  ASSERT_NE(b2, nullptr) << "one node is left whole for it";
  EXPECT_EQ(b2->allocation.nodes[0].mem_mb, 1000);
  EXPECT_EQ(small->allocation.nodes[0].node, 0u) << "10 MB fits only beside the running job";
  EXPECT_EQ(ReasonOf(p, 4), PendingReason::kResources) << "no node's memory is all free";
}

TEST(Plan, SingletonRunsOneJobOfANameAtATime) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  for (JobId id : {1, 2}) {
    Job& j = b.Pending(id, 1, 1, 600, static_cast<Time>(id));
    j.name = "train";
    j.dependencies = {{DependencyKind::kSingleton, 0}};
  }
  Plan p = PlanChecked(b.Build());
  EXPECT_NE(FindStart(p, 1), nullptr);
  EXPECT_EQ(ReasonOf(p, 2), PendingReason::kDependency);
}

TEST(Plan, ArrayThrottleCapsRunningTasks) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  for (JobId id = 1; id <= 5; ++id) {
    Job& j = b.Pending(id, 1, 1, 600, 0);
    j.array_job_id = 1;
    j.array_task_id = static_cast<std::uint32_t>(id - 1);
    j.array_max_running = 2;
  }
  Plan p = PlanChecked(b.Build());
  EXPECT_EQ(p.starts.size(), 2u);
  EXPECT_EQ(ReasonOf(p, 5), PendingReason::kJobArrayTaskLimit);
}

TEST(Plan, QosAndAccountLimitsHoldJobsBack) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(4, 64, 1 << 20, 8);
  Snapshot& s = b.snapshot();
  s.qos.emplace_back().name = "capped";
  s.qos[1].max_tres_per_user.gpus = 8;
  s.qos.emplace_back().name = "team";
  s.qos[2].grp_tres.gpus = 4;
  s.accounts.push_back({"small", 0, 1, {}});
  s.accounts[1].grp_tres.gpus = 2;
  b.User(7, 0).User(8, 1);
  Job& a = b.Pending(1, 1, 8, 600, 1);
  a.qos = 1, a.user = 7;
  Job& a2 = b.Pending(2, 1, 1, 600, 2);
  a2.qos = 1, a2.user = 7;  // the user's 9th GPU
  Job& t = b.Pending(3, 1, 4, 600, 3);
  t.qos = 2;
  Job& t2 = b.Pending(4, 1, 1, 600, 4);
  t2.qos = 2;
  Job& acct = b.Pending(5, 1, 3, 600, 5);
  acct.assoc = 1, acct.user = 8;
  Plan p = PlanChecked(s);
  EXPECT_NE(FindStart(p, 1), nullptr);
  EXPECT_EQ(ReasonOf(p, 2), PendingReason::kQOSMaxGRESPerUser);
  EXPECT_NE(FindStart(p, 3), nullptr);
  EXPECT_EQ(ReasonOf(p, 4), PendingReason::kQOSGrpGRES);
  EXPECT_EQ(ReasonOf(p, 5), PendingReason::kAssocGrpGRES);
}

// Running-job counts (GrpJobs, MaxJobsPerUser, MaxJobsPerAccount of a QoS; MaxJobs of an
// association, inherited from its account; GrpJobs of an account) hold jobs back with Slurm's
// reasons, counting the jobs already running and those the pass starts.
TEST(Plan, JobCountLimitsHoldJobsBack) {
  SnapshotBuilder b;
  b.Partition("cpu").Nodes(8, 64, 1 << 20, 0);
  Snapshot& s = b.snapshot();
  s.qos.emplace_back().name = "grp";
  s.qos[1].grp_jobs = 2;
  s.qos.emplace_back().name = "peruser";
  s.qos[2].max_jobs_per_user = 1;
  s.qos.emplace_back().name = "peraccount";
  s.qos[3].max_jobs_per_account = 1;
  s.accounts.push_back({"capped", 0, 1, {}});
  s.accounts[1].max_jobs = 1;  // inherited by each user association below
  s.accounts.push_back({"team", 0, 1, {}});
  s.accounts[2].grp_jobs = 2;
  b.User(1, 0).User(2, 1).User(3, 1).User(4, 2).User(5, 2);
  auto job = [&](JobId id, std::uint32_t qos, std::uint32_t assoc, std::uint32_t user) {
    Job& j = b.Pending(id, 1, 0, 600, static_cast<Time>(id));
    j.req.cpus_per_task = 1;
    j.qos = qos, j.assoc = assoc, j.user = user;
  };
  job(1, 1, 0, 1), job(2, 1, 0, 1), job(3, 1, 0, 1);      // GrpJobs=2
  job(4, 2, 0, 1), job(5, 2, 0, 1);                       // MaxJobsPerUser=1
  job(6, 3, 1, 2), job(7, 3, 2, 3);                       // MaxJobsPerAccount=1, one account
  job(8, 0, 1, 2), job(9, 0, 2, 3);  // account MaxJobs=1 each: user 2 runs job 6, user 3 none
  job(10, 0, 3, 4), job(11, 0, 4, 5), job(12, 0, 3, 4);   // account GrpJobs=2
  Plan p = PlanChecked(s);
  for (JobId id : {1, 2, 4, 6, 9, 10, 11}) EXPECT_NE(FindStart(p, id), nullptr) << id;
  EXPECT_EQ(ReasonOf(p, 3), PendingReason::kQOSGrpJobsLimit);
  EXPECT_EQ(ReasonOf(p, 5), PendingReason::kQOSMaxJobsPerUserLimit);
  EXPECT_EQ(ReasonOf(p, 7), PendingReason::kQOSMaxJobsPerAccountLimit);
  EXPECT_EQ(ReasonOf(p, 8), PendingReason::kAssocMaxJobsLimit);
  EXPECT_EQ(ReasonOf(p, 12), PendingReason::kAssocGrpJobsLimit);
  EXPECT_STREQ(PendingReasonName(PendingReason::kAssocGrpJobsLimit), "AssocGrpJobsLimit");

  // An association's own MaxJobs overrides its account's; what runs still counts.
  s.associations[1].max_jobs = 2;
  for (const Start& st : p.starts) {
    auto it = std::find_if(s.pending.begin(), s.pending.end(),
                           [&](const Job& j) { return j.id == st.job; });
    Job running = *it;
    running.allocation = st.allocation;
    s.pending.erase(it);
    s.running.push_back(running);
  }
  Plan again = PlanChecked(s);
  EXPECT_NE(FindStart(again, 8), nullptr) << "user 2's own MaxJobs=2";
  EXPECT_EQ(ReasonOf(again, 7), PendingReason::kQOSMaxJobsPerAccountLimit);
  EXPECT_EQ(ReasonOf(again, 12), PendingReason::kAssocGrpJobsLimit);
}

// An exclusive job is charged the whole nodes it gets (as Slurm's accounting after selection):
// its limits are checked against those, not against the CPUs it asked for.
TEST(Plan, ExclusiveJobsCountTheirWholeNodesAgainstLimits) {
  SnapshotBuilder b;
  b.Partition("cpu").Nodes(4, 32, 1 << 20, 0);
  Snapshot& s = b.snapshot();
  s.qos.emplace_back().name = "team";
  s.qos[1].grp_tres.cpus = 48;
  for (JobId id = 1; id <= 2; ++id) {
    Job& j = b.Pending(id, 1, 0, 600, static_cast<Time>(id));
    j.qos = 1;
    j.req.cpus_per_task = 1;
    j.req.exclusive = true;
  }
  Plan p = PlanChecked(s);
  const Start* first = FindStart(p, 1);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->allocation.nodes.at(0).cpus, 32);  // the whole node, charged 32 of 48
  EXPECT_EQ(FindStart(p, 2), nullptr) << "a second whole node would make 64 CPUs";
  EXPECT_EQ(ReasonOf(p, 2), PendingReason::kQOSGrpCpuLimit);
}

NodeFilterPtr Filter(std::vector<std::uint32_t> required, std::vector<std::uint32_t> excluded) {
  boost::intrusive_ptr<NodeFilter> f(new NodeFilter);
  f->required = std::move(required);
  f->excluded = std::move(excluded);
  return f;
}

// -x: never on an excluded node, even when it is the only free one; -w: on the required node,
// waiting for it (with a reservation there) while other nodes are free.
TEST(Plan, NodeListAndExcludeChooseTheNodes) {
  SnapshotBuilder b;
  b.Now(0).Partition("gpu").Nodes(3, 64, 1 << 20, 8);
  b.Running(100, {0}, 8, 3600, 0);  // node 0 busy until 3600
  b.Running(101, {1}, 8, 3600, 0);  // node 1 too; node 2 free
  Job& excluded = b.Pending(1, 1, 8, 600, 1);
  excluded.req.node_filter = Filter({}, {2});
  Job& required = b.Pending(2, 1, 8, 600, 2);
  required.req.node_filter = Filter({0}, {});
  Job& two = b.Pending(3, 2, 8, 600, 3);  // -w n1 -N2: n1 and one more
  two.req.node_filter = Filter({1}, {});
  b.Pending(4, 1, 8, 600, 4);
  PolicyOptions o;
  o.reservation_depth = 10;
  Plan p = PlanChecked(b.Build(), o);
  EXPECT_EQ(FindStart(p, 1), nullptr);
  EXPECT_EQ(FindStart(p, 2), nullptr) << "node 0 is busy; node 2 is free but not the one asked";
  const Start* last = FindStart(p, 4);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->allocation.nodes.at(0).node, 2u);

  for (JobId id : {1, 2, 3}) {
    const Pending* w = nullptr;
    for (const Pending& q : p.pending)
      if (q.job == id) w = &q;
    ASSERT_NE(w, nullptr) << id;
    EXPECT_TRUE(w->reserved) << id;
    EXPECT_GE(w->expected_start, 3600) << id;
    if (id == 2) EXPECT_EQ(w->reservation.nodes.at(0).node, 0u);
  }
}

// A one-node job goes to its -w node even when another node fits better (lower index here).
TEST(Plan, NodeListWinsOverBestFit) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(3, 64, 1 << 20, 8);
  Job& j = b.Pending(1, 1, 1, 600, 1);
  j.req.node_filter = Filter({1}, {});
  Job& k = b.Pending(2, 1, 1, 600, 2);
  k.req.node_filter = Filter({}, {0});
  Plan p = PlanChecked(b.Build());
  const Start* on1 = FindStart(p, 1);
  ASSERT_NE(on1, nullptr);
  EXPECT_EQ(on1->allocation.nodes.at(0).node, 1u);
  const Start* not0 = FindStart(p, 2);
  ASSERT_NE(not0, nullptr);
  EXPECT_NE(not0->allocation.nodes.at(0).node, 0u);
}

// A filter that can never be met is BadConstraints; a required node that is down is
// ReqNodeNotAvail.
TEST(Plan, ImpossibleNodeFiltersSayWhy) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(4, 64, 1 << 20, 8);
  Snapshot& s = b.snapshot();
  s.partitions[0].nodes = {0, 1, 2};  // node 3 is in no partition of the job
  s.nodes[1].state = NodeState::kDown;
  Job& outside = b.Pending(1, 1, 1, 600, 1);
  outside.req.node_filter = Filter({3}, {});  // not in the job's partition
  Job& too_many = b.Pending(2, 1, 1, 600, 2);
  too_many.req.node_filter = Filter({0, 2}, {});  // two required, one node asked
  Job& none_left = b.Pending(3, 2, 1, 600, 3);
  none_left.req.node_filter = Filter({}, {0, 2});  // node 1 alone is left for two
  Job& down = b.Pending(4, 1, 1, 600, 4);
  down.req.node_filter = Filter({1}, {});
  Plan p = PlanChecked(s);
  EXPECT_EQ(ReasonOf(p, 1), PendingReason::kBadConstraints);
  EXPECT_EQ(ReasonOf(p, 2), PendingReason::kBadConstraints);
  EXPECT_EQ(ReasonOf(p, 3), PendingReason::kBadConstraints);
  EXPECT_EQ(ReasonOf(p, 4), PendingReason::kReqNodeNotAvail);
}

TEST(Plan, MultiNodeJobsStayWithinOneLeafSwitch) {
  SnapshotBuilder b;
  b.Switch("leaf0", 2).Switch("leaf1", 2).Switch("spine");
  b.Partition("gpu").Nodes(4, 64, 1 << 20, 8, 0).Nodes(4, 64, 1 << 20, 8, 1);
  b.Running(100, {0}, 8, 3600, 0);  // leaf0 has 3 free nodes, leaf1 has 4
  b.Pending(1, 4, 8, 600);
  Plan p = PlanChecked(b.Build());
  const Start* st = FindStart(p, 1);
  ASSERT_NE(st, nullptr);
  for (const NodeAllocation& a : st->allocation.nodes) EXPECT_GE(a.node, 4u) << "all on leaf1";
}

TEST(Plan, SwitchLimitWaitsUntilItCanBeMetOrItsWaitIsOver) {
  SnapshotBuilder b;
  b.Switch("leaf0", 2).Switch("leaf1", 2).Switch("spine");
  b.Now(100).Partition("gpu").Nodes(2, 64, 1 << 20, 8, 0).Nodes(2, 64, 1 << 20, 8, 1);
  b.Running(100, {0}, 8, 3600, 0);
  b.Running(101, {2}, 8, 3600, 0);
  Job& j = b.Pending(1, 2, 8, 600, 0);
  j.req.max_switches = 1;
  j.req.switches_wait = 300;
  Snapshot s = b.Build();
  EXPECT_EQ(PlanChecked(s).starts.size(), 0u);
  s.now = 400;  // the wait is over: any switches
  EXPECT_EQ(PlanChecked(s).starts.size(), 1u);
}

TEST(Plan, MigSlicesAreScheduledByProfile) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(1, 64, 1 << 20, 1);
  Snapshot& s = b.snapshot();
  s.gpu_types.push_back("a100_3g.20gb");
  s.nodes[0].gpus.push_back({1, 1, 0, "MIG-a"});
  s.nodes[0].gpus.push_back({2, 1, 0, "MIG-b"});
  Job& j = b.Pending(1, 1, 2, 600);
  j.req.gpu_type = 1;
  Plan p = PlanChecked(s);
  const Start* st = FindStart(p, 1);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->allocation.nodes[0].gpus, 0b110u);
}

TEST(Plan, PriorityOrdersTheQueueAndIsBrokenDown) {
  SnapshotBuilder b;
  b.Now(7 * 24 * 3600).Partition("gpu").Nodes(1, 64, 1 << 20, 8);
  b.User(1, 0, 1, 1000.0).User(2, 0, 1, 0.0);
  Job& heavy = b.Pending(1, 1, 8, 600, 0);  // older, but its user used a lot
  heavy.assoc = 0;
  Job& light = b.Pending(2, 1, 8, 600, 3600);
  light.assoc = 1;
  PolicyOptions o;
  o.weights.age = 1000;
  o.weights.fairshare = 10000;
  Plan p = PlanChecked(b.Build(), o);
  ASSERT_EQ(p.starts.size(), 1u);
  EXPECT_EQ(p.starts[0].job, 2u);
  auto light_prio =
      std::find_if(p.priorities.begin(), p.priorities.end(), [](auto& x) { return x.first == 2; });
  EXPECT_DOUBLE_EQ(light_prio->second.fairshare, 10000.0);
  EXPECT_NEAR(light_prio->second.age, 1000.0 * (7 * 24 - 1) / (7 * 24), 1e-6);
}

TEST(Plan, IsDeterministic) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(8, 64, 1 << 20, 8);
  for (JobId id = 1; id <= 40; ++id)
    b.Pending(id, 1 + static_cast<int>(id % 3), 1 + static_cast<int>(id % 8), 600 * id, 0);
  Snapshot s = b.Build();
  Plan a = plan(s, {}), c = plan(s, {});
  ASSERT_EQ(a.starts.size(), c.starts.size());
  for (std::size_t i = 0; i < a.starts.size(); ++i) {
    EXPECT_EQ(a.starts[i].job, c.starts[i].job);
    ASSERT_EQ(a.starts[i].allocation.nodes.size(), c.starts[i].allocation.nodes.size());
    for (std::size_t k = 0; k < a.starts[i].allocation.nodes.size(); ++k)
      EXPECT_EQ(a.starts[i].allocation.nodes[k].gpus, c.starts[i].allocation.nodes[k].gpus);
  }
}

TEST(Plan, PendingJobsGetAnExpectedStart) {
  SnapshotBuilder b;
  b.Now(0).Partition("gpu").Nodes(1, 64, 1 << 20, 8);
  b.Running(100, {0}, 8, 1000, 0);
  b.Pending(1, 1, 8, 500, 1);  // reserved at 1000
  b.Pending(2, 1, 8, 500, 2);  // not reserved (EASY); estimated after the head: 1500
  Plan p = PlanChecked(b.Build());
  EXPECT_EQ(FindPending(p, 1)->expected_start, 1000);
  EXPECT_EQ(FindPending(p, 2)->expected_start, 1500);
}


// ---- Heterogeneous jobs (pass_het.cc) ----

// Marks ids first .. first + count - 1 as the components of one heterogeneous job.
void MakeHetGroup(Snapshot& s, JobId first, int count) {
  for (Job& j : s.pending)
    if (j.id >= first && j.id < first + static_cast<JobId>(count)) {
      j.het_offset = static_cast<std::uint8_t>(j.id - first);
      j.het_size = static_cast<std::uint8_t>(count);
    }
}

TEST(Plan, HetComponentsStartTogetherWhenAllFit) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(3, 64, 1 << 20, 8);
  b.Pending(1, 1, 8, 600);
  b.Pending(2, 2, 2, 600);
  Snapshot s = b.Build();
  MakeHetGroup(s, 1, 2);
  Plan p = PlanChecked(s);
  ASSERT_NE(FindStart(p, 1), nullptr);
  ASSERT_NE(FindStart(p, 2), nullptr);
  EXPECT_EQ(FindStart(p, 1)->allocation.nodes.size(), 1u);
  EXPECT_EQ(FindStart(p, 2)->allocation.nodes.size(), 2u);
}

// The small component could start on the free node at once; it waits for the large one, and
// both hold one reservation for when the blocker ends.
TEST(Plan, HetComponentWaitsForItsGroupAndTheyReserveOneTime) {
  SnapshotBuilder b;
  b.Now(1000).Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  b.Running(100, {0}, 8, 3600, 0);  // ends at 3600
  b.Pending(1, 2, 4, 600);           // needs node 0 too
  b.Pending(2, 1, 1, 600);           // node 1 has room now
  Snapshot s = b.Build();
  MakeHetGroup(s, 1, 2);
  Plan p = PlanChecked(s);
  EXPECT_TRUE(p.starts.empty()) << "no component starts before all can";
  for (JobId id : {1, 2}) {
    const Pending* x = FindPending(p, id);
    ASSERT_NE(x, nullptr) << id;
    EXPECT_TRUE(x->reserved) << id;
    EXPECT_EQ(x->expected_start, 3600) << id;
  }
}

// Two components that each want half of the only node share it.
TEST(Plan, HetComponentsMayShareANodeWithRoomForBoth) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(1, 64, 1 << 20, 8);
  b.Pending(1, 1, 4, 600);
  b.Pending(2, 1, 4, 600);
  Snapshot s = b.Build();
  MakeHetGroup(s, 1, 2);
  Plan p = PlanChecked(s);
  ASSERT_NE(FindStart(p, 1), nullptr);
  ASSERT_NE(FindStart(p, 2), nullptr);
  EXPECT_EQ(FindStart(p, 1)->allocation.nodes[0].gpus & FindStart(p, 2)->allocation.nodes[0].gpus,
            0u)
      << "each component has GPUs of its own";
}

// Together the components need more than the partition has: none starts, and a later job that
// fits does (the group is not a barrier it can never lift).
TEST(Plan, HetGroupThatNeverFitsTogetherStartsNoComponent) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  b.Pending(1, 2, 8, 600);
  b.Pending(2, 1, 8, 600);
  b.Pending(3, 1, 4, 600, 10);
  Snapshot s = b.Build();
  MakeHetGroup(s, 1, 2);
  Plan p = PlanChecked(s);
  EXPECT_EQ(FindStart(p, 1), nullptr);
  EXPECT_EQ(FindStart(p, 2), nullptr);
  EXPECT_NE(FindStart(p, 3), nullptr);
  EXPECT_FALSE(FindPending(p, 1)->reserved);
}

// A held component holds its whole group.
TEST(Plan, HeldHetComponentHoldsTheGroup) {
  SnapshotBuilder b;
  b.Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  b.Pending(1, 1, 1, 600);
  b.Pending(2, 1, 1, 600).held_by_user = true;
  Snapshot s = b.Build();
  MakeHetGroup(s, 1, 2);
  Plan p = PlanChecked(s);
  EXPECT_TRUE(p.starts.empty());
  EXPECT_EQ(ReasonOf(p, 1), PendingReason::kJobHeldUser);
  EXPECT_EQ(ReasonOf(p, 2), PendingReason::kJobHeldUser);
}

// ---- --exclusive=user ----

// Another user's job never lands beside a user-exclusive job, though best fit would put it
// there; the same user's job may.
TEST(Plan, ExclusiveUserJobKeepsOtherUsersOffItsNodes) {
  SnapshotBuilder b;
  b.Now(1000).Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  Job& mine = b.Running(100, {0}, 6, 3600, 0);  // node 0 is the fuller: best fit
  mine.user = 1;
  mine.req.exclusive_user = true;
  b.Pending(1, 1, 1, 600).user = 2;
  b.Pending(2, 1, 1, 600).user = 1;
  Plan p = PlanChecked(b.Build());
  ASSERT_NE(FindStart(p, 1), nullptr);
  EXPECT_EQ(FindStart(p, 1)->allocation.nodes[0].node, 1u) << "another user's job";
  ASSERT_NE(FindStart(p, 2), nullptr);
  EXPECT_EQ(FindStart(p, 2)->allocation.nodes[0].node, 0u) << "its own user's job shares";
}

// A user-exclusive job waits for nodes free of other users' jobs, and reserves for when the
// earliest of them ends; jobs of its own user do not keep it off.
TEST(Plan, ExclusiveUserJobWaitsForNodesWithoutOtherUsers) {
  SnapshotBuilder b;
  b.Now(1000).Partition("gpu").Nodes(2, 64, 1 << 20, 8);
  b.Running(100, {0}, 1, 3600, 0).user = 2;  // ends at 3600
  b.Running(101, {1}, 1, 7200, 0).user = 3;  // ends at 7200
  Job& wants = b.Pending(1, 1, 1, 600);
  wants.user = 1;
  wants.req.exclusive_user = true;
  Plan p = PlanChecked(b.Build());
  EXPECT_EQ(FindStart(p, 1), nullptr) << "both nodes have room, but not its own";
  const Pending* x = FindPending(p, 1);
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE(x->reserved);
  EXPECT_EQ(x->expected_start, 3600);
  ASSERT_EQ(x->reservation.nodes.size(), 1u);
  EXPECT_EQ(x->reservation.nodes[0].node, 0u);

  SnapshotBuilder same;
  same.Now(1000).Partition("gpu").Nodes(1, 64, 1 << 20, 8);
  same.Running(100, {0}, 1, 3600, 0).user = 1;
  Job& again = same.Pending(1, 1, 1, 600);
  again.user = 1;
  again.req.exclusive_user = true;
  EXPECT_NE(FindStart(PlanChecked(same.Build()), 1), nullptr);
}

}  // namespace
}  // namespace lockstep::engine
