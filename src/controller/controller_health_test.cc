// The controller's side of fleet health with a ManualClock: count-in-window thresholds, the
// checker's own drains resumed and nobody else's, the drain flag durable across a restart.
#include <gtest/gtest.h>

#include <sstream>

#include "controller/controller_test_util.h"
#include "controller/metrics_text.h"

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

  // The health families of /metrics/nodes, one sample a line.
  std::vector<std::string> HealthSamples() {
    std::vector<std::string> lines;
    std::istringstream text(RenderMetrics(controller_->Metrics(), MetricsEndpoint::kNodes));
    for (std::string line; std::getline(text, line);)
      if (line.starts_with("lockstep_health_")) lines.push_back(line);
    return lines;
  }
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

// Two checkers of n1 on Kubernetes (the health-only and the mounts-only agent), and the Node's
// own conditions: each full round speaks for its checks only.
TEST_F(HealthControllerTest, AFullRoundClearsOnlyTheChecksItCovers) {
  auto storage_round = [&](const std::string& problem) {
    backend::NodeHealthReport r;
    r.node = "n1";
    r.checks = {"storage"};
    if (!problem.empty()) r.findings.push_back({"storage", -1, 0, problem});
    controller_->events().NodeHealth(r);
    controller_->SettleForTest();
  };
  auto node_checks_round = [&](int program) {
    backend::NodeHealthReport r;
    r.node = "n1";
    r.checks = {"xid", "program", "gpu_count"};
    r.findings.push_back({"program", -1, program, program ? "ECC storm" : "ok"});
    controller_->events().NodeHealth(r);
    controller_->SettleForTest();
  };
  auto kubernetes_round = [&] {
    backend::NodeHealthReport r;
    r.node = "n1";
    r.source = "k8s";
    r.checks = {"k8s_condition", "gpu_count"};
    controller_->events().NodeHealth(r);
    controller_->SettleForTest();
  };
  storage_round("storage checkpoints/ckpt: not mounted");
  storage_round("storage checkpoints/ckpt: not mounted");
  ASSERT_EQ(N1()["state"], "drained");
  EXPECT_EQ(N1()["reason"], "health: storage checkpoints/ckpt: not mounted");
  for (int i = 0; i < 3; ++i) {
    node_checks_round(0);  // the program passes: says nothing of storage
    kubernetes_round();    // the Node is fine: says nothing of the agents' checks
  }
  EXPECT_EQ(N1()["state"], "drained");
  node_checks_round(2);
  node_checks_round(2);
  storage_round("");  // storage is back; the program's finding holds the node, and is named
  EXPECT_EQ(N1()["state"], "drained");
  EXPECT_EQ(N1()["reason"], "health: ECC storm");
  node_checks_round(0);
  EXPECT_EQ(N1()["state"], "idle");
}

TEST_F(HealthControllerTest, MetricsShowEachChecksLastResultRunsAndTheCheckersDrains) {
  EXPECT_TRUE(HealthSamples().empty()) << "no node has reported";
  Program(2);
  Program(2);  // the second critical result within the window drains
  ASSERT_EQ(N1()["state"], "drained");
  backend::NodeHealthReport xids;  // events only: says nothing of the other checks
  xids.node = "n1";
  xids.full_round = false;
  xids.findings.push_back({"xid", 3, 31, ""});  // an application's XID: the job's, not the node's
  controller_->events().NodeHealth(xids);
  controller_->SettleForTest();
  Program(1, "warm");  // a warning: the checker's drain ends
  ASSERT_EQ(N1()["state"], "idle");
  EXPECT_EQ(HealthSamples(), (std::vector<std::string>{
                                 "lockstep_health_check_status{node=\"n1\",check=\"program\"} 1",
                                 "lockstep_health_check_status{node=\"n1\",check=\"xid\"} 0",
                                 "lockstep_health_check_runs{node=\"n1\",check=\"program\"} 3",
                                 "lockstep_health_check_runs{node=\"n1\",check=\"xid\"} 2",
                                 "lockstep_health_rounds{node=\"n1\"} 3",
                                 "lockstep_health_reports{node=\"n1\"} 4",
                                 "lockstep_health_drains{node=\"n1\"} 1",
                                 "lockstep_health_drained{node=\"n1\"} 0",
                             }));
  Program(3, "timed out");
  Program(2);
  Program(2);
  ASSERT_EQ(N1()["state"], "drained");
  const std::vector<std::string> now = HealthSamples();
  EXPECT_EQ(now[0], "lockstep_health_check_status{node=\"n1\",check=\"program\"} 2");
  EXPECT_EQ(now[6], "lockstep_health_drains{node=\"n1\"} 2");
  EXPECT_EQ(now[7], "lockstep_health_drained{node=\"n1\"} 1");
}

}  // namespace
}  // namespace lockstep::controller
