// lockstepd with `backend: kubernetes`, end to end (fixture: kubernetes_test_fixture.h): nodes,
// per-node job pods and their ends, foreign pods, cordons, NotReady, all-or-nothing launches,
// restarts, leader election, `lockstep up`. Per-task pods and finished pods' lifetime are in
// kubernetes_pods_test.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "tests/kubernetes_test_fixture.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(KubernetesBackendTest, NodesJobsPodsAndTheirEnds) {
  const std::string ns = "kbe-a";
  for (const char* n : {"kbe-a-1", "kbe-a-2", "kbe-a-3"}) CreateNode(ns, n, 8);
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 3);

  // sinfo: the Nodes with their GPUs, typed from gpu.product.
  CommandResult r = c->Run({"sinfo", "-N", "-o", "%N %G %T"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "kbe-a-1 gpu:h100:8 idle")) << r.out;
  EXPECT_TRUE(Contains(r.out, "kbe-a-3 gpu:h100:8 idle")) << r.out;

  // A two-node job: two pods bound to two nodes, with the job's image, requests and ranks.
  unsigned long long id = Submit(*c, {"-N", "2", "--gpus-per-node=8", "--container-image=pytorch:1",
                                      "--wrap", "python train.py"});
  ASSERT_GT(id, 0u);
  std::map<std::string, Json> pods;
  ASSERT_TRUE(WaitFor([&] { return (pods = JobPods(ns, id)).size() == 2; }, kWait)) << pods.size();
  const std::string p0 = "lockstep-" + std::to_string(id) + "-0",
                    p1 = "lockstep-" + std::to_string(id) + "-1";
  ASSERT_TRUE(pods.count(p0) && pods.count(p1));
  std::set<std::string> nodes;
  for (const auto& [name, pod] : pods) {
    nodes.insert(pod["spec"].value("nodeName", ""));
    const Json& res = pod["spec"]["containers"][0]["resources"];
    EXPECT_EQ(res["requests"]["nvidia.com/gpu"], "8") << res.dump();
    EXPECT_EQ(res["limits"]["nvidia.com/gpu"], "8") << res.dump();
    EXPECT_EQ(pod["spec"]["containers"][0]["image"], "pytorch:1");
    EXPECT_EQ(pod["metadata"]["labels"]["lockstep.dev/run"], "0");
    EXPECT_EQ(Env(pod, "WORLD_SIZE"), "2");
    EXPECT_EQ(Env(pod, "MASTER_ADDR"),
              "lockstep-" + std::to_string(id) + "-0.lockstep-" + std::to_string(id));
  }
  EXPECT_EQ(nodes.size(), 2u);
  EXPECT_EQ(Env(pods[p0], "RANK"), "0");
  EXPECT_EQ(Env(pods[p1], "RANK"), "1");
  EXPECT_TRUE(
      kc().Get("/api/v1/namespaces/" + ns + "/services/lockstep-" + std::to_string(id)).ok());
  EXPECT_EQ(c->Job(id)["state"], "RUNNING");

  // srun inside it runs in its pods (kubernetes_exec_test.cc), which must be running: not yet.
  r = c->Run({"srun", "--jobid", std::to_string(id), "--overlap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "pod lockstep-" + std::to_string(id) + "-")) << r.err;
  EXPECT_TRUE(Contains(r.err, " is Pending, not Running")) << r.err;

  // The kubelet runs them, then they succeed: COMPLETED.
  SetPodPhase(ns, p0, "Running");
  SetPodPhase(ns, p1, "Running");
  SetPodPhase(ns, p0, "Succeeded");
  // lockstepd has handled p0's end and not ended the run: one pod is still running.
  const std::string handled = WaitForPodLine(*c, p0, id, "Succeeded");
  ASSERT_FALSE(handled.empty()) << DaemonLog(*c);
  EXPECT_FALSE(Contains(handled, "-> report")) << handled;
  EXPECT_EQ(c->Job(id)["state"], "RUNNING");
  SetPodPhase(ns, p1, "Succeeded");
  EXPECT_EQ(c->WaitJob(id)["state"], "COMPLETED");
  r = c->Run({"sacct", "-j", std::to_string(id), "-X", "-o", "JobID,State,ExitCode"});
  EXPECT_TRUE(Contains(r.out, "COMPLETED")) << r.out;

  // `lockstep logs`: pods/log needs a kubelet, which this cluster does not have.
  r = c->Run({"logs", std::to_string(id)});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "lockstep logs: error: logs of pod " + ns + "/" + p0)) << r.err;

  // A failing pod: FAILED with its exit code.
  unsigned long long bad = Submit(*c, {"-N", "1", "--gpus-per-node=8", "--wrap", "exit 3"});
  ASSERT_GT(bad, 0u);
  const std::string bp = "lockstep-" + std::to_string(bad) + "-0";
  ASSERT_TRUE(WaitFor([&] { return JobPods(ns, bad).size() == 1; }, kWait));
  EXPECT_EQ(JobPods(ns, bad)[bp]["spec"]["containers"][0]["image"], "busybox:default");
  SetPodPhase(ns, bp, "Failed", 3);
  Json j = c->WaitJob(bad);
  EXPECT_EQ(j["state"], "FAILED");
  EXPECT_EQ(j["exit_code"], 3);
  r = c->Run({"sacct", "-j", std::to_string(bad), "-X", "-o", "JobID,State,ExitCode"});
  EXPECT_TRUE(Contains(r.out, "FAILED")) << r.out;
  EXPECT_TRUE(Contains(r.out, "3:0")) << r.out;

  // scancel: the pods are deleted (gracefully; with no kubelet to confirm, at once after the
  // grace) and the job is CANCELLED.
  unsigned long long cancel = Submit(*c, {"-N", "2", "--gpus-per-node=8", "--wrap", "sleep 1d"});
  ASSERT_GT(cancel, 0u);
  ASSERT_TRUE(WaitFor([&] { return JobPods(ns, cancel).size() == 2; }, kWait));
  r = c->Run({"scancel", std::to_string(cancel)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(WaitFor([&] { return JobPods(ns, cancel).empty(); }, seconds(20)));
  EXPECT_EQ(c->WaitJob(cancel)["state"], "CANCELLED");
  // The job's Service went with it.
  EXPECT_TRUE(WaitFor(
      [&] {
        return kube::IsNotFound(
            kc().Get("/api/v1/namespaces/" + ns + "/services/lockstep-" + std::to_string(cancel))
                .status());
      },
      kWait));
}

TEST_F(KubernetesBackendTest, ForeignPodsCordonAndNotReady) {
  const std::string ns = "kbe-b";
  CreateNode(ns, "kbe-b-1", 8);
  CreateNode(ns, "kbe-b-2", 8);
  // A pod of another scheduler holds kbe-b-1's GPUs.
  Json foreign = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata", {{"name", "other"}, {"namespace", "default"}}},
                  {"spec",
                   {{"schedulerName", "default-scheduler"},
                    {"nodeName", "kbe-b-1"},
                    {"containers",
                     {{{"name", "main"},
                       {"image", "busybox"},
                       {"resources", {{"limits", {{"nvidia.com/gpu", "8"}}}}}}}}}}};
  ASSERT_TRUE(kc().Create(kube::PodsPath("default"), foreign).ok());
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 2);

  unsigned long long a = Submit(*c, {"-N", "1", "--gpus-per-node=8", "--wrap", "true"});
  ASSERT_GT(a, 0u);
  ASSERT_TRUE(WaitFor([&] { return JobPods(ns, a).size() == 1; }, kWait));
  EXPECT_EQ(JobPods(ns, a).begin()->second["spec"]["nodeName"], "kbe-b-2");
  // Nothing is left for a second such job until the foreign pod goes.
  unsigned long long b = Submit(*c, {"-N", "1", "--gpus-per-node=8", "--wrap", "true"});
  ASSERT_GT(b, 0u);
  EXPECT_TRUE(WaitFor([&] { return Considered(c->Job(b)); }, kWait));  // a pass found no room
  EXPECT_EQ(c->Job(b)["state"], "PENDING");
  EXPECT_TRUE(JobPods(ns, b).empty());
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(kc().Delete(kube::PodPath("default", "other"), now).ok());
  ASSERT_TRUE(WaitFor([&] { return JobPods(ns, b).size() == 1; }, kWait));
  EXPECT_EQ(JobPods(ns, b).begin()->second["spec"]["nodeName"], "kbe-b-1");

  // A cordon drains kbe-b-2 ("cordoned"); its job goes on, no new job goes there.
  ASSERT_TRUE(kc().Patch(kube::NodePath("kbe-b-2"), kube::PatchType::kMerge,
                         {{"spec", {{"unschedulable", true}}}})
                  .ok());
  CommandResult r;
  EXPECT_TRUE(WaitFor(
      [&] {
        r = c->Run({"sinfo", "-R"});
        return Contains(r.out, "cordoned") && Contains(r.out, "kbe-b-2");
      },
      kWait))
      << r.out;
  const std::string pa = "lockstep-" + std::to_string(a) + "-0";
  SetPodPhase(ns, pa, "Succeeded");
  EXPECT_EQ(c->WaitJob(a)["state"], "COMPLETED");
  unsigned long long d = Submit(*c, {"-N", "1", "--gpus-per-node=8", "--wrap", "true"});
  ASSERT_GT(d, 0u);
  EXPECT_TRUE(WaitFor([&] { return Considered(c->Job(d)); }, kWait));  // a pass found no room
  EXPECT_EQ(c->Job(d)["state"], "PENDING");
  EXPECT_TRUE(JobPods(ns, d).empty());
  r = c->Run({"sinfo", "-N", "-o", "%N %T"});
  EXPECT_TRUE(Contains(r.out, "kbe-b-2 drained")) << r.out;

  // Ready False: kbe-b-1 is down, its job requeued and its pod deleted.
  SetReady("kbe-b-1", false);
  EXPECT_TRUE(WaitFor(
      [&] {
        Json j = c->Job(b);
        return j["state"] == "PENDING" && j.value("restart_count", 0) >= 1;
      },
      kWait))
      << c->Job(b).dump();
  EXPECT_TRUE(WaitFor([&] { return JobPods(ns, b).empty(); }, kWait));
  r = c->Run({"sinfo", "-R"});
  EXPECT_TRUE(Contains(r.out, "KubeletNotReady")) << r.out;

  // Back: it runs again, as run 1.
  SetReady("kbe-b-1", true);
  ASSERT_TRUE(
      WaitFor([&] { return JobPods(ns, b).size() == 1 || JobPods(ns, d).size() == 1; }, kWait));
}

TEST_F(KubernetesBackendTest, LaunchIsAllOrNothing) {
  const std::string ns = "kbe-c";
  CreateNode(ns, "kbe-c-1", 8);
  CreateNode(ns, "kbe-c-2", 8);
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 2);
  // A pod (not bound, so it takes nothing) with the name job 1's second pod would get.
  auto blocker = [&](const std::string& name) {
    Json p = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}};
    Result<Json> r = kc().Create(kube::PodsPath(ns), p);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  };
  blocker("lockstep-1-1");
  blocker("lockstep-2-1");

  // Not requeueable: it fails, and its first pod is gone.
  unsigned long long one =
      Submit(*c, {"--no-requeue", "-N", "2", "--gpus-per-node=8", "--wrap", "true"});
  ASSERT_EQ(one, 1u);
  Json j = c->WaitJob(one);
  EXPECT_EQ(j["state"], "FAILED");
  EXPECT_TRUE(Contains(c->ReadFile(c->dir() + "/lockstepd.log"),
                       "job 1: launch failed: pod " + ns + "/lockstep-1-1: 409 AlreadyExists"));
  EXPECT_TRUE(kube::IsNotFound(kc().Get(kube::PodPath(ns, "lockstep-1-0")).status()));

  // Requeueable: back to the queue (and tried again) until the name is free; then it runs.
  unsigned long long two = Submit(*c, {"-N", "2", "--gpus-per-node=8", "--wrap", "true"});
  ASSERT_EQ(two, 2u);
  ASSERT_TRUE(WaitFor([&] { return c->Job(two).value("restart_count", 0) >= 1; }, kWait))
      << c->Job(two).dump();
  EXPECT_NE(c->Job(two)["state"], "COMPLETED");
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(kc().Delete(kube::PodPath(ns, "lockstep-2-1"), now).ok());
  std::map<std::string, Json> pods;
  ASSERT_TRUE(WaitFor(
      [&] {
        pods = JobPods(ns, two);
        return pods.size() == 2 && c->Job(two)["state"] == "RUNNING";
      },
      kWait));
  for (const auto& [name, pod] : pods) SetPodPhase(ns, name, "Succeeded");
  EXPECT_EQ(c->WaitJob(two)["state"], "COMPLETED");
}

TEST_F(KubernetesBackendTest, RestartAdoptsLivePodsAndRequeuesJobsWhosePodsVanished) {
  const std::string ns = "kbe-r";
  CreateNode(ns, "kbe-r-1", 8);
  CreateNode(ns, "kbe-r-2", 8);
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 2);
  unsigned long long kept = Submit(*c, {"--gpus-per-node=8", "--wrap", "true"});
  unsigned long long lost = Submit(*c, {"--gpus-per-node=8", "--wrap", "true"});
  ASSERT_TRUE(kept && lost);
  ASSERT_TRUE(WaitFor(
      [&] { return JobPods(ns, kept).size() == 1 && JobPods(ns, lost).size() == 1; }, kWait));
  for (unsigned long long job : {kept, lost})
    for (const auto& [name, pod] : JobPods(ns, job)) SetPodPhase(ns, name, "Running");
  // lockstepd dies; meanwhile one job's pod is deleted (an operator, an eviction).
  c->KillDaemon();
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  for (const auto& [name, pod] : JobPods(ns, lost))
    ASSERT_TRUE(kc().Delete(kube::PodPath(ns, name), now).ok());
  c->StartDaemon();
  // The job whose pod vanished goes back to the queue and runs again; the other was adopted.
  ASSERT_TRUE(WaitFor([&] { return c->Job(lost).value("restart_count", 0) >= 1; }, kWait))
      << c->Job(lost).dump();
  EXPECT_EQ(c->Job(kept)["state"], "RUNNING");
  EXPECT_EQ(c->Job(kept).value("restart_count", 0), 0);
  for (const auto& [name, pod] : JobPods(ns, kept)) SetPodPhase(ns, name, "Succeeded");
  EXPECT_EQ(c->WaitJob(kept)["state"], "COMPLETED");
  ASSERT_TRUE(WaitFor([&] { return JobPods(ns, lost).size() == 1; }, kWait));
  for (const auto& [name, pod] : JobPods(ns, lost)) SetPodPhase(ns, name, "Succeeded");
  EXPECT_EQ(c->WaitJob(lost)["state"], "COMPLETED");
}

TEST_F(KubernetesBackendTest, LeaderElectionKeepsAStandbyClosed) {
  const std::string ns = "kbe-d";
  CreateNode(ns, "kbe-d-1", 8);
  const std::string elect = "  leader_elect: true\n  lease_name: kbe-d\n";
  std::unique_ptr<Cluster> leader = StartLockstepd(ns, 1, elect);
  std::unique_ptr<Cluster> standby = StartLockstepd(ns, -1, elect);
  // The standby opens nothing while the other leads: no socket, no store (once it says it waits).
  EXPECT_TRUE(WaitFor(
      [&] {
        return Contains(standby->ReadFile(standby->dir() + "/lockstepd.log"), "waiting to lead");
      },
      kWait));
  EXPECT_TRUE(standby->Get("/api/v1/nodes").contains("error"));
  EXPECT_FALSE(fs::exists(standby->dir() + "/lockstepd.db"));
  EXPECT_TRUE(Contains(standby->ReadFile(standby->dir() + "/lockstepd.log"), "waiting to lead"));
  // The leader stops (and gives the lease back): the standby takes over.
  leader.reset();
  EXPECT_TRUE(standby->WaitNodes("idle", 1, 30))
      << standby->ReadFile(standby->dir() + "/lockstepd.log");
}

// `lockstep up --backend kubernetes` and `lockstep down`, as a user types them.
TEST_F(KubernetesBackendTest, UpAndDown) {
  CreateNode("kbe-e", "kbe-e-1", 8);
  ClusterOptions o;
  Cluster c(o);  // only for its directory and Run()
  LockstepUp up(c);
  const std::string& state = up.state;
  CommandResult r = up.result;
  ASSERT_EQ(r.exit_code, 0) << r.err << c.ReadFile(state + "/lockstepd.log");
  EXPECT_TRUE(Contains(r.out, "lockstep is up on Kubernetes")) << r.out;
  EXPECT_TRUE(Contains(c.ReadFile(state + "/cluster.yaml"), "backend: kubernetes"));
  r = c.Run({"sinfo", "-N", "-o", "%N %G"}, "", -1, "", {{"LOCKSTEP_STATE_DIR", state}});
  EXPECT_TRUE(Contains(r.out, "kbe-e-1 gpu:h100:8")) << r.out << r.err;
  r = c.Run({"down", "--state-dir", state});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.out, "lockstep is down")) << r.out;
}

TEST_F(KubernetesBackendTest, PodsOfOthersGoWhereTheirNodeSelectorAllows) {
  const std::string ns = "kbe-g";
  CreateNode(ns, "kbe-g-1", 8);
  CreateNode(ns, "kbe-g-2", 8, {{"pool", "a100"}});
  CreateNode(ns, "kbe-g-3", 8);
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 3);
  // A one-pod gang of another creator (a plain Job's pod, say) naming lockstep.
  auto create = [&](const std::string& name, const std::string& pool) {
    Json res = {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "8"}};
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", name},
                  {"namespace", ns},
                  {"annotations", {{"lockstep.dev/gang", name}, {"lockstep.dev/gang-size", "1"}}}}},
                {"spec",
                 {{"schedulerName", "lockstep"},
                  {"nodeSelector", {{"pool", pool}}},
                  {"containers",
                   {{{"name", "main"},
                     {"image", "busybox"},
                     {"resources", {{"requests", res}, {"limits", res}}}}}}}}};
    Result<Json> r = kc().Create(kube::PodsPath(ns), pod);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  };
  auto node_of = [&](const std::string& name) {
    Result<Json> p = kc().Get(kube::PodPath(ns, name));
    return p.ok() ? (*p)["spec"].value("nodeName", "") : "<gone>";
  };
  create("on-a100", "a100");
  EXPECT_TRUE(WaitFor([&] { return node_of("on-a100") == "kbe-g-2"; }, kWait))
      << node_of("on-a100");
  // No node has pool=h100: it waits, and goes to a node once relabelled (lockstepd's own Node
  // informer tells the pod-group scheduler).
  create("on-h100", "h100");
  // The scheduler has tried the gang and said why it cannot place it: it is not bound.
  EXPECT_TRUE(
      WaitFor([&] { return !PodEvents(ns, "on-h100", "FailedScheduling").empty(); }, kWait));
  EXPECT_EQ(node_of("on-h100"), "");
  ASSERT_TRUE(kc().Patch(kube::NodePath("kbe-g-3"), kube::PatchType::kMerge,
                         {{"metadata", {{"labels", {{"pool", "h100"}}}}}})
                  .ok());
  EXPECT_TRUE(WaitFor([&] { return node_of("on-h100") == "kbe-g-3"; }, kWait))
      << node_of("on-h100");
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  for (const char* name : {"on-a100", "on-h100"}) (void)kc().Delete(kube::PodPath(ns, name), now);
}

}  // namespace
}  // namespace lockstep::testing
