// The pod group scheduler's test fixture: a real kube-apiserver v1.20.2 (over etcd) that the
// suite starts with scripts/kube-apiserver.sh on free ports, and a Controller in-process that sees
// the test's Nodes. Without a built apiserver (`scripts/kube-apiserver.sh build`) the tests skip,
// or fail when the CI environment variable is set. Shared by pod_group_scheduler_test.cc,
// pod_group_placement_test.cc and pod_group_crd_test.cc, one suite (one apiserver) in
// kube_gangs_test.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "controller/controller.h"
#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/client/test_apiserver.h"
#include "backend/kubernetes/gangs/pod_group_scheduler.h"
#include "backend/kubernetes/objects/node_mapping.h"

namespace lockstep::kube::gangs_test {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::WaitFor;

// Forwards the launches of jobs that stand for pod groups to the scheduler, as the core backend
// does.
class GangBackend : public backend::Backend {
 public:
  void set(PodGroupScheduler* s) { scheduler_ = s; }
  Status Launch(backend::LaunchOrder order) override {
    if (!order.external.empty() && scheduler_) scheduler_->Bind(order);
    return Status::Ok();
  }
  Status Terminate(backend::RunId run, Seconds) override {
    if (scheduler_) scheduler_->Terminate(run.job, run.run);
    return Status::Ok();
  }
  Status Signal(backend::RunId, int) override { return Status::Ok(); }
  bool SupportsSteps() const override { return false; }
  Status LaunchStep(backend::StepLaunch) override { return FailedPrecondition("no steps"); }
  Status SignalStep(JobId, std::int32_t, int, Seconds) override {
    return FailedPrecondition("no steps");
  }
  Result<std::string> Logs(const backend::LogsRequest&) override { return NotFound("no logs"); }

 private:
  PodGroupScheduler* scheduler_ = nullptr;
};

class PodGroupSchedulerTest : public testing::ApiServerTest {
 protected:
  void SetUp() override {
    ApiServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // Each test has its own namespace, nodes (labelled with it) and controller.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ns_.clear();
    for (char ch : name)
      ns_ += std::isupper(static_cast<unsigned char>(ch)) ? char(std::tolower(ch)) : ch;
    ns_ = "t-" + ns_;
    Result<Json> r = client_->Create(
        NamespacesPath(),
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}});
    ASSERT_TRUE(r.ok() || IsAlreadyExists(r.status())) << r.status().ToString();
    state_dir_ = run_dir_ + "/state-" + ns_;
    fs::create_directories(state_dir_);
    std::ofstream(state_dir_ + "/cluster.yaml")
        << "backend: kubernetes\npartitions:\n  - {name: gpu, nodes: ALL, default: true}\n";
    StartController();
  }

  // A Controller over the test's store (again, after RestartLockstepd()).
  void StartController() {
    controller::ControllerOptions o;
    o.state_dir = state_dir_;
    o.cluster_config = state_dir_ + "/cluster.yaml";
    o.periodic_pass = milliseconds(200);
    o.check_snapshot = true;
    auto c = controller::Controller::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    controller_ = std::move(*c);
    controller_->AttachBackend(&backend_);
  }

  // As lockstepd restarting: the scheduler and the controller stop, and start again over the
  // same store, with the Nodes reported again.
  void RestartLockstepd() {
    scheduler_->Stop();
    controller_->DetachBackend();
    backend_.set(nullptr);
    scheduler_.reset();
    controller_.reset();
    StartController();
    SyncNodes();
    StartScheduler();
  }

  void TearDown() override {
    if (scheduler_) scheduler_->Stop();
    if (client_ && !ns_.empty()) {  // no namespace controller runs: delete the pods ourselves
      DeleteOptions d;
      d.grace_period_seconds = 0;
      (void)client_->Delete(PodsPath(ns_), d);
    }
    if (controller_) controller_->DetachBackend();
    scheduler_.reset();
    controller_.reset();
  }

  void StartScheduler(PodGroupSchedulerOptions o = {}) {
    o.retry_interval = milliseconds(1000);
    o.terminate_grace_seconds = 0;
    o.node_selector = "test=" + ns_;  // this test's Nodes, as the core backend's selector
    scheduler_ = std::make_unique<PodGroupScheduler>(client_.get(), controller_->events(),
                                                     controller_->admission(), o);
    if (status_write_hook_) scheduler_->SetBeforeStatusWriteForTest(status_write_hook_);
    backend_.set(scheduler_.get());
    scheduler_->Start();
    ASSERT_TRUE(scheduler_->WaitForReady(seconds(30)));
  }

  std::string NodeName(int i) const { return ns_.substr(2) + "-n" + std::to_string(i); }

  // A node with 8 GPUs, 64 CPUs and 512 GiB, Ready or not, with more labels.
  void CreateNode(int i, bool ready = true, const Json& labels = Json::object()) {
    const std::string name = NodeName(i);
    Json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}, {"labels", {{"test", ns_}}}}}};
    node["metadata"]["labels"].update(labels);
    Result<Json> r = client_->Create(NodesPath(), node);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    SetNodeReady(i, ready);
  }

  void SetNodeReady(int i, bool ready) {
    Json res = {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "8"}};
    Json status = {{"status",
                    {{"capacity", res},
                     {"allocatable", res},
                     {"conditions",
                      {{{"type", "Ready"},
                        {"status", ready ? "True" : "False"},
                        {"reason", ready ? "KubeletReady" : "KubeletNotReady"},
                        {"message", ready ? "ready" : "test: not ready"}}}}}}};
    Result<Json> r =
        client_->Patch(NodePath(NodeName(i)) + "/status", PatchType::kStrategicMerge, status);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  // A merge patch of Node i (labels, taints).
  void PatchNode(int i, const Json& patch) {
    Result<Json> r = client_->Patch(NodePath(NodeName(i)), PatchType::kMerge, patch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  // The test's nodes to the controller, as the core backend's node reporter does.
  void SyncNodes() {
    ListOptions lo;
    lo.label_selector = "test=" + ns_;
    Result<Json> list = client_->ListAll(NodesPath(), lo);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    std::vector<backend::NodeReport> reports;
    for (const Json& n : (*list)["items"]) {
      Result<KubeNode> k = NodeFromObject(n, {});
      ASSERT_TRUE(k.ok()) << k.status().ToString();
      backend::NodeReport r;
      r.name = k->name;
      backend::NodeResources& res = r.resources.emplace();
      res.cpus = k->cpus;
      res.mem_mb = k->mem_mb;
      for (const GpuGroup& g : k->gpus)
        for (int d = 0; d < g.count; ++d) res.gpus.push_back(g.type);
      r.ready = k->state != engine::NodeState::kDown;
      r.down_reason = k->reason;
      reports.push_back(std::move(r));
    }
    controller_->events().NodesReported(std::move(reports), /*complete=*/true);
    controller_->SettleForTest();
  }

  // A pod of gang `gang` (of `size`) asking 8 GPUs, for lockstep to schedule.
  Json GangPod(const std::string& name, const std::string& gang, const std::string& size,
               int gpus = 8) {
    Json res = {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}};
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", name},
              {"namespace", ns_},
              {"annotations", {{kGangAnnotation, gang}, {kGangSizeAnnotation, size}}}}},
            {"spec",
             {{"schedulerName", "lockstep"},
              {"containers",
               {{{"name", "main"},
                 {"image", "busybox"},
                 {"resources", {{"requests", res}, {"limits", res}}}}}}}}};
  }

  // `spec`: more fields of the pods' spec (nodeSelector, affinity, tolerations).
  void CreatePods(const std::string& gang, int from, int to, const std::string& size, int gpus = 8,
                  const Json& spec = Json::object()) {
    for (int i = from; i < to; ++i) {
      Json pod = GangPod(gang + "-" + std::to_string(i), gang, size, gpus);
      pod["spec"].update(spec);
      Result<Json> r = client_->Create(PodsPath(ns_), pod);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      NoteWrite(*r);
    }
  }

  // The test wrote this pod (or, NotePodGroupWrite, this PodGroup): Settle() waits until the
  // scheduler has seen it.
  void NoteWrite(const Json& pod) { NoteResourceVersion(pod, &last_pod_rv_); }
  void NotePodGroupWrite(const Json& group) { NoteResourceVersion(group, &last_group_rv_); }
  static void NoteResourceVersion(const Json& object, std::uint64_t* last) {
    const Json& v = object["metadata"]["resourceVersion"];
    ASSERT_TRUE(v.is_string()) << "no resourceVersion to wait for: " << object.dump();
    *last = std::max<std::uint64_t>(*last, std::stoull(v.get<std::string>()));
  }

  // A barrier instead of a sleep: the scheduler has handled every pod and PodGroup the test
  // wrote (and the gangs they made dirty), the controller has applied what it was told and run
  // a scheduling pass, and the scheduler has handled the orders that pass gave (its Bindings
  // done). What has not happened by then will not without another change: tests assert it then.
  void Settle() {
    ASSERT_TRUE(scheduler_->SettleForTest(last_pod_rv_, seconds(20), last_group_rv_));
    controller_->SettleForTest();
    controller_->PassForTest();
    controller_->SettleForTest();
    ASSERT_TRUE(scheduler_->SettleForTest(last_pod_rv_, seconds(20), last_group_rv_));
  }

  // Settle(), and then the PodGroup status writer has written, or found unchanged, the status of
  // every PodGroup marked meanwhile.
  void SettleStatus() {
    Settle();
    ASSERT_TRUE(scheduler_->StatusSettledForTest(seconds(20)));
  }

  // The nodes the gang's pods are bound to, once all `count` are.
  std::set<std::string> BoundNodes(const std::string& gang, int count) {
    EXPECT_TRUE(WaitFor([&] { return BoundCount(gang) == count; }, seconds(20)))
        << gang << ": " << BoundCount(gang) << " of " << count << " bound";
    std::set<std::string> nodes;
    for (const auto& [pod, node] : Placement(gang)) nodes.insert(node);
    return nodes;
  }

  // The pods' spec.affinity asking one required term of `expressions`.
  static Json RequiredAffinity(Json expressions) {
    return {{"affinity",
             {{"nodeAffinity",
               {{"requiredDuringSchedulingIgnoredDuringExecution",
                 {{"nodeSelectorTerms", {{{"matchExpressions", std::move(expressions)}}}}}}}}}}};
  }

  // Pod name -> node of the gang's pods ("" when unbound).
  std::map<std::string, std::string> Placement(const std::string& gang) {
    std::map<std::string, std::string> out;
    Result<Json> list = client_->ListAll(PodsPath(ns_));
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    if (!list.ok()) return out;
    for (const Json& p : (*list)["items"]) {
      const Json& meta = p["metadata"];
      if (meta.value("annotations", Json::object()).value(kGangAnnotation, "") != gang &&
          meta.value("labels", Json::object()).value(kPodGroupLabel, "") != gang)
        continue;
      out[p["metadata"]["name"]] = p["spec"].value("nodeName", "");
    }
    return out;
  }

  int BoundCount(const std::string& gang) {
    int n = 0;
    for (const auto& [pod, node] : Placement(gang)) n += !node.empty();
    return n;
  }

  std::string JobState(JobId id) {
    Result<Json> j = controller_->ShowJob(id);
    return j.ok() ? (*j)["state"].get<std::string>() : "";
  }

  // Messages of the Events with `reason` in the test's namespace.
  std::vector<std::string> Events(const std::string& reason) {
    std::vector<std::string> out;
    Result<Json> list = client_->ListAll("/api/v1/namespaces/" + ns_ + "/events");
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    if (!list.ok()) return out;
    for (const Json& e : (*list)["items"])
      if (e.value("reason", "") == reason) out.push_back(e.value("message", ""));
    return out;
  }

  std::string ns_, state_dir_;
  std::function<void(const std::string&)> status_write_hook_;  // set before StartScheduler()
  GangBackend backend_;
  std::unique_ptr<controller::Controller> controller_;
  std::uint64_t last_pod_rv_ = 0;    // of the test's last pod write (NoteWrite)
  std::uint64_t last_group_rv_ = 0;  // of its last PodGroup write (NotePodGroupWrite)
  // For tests that move time themselves (options.clock); outlives the scheduler.
  ManualClock manual_clock_;
  std::unique_ptr<PodGroupScheduler> scheduler_;
};

}  // namespace lockstep::kube::gangs_test
