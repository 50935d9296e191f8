// The pod group scheduler against a real kube-apiserver v1.20.2 (over etcd) that this test starts
// with scripts/kube-apiserver.sh on free ports, and a Controller in-process that sees the test's
// Nodes. Without a built apiserver (`scripts/kube-apiserver.sh build`) the tests skip, or fail
// when the CI environment variable is set.
#include "backend/kubernetes/gangs/pod_group_scheduler.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/client/kubeconfig.h"
#include "backend/kubernetes/client/test_apiserver.h"
#include "backend/kubernetes/objects/node_mapping.h"

namespace lockstep::kube {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

using testing::WaitUntil;

// Forwards the launches of jobs that stand for pod groups to the scheduler, as the core backend
// does.
class GangBackend : public controller::Backend {
 public:
  void set(PodGroupScheduler* s) { scheduler_ = s; }
  void Launch(controller::LaunchOrder order) override {
    if (!order.external.empty() && scheduler_) scheduler_->Bind(order);
  }
  void Terminate(JobId job, std::int32_t run, Seconds) override {
    if (scheduler_) scheduler_->Terminate(job, run);
  }
  void Signal(JobId, std::int32_t, int) override {}
  Result<std::string> Logs(JobId, std::int32_t) override { return NotFound("no logs"); }

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
    controller_->AttachBackend(nullptr);
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
    if (controller_) controller_->AttachBackend(nullptr);
    scheduler_.reset();
    controller_.reset();
  }

  void StartScheduler(PodGroupSchedulerOptions o = {}) {
    o.retry_interval = milliseconds(1000);
    o.terminate_grace_seconds = 0;
    o.node_selector = "test=" + ns_;  // this test's Nodes, as the core backend's selector
    scheduler_ = std::make_unique<PodGroupScheduler>(client_.get(), controller_.get(), o);
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
    std::vector<controller::NodeReport> reports;
    for (const Json& n : (*list)["items"]) {
      Result<KubeNode> k = NodeFromObject(n, {});
      ASSERT_TRUE(k.ok()) << k.status().ToString();
      controller::NodeReport r;
      r.name = k->name;
      r.cpus = k->cpus;
      r.mem_mb = k->mem_mb;
      for (const GpuGroup& g : k->gpus)
        for (int d = 0; d < g.count; ++d) r.gpus.push_back(g.type);
      r.ready = k->state != engine::NodeState::kDown;
      r.down_reason = k->reason;
      reports.push_back(std::move(r));
    }
    controller_->BackendNodes(reports);
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
    }
  }

  // The nodes the gang's pods are bound to, once all `count` are.
  std::set<std::string> BoundNodes(const std::string& gang, int count) {
    EXPECT_TRUE(WaitUntil([&] { return BoundCount(gang) == count; }, seconds(20)))
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
      if (p["metadata"].value("annotations", Json::object()).value(kGangAnnotation, "") != gang)
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
  GangBackend backend_;
  std::unique_ptr<controller::Controller> controller_;
  std::unique_ptr<PodGroupScheduler> scheduler_;
};

TEST_F(PodGroupSchedulerTest, GangOfFourIsBoundWholeOnDistinctNodes) {
  for (int i = 0; i < 4; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePods("train", 0, 4, "4");
  ASSERT_TRUE(WaitUntil([&] { return BoundCount("train") == 4; }, seconds(20)));
  std::set<std::string> nodes;
  for (const auto& [pod, node] : Placement("train")) nodes.insert(node);
  EXPECT_EQ(nodes.size(), 4u);
  JobId job = scheduler_->JobOfGangForTest(ns_ + "/train");
  ASSERT_NE(job, 0u);
  EXPECT_EQ(JobState(job), "RUNNING");
  EXPECT_EQ(scheduler_->stats().submitted, 1);
  EXPECT_EQ(scheduler_->stats().bound_pods, 4);
}

TEST_F(PodGroupSchedulerTest, GangWaitsUntilTheWholeGangFitsThenBinds) {
  for (int i = 0; i < 4; ++i) CreateNode(i, /*ready=*/i != 3);
  SyncNodes();
  StartScheduler();
  CreatePods("wide", 0, 4, "4");
  ASSERT_TRUE(
      WaitUntil([&] { return scheduler_->JobOfGangForTest(ns_ + "/wide") != 0; }, seconds(10)));
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(BoundCount("wide"), 0) << "three free nodes must not get three of four pods";
  EXPECT_EQ(JobState(scheduler_->JobOfGangForTest(ns_ + "/wide")), "PENDING");
  SetNodeReady(3, true);
  SyncNodes();
  ASSERT_TRUE(WaitUntil([&] { return BoundCount("wide") == 4; }, seconds(20)));
}

TEST_F(PodGroupSchedulerTest, GangThatCanNeverFitGetsAnEventAndNoBinding) {
  for (int i = 0; i < 8; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePods("huge", 0, 16, "16");
  ASSERT_TRUE(WaitUntil([&] { return Events("FailedScheduling").size() >= 16; }, seconds(20)));
  for (const std::string& m : Events("FailedScheduling")) {
    EXPECT_NE(m.find("gang " + ns_ + "/huge (16 pods"), std::string::npos) << m;
    EXPECT_NE(m.find("requested node configuration is not available"), std::string::npos) << m;
    EXPECT_NE(m.find("none of its pods is bound"), std::string::npos) << m;
  }
  std::this_thread::sleep_for(milliseconds(2500));  // past a retry or two
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
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(BoundCount("late"), 0);
  EXPECT_EQ(scheduler_->JobOfGangForTest(ns_ + "/late"), 0u) << "no job for 3 of 4";
  CreatePods("late", 3, 4, "4");
  ASSERT_TRUE(WaitUntil([&] { return BoundCount("late") == 4; }, seconds(20)));
}

TEST_F(PodGroupSchedulerTest, PodsFinishingEndTheJob) {
  for (int i = 0; i < 2; ++i) CreateNode(i);
  SyncNodes();
  StartScheduler();
  CreatePods("done", 0, 2, "2");
  ASSERT_TRUE(WaitUntil([&] { return BoundCount("done") == 2; }, seconds(20)));
  JobId job = scheduler_->JobOfGangForTest(ns_ + "/done");
  ASSERT_NE(job, 0u);
  for (int i = 0; i < 2; ++i) {
    Result<Json> r = client_->Patch(PodPath(ns_, "done-" + std::to_string(i)) + "/status",
                                    PatchType::kMerge, {{"status", {{"phase", "Succeeded"}}}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (i == 0) {
      std::this_thread::sleep_for(milliseconds(500));
      EXPECT_EQ(JobState(job), "RUNNING") << "one pod of two ended";
    }
  }
  ASSERT_TRUE(WaitUntil([&] { return JobState(job) == "COMPLETED"; }, seconds(20)))
      << JobState(job);
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
      WaitUntil([&] { return scheduler_->JobOfGangForTest(ns_ + "/gone") != 0; }, seconds(10)));
  JobId job = scheduler_->JobOfGangForTest(ns_ + "/gone");
  DeleteOptions d;
  d.grace_period_seconds = 0;
  ASSERT_TRUE(client_->Delete(PodPath(ns_, "gone-1"), d).ok());
  ASSERT_TRUE(WaitUntil([&] { return JobState(job) == "CANCELLED"; }, seconds(10)))
      << JobState(job);
  SetNodeReady(1, true);
  SyncNodes();
  std::this_thread::sleep_for(seconds(1));
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
  ASSERT_TRUE(WaitUntil([&] { return scheduler_->stats().bind_failures == 1; }, seconds(20)));
  ASSERT_TRUE(WaitUntil([&] { return Placement("race").empty(); }, seconds(10)))
      << "bound pods of a broken gang are deleted";
  EXPECT_EQ(scheduler_->stats().bound_pods, 0);
  ASSERT_TRUE(WaitUntil([&] { return scheduler_->stats().cancelled == 1; }, seconds(10)));
}

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
  ASSERT_TRUE(WaitUntil([&] { return Events("FailedScheduling").size() >= 2; }, seconds(20)));
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
      WaitUntil([&] { return scheduler_->JobOfGangForTest(ns_ + "/again") != 0; }, seconds(10)));
  const JobId job = scheduler_->JobOfGangForTest(ns_ + "/again");
  EXPECT_EQ(JobState(job), "PENDING") << "one of its two nodes is not Ready";
  // The recovered job asks pool=a100 before the new scheduler has given it to any node: it
  // must neither run elsewhere (nodes 0 and 2 are free) nor wait forever.
  RestartLockstepd();
  std::this_thread::sleep_for(seconds(1));
  EXPECT_EQ(BoundCount("again"), 0);
  SetNodeReady(1, true);
  SyncNodes();
  EXPECT_EQ(BoundNodes("again", 2), (std::set<std::string>{NodeName(0), NodeName(1)}));
  EXPECT_EQ(scheduler_->JobOfGangForTest(ns_ + "/again"), job) << "the same job, recovered";
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
  EXPECT_TRUE(WaitUntil([&] { return has("gang-size"); }, seconds(10)));
  EXPECT_TRUE(WaitUntil([&] { return has("PodGroup CRD"); }, seconds(10)));
  EXPECT_TRUE(
      WaitUntil([&] { return has("requested node configuration is not available"); }, seconds(10)));
  EXPECT_TRUE(WaitUntil(
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
}  // namespace lockstep::kube
