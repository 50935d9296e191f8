// Issue 17, "validate first": what an ordinary user sends through the API (Controller::Submit,
// as the route calls it with the caller's uid from the socket) is range-checked before anything
// changes. Negative nice is for operators only.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>

#include "controller/controller.h"
#include "store/test_util.h"

namespace lockstep::controller {
namespace {

const Caller kUser{1000, 1000, "alice"};
const Caller kRoot{0, 0, "root"};

class SubmitValidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("cluster.yaml"))
        << "nodes:\n  - names: \"node[1-4]\"\n    cpus: 16\n    memory: 64G\n"
           "    gpus: 4\n    gpu_type: virtual\n";
    ControllerOptions o;
    o.state_dir = dir_.File("state");
    o.cluster_config = dir_.File("cluster.yaml");
    auto c = Controller::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    controller_ = std::move(*c);
  }

  static jobspec::JobSpec Spec() {
    jobspec::JobSpec s;
    s.name = "probe";
    s.script = "#!/bin/sh\ntrue\n";
    s.work_dir = "/tmp";
    return s;
  }

  std::size_t JobCount() const { return controller_->ListJobs({{"all", "1"}})["jobs"].size(); }

  store::TempDir dir_;
  std::unique_ptr<Controller> controller_;
};

TEST_F(SubmitValidationTest, RegressionTasksTimesCpusPerTaskIsRefusedNotWrapped) {
  jobspec::JobSpec s = Spec();
  s.ntasks = std::numeric_limits<std::int32_t>::max();
  s.cpus_per_task = 2;
  Result<JobId> id = controller_->Submit(kUser, s);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(id.status().message(),
            "--ntasks=2147483647 with --cpus-per-task=2 asks for 4294967294 CPUs, more than "
            "2147483647");
  EXPECT_EQ(JobCount(), 0u);
}

TEST_F(SubmitValidationTest, RegressionGpusPerTaskTimesTasksIsRefusedNotWrapped) {
  jobspec::JobSpec s = Spec();
  s.ntasks = 4;
  s.gpus_per_task = 1 << 30;
  Result<JobId> id = controller_->Submit(kUser, s);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("--gpus-per-task=1073741824 with --ntasks=4"),
            std::string::npos)
      << id.status().message();
  EXPECT_EQ(JobCount(), 0u);
}

TEST_F(SubmitValidationTest, RegressionNegativeNiceIsForOperatorsOnly) {
  jobspec::JobSpec s = Spec();
  s.nice = -10000;
  Result<JobId> id = controller_->Submit(kUser, s);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(JobCount(), 0u);
  s.nice = std::numeric_limits<std::int32_t>::min();
  EXPECT_FALSE(controller_->Submit(kRoot, s).ok());
  s.nice = -10000;
  EXPECT_TRUE(controller_->Submit(kRoot, s).ok());
  EXPECT_EQ(JobCount(), 1u);
}

}  // namespace
}  // namespace lockstep::controller
