// The controller's side of fleet health with a ManualClock: count-in-window thresholds, the
// checker's own drains resumed and nobody else's, the drain flag durable across a restart.
#include <gtest/gtest.h>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

class HealthControllerTest : public testing::ControllerTest {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("cluster.yaml"))
        << "backend: kubernetes\npartitions:\n  - {name: gpu, nodes: ALL, default: true}\n"
           "health:\n  thresholds:\n    program: {count: 2, window: 60}\n";
    Start();
    Report(testing::Nodes(2, 8));
  }

  // A full round of n1 whose program exits `code` with `line`.
  void Program(int code, const std::string& line = "disk full") {
    backend::NodeHealthReport r;
    r.node = "n1";
    r.findings.push_back({"program", -1, code, line});
    controller_->events().NodeHealth(r);
    controller_->SettleForTest();
  }

  nlohmann::json N1() { return controller_->ListNodes()["nodes"][0]; }
};

TEST_F(HealthControllerTest, TwoCriticalResultsWithinTheWindowDrain) {
  Program(2);
  EXPECT_EQ(N1()["state"], "idle") << "one of two";
  clock_.Advance(std::chrono::seconds(61));
  Program(2);
  EXPECT_EQ(N1()["state"], "idle") << "the first is out of the window";
  clock_.Advance(std::chrono::seconds(30));
  Program(2);
  EXPECT_EQ(N1()["state"], "drained");
  EXPECT_EQ(N1()["reason"], "health: disk full");
  Program(3, "timed out");
  EXPECT_EQ(N1()["state"], "drained") << "unknown changes nothing";
  Program(1, "warm");
  EXPECT_EQ(N1()["state"], "idle") << "a warning is not critical: the checker's drain ends";
}

TEST_F(HealthControllerTest, TheCheckersDrainIsDurableAndAnOperatorsIsNeverResumed) {
  Program(2);
  Program(2);
  ASSERT_EQ(N1()["state"], "drained");
  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  Program(0, "ok");
  EXPECT_EQ(N1()["state"], "idle") << "the drain read back from the store is still the checker's";
  ASSERT_TRUE(controller_->SetNodeState(kRoot, "n1", "DRAIN", "bad fan").ok());
  Program(0, "ok");
  EXPECT_EQ(N1()["state"], "drained");
  EXPECT_EQ(N1()["reason"], "bad fan");
  Program(2);
  Program(2);
  EXPECT_EQ(N1()["reason"], "bad fan") << "the checker does not take an operator's drain over";
}

}  // namespace
}  // namespace lockstep::controller
