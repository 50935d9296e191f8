// lockstepd's job pods on Kubernetes, end to end (fixture: kubernetes_test_fixture.h): one pod per
// task (`pods: per-task`), and how long the pods of finished jobs are kept (`finished_pod_ttl`).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/kubernetes_test_fixture.h"

namespace lockstep::testing {
namespace {

std::string PodName(unsigned long long job, int rank) {
  return "lockstep-" + std::to_string(job) + "-" + std::to_string(rank);
}

// sbatch -N 2 --ntasks-per-node=4 --gpus-per-task=1 with `pods: per-task`: 8 pods, ranks blocked
// by node, each with one GPU and a quarter of its node's CPUs, Slurm's and PyTorch's variables
// per task; the job completes when all 8 have succeeded.
TEST_F(KubernetesBackendTest, PerTaskPodsHaveTheirRanksAndShares) {
  const std::string ns = "kbe-t";
  CreateNode(ns, "kbe-t-1", 8);
  CreateNode(ns, "kbe-t-2", 8);
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 2, "  pods: per-task\n");
  unsigned long long id = Submit(*c, {"-N", "2", "--ntasks-per-node=4", "--gpus-per-task=1",
                                      "--cpus-per-task=2", "--wrap", "python train.py"});
  ASSERT_GT(id, 0u);
  std::map<std::string, Json> pods;
  ASSERT_TRUE(WaitFor([&] { return (pods = JobPods(ns, id)).size() == 8; }, kWait)) << pods.size();
  EXPECT_EQ(c->Job(id)["state"], "RUNNING");

  std::map<std::string, std::set<int>> ranks_by_node;
  for (int rank = 0; rank < 8; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    ASSERT_TRUE(pods.count(PodName(id, rank)));
    const Json& pod = pods[PodName(id, rank)];
    const std::string node = pod["spec"].value("nodeName", "");
    ranks_by_node[node].insert(rank);
    const Json& res = pod["spec"]["containers"][0]["resources"];
    EXPECT_EQ(res["requests"]["nvidia.com/gpu"], "1") << res.dump();
    EXPECT_EQ(res["limits"]["nvidia.com/gpu"], "1") << res.dump();
    EXPECT_EQ(res["requests"]["cpu"], "2") << res.dump();
    EXPECT_EQ(pod["metadata"]["labels"]["lockstep.dev/rank"], std::to_string(rank));
    EXPECT_EQ(pod["metadata"]["annotations"]["lockstep.dev/pods"], "8");
    EXPECT_EQ(Env(pod, "SLURM_PROCID"), std::to_string(rank));
    EXPECT_EQ(Env(pod, "RANK"), std::to_string(rank));
    EXPECT_EQ(Env(pod, "SLURM_LOCALID"), std::to_string(rank % 4));
    EXPECT_EQ(Env(pod, "LOCAL_RANK"), std::to_string(rank % 4));
    EXPECT_EQ(Env(pod, "LOCAL_WORLD_SIZE"), "4");
    EXPECT_EQ(Env(pod, "SLURM_NODEID"), std::to_string(rank / 4));
    EXPECT_EQ(Env(pod, "SLURMD_NODENAME"), node);
    EXPECT_EQ(Env(pod, "WORLD_SIZE"), "8");
    EXPECT_EQ(Env(pod, "SLURM_NTASKS"), "8");
    EXPECT_EQ(Env(pod, "MASTER_ADDR"), PodName(id, 0) + ".lockstep-" + std::to_string(id));
    EXPECT_EQ(Env(pod, "CUDA_VISIBLE_DEVICES"), "<unset>");
  }
  // Blocked by node: ranks 0-3 on one node, 4-7 on the other.
  ASSERT_EQ(ranks_by_node.size(), 2u);
  for (const auto& [node, ranks] : ranks_by_node) {
    EXPECT_EQ(ranks.size(), 4u) << node;
    EXPECT_EQ(*ranks.rbegin() - *ranks.begin(), 3) << node;
  }

  // Seven of eight succeed: still running. The eighth: COMPLETED.
  for (int rank = 0; rank < 8; ++rank) SetPodPhase(ns, PodName(id, rank), "Running");
  for (int rank = 0; rank < 7; ++rank) SetPodPhase(ns, PodName(id, rank), "Succeeded");
  for (int rank = 0; rank < 7; ++rank) {  // handled by lockstepd, and the run goes on
    const std::string handled = WaitForPodLine(*c, PodName(id, rank), id, "Succeeded");
    ASSERT_FALSE(handled.empty()) << rank << "\n" << DaemonLog(*c);
    EXPECT_FALSE(Contains(handled, "-> report")) << handled;
  }
  EXPECT_EQ(c->Job(id)["state"], "RUNNING");
  SetPodPhase(ns, PodName(id, 7), "Succeeded");
  EXPECT_EQ(c->WaitJob(id)["state"], "COMPLETED");
}

// One failing task pod fails the job with its exit code, and its other pods are deleted.
TEST_F(KubernetesBackendTest, PerTaskPodFailingEndsTheJobWithItsExitCode) {
  const std::string ns = "kbe-f";
  CreateNode(ns, "kbe-f-1", 8);
  CreateNode(ns, "kbe-f-2", 8);
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 2, "  pods: per-task\n");
  unsigned long long id =
      Submit(*c, {"-N", "2", "--ntasks-per-node=4", "--gpus-per-task=1", "--wrap", "train"});
  ASSERT_GT(id, 0u);
  ASSERT_TRUE(WaitFor([&] { return JobPods(ns, id).size() == 8; }, kWait));
  for (int rank = 0; rank < 8; ++rank) SetPodPhase(ns, PodName(id, rank), "Running");
  SetPodPhase(ns, PodName(id, 5), "Failed", 5);
  // The seven others are deleted (gracefully, then at once: there is no kubelet to confirm).
  std::map<std::string, Json> left;
  EXPECT_TRUE(WaitFor([&] { return (left = JobPods(ns, id)).size() == 1; }, seconds(30)))
      << left.size();
  EXPECT_TRUE(left.count(PodName(id, 5))) << "the failed pod is kept (its logs)";
  Json j = c->WaitJob(id, 30);
  EXPECT_EQ(j["state"], "FAILED");
  EXPECT_EQ(j["exit_code"], 5) << j.dump();
  CommandResult r = c->Run({"sacct", "-j", std::to_string(id), "-X", "-o", "JobID,State,ExitCode"});
  EXPECT_TRUE(Contains(r.out, "5:0")) << r.out;
}

// A pod whose image cannot be used fails the job, and is deleted: it stays Pending on its node
// (holding its GPUs in the kubelet's eyes) and nothing runs in it.
TEST_F(KubernetesBackendTest, APodThatCannotStartFailsTheJobAndGoes) {
  const std::string ns = "kbe-i";
  CreateNode(ns, "kbe-i-1", 8);
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 1);
  unsigned long long id =
      Submit(*c, {"--gpus-per-node=8", "--container-image=no such", "--wrap", "true"});
  ASSERT_TRUE(WaitFor([&] { return JobPods(ns, id).size() == 1; }, kWait));
  Result<Json> pod = kc().Get(kube::PodPath(ns, PodName(id, 0)));
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  Json p = *pod;
  p["status"]["phase"] = "Pending";
  p["status"]["containerStatuses"] =
      Json::array({{{"name", "job"},
                    {"ready", false},
                    {"restartCount", 0},
                    {"image", "no such"},
                    {"imageID", ""},
                    {"state",
                     {{"waiting",
                       {{"reason", "InvalidImageName"},
                        {"message", "couldn't parse image reference \"no such\""}}}}}}});
  ASSERT_TRUE(kc().Update(kube::PodPath(ns, PodName(id, 0)) + "/status", p).ok());
  Json j = c->WaitJob(id);
  EXPECT_EQ(j["state"], "FAILED");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_TRUE(WaitFor([&] { return JobPods(ns, id).empty(); }, seconds(10)));
}

// finished_pod_ttl: the pods of a finished run (and the job's Service) are kept that long after
// its last pod ended, counted from the pods' finishedAt, so across a restart of lockstepd too.
TEST_F(KubernetesBackendTest, FinishedPodsGoAfterTheirTtlEvenAcrossARestart) {
  const std::string ns = "kbe-l";
  CreateNode(ns, "kbe-l-1", 8);
  CreateNode(ns, "kbe-l-2", 8);
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 2, "  finished_pod_ttl: 4\n");

  unsigned long long id = RunJobToCompletion(*c, ns);
  EXPECT_EQ(JobPods(ns, id).size(), 2u) << "kept for their TTL";
  EXPECT_TRUE(ServiceExists(ns, id));
  const auto ended = std::chrono::steady_clock::now();
  EXPECT_TRUE(WaitFor([&] { return JobPods(ns, id).empty(); }, seconds(15)));
  EXPECT_GE(std::chrono::steady_clock::now() - ended, seconds(2));
  EXPECT_TRUE(WaitFor([&] { return !ServiceExists(ns, id); }, kWait))
      << "the Service goes with them";

  // lockstepd is away while the TTL passes: back, it deletes them at once, by their finishedAt,
  // though it has only just seen them. No waiting for the TTL: it is half an hour from here on,
  // and the kubelet's record says that the pods ended an hour ago; counted from when lockstepd
  // saw them end, or from its start, they would be kept.
  c->KillDaemon();
  WriteClusterYaml(*c, ns, "  finished_pod_ttl: 1800\n");
  c->StartDaemon();
  ASSERT_TRUE(c->WaitNodes("idle", 2, 30));
  unsigned long long again = RunJobToCompletion(*c, ns);
  c->KillDaemon();
  const std::string an_hour_ago = kube::FormatRfc3339(static_cast<Time>(std::time(nullptr)) - 3600);
  for (const auto& [name, pod] : JobPods(ns, again))
    SetPodPhase(ns, name, "Succeeded", 0, an_hour_ago);
  EXPECT_EQ(JobPods(ns, again).size(), 2u);
  c->StartDaemon();
  EXPECT_TRUE(WaitFor([&] { return JobPods(ns, again).empty(); }, kWait));
  EXPECT_TRUE(WaitFor([&] { return !ServiceExists(ns, again); }, kWait));
}

// finished_pod_ttl 0: deleted as soon as the run ends; a failing run's pods too.
TEST_F(KubernetesBackendTest, FinishedPodTtlZeroDeletesThemWhenTheRunEnds) {
  const std::string ns = "kbe-z";
  CreateNode(ns, "kbe-z-1", 8);
  CreateNode(ns, "kbe-z-2", 8);
  std::unique_ptr<Cluster> c = StartLockstepd(ns, 2, "  finished_pod_ttl: 0\n");
  unsigned long long id = RunJobToCompletion(*c, ns);
  EXPECT_TRUE(WaitFor([&] { return JobPods(ns, id).empty(); }, seconds(5)));
  EXPECT_TRUE(WaitFor([&] { return !ServiceExists(ns, id); }, seconds(5)));

  unsigned long long bad = Submit(*c, {"-N", "1", "--gpus-per-node=8", "--wrap", "exit 3"});
  ASSERT_TRUE(WaitFor([&] { return JobPods(ns, bad).size() == 1; }, kWait));
  SetPodPhase(ns, PodName(bad, 0), "Failed", 3);
  EXPECT_EQ(c->WaitJob(bad)["exit_code"], 3);
  EXPECT_TRUE(WaitFor([&] { return JobPods(ns, bad).empty(); }, seconds(5)));
}

}  // namespace
}  // namespace lockstep::testing
