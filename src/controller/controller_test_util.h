// A controller over a real store in a temporary directory, with a backend that records what it
// is told, for the controller's own tests. Time is a ManualClock; tests synchronize with
// Controller::PassForTest and SettleForTest, never with sleeps.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "controller/controller.h"
#include "store/test_util.h"

namespace lockstep::controller::testing {

// Records every command; runs end only when the test says so (through the controller's sink).
class RecordingBackend : public backend::Backend {
 public:
  Status Launch(backend::LaunchOrder order) override {
    std::lock_guard<std::mutex> lock(mu_);
    launches.push_back(std::move(order));
    return Status::Ok();
  }
  Status Terminate(backend::RunId run, Seconds grace) override {
    std::lock_guard<std::mutex> lock(mu_);
    terminations.push_back(run);
    commands.push_back("terminate " + std::to_string(run.job));
    return Status::Ok();
  }
  Status Signal(backend::RunId run, int signo) override { return Status::Ok(); }
  bool SupportsSteps() const override { return steps; }
  Status LaunchStep(backend::StepLaunch step) override {
    std::lock_guard<std::mutex> lock(mu_);
    step_launches.push_back(std::move(step));
    return Status::Ok();
  }
  Status SignalStep(JobId, std::int32_t, int, Seconds) override { return Status::Ok(); }
  bool SupportsSuspend() const override { return true; }
  bool RunsJobsInImages() const override { return images; }
  bool SupportsMpi() const override { return mpi; }
  Status Suspend(backend::RunId run, bool stop) override {
    std::lock_guard<std::mutex> lock(mu_);
    suspensions.push_back({run, stop});
    commands.push_back((stop ? "suspend " : "resume ") + std::to_string(run.job));
    return Status::Ok();
  }
  Result<std::string> Logs(const backend::LogsRequest&) override { return NotFound("none"); }

  // The node `job`'s last launch went to; "" when it was not launched.
  std::string NodeOf(JobId job) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = launches.rbegin(); it != launches.rend(); ++it)
      if (it->job == job) return it->nodes.empty() ? "" : it->nodes.front().node;
    return "";
  }
  std::vector<backend::LaunchOrder> Launches() {
    std::lock_guard<std::mutex> lock(mu_);
    return launches;
  }

  bool steps = false;
  bool images = false;  // as the Kubernetes backend: read at AttachBackend
  bool mpi = false;     // steps may ask for a PMIx server (agents): read at AttachBackend
  std::mutex mu_;
  std::vector<backend::LaunchOrder> launches;      // guarded by mu_
  std::vector<backend::RunId> terminations;        // guarded by mu_
  std::vector<backend::StepLaunch> step_launches;  // guarded by mu_
  std::vector<std::pair<backend::RunId, bool>> suspensions;  // guarded by mu_: (run, stop)
  std::vector<std::string> commands;  // guarded by mu_: "terminate 4", "suspend 4", "resume 4"
};

// `count` nodes "n1".."n<count>" of `cpus` CPUs, as a backend reports them.
inline std::vector<backend::NodeReport> Nodes(int count, int cpus,
                                              std::vector<std::string> features = {}) {
  std::vector<backend::NodeReport> nodes;
  for (int i = 1; i <= count; ++i) {
    backend::NodeReport r;
    r.name = "n" + std::to_string(i);
    backend::NodeResources& res = r.resources.emplace();
    res.cpus = cpus;
    res.mem_mb = 1024;
    res.features = features;
    nodes.push_back(r);
  }
  return nodes;
}

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("cluster.yaml"))
        << "backend: kubernetes\npartitions:\n  - {name: gpu, nodes: ALL, default: true}\n";
    Start();
  }
  void TearDown() override { Stop(); }

  // As lockstepd starting over the same state directory.
  void Start() {
    ControllerOptions o;
    o.state_dir = dir_.File("state");
    o.cluster_config = dir_.File("cluster.yaml");
    o.clock = &clock_;
    o.schedule_delay = std::chrono::milliseconds(0);
    o.check_snapshot = true;  // the incremental snapshot must follow every change
    auto c = Controller::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    controller_ = std::move(*c);
    controller_->AttachBackend(&backend_);
  }
  void Stop() {
    if (controller_) controller_->DetachBackend();
    controller_.reset();
  }
  void Report(std::vector<backend::NodeReport> nodes) {
    controller_->events().NodesReported(std::move(nodes), /*complete=*/true);
    controller_->SettleForTest();
  }

  // A one-node job of `cpus` CPUs.
  jobspec::JobSpec Spec(int cpus = 8, const std::string& constraint = "") {
    jobspec::JobSpec s;
    s.name = "j";
    s.script = "#!/bin/sh\ntrue\n";
    s.work_dir = "/tmp";
    s.min_nodes = s.max_nodes = 1;
    s.cpus_per_task = cpus;
    s.constraint = constraint;
    return s;
  }

  std::string Field(JobId id, const char* field) {
    Result<nlohmann::json> j = controller_->ShowJob(id);
    return j.ok() ? (*j).value(field, "") : "";
  }

  const Caller kAlice{1000, 1000, "alice"};
  const Caller kRoot{0, 0, "root"};
  store::TempDir dir_;
  ManualClock clock_;
  RecordingBackend backend_;
  std::unique_ptr<Controller> controller_;
};

}  // namespace lockstep::controller::testing
