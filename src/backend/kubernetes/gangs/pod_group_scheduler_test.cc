// The pod group scheduler against a real apiserver: gangs bound whole, waiting, never fitting,
// incomplete, ending, losing pods, a binding that fails halfway, bad objects
// (pod_group_test_fixture.h).
#include <gtest/gtest.h>

#include "backend/kubernetes/gangs/pod_group_test_fixture.h"

namespace lockstep::kube::gangs_test {
namespace {

TEST_F(PodGroupSchedulerTest, GangOfFourIsBoundWholeOnDistinctNodes) {
  for (int i = 0; i < 4; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePods("train", 0, 4, "4");
  ASSERT_TRUE(WaitFor([&] { return BoundCount("train") == 4; }, seconds(20)));
  std::set<std::string> nodes;
  for (const auto& [pod, node] : Placement("train")) nodes.insert(node);
  EXPECT_EQ(nodes.size(), 4u);
  JobId job = scheduler_->JobOfGangForTest(ns_ + "/train");
  ASSERT_NE(job, 0u);
  EXPECT_EQ(JobState(job), "RUNNING");
  EXPECT_EQ(scheduler_->stats().submitted, 1);
  // The apiserver shows the fourth pod bound a moment before its binding's thread counts it.
  EXPECT_TRUE(WaitFor([&] { return scheduler_->stats().bound_pods == 4; }, seconds(10)))
      << scheduler_->stats().bound_pods;
}

TEST_F(PodGroupSchedulerTest, GangWaitsUntilTheWholeGangFitsThenBinds) {
  for (int i = 0; i < 4; ++i) CreateNode(i, /*ready=*/i != 3);
  SyncNodes();
  StartScheduler();
  CreatePods("wide", 0, 4, "4");
  ASSERT_TRUE(
      WaitFor([&] { return scheduler_->JobOfGangForTest(ns_ + "/wide") != 0; }, seconds(10)));
  Settle();  // a scheduling pass has run with three nodes, and its orders (none) were handled
  EXPECT_EQ(BoundCount("wide"), 0) << "three free nodes must not get three of four pods";
  EXPECT_EQ(JobState(scheduler_->JobOfGangForTest(ns_ + "/wide")), "PENDING");
  SetNodeReady(3, true);
  SyncNodes();
  ASSERT_TRUE(WaitFor([&] { return BoundCount("wide") == 4; }, seconds(20)));
}

TEST_F(PodGroupSchedulerTest, GangThatCanNeverFitGetsAnEventAndNoBinding) {
  for (int i = 0; i < 8; ++i) CreateNode(i);
  SyncNodes();
  PodGroupSchedulerOptions o;
  o.clock = &manual_clock_;  // the retries come when the test moves it
  StartScheduler(o);
  CreatePods("huge", 0, 16, "16");
  ASSERT_TRUE(WaitFor([&] { return Events("FailedScheduling").size() >= 16; }, seconds(20)));
  for (const std::string& m : Events("FailedScheduling")) {
    EXPECT_NE(m.find("gang " + ns_ + "/huge (16 pods"), std::string::npos) << m;
    EXPECT_NE(m.find("requested node configuration is not available"), std::string::npos) << m;
    EXPECT_NE(m.find("none of its pods is bound"), std::string::npos) << m;
  }
  ASSERT_TRUE(WaitFor([&] { return scheduler_->stats().rejected >= 1; }, seconds(20)));
  for (int retry = 0; retry < 2; ++retry) {  // past a retry, twice
    const std::int64_t before = scheduler_->stats().rejected;
    manual_clock_.Advance(milliseconds(1001));  // the fixture's retry_interval is 1 s
    scheduler_->TickForTest();
    ASSERT_TRUE(WaitFor([&] { return scheduler_->stats().rejected > before; }, seconds(20)));
  }
  Settle();
  EXPECT_EQ(BoundCount("huge"), 0);
  EXPECT_EQ(scheduler_->JobOfGangForTest(ns_ + "/huge"), 0u);
  EXPECT_EQ(Events("FailedScheduling").size(), 16u) << "the same reason is posted once";
  EXPECT_GE(scheduler_->stats().rejected, 2) << "retried";
}

TEST_F(PodGroupSchedulerTest, IncompleteGangStaysUnboundUntilItsLastPod) {
  for (int i = 0; i < 4; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePods("late", 0, 3, "4");
  Settle();  // the scheduler has seen the three pods and decided
  EXPECT_EQ(BoundCount("late"), 0);
  EXPECT_EQ(scheduler_->JobOfGangForTest(ns_ + "/late"), 0u) << "no job for 3 of 4";
  CreatePods("late", 3, 4, "4");
  ASSERT_TRUE(WaitFor([&] { return BoundCount("late") == 4; }, seconds(20)));
}

TEST_F(PodGroupSchedulerTest, PodsFinishingEndTheJob) {
  for (int i = 0; i < 2; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePods("done", 0, 2, "2");
  ASSERT_TRUE(WaitFor([&] { return BoundCount("done") == 2; }, seconds(20)));
  JobId job = scheduler_->JobOfGangForTest(ns_ + "/done");
  ASSERT_NE(job, 0u);
  for (int i = 0; i < 2; ++i) {
    Result<Json> r = client_->Patch(PodPath(ns_, "done-" + std::to_string(i)) + "/status",
                                    PatchType::kMerge, {{"status", {{"phase", "Succeeded"}}}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (i == 0) {
      NoteWrite(*r);
      Settle();  // the scheduler has seen the pod end, the controller what it was told
      EXPECT_EQ(JobState(job), "RUNNING") << "one pod of two ended";
    }
  }
  ASSERT_TRUE(WaitFor([&] { return JobState(job) == "COMPLETED"; }, seconds(20))) << JobState(job);
  Json jobs = controller_->ListJobs({{"job", std::to_string(job)}, {"all", "1"}});
  ASSERT_EQ(jobs["jobs"].size(), 1u);
  EXPECT_EQ(jobs["jobs"][0]["state"], "COMPLETED");
  EXPECT_EQ(jobs["jobs"][0]["user"], "k8s:" + ns_);
}

TEST_F(PodGroupSchedulerTest, PendingGangLosingAPodIsCancelled) {
  for (int i = 0; i < 2; ++i) CreateNode(i, /*ready=*/i == 0);
  SyncNodes();
  StartScheduler();
  CreatePods("gone", 0, 2, "2");
  ASSERT_TRUE(
      WaitFor([&] { return scheduler_->JobOfGangForTest(ns_ + "/gone") != 0; }, seconds(10)));
  JobId job = scheduler_->JobOfGangForTest(ns_ + "/gone");
  DeleteOptions d;
  d.grace_period_seconds = 0;
  ASSERT_TRUE(client_->Delete(PodPath(ns_, "gone-1"), d).ok());
  ASSERT_TRUE(WaitFor([&] { return JobState(job) == "CANCELLED"; }, seconds(10))) << JobState(job);
  SetNodeReady(1, true);
  SyncNodes();
  Settle();  // a scheduling pass with room for the whole gang, and the scheduler after it
  EXPECT_EQ(scheduler_->JobOfGangForTest(ns_ + "/gone"), 0u) << "no job for half a gang";
  EXPECT_EQ(BoundCount("gone"), 0) << "half a gang is never bound";
}

TEST_F(PodGroupSchedulerTest, BindingThatFailsHalfwayUnbindsTheGang) {
  for (int i = 0; i < 4; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  // A pod vanishes between the scheduler's check and its Binding: the three others, bound, are
  // deleted and the job goes back to the queue, then is cancelled (its gang is incomplete).
  scheduler_->SetBeforeBindForTest([&](const std::string&) {
    DeleteOptions d;
    d.grace_period_seconds = 0;
    (void)client_->Delete(PodPath(ns_, "race-2"), d);
  });
  CreatePods("race", 0, 4, "4");
  ASSERT_TRUE(WaitFor([&] { return scheduler_->stats().bind_failures == 1; }, seconds(20)));
  ASSERT_TRUE(WaitFor([&] { return Placement("race").empty(); }, seconds(10)))
      << "bound pods of a broken gang are deleted";
  EXPECT_EQ(scheduler_->stats().bound_pods, 0);
  ASSERT_TRUE(WaitFor([&] { return scheduler_->stats().cancelled == 1; }, seconds(10)));
}

TEST_F(PodGroupSchedulerTest, BadObjectsGetClearEvents) {
  for (int i = 0; i < 2; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  ASSERT_FALSE(scheduler_->pod_groups_available()) << "the test apiserver has no PodGroup CRD";
  // A gang size that is not a number.
  Result<Json> r = client_->Create(PodsPath(ns_), GangPod("bad-0", "bad", "zero"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // A PodGroup label without annotations while the CRD is not installed.
  Json pg = GangPod("pg-0", "unused", "1");
  pg["metadata"].erase("annotations");
  pg["metadata"]["labels"] = {{kPodGroupLabel, "pg"}};
  r = client_->Create(PodsPath(ns_), pg);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Node affinity the apiserver accepts but no scheduler can read: Gt of a word.
  r = client_->Create(PodsPath(ns_), [&] {
    Json p = GangPod("gt-0", "gt", "1");
    p["spec"].update(
        RequiredAffinity({{{"key", "gpus"}, {"operator", "Gt"}, {"values", {"lots"}}}}));
    return p;
  }());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // A pod asking more GPUs than any node has.
  r = client_->Create(PodsPath(ns_), GangPod("big-0", "big", "1", 16));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto has = [&](const std::string& text) {
    for (const std::string& m : Events("FailedScheduling"))
      if (m.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(WaitFor([&] { return has("gang-size"); }, seconds(10)));
  EXPECT_TRUE(WaitFor([&] { return has("PodGroup CRD"); }, seconds(10)));
  EXPECT_TRUE(
      WaitFor([&] { return has("requested node configuration is not available"); }, seconds(10)));
  EXPECT_TRUE(WaitFor(
      [&] {
        return has("pod " + ns_ +
                   "/gt-0: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                   "Execution.nodeSelectorTerms[0].matchExpressions[0].values[0]: \"lots\" is "
                   "not an integer");
      },
      seconds(10)));
  EXPECT_EQ(BoundCount("bad") + BoundCount("big") + BoundCount("gt"), 0);
}

}  // namespace
}  // namespace lockstep::kube::gangs_test
