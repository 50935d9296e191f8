#include "backend/kubernetes/objects/pod_builder.h"

#include <gtest/gtest.h>

#include "backend/kubernetes/objects/pod_events.h"
#include "backend/kubernetes/objects/pod_usage.h"

namespace lockstep::kube {
namespace {

using nlohmann::json;

JobPodsSpec TwoNodeJob() {
  JobPodsSpec s;
  s.job_id = 1234;
  s.job_name = "train-bert";
  s.user = "alice";
  s.uid = 1001;
  s.gid = 1001;
  s.partition = "gpu";
  s.ns = "research";
  s.image = "pytorch/pytorch:2.2.0-cuda12.1-cudnn8-runtime";
  s.script =
      "#!/bin/bash\n#SBATCH -N 2\necho \"$(hostname) $SLURM_PROCID\"\nsrun python train.py\n";
  s.args = {"--epochs", "3"};
  s.work_dir = "/home/alice/bert";
  s.env = {{"SLURM_JOB_ID", "1234"},           {"SLURM_NTASKS", "2"},
           {"MASTER_ADDR", "gpu-a-07"},  // the controller's guess; replaced
           {"MASTER_PORT", "29500"},           {"WORLD_SIZE", "2"},
           {"CUDA_VISIBLE_DEVICES", "0,1,2,3"}};
  s.allocation = {{"gpu-a-07", 32, 262144, {{"a100", 4, "nvidia.com/gpu"}}, 1},
                  {"gpu-a-08", 32, 262144, {{"a100", 4, "nvidia.com/gpu"}}, 1}};
  s.labels = {{"team", "nlp"}};
  s.annotations = {{"example.com/cost-center", "42"}};
  s.termination_grace = 60;
  s.time_limit = 7200;
  s.master_port = 29500;
  return s;
}

std::map<std::string, std::string> EnvOf(const json& pod) {
  std::map<std::string, std::string> env;
  for (const json& e : pod["spec"]["containers"][0]["env"]) env[e["name"]] = e["value"];
  return env;
}

TEST(BuildJobPods, PodPerNode) {
  Result<JobPods> r = BuildJobPods(TwoNodeJob());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->pods.size(), 2u);
  EXPECT_EQ(r->service_name, "lockstep-1234");
  EXPECT_EQ(r->master_addr, "lockstep-1234-0.lockstep-1234");

  const json& p = r->pods[1];
  EXPECT_EQ(p["apiVersion"], "v1");
  EXPECT_EQ(p["kind"], "Pod");
  EXPECT_EQ(p["metadata"]["name"], "lockstep-1234-1");
  EXPECT_EQ(p["metadata"]["namespace"], "research");
  EXPECT_FALSE(p["metadata"].contains("ownerReferences"));
  EXPECT_EQ(p["metadata"]["labels"], (json{{"lockstep.dev/job-id", "1234"},
                                           {"lockstep.dev/rank", "1"},
                                           {"app.kubernetes.io/managed-by", "lockstep"},
                                           {"team", "nlp"}}));
  EXPECT_EQ(p["metadata"]["annotations"]["lockstep.dev/user"], "alice");
  EXPECT_EQ(p["metadata"]["annotations"]["lockstep.dev/job-name"], "train-bert");
  EXPECT_EQ(p["metadata"]["annotations"]["example.com/cost-center"], "42");

  const json& spec = p["spec"];
  EXPECT_EQ(spec["nodeName"], "gpu-a-08");
  EXPECT_EQ(spec["schedulerName"], "lockstep");
  EXPECT_EQ(spec["restartPolicy"], "Never");
  EXPECT_EQ(spec["hostname"], "lockstep-1234-1");
  EXPECT_EQ(spec["subdomain"], "lockstep-1234");
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 60);
  EXPECT_EQ(spec["activeDeadlineSeconds"], 7200 + 60);  // the limit, and the backstop's slack
  EXPECT_EQ(spec["securityContext"], (json{{"runAsUser", 1001}, {"runAsGroup", 1001}}));
  EXPECT_EQ(spec["automountServiceAccountToken"], false);

  const json& c = spec["containers"][0];
  EXPECT_EQ(c["image"], "pytorch/pytorch:2.2.0-cuda12.1-cudnn8-runtime");
  EXPECT_EQ(c["workingDir"], "/home/alice/bert");
  json list = {{"cpu", "32"}, {"memory", "262144Mi"}, {"nvidia.com/gpu", "4"}};
  EXPECT_EQ(c["resources"], (json{{"requests", list}, {"limits", list}}));
  ASSERT_EQ(c["command"].size(), 6u);
  EXPECT_EQ(c["command"][0], "/bin/sh");
  EXPECT_EQ(c["command"][1], "-c");
  EXPECT_EQ(c["command"][3], "lockstep-script");
  EXPECT_EQ(c["command"][4], "--epochs");
  EXPECT_FALSE(c.contains("args"));
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/var/run/lockstep");
  EXPECT_EQ(spec["volumes"][0]["emptyDir"], json::object());

  std::map<std::string, std::string> env = EnvOf(p);
  EXPECT_EQ(env["SLURM_NODEID"], "1");
  EXPECT_EQ(env["SLURM_PROCID"], "1");
  EXPECT_EQ(env["RANK"], "1");
  EXPECT_EQ(env["LOCAL_RANK"], "0");
  EXPECT_EQ(env["SLURM_LOCALID"], "0");
  EXPECT_EQ(env.count("LOCAL_WORLD_SIZE"), 0u) << "a pod per node starts its local ranks itself";
  EXPECT_EQ(env["SLURMD_NODENAME"], "gpu-a-08");
  EXPECT_EQ(env["MASTER_ADDR"], "lockstep-1234-0.lockstep-1234");
  EXPECT_EQ(env["MASTER_PORT"], "29500");
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
  // $ doubled: Kubernetes' $(VAR) expansion gives the script back as written.
  EXPECT_EQ(env["LOCKSTEP_SCRIPT"],
            "#!/bin/bash\n#SBATCH -N 2\necho \"$$(hostname) $$SLURM_PROCID\"\nsrun python "
            "train.py\n");

  // What the pod asks is what PodRequests reads back.
  Result<PodResources> req = PodRequests(p);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->cpu_milli, 32000);
  EXPECT_EQ(req->memory_bytes, 262144LL * 1024 * 1024);
  EXPECT_EQ(req->Devices("nvidia.com/gpu"), 4);
  EXPECT_TRUE(IsLockstepPod(p));

  const json& svc = r->service;
  EXPECT_EQ(svc["kind"], "Service");
  EXPECT_EQ(svc["metadata"]["name"], "lockstep-1234");
  EXPECT_EQ(svc["metadata"]["namespace"], "research");
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["selector"], (json{{"lockstep.dev/job-id", "1234"}}));
  EXPECT_EQ(svc["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(svc["spec"]["ports"][0]["port"], 29500);
}

TEST(BuildJobPods, PodPerTaskSplitsEachNode) {
  JobPodsSpec s = TwoNodeJob();
  s.mode = PodMode::kPerTask;
  s.allocation = {{"gpu-a-07", 6, 3000, {{"a100", 4, "nvidia.com/gpu"}}, 4},
                  {"gpu-a-08", 4, 2048, {{"mig-1g.10gb", 2, "nvidia.com/mig-1g.10gb"}}, 2}};
  s.script.clear();
  s.command = {"python", "train.py", "--lr=$(LR)"};
  s.time_limit = kUnlimited;
  s.master_port = 0;
  Result<JobPods> r = BuildJobPods(s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->pods.size(), 6u);
  const json& p5 = r->pods[5];
  EXPECT_EQ(p5["metadata"]["name"], "lockstep-1234-5");
  EXPECT_EQ(p5["spec"]["nodeName"], "gpu-a-08");
  std::map<std::string, std::string> env = EnvOf(p5);
  EXPECT_EQ(env["RANK"], "5");
  EXPECT_EQ(env["SLURM_NODEID"], "1");
  EXPECT_EQ(env["LOCAL_RANK"], "1");
  EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "2");
  EXPECT_EQ(env.count("LOCKSTEP_SCRIPT"), 0u);
  json list = {{"cpu", "2"}, {"memory", "1024Mi"}, {"nvidia.com/mig-1g.10gb", "1"}};
  EXPECT_EQ(p5["spec"]["containers"][0]["resources"]["limits"], list);
  const json& p2 = r->pods[2];
  EXPECT_EQ(EnvOf(p2)["LOCAL_RANK"], "2");
  EXPECT_EQ(EnvOf(p2)["LOCAL_WORLD_SIZE"], "4");
  json list0 = {{"cpu", "1500m"}, {"memory", "750Mi"}, {"nvidia.com/gpu", "1"}};
  EXPECT_EQ(p2["spec"]["containers"][0]["resources"]["requests"], list0);
  EXPECT_EQ(p2["spec"]["containers"][0]["command"], (json{"python", "train.py", "--lr=$$(LR)"}));
  EXPECT_EQ(p2["spec"]["containers"][0]["args"], (json{"--epochs", "3"}));
  EXPECT_FALSE(p2["spec"].contains("activeDeadlineSeconds"));
  EXPECT_FALSE(p2["spec"].contains("volumes"));
  EXPECT_FALSE(r->service["spec"].contains("ports"));
}

// The user's supplementary groups (the identity source's) go into every pod's securityContext.
TEST(BuildJobPods, PodsCarryTheUsersSupplementaryGroups) {
  JobPodsSpec spec = TwoNodeJob();
  spec.groups = {3000, 3001};
  Result<JobPods> pods = BuildJobPods(spec);
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  for (const json& p : pods->pods)
    EXPECT_EQ(p["spec"]["securityContext"],
              (json{{"runAsUser", 1001}, {"runAsGroup", 1001}, {"supplementalGroups", {3000, 3001}}}));
}

TEST(BuildJobPods, UnevenSplitIsAnError) {
  JobPodsSpec s = TwoNodeJob();
  s.mode = PodMode::kPerTask;
  s.allocation[0].tasks = 3;  // 4 GPUs among 3 tasks
  Result<JobPods> r = BuildJobPods(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "job 1234: node gpu-a-07: 4 nvidia.com/gpu cannot be split evenly among 3 tasks");
}

TEST(BuildJobPods, BadInput) {
  auto error = [](JobPodsSpec s) {
    Result<JobPods> r = BuildJobPods(s);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  JobPodsSpec s = TwoNodeJob();
  s.image.clear();
  EXPECT_EQ(error(s), "job 1234: no image");
  s = TwoNodeJob();
  s.ns = "Research";
  EXPECT_EQ(error(s), "job 1234: namespace \"Research\" is not a DNS-1123 label");
  s = TwoNodeJob();
  s.labels["lockstep.dev/rank"] = "7";
  EXPECT_EQ(error(s), "job 1234: label lockstep.dev/rank is lockstep's own");
  s = TwoNodeJob();
  s.labels["team"] = "n l p";
  EXPECT_EQ(error(s), "job 1234: label team=n l p is not a valid label");
  s = TwoNodeJob();
  s.env["1BAD"] = "x";
  EXPECT_EQ(error(s), "job 1234: environment variable name \"1BAD\" is not valid");
  s = TwoNodeJob();
  s.script.clear();
  EXPECT_EQ(error(s), "job 1234: neither a script nor a command");
  s = TwoNodeJob();
  s.allocation.clear();
  EXPECT_EQ(error(s), "job 1234: empty allocation");
  s = TwoNodeJob();
  s.name_prefix = "a-very-long-prefix-for-pod-names-that-goes-on-and-on-and-on";
  EXPECT_NE(error(s).find("longer than 63"), std::string::npos) << error(s);
  s = TwoNodeJob();
  s.allocation[0].cpus = 0;
  EXPECT_EQ(error(s), "job 1234: node gpu-a-07: no CPU for each of its 1 tasks");
}

TEST(Names, Dns1123AndLabels) {
  EXPECT_TRUE(IsDns1123Label("lockstep-1234-0"));
  EXPECT_FALSE(IsDns1123Label("Lockstep"));
  EXPECT_FALSE(IsDns1123Label("-a"));
  EXPECT_FALSE(IsDns1123Label(std::string(64, 'a')));
  EXPECT_TRUE(IsDns1123Label(std::string(63, 'a')));
  EXPECT_TRUE(IsLabelValue(""));
  EXPECT_TRUE(IsLabelValue("A100_SXM4.80GB"));
  EXPECT_FALSE(IsLabelValue("a/b"));
  EXPECT_TRUE(IsQualifiedName("scheduling.x-k8s.io/pod-group"));
  EXPECT_TRUE(IsQualifiedName("team"));
  EXPECT_FALSE(IsQualifiedName("Bad_Prefix/x"));
  EXPECT_FALSE(IsQualifiedName("a/"));
  EXPECT_EQ(EscapeDollars("$(A) $$ $x"), "$$(A) $$$$ $$x");
  EXPECT_EQ(JobPodName("lockstep", 18446744073709551615ull, 99999),
            "lockstep-18446744073709551615-99999");
}

}  // namespace
}  // namespace lockstep::kube
