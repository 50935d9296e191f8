// Batch jobs in real pods on a real node (fixture: kubernetes_node_fixture.h): lockstepd with
// `backend: kubernetes`, the CLI as users run it, and a kubelet that really runs the scripts.
// Exit codes, output and `lockstep logs` (-f), time limits and scancel with their grace,
// Slurm's and PyTorch's variables, a 2-pod gang, a requeue when the kubelet stops, and a
// restart of lockstepd with pods running. What a real node cannot show (GPUs, several nodes,
// foreign schedulers) stays in kubernetes_test.cc, which plays the kubelet.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/kubernetes_node_fixture.h"

namespace lockstep::testing {
namespace {

// A job's pods start in 2-4 s here; a minute is for a loaded machine.
constexpr int kJobSeconds = 60;

std::string Pod(unsigned long long job, int rank) {
  return "lockstep-" + std::to_string(job) + "-" + std::to_string(rank);
}

std::string Logs(Cluster& c, unsigned long long id) {
  CommandResult r = c.Run({"logs", std::to_string(id)});
  return r.exit_code == 0 ? r.out : "error: " + r.err;
}

// `lockstep logs -f` running beside the test, as a user's terminal would: its output once it
// has ended by itself (when the job ends).
class FollowedLogs {
 public:
  FollowedLogs(Cluster& c, unsigned long long id) {
    const std::string cmd = "LOCKSTEP_STATE_DIR=" + c.dir() + " " + LOCKSTEP_BIN_DIR +
                            "/lockstep logs -f " + std::to_string(id);
    pipe_ = ::popen(cmd.c_str(), "r");
  }
  ~FollowedLogs() { (void)Finish(); }
  // Reads until `lockstep logs -f` exits; its output and exit status.
  std::pair<std::string, int> Finish() {
    if (pipe_ == nullptr) return {out_, status_};
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe_)) > 0;) out_.append(buf, n);
    status_ = ::pclose(pipe_);
    pipe_ = nullptr;
    return {out_, status_};
  }

 private:
  FILE* pipe_ = nullptr;
  std::string out_;
  int status_ = -1;
};

TEST_F(RealNodeTest, ScriptsRunInPodsWithTheirOutputEnvironmentAndExitCodes) {
  const std::string ns = "node-a";
  std::unique_ptr<Cluster> c = StartOnNode(ns);
  CommandResult r = c->Run({"sinfo", "-N", "-o", "%N %T"});
  EXPECT_TRUE(Contains(r.out, node_ + " idle")) << r.out << r.err;

  std::ofstream(c->work() + "/hello.sbatch")
      << "#!/bin/sh\n#SBATCH -J hello\n"
      << "echo \"job $SLURM_JOB_ID $SLURM_JOB_NAME on $SLURM_JOB_NODELIST\"\n"
      << "echo \"tasks $SLURM_NTASKS procid $SLURM_PROCID rank $RANK of $WORLD_SIZE\"\n"
      << "echo \"master $MASTER_ADDR port $MASTER_PORT\"\n"
      << "echo \"host $(hostname)\"\n"
      << "echo 'quoted $HOME stays'\n"
      << "echo to-stderr >&2\n";
  unsigned long long id = Submit(*c, {"hello.sbatch"});
  ASSERT_GT(id, 0u);
  Json j = c->WaitJob(id, kJobSeconds);
  EXPECT_EQ(j["state"], "COMPLETED") << j.dump() << DaemonLog(*c);
  EXPECT_EQ(PodPhase(ns, Pod(id, 0)), "Succeeded");
  const std::string out = Logs(*c, id);
  const std::string sid = std::to_string(id);
  EXPECT_TRUE(Contains(out, "job " + sid + " hello on " + node_ + "\n")) << out;
  EXPECT_TRUE(Contains(out, "tasks 1 procid 0 rank 0 of 1\n")) << out;
  EXPECT_TRUE(Contains(out, "master lockstep-" + sid + "-0.lockstep-" + sid + " port ")) << out;
  EXPECT_TRUE(Contains(out, "host " + Pod(id, 0) + "\n")) << out;
  EXPECT_TRUE(Contains(out, "quoted $HOME stays\n")) << out;
  EXPECT_TRUE(Contains(out, "to-stderr\n")) << out;

  // A failing script: FAILED with its exit code, its output kept with the pod.
  unsigned long long bad = Submit(*c, {"--wrap", "echo before; exit 3"});
  j = c->WaitJob(bad, kJobSeconds);
  EXPECT_EQ(j["state"], "FAILED");
  EXPECT_EQ(j["exit_code"], 3) << j.dump();
  r = c->Run({"sacct", "-j", std::to_string(bad), "-X", "-n", "-o", "State,ExitCode"});
  EXPECT_TRUE(Contains(r.out, "FAILED") && Contains(r.out, "3:0")) << r.out;
  EXPECT_EQ(Logs(*c, bad), "before\n");

  // Ended by its child's SIGKILL: the container's 128 + 9 is signal 9 (docs/kubernetes.md).
  unsigned long long killed = Submit(*c, {"--wrap", "sleep 300 & kill -9 $!; wait $!"});
  j = c->WaitJob(killed, kJobSeconds);
  EXPECT_EQ(j["state"], "FAILED") << j.dump();
  r = c->Run({"sacct", "-j", std::to_string(killed), "-X", "-n", "-o", "ExitCode"});
  EXPECT_TRUE(Contains(r.out, "0:9")) << r.out;
}

// The time limit: the pod is stopped and the job ends TIMEOUT. scancel: the script gets SIGTERM,
// may handle it for the grace (--kill-wait, the pods' terminationGracePeriodSeconds), then
// SIGKILL; `lockstep logs -f` shows the output as it comes, and ends with the job.
TEST_F(RealNodeTest, TimeLimitAndScancelStopThePodsWithTheirGrace) {
  const std::string ns = "node-t";
  std::unique_ptr<Cluster> c = StartOnNode(ns, "", /*kill_wait_s=*/3);
  unsigned long long id = Submit(*c, {"-t", "0:03", "--wrap", "echo started; sleep 300"});
  ASSERT_GT(id, 0u);
  Json j = c->WaitJob(id, kJobSeconds);
  EXPECT_EQ(j["state"], "TIMEOUT") << j.dump() << DaemonLog(*c);

  const char* script =
      "trap 'echo got TERM' TERM\n"
      "echo ready\n"
      "while :; do sleep 0.1; done\n";
  unsigned long long cancelled = Submit(*c, {"--wrap", script});
  ASSERT_GT(cancelled, 0u);
  FollowedLogs follow(*c, cancelled);
  ASSERT_TRUE(
      WaitFor([&] { return Contains(Logs(*c, cancelled), "ready\n"); }, seconds(kJobSeconds)))
      << Logs(*c, cancelled) << DaemonLog(*c);
  const auto sent = std::chrono::steady_clock::now();
  CommandResult r = c->Run({"scancel", std::to_string(cancelled)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  j = c->WaitJob(cancelled, kJobSeconds);
  EXPECT_EQ(j["state"], "CANCELLED") << j.dump();
  // The script handled SIGTERM and went on until SIGKILL, the grace later.
  EXPECT_GE(std::chrono::steady_clock::now() - sent, std::chrono::milliseconds(2500));
  auto [out, status] = follow.Finish();
  EXPECT_EQ(status, 0);
  EXPECT_TRUE(Contains(out, "ready\n")) << out;
  EXPECT_TRUE(Contains(out, "got TERM\n")) << out;
  EXPECT_TRUE(WaitFor([&] { return JobPods(ns, cancelled).empty(); }, kWait));
}

// sbatch -n 2 with `pods: per-task`: a gang of two pods started together on the node, each with
// its rank, the world size and the rank-0 pod's name under the job's headless Service.
TEST_F(RealNodeTest, TwoPodGangRunsWithItsRanks) {
  const std::string ns = "node-g";
  std::unique_ptr<Cluster> c = StartOnNode(ns, "  pods: per-task\n");
  unsigned long long id = Submit(
      *c, {"-n", "2", "--wrap",
           "echo \"rank $RANK/$SLURM_PROCID of $WORLD_SIZE local $LOCAL_RANK master $MASTER_ADDR\";"
           " grep -c \"$(hostname).$(echo $MASTER_ADDR | cut -d. -f2)\" /etc/hosts"});
  ASSERT_GT(id, 0u);
  Json j = c->WaitJob(id, kJobSeconds);
  EXPECT_EQ(j["state"], "COMPLETED") << j.dump() << DaemonLog(*c);
  const std::string sid = std::to_string(id);
  const std::string master = Pod(id, 0) + ".lockstep-" + sid;
  const std::string out = Logs(*c, id);
  EXPECT_TRUE(Contains(out, Pod(id, 0) + ": rank 0/0 of 2 local 0 master " + master + "\n")) << out;
  EXPECT_TRUE(Contains(out, Pod(id, 1) + ": rank 1/1 of 2 local 1 master " + master + "\n")) << out;
  // The kubelet named each pod <pod>.<service> in its /etc/hosts: the Service's subdomain.
  EXPECT_TRUE(Contains(out, Pod(id, 0) + ": 1\n")) << out;
  EXPECT_TRUE(Contains(out, Pod(id, 1) + ": 1\n")) << out;
  std::map<std::string, Json> pods = JobPods(ns, id);
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& [name, pod] : pods) EXPECT_EQ(pod["spec"]["nodeName"], node_) << name;
  Result<Json> svc = kc().Get("/api/v1/namespaces/" + ns + "/services/lockstep-" + sid);
  ASSERT_TRUE(svc.ok()) << svc.status().ToString();
  EXPECT_EQ((*svc)["spec"]["clusterIP"], "None");
}

// The kubelet stops; the node goes NotReady: the job is requeued, its pods deleted. The kubelet
// returns: the job runs again on it, as its second run.
TEST_F(RealNodeTest, JobIsRequeuedWhenTheKubeletStopsAndRunsAgainWhenItReturns) {
  const std::string ns = "node-r";
  std::unique_ptr<Cluster> c = StartOnNode(ns);
  unsigned long long id =
      Submit(*c, {"--requeue", "--wrap", "echo \"run $SLURM_RESTART_COUNT\"; sleep 300"});
  ASSERT_GT(id, 0u);
  ASSERT_TRUE(WaitFor([&] { return Contains(Logs(*c, id), "run 0\n"); }, seconds(kJobSeconds)))
      << Logs(*c, id);

  ASSERT_EQ(NodeScript("stop-kubelet"), 0);
  // What the node lifecycle controller writes once the kubelet stops posting its status (this
  // cluster runs no kube-controller-manager): Ready Unknown.
  Json status = {{"status",
                  {{"conditions",
                    {{{"type", "Ready"},
                      {"status", "Unknown"},
                      {"reason", "NodeStatusUnknown"},
                      {"message", "Kubelet stopped posting node status."}}}}}}};
  ASSERT_TRUE(
      kc().Patch(kube::NodePath(node_) + "/status", kube::PatchType::kStrategicMerge, status).ok());
  EXPECT_TRUE(c->WaitNodes("down*", 1, 30)) << c->Get("/api/v1/nodes").dump();
  EXPECT_TRUE(WaitFor([&] { return c->Job(id).value("restart_count", 0) == 1; }, kWait))
      << c->Job(id).dump();
  EXPECT_EQ(c->Job(id)["state"], "PENDING");
  // Deleted through the API at once after the grace, as the kubelet cannot confirm.
  EXPECT_TRUE(WaitFor([&] { return JobPods(ns, id).empty(); }, kWait));

  ASSERT_EQ(NodeScript("start-kubelet"), 0);  // returns once the Node is Ready again
  EXPECT_TRUE(WaitFor([&] { return Contains(Logs(*c, id), "run 1\n"); }, seconds(kJobSeconds)))
      << Logs(*c, id) << DaemonLog(*c);
  std::map<std::string, Json> pods = JobPods(ns, id);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods.begin()->second["metadata"]["labels"]["lockstep.dev/run"], "1");
  EXPECT_EQ(c->Job(id)["state"], "RUNNING");
  EXPECT_EQ(c->Run({"scancel", std::to_string(id)}).exit_code, 0);
  EXPECT_EQ(c->WaitJob(id, kJobSeconds)["state"], "CANCELLED");
}

// lockstepd dies with a job's pod running and comes back: it adopts the pod (the same one, not a
// new run), and acts on it (scancel deletes it).
TEST_F(RealNodeTest, RestartedLockstepdAdoptsRunningPods) {
  const std::string ns = "node-s";
  std::unique_ptr<Cluster> c = StartOnNode(ns);
  unsigned long long id = Submit(*c, {"--wrap", "echo up; sleep 300"});
  ASSERT_GT(id, 0u);
  ASSERT_TRUE(WaitFor([&] { return Contains(Logs(*c, id), "up\n"); }, seconds(kJobSeconds)));
  std::map<std::string, Json> before = JobPods(ns, id);
  ASSERT_EQ(before.size(), 1u);

  c->KillDaemon();
  c->StartDaemon();
  ASSERT_TRUE(WaitFor([&] { return c->Job(id).value("state", "") == "RUNNING"; }, kWait))
      << c->Job(id).dump();
  EXPECT_EQ(c->Job(id).value("restart_count", -1), 0);
  std::map<std::string, Json> after = JobPods(ns, id);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after.begin()->second["metadata"]["uid"], before.begin()->second["metadata"]["uid"]);
  EXPECT_EQ(PodPhase(ns, Pod(id, 0)), "Running");
  EXPECT_EQ(Logs(*c, id), "up\n");

  EXPECT_EQ(c->Run({"scancel", std::to_string(id)}).exit_code, 0);
  EXPECT_EQ(c->WaitJob(id, kJobSeconds)["state"], "CANCELLED");
  EXPECT_TRUE(WaitFor([&] { return JobPods(ns, id).empty(); }, kWait));
}

// --container-image: lockstep's own image, made without a registry by scripts/image.sh and
// imported into the node, runs the job instead of the configured image.
TEST_F(RealNodeTest, ContainerImageFromImageShRunsTheJob) {
  ASSERT_TRUE(ImportLockstepImage());

  const std::string ns = "node-i";
  std::unique_ptr<Cluster> c = StartOnNode(ns);
  unsigned long long id = Submit(*c, {"--container-image=docker.io/lockstep/lockstepd:0.1.0",
                                      "--wrap", "lockstep --version; ls -nd /var/lib/lockstep"});
  ASSERT_GT(id, 0u);
  Json j = c->WaitJob(id, kJobSeconds);
  EXPECT_EQ(j["state"], "COMPLETED") << j.dump() << DaemonLog(*c);
  const std::string out = Logs(*c, id);
  EXPECT_TRUE(Contains(out, "lockstep 0.1.0\n")) << out;
  EXPECT_TRUE(Contains(out, " 10001 ")) << out;  // the state directory is the lockstep user's
  std::map<std::string, Json> pods = JobPods(ns, id);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods.begin()->second["spec"]["containers"][0]["image"],
            "docker.io/lockstep/lockstepd:0.1.0");
}

}  // namespace
}  // namespace lockstep::testing
