// The controller with a backend other than the agents: nodes it reports, and the placement
// features it gives them (Controller::BackendPlacementFeatures).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "controller/controller.h"
#include "store/test_util.h"

namespace lockstep::controller {
namespace {

using std::chrono::milliseconds;

// Records the launches; the jobs never end.
class RecordingBackend : public Backend {
 public:
  void Launch(LaunchOrder order) override {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_[order.job] = order.nodes.empty() ? "" : order.nodes.front().node;
  }
  void Terminate(JobId, std::int32_t, Seconds) override {}
  void Signal(JobId, std::int32_t, int) override {}
  Result<std::string> Logs(JobId, std::int32_t) override { return NotFound("none"); }
  // The node `job` was launched on, waiting up to 5 s; "" when it was not.
  std::string NodeOf(JobId job) {
    for (int i = 0; i < 250; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (auto it = nodes_.find(job); it != nodes_.end()) return it->second;
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
    return "";
  }

 private:
  std::mutex mu_;
  std::map<JobId, std::string> nodes_;
};

class BackendFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("cluster.yaml"))
        << "backend: kubernetes\npartitions:\n  - {name: gpu, nodes: ALL, default: true}\n";
    ControllerOptions o;
    o.state_dir = dir_.File("state");
    o.cluster_config = dir_.File("cluster.yaml");
    o.periodic_pass = milliseconds(100);
    o.check_snapshot = true;  // the incremental snapshot must follow the feature changes
    auto c = Controller::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    controller_ = std::move(*c);
    controller_->AttachBackend(&backend_);
    std::vector<NodeReport> nodes;
    for (const char* name : {"n1", "n2", "n3"}) {
      NodeReport r;
      r.name = name;
      r.cpus = 8;
      r.mem_mb = 1024;
      r.features = {"ib"};
      nodes.push_back(r);
    }
    controller_->BackendNodes(nodes);
  }
  void TearDown() override {
    if (controller_) controller_->AttachBackend(nullptr);
    controller_.reset();
  }

  // A one-node job of all 8 CPUs asking `constraint`.
  Result<JobId> Submit(const std::string& constraint, bool hold = false) {
    jobspec::JobSpec s;
    s.name = "j";
    s.script = "#!/bin/sh\ntrue\n";
    s.work_dir = "/tmp";
    s.min_nodes = s.max_nodes = 1;
    s.cpus_per_task = 8;
    s.constraint = constraint;
    s.hold = hold;
    return controller_->Submit(kAlice, s);
  }

  std::string Field(JobId id, const char* field) {
    Result<nlohmann::json> j = controller_->ShowJob(id);
    return j.ok() ? (*j).value(field, "") : "";
  }

  // The features column of sinfo for `node`.
  std::string FeaturesOf(const std::string& node) {
    nlohmann::json all = controller_->ListNodes();
    for (const nlohmann::json& n : all["nodes"])
      if (n.value("name", "") == node) return n.value("features", "");
    return "?";
  }

  const Caller kAlice{1000, 1000, "alice"};
  store::TempDir dir_;
  RecordingBackend backend_;
  std::unique_ptr<Controller> controller_;
};

TEST_F(BackendFeaturesTest, AJobAskingAPlacementFeatureRunsOnlyWhereItIs) {
  Result<JobId> unknown = Submit("pool=a");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "invalid feature specification: pool=a");
  ASSERT_TRUE(controller_->BackendPlacementFeatures({{"pool=a", {"n2"}}}).ok());
  EXPECT_EQ(FeaturesOf("n2"), "ib,pool=a");
  EXPECT_EQ(FeaturesOf("n1"), "ib");
  Result<JobId> a = Submit("pool=a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(backend_.NodeOf(*a), "n2");
  // Moved to another node: the next job goes there (n1 is free too).
  ASSERT_TRUE(controller_->BackendPlacementFeatures({{"pool=a", {"n3"}}}).ok());
  Result<JobId> b = Submit("pool=a&ib");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(backend_.NodeOf(*b), "n3");
  // Its only node is busy: it waits, although n1 is free.
  Result<JobId> c = Submit("pool=a");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(Field(*c, "state"), "PENDING");
}

TEST_F(BackendFeaturesTest, ANodeReportedLaterGetsItsFeatureAndReportsKeepIt) {
  ASSERT_TRUE(controller_->BackendPlacementFeatures({{"k8s-untainted", {"n1", "n4"}}}).ok());
  NodeReport n4;
  n4.name = "n4";
  n4.cpus = 8;
  n4.mem_mb = 1024;
  std::vector<NodeReport> nodes = {n4};
  for (const char* name : {"n1", "n2", "n3"}) {
    NodeReport r = n4;
    r.name = name;
    nodes.push_back(r);
  }
  controller_->BackendNodes(nodes);  // a report again, now without "ib"
  EXPECT_EQ(FeaturesOf("n4"), "k8s-untainted");
  EXPECT_EQ(FeaturesOf("n1"), "k8s-untainted");
  EXPECT_EQ(FeaturesOf("n2"), "");
}

TEST_F(BackendFeaturesTest, AJobWhoseFeatureWasDroppedWaitsUntilItIsBack) {
  ASSERT_TRUE(controller_->BackendPlacementFeatures({{"k8s-0000000a", {"n1"}}}).ok());
  Result<JobId> j = Submit("k8s-0000000a", /*hold=*/true);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  // Dropped, and its bit taken by another feature on every node: the job must not take that
  // bit for its own.
  ASSERT_TRUE(controller_->BackendPlacementFeatures({{"k8s-0000000b", {"n1", "n2", "n3"}}}).ok());
  ASSERT_TRUE(controller_->Release(Caller{0, 0, "root"}, *j).ok());
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_EQ(Field(*j, "state"), "PENDING");
  EXPECT_EQ(Field(*j, "reason"), "BadConstraints");
  ASSERT_TRUE(controller_
                  ->BackendPlacementFeatures(
                      {{"k8s-0000000b", {"n1", "n2", "n3"}}, {"k8s-0000000a", {"n3"}}})
                  .ok());
  EXPECT_EQ(backend_.NodeOf(*j), "n3");
}

TEST_F(BackendFeaturesTest, SixtyFourFeaturesAtMostWithBitsReused) {
  // "ib" holds one bit: 63 are left.
  std::map<std::string, std::set<std::string>> many;
  for (int i = 0; i < 63; ++i) many["k8s-a" + std::to_string(i)] = {"n1"};
  ASSERT_TRUE(controller_->BackendPlacementFeatures(many).ok());
  auto too_many = many;
  too_many["k8s-one-more"] = {"n2"};
  Status st = controller_->BackendPlacementFeatures(too_many);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(st.message(),
            "a node carries at most 64 features and 64 are in use (63 of them for placement "
            "constraints): no room for k8s-one-more");
  EXPECT_EQ(FeaturesOf("n2"), "ib") << "nothing changed";
  // Another 63: the dropped ones' bits serve again.
  std::map<std::string, std::set<std::string>> others;
  for (int i = 0; i < 63; ++i) others["k8s-b" + std::to_string(i)] = {"n2"};
  ASSERT_TRUE(controller_->BackendPlacementFeatures(others).ok());
  EXPECT_EQ(FeaturesOf("n1"), "ib");
  Result<JobId> j = Submit("k8s-b7");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(backend_.NodeOf(*j), "n2");
  EXPECT_FALSE(controller_->BackendPlacementFeatures({{"ib", {"n3"}}}).ok())
      << "a node's own feature is not a placement feature";
}

}  // namespace
}  // namespace lockstep::controller
