// Where the pod group scheduler binds gangs, against a real apiserver: their pods'
// nodeSelector, required node affinity and tolerations (placement features), across Node
// changes and a restart (pod_group_test_fixture.h).
#include <gtest/gtest.h>

#include "backend/kubernetes/gangs/pod_group_test_fixture.h"

namespace lockstep::kube::gangs_test {
namespace {

TEST_F(PodGroupSchedulerTest, NodeSelectorBindsOnlyToLabelledNodesThoughOthersAreFree) {
  for (int i = 0; i < 4; ++i)
    CreateNode(i, true, i == 1 || i == 3 ? Json{{"pool", "a100"}} : Json{{"pool", "t4"}});
  SyncNodes();
  StartScheduler();
  CreatePods("sel", 0, 2, "2", 8, {{"nodeSelector", {{"pool", "a100"}}}});
  EXPECT_EQ(BoundNodes("sel", 2), (std::set<std::string>{NodeName(1), NodeName(3)}));
  JobId job = scheduler_->JobOfGangForTest(ns_ + "/sel");
  ASSERT_NE(job, 0u);
  EXPECT_EQ((*controller_->ShowJob(job))["features"], "pool=a100");
}

TEST_F(PodGroupSchedulerTest, RequiredNodeAffinityNotInKeepsTheGangOffThoseNodes) {
  CreateNode(0, true, {{"gpu", "t4"}});
  CreateNode(1, true, {{"gpu", "a100"}});
  CreateNode(2, true);
  SyncNodes();
  StartScheduler();
  CreatePods("aff", 0, 2, "2", 8,
             RequiredAffinity({{{"key", "gpu"}, {"operator", "NotIn"}, {"values", {"t4"}}}}));
  EXPECT_EQ(BoundNodes("aff", 2), (std::set<std::string>{NodeName(1), NodeName(2)}));
}

TEST_F(PodGroupSchedulerTest, TaintedNodeIsAvoidedUnlessTolerated) {
  for (int i = 0; i < 3; ++i) CreateNode(i);
  PatchNode(
      0, {{"spec",
           {{"taints", {{{"key", "dedicated"}, {"value", "infer"}, {"effect", "NoSchedule"}}}}}}});
  SyncNodes();
  StartScheduler();
  CreatePods("plain", 0, 2, "2");
  EXPECT_EQ(BoundNodes("plain", 2), (std::set<std::string>{NodeName(1), NodeName(2)}));
  // Node 0 is the only one left: a gang tolerating the taint takes it.
  CreatePods("tol", 0, 1, "1", 8,
             {{"tolerations",
               {{{"key", "dedicated"},
                 {"operator", "Equal"},
                 {"value", "infer"},
                 {"effect", "NoSchedule"}}}}});
  EXPECT_EQ(BoundNodes("tol", 1), (std::set<std::string>{NodeName(0)}));
}

TEST_F(PodGroupSchedulerTest, GangNoNodeAllowsWaitsWithAnEventUntilANodeIsRelabelled) {
  for (int i = 0; i < 2; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePods("h100", 0, 2, "2", 8, {{"nodeSelector", {{"pool", "h100"}}}});
  ASSERT_TRUE(WaitFor([&] { return Events("FailedScheduling").size() >= 2; }, seconds(20)));
  for (const std::string& m : Events("FailedScheduling")) {
    EXPECT_NE(m.find("gang " + ns_ + "/h100 (2 pods"), std::string::npos) << m;
    EXPECT_NE(m.find("node feature pool=h100: 0 of 2 nodes allow its pods' nodeSelector, node "
                     "affinity and tolerations"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("requested node configuration is not available"), std::string::npos) << m;
  }
  EXPECT_EQ(BoundCount("h100"), 0);
  for (int i = 0; i < 2; ++i) PatchNode(i, {{"metadata", {{"labels", {{"pool", "h100"}}}}}});
  EXPECT_EQ(BoundNodes("h100", 2), (std::set<std::string>{NodeName(0), NodeName(1)}));
}

TEST_F(PodGroupSchedulerTest, PendingGangKeepsItsNodeSelectorAcrossARestart) {
  CreateNode(0, true, {{"pool", "a100"}});
  CreateNode(1, /*ready=*/false, {{"pool", "a100"}});
  CreateNode(2, true);
  SyncNodes();
  StartScheduler();
  CreatePods("again", 0, 2, "2", 8, {{"nodeSelector", {{"pool", "a100"}}}});
  ASSERT_TRUE(
      WaitFor([&] { return scheduler_->JobOfGangForTest(ns_ + "/again") != 0; }, seconds(10)));
  const JobId job = scheduler_->JobOfGangForTest(ns_ + "/again");
  EXPECT_EQ(JobState(job), "PENDING") << "one of its two nodes is not Ready";
  // The recovered job asks pool=a100 before the new scheduler has given it to any node: it
  // must neither run elsewhere (nodes 0 and 2 are free) nor wait forever.
  RestartLockstepd();
  Settle();  // the recovered gang looked at, and a scheduling pass run since
  EXPECT_EQ(JobState(job), "PENDING");
  EXPECT_EQ(BoundCount("again"), 0);
  SetNodeReady(1, true);
  SyncNodes();
  EXPECT_EQ(BoundNodes("again", 2), (std::set<std::string>{NodeName(0), NodeName(1)}));
  EXPECT_EQ(scheduler_->JobOfGangForTest(ns_ + "/again"), job) << "the same job, recovered";
}

}  // namespace
}  // namespace lockstep::kube::gangs_test
