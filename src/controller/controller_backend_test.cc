// The controller with a backend that reports its own nodes: the nodes, and the placement
// features it gives them (backend::Admission::SetPlacementFeatures).
#include <gtest/gtest.h>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

class BackendFeaturesTest : public testing::ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(3, 8, {"ib"}));
  }

  Status Features(const std::map<std::string, std::set<std::string>>& f) {
    return controller_->admission().SetPlacementFeatures(f);
  }

  // Submits a one-node job of all 8 CPUs asking `constraint`, and runs a pass.
  Result<JobId> Submit(const std::string& constraint, bool hold = false) {
    jobspec::JobSpec s = Spec(8, constraint);
    s.hold = hold;
    Result<JobId> id = controller_->Submit(kAlice, s);
    controller_->PassForTest();
    return id;
  }

  // The features column of sinfo for `node`.
  std::string FeaturesOf(const std::string& node) {
    nlohmann::json all = controller_->ListNodes();
    for (const nlohmann::json& n : all["nodes"])
      if (n.value("name", "") == node) return n.value("features", "");
    return "?";
  }
};

TEST_F(BackendFeaturesTest, AJobAskingAPlacementFeatureRunsOnlyWhereItIs) {
  Result<JobId> unknown = Submit("pool=a");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "invalid feature specification: pool=a");
  ASSERT_TRUE(Features({{"pool=a", {"n2"}}}).ok());
  EXPECT_EQ(FeaturesOf("n2"), "ib,pool=a");
  EXPECT_EQ(FeaturesOf("n1"), "ib");
  Result<JobId> a = Submit("pool=a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(backend_.NodeOf(*a), "n2");
  // Moved to another node: the next job goes there (n1 is free too).
  ASSERT_TRUE(Features({{"pool=a", {"n3"}}}).ok());
  Result<JobId> b = Submit("pool=a&ib");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(backend_.NodeOf(*b), "n3");
  // Its only node is busy: it waits, although n1 is free.
  Result<JobId> c = Submit("pool=a");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  controller_->PassForTest();
  EXPECT_EQ(Field(*c, "state"), "PENDING");
  EXPECT_EQ(backend_.NodeOf(*c), "");
}

TEST_F(BackendFeaturesTest, ANodeReportedLaterGetsItsFeatureAndReportsKeepIt) {
  ASSERT_TRUE(Features({{"k8s-untainted", {"n1", "n4"}}}).ok());
  Report(testing::Nodes(4, 8));  // a report again, now without "ib", and with n4
  EXPECT_EQ(FeaturesOf("n4"), "k8s-untainted");
  EXPECT_EQ(FeaturesOf("n1"), "k8s-untainted");
  EXPECT_EQ(FeaturesOf("n2"), "");
}

TEST_F(BackendFeaturesTest, AJobWhoseFeatureWasDroppedWaitsUntilItIsBack) {
  ASSERT_TRUE(Features({{"k8s-0000000a", {"n1"}}}).ok());
  Result<JobId> j = Submit("k8s-0000000a", /*hold=*/true);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  // Dropped, and its bit taken by another feature on every node: the job must not take that
  // bit for its own.
  ASSERT_TRUE(Features({{"k8s-0000000b", {"n1", "n2", "n3"}}}).ok());
  ASSERT_TRUE(controller_->Release(kRoot, *j).ok());
  controller_->PassForTest();
  EXPECT_EQ(Field(*j, "state"), "PENDING");
  EXPECT_EQ(Field(*j, "reason"), "BadConstraints");
  ASSERT_TRUE(Features({{"k8s-0000000b", {"n1", "n2", "n3"}}, {"k8s-0000000a", {"n3"}}}).ok());
  controller_->PassForTest();
  EXPECT_EQ(backend_.NodeOf(*j), "n3");
}

TEST_F(BackendFeaturesTest, SixtyFourFeaturesAtMostWithBitsReused) {
  // "ib" holds one bit: 63 are left.
  std::map<std::string, std::set<std::string>> many;
  for (int i = 0; i < 63; ++i) many["k8s-a" + std::to_string(i)] = {"n1"};
  ASSERT_TRUE(Features(many).ok());
  auto too_many = many;
  too_many["k8s-one-more"] = {"n2"};
  Status st = Features(too_many);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(),
            "a node carries at most 64 features and 64 are in use (63 of them for placement "
            "constraints): no room for k8s-one-more");
  EXPECT_EQ(FeaturesOf("n2"), "ib") << "nothing changed";
  // Another 63: the dropped ones' bits serve again.
  std::map<std::string, std::set<std::string>> others;
  for (int i = 0; i < 63; ++i) others["k8s-b" + std::to_string(i)] = {"n2"};
  ASSERT_TRUE(Features(others).ok());
  EXPECT_EQ(FeaturesOf("n1"), "ib");
  Result<JobId> j = Submit("k8s-b7");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(backend_.NodeOf(*j), "n2");
  EXPECT_FALSE(Features({{"ib", {"n3"}}}).ok()) << "a node's own feature is not a placement feature";
}

}  // namespace
}  // namespace lockstep::controller
