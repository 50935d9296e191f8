// sstat's data in the controller: the latest sample of each task with the peaks seen, only from
// the job's own nodes and current run, for its owner and operators, gone when the run ends.
#include <gtest/gtest.h>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class UsageTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(2, 8));
  }
  backend::TaskUsage Sample(JobId job, const std::string& node, std::int64_t cpu,
                            std::int64_t rss) {
    backend::TaskUsage u;
    u.run = {job, 0};
    u.node = node;
    u.cpu_usec = cpu;
    u.rss_bytes = rss;
    u.max_rss_bytes = rss;
    u.vm_bytes = 4 * rss;
    return u;
  }
};

TEST_F(UsageTest, TheLatestSampleWithItsPeaksForTheOwnerUntilTheRunEnds) {
  Result<JobId> a = controller_->Submit(kAlice, Spec());
  ASSERT_TRUE(a.ok());
  controller_->PassForTest();
  const std::string node = backend_.NodeOf(*a);
  ASSERT_FALSE(node.empty());
  const std::string other = node == "n1" ? "n2" : "n1";
  controller_->events().StepUsage({Sample(*a, node, 1000, 5000)});
  controller_->events().StepUsage({Sample(*a, node, 3000, 2000), Sample(*a, other, 9, 9)});
  controller_->SettleForTest();
  Result<nlohmann::json> u = controller_->Usage(kAlice, *a);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  ASSERT_EQ((*u)["steps"].size(), 1u);
  const nlohmann::json& batch = (*u)["steps"][0];
  EXPECT_EQ(batch["step_id"], "batch");
  ASSERT_EQ(batch["tasks"].size(), 1u) << "a sample from a node the job is not on is dropped";
  EXPECT_EQ(batch["tasks"][0]["cpu_usec"], 3000);
  EXPECT_EQ(batch["tasks"][0]["rss_bytes"], 2000);
  EXPECT_EQ(batch["tasks"][0]["max_rss_bytes"], 5000) << "the peak seen stays";
  EXPECT_EQ(batch["tasks"][0]["max_vm_bytes"], 20000);

  EXPECT_EQ(controller_->Usage(Caller{2000, 2000, "bob"}, *a).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(controller_->Usage(kRoot, *a).ok());
  EXPECT_EQ(controller_->Usage(kAlice, 999).status().message(), "Invalid job id specified");

  controller_->events().RunExited({*a, 0}, {0, 0, false});
  controller_->SettleForTest();
  controller_->events().StepUsage({Sample(*a, node, 4000, 1)});  // late: the run has ended
  controller_->SettleForTest();
  u = controller_->Usage(kAlice, *a);
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE((*u)["steps"].empty());
}

}  // namespace
}  // namespace lockstep::controller
