// The health-only lockstep-agent on Kubernetes against a real apiserver (docs/kubernetes.md,
// "Node health"): lockstepd in kubernetes mode takes a health-only agent's reports for a Node (a
// health program exiting 2 drains it with a `health:` reason, exiting 0 resumes it), and the
// DaemonSet of deploy/kubernetes/health-agent.yaml applies with kubectl, with a ServiceAccount
// that may do nothing in the API, checked by impersonation.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/kubernetes_test_fixture.h"
#include "tests/process_state.h"

namespace lockstep::testing {
namespace {

constexpr char kAgent[] = "system:serviceaccount:lockstep:lockstep-health-agent";
constexpr char kStorageAgent[] = "system:serviceaccount:lockstep:lockstep-storage-agent";

std::string KubeWork() {
  const char* w = std::getenv("KUBE_WORK");
  return w && *w ? w : "/var/tmp/kube-apiserver";
}

// How many health reports lockstepd took for the node (GET /api/v1/health).
int HealthReports(Cluster& c, const std::string& node) {
  for (const Json& n : c.Get("/api/v1/health").value("nodes", Json::array()))
    if (n.value("name", "") == node) return n.value("reports", 0);
  return 0;
}

// The node's standing conditions in GET /api/v1/health, as JSON text.
std::string Conditions(Cluster& c, const std::string& node) {
  for (const Json& n : c.Get("/api/v1/health").value("nodes", Json::array()))
    if (n.value("name", "") == node) return n.value("conditions", Json::array()).dump();
  return "[]";
}

std::string NodeStateOf(Cluster& c, const std::string& name, std::string* reason) {
  for (const auto& n : c.Get("/api/v1/nodes").value("nodes", Json::array()))
    if (n["name"] == name) {
      *reason = n.value("reason", "");
      return n.value("state", "");
    }
  return "";
}

class HealthAgentTest : public KubernetesBackendTest {
 protected:
  // `kubectl ARGS` as the apiserver's admin; its exit code.
  static int Kubectl(const std::string& args) {
    const std::string line = "KUBECONFIG=" + run_dir_ + "/kubeconfig " + KubeWork() +
                             "/bin/kubectl " + args + " >/dev/null 2>&1";
    const int status = std::system(line.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // `kubectl auth can-i VERB RESOURCE` as a ServiceAccount (default: the health agent's).
  static bool AgentCan(const std::string& verb_and_resource, const std::string& as = kAgent) {
    return Kubectl("auth can-i --as=" + as +
                   " --as-group=system:serviceaccounts --as-group=system:serviceaccounts:lockstep "
                   "-n lockstep " +
                   verb_and_resource) == 0;
  }
};

TEST_F(HealthAgentTest, AHealthOnlyAgentsProgramDrainsAndResumesAKubernetesNode) {
  const std::string ns = "kbe-ha";
  CreateNode(ns, "kbe-ha-1", 8);
  char tmpl[] = "/tmp/lockstep-health-agent-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string program = dir + "/check.sh";
  std::ofstream(program) << "#!/bin/sh\nif [ -f " << dir
                         << "/bad ]; then cat " << dir << "/bad; exit 2; fi\necho ok\n";
  ::chmod(program.c_str(), 0755);
  std::unique_ptr<Cluster> c =
      StartLockstepd(ns, 1, "health:\n  program: " + program + "\n  interval: 1\n");
  std::ofstream(dir + "/bad") << "ECC storm on GPU 3\n";
  c->StartNodeAgent("kbe-ha-1", {}, {"--health-only"});
  std::string reason;
  ASSERT_TRUE(WaitFor([&] { return NodeStateOf(*c, "kbe-ha-1", &reason) == "drained"; }, kWait))
      << reason << "\n" << c->ReadFile(c->dir() + "/agent-kbe-ha-1.log");
  EXPECT_EQ(reason, "health: ECC storm on GPU 3");
  std::filesystem::remove(dir + "/bad");
  EXPECT_TRUE(WaitFor([&] { return NodeStateOf(*c, "kbe-ha-1", &reason) == "idle"; }, kWait))
      << reason;
  // The agent's registration changed nothing of the node Kubernetes reports: still one node,
  // jobs still run as pods.
  EXPECT_EQ(c->Get("/api/v1/nodes").value("nodes", Json::array()).size(), 1u);
  c->StopNodeAgent("kbe-ha-1");
  c.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// The two DaemonSets' agents on one Node, each a checker of its own share: the health-only
// agent's program and the mounts-only agent's file system (bind-mounted under a host root, as the
// storage DaemonSet's container sees the host at /host). Each drains the node with its own
// reason, and neither's passing rounds resume a drain that the other's finding holds.
TEST_F(HealthAgentTest, HealthAndStorageAgentsOfOneNodeEachClearOnlyTheirOwnFindings) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root: the mounts-only agent bind-mounts";
  const std::string ns = "kbe-hs";
  const std::string node = "kbe-hs-1";
  CreateNode(ns, node, 8);
  char tmpl[] = "/tmp/lockstep-health-storage-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string host = dir + "/host";  // the storage agent's view of the host's /
  const std::string source = host + "/srv/ckpt";
  const std::string mount_point = host + "/mnt/checkpoints/ckpt";
  std::filesystem::create_directories(source);
  std::ofstream(source + "/marker") << "checkpoint\n";
  const std::string program = dir + "/check.sh";
  std::ofstream(program) << "#!/bin/sh\nif [ -f " << dir
                         << "/bad ]; then cat " << dir << "/bad; exit 2; fi\necho ok\n";
  ::chmod(program.c_str(), 0755);
  std::unique_ptr<Cluster> c = StartLockstepd(
      ns, 1,
      "health:\n  program: " + program + "\n  interval: 1\n"
      "storage:\n  - name: ckpt\n    category: /mnt/checkpoints\n    bind: /srv/ckpt\n");
  c->StartNodeAgent(node, {}, {"--health-only"});
  c->StartNodeAgent(node, {}, {"--mounts-only", "--host-root", host}, "storage-" + node);
  auto state = [&] {
    std::string reason;
    const std::string s = NodeStateOf(*c, node, &reason);
    return s + " " + reason;
  };
  auto logs = [&] {
    return c->ReadFile(c->dir() + "/agent-" + node + ".log") +
           c->ReadFile(c->dir() + "/storage-" + node + ".log");
  };
  // The storage agent mounted the file system where the host has it.
  ASSERT_TRUE(WaitFor([&] { return c->ReadFile(mount_point + "/marker") == "checkpoint\n"; },
                      kWait))
      << logs();
  EXPECT_TRUE(Mounted(mount_point));
  EXPECT_EQ(state(), "idle ");

  // The program fails: drained with its line; the storage agent's passing rounds leave it so.
  std::ofstream(dir + "/bad") << "ECC storm on GPU 3\n";
  ASSERT_TRUE(WaitFor([&] { return state() == "drained health: ECC storm on GPU 3"; }, kWait))
      << state() << "\n" << logs();
  const int reports = HealthReports(*c, node);
  ASSERT_TRUE(WaitFor([&] { return HealthReports(*c, node) >= reports + 4; }, kWait));
  EXPECT_EQ(state(), "drained health: ECC storm on GPU 3");

  // The file system cannot be mounted (its source is gone): the storage agent's finding holds
  // the node when the program passes again.
  ASSERT_EQ(::umount2(mount_point.c_str(), MNT_DETACH), 0);
  std::filesystem::rename(source, source + ".away");
  ASSERT_TRUE(WaitFor(
      [&] { return Contains(Conditions(*c, node), "storage checkpoints/ckpt: not mounted"); },
      kWait))
      << Conditions(*c, node) << "\n" << logs();
  std::filesystem::remove(dir + "/bad");
  // Still drained, now for what holds it: the reason says so.
  ASSERT_TRUE(WaitFor(
      [&] { return Contains(state(), "drained health: storage checkpoints/ckpt: not mounted"); },
      kWait))
      << state() << "\n" << Conditions(*c, node);
  const int later = HealthReports(*c, node);
  ASSERT_TRUE(WaitFor([&] { return HealthReports(*c, node) >= later + 4; }, kWait));
  EXPECT_TRUE(Contains(state(), "drained health: storage checkpoints/ckpt: not mounted")) << state();

  // Back: mounted again, and the node resumes.
  std::filesystem::rename(source + ".away", source);
  EXPECT_TRUE(WaitFor([&] { return state() == "idle "; }, kWait)) << state() << "\n" << logs();
  EXPECT_TRUE(Mounted(mount_point));
  // Two checkers registered the node; Kubernetes still reports it, once.
  EXPECT_EQ(c->Get("/api/v1/nodes").value("nodes", Json::array()).size(), 1u);
  c->StopNodeAgent(node, "storage-" + node);
  c->StopNodeAgent(node);
  c.reset();
  while (Mounted(mount_point)) ::umount2(mount_point.c_str(), MNT_DETACH);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_F(HealthAgentTest, TheDaemonSetAppliesAndItsServiceAccountMayDoNothing) {
  if (!std::filesystem::exists(KubeWork() + "/bin/kubectl")) {
    if (std::getenv("CI")) FAIL() << "kubectl is not built: scripts/kube-apiserver.sh build kubectl";
    GTEST_SKIP() << "kubectl is not built: scripts/kube-apiserver.sh build kubectl";
  }
  const std::string deploy = kube::testing::SourceDir() + "/deploy/kubernetes";
  ASSERT_EQ(Kubectl("apply -f " + deploy + "/namespace.yaml -f " + deploy +
                    "/serviceaccount.yaml -f " + deploy + "/rbac.yaml -f " + deploy +
                    "/health-agent.yaml"),
            0);
  Result<Json> ds = kc().Get("/apis/apps/v1/namespaces/lockstep/daemonsets/lockstep-health-agent");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  const Json& pod = (*ds)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "lockstep-health-agent");
  EXPECT_EQ(pod["automountServiceAccountToken"], false);
  const Json& term = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                        ["nodeSelectorTerms"][0]["matchExpressions"][0];
  EXPECT_EQ(term["key"], "nvidia.com/gpu.present");
  const Json& container = pod["containers"][0];
  EXPECT_EQ(container["command"][0], "/usr/local/bin/lockstep-agent");
  EXPECT_EQ(container["args"][0], "--health-only");
  EXPECT_EQ(container["env"][0]["valueFrom"]["fieldRef"]["fieldPath"], "spec.nodeName");
  // Its node's name comes from the downward API and its reports go to lockstepd: it needs
  // nothing of the API, and may do nothing there.
  for (const char* denied :
       {"get nodes", "list nodes", "patch nodes", "get pods", "list pods", "create pods",
        "create pods/exec", "delete pods", "get secrets", "list secrets",
        "get secrets/lockstep-health-agent", "get configmaps", "create events",
        "get leases.coordination.k8s.io", "list daemonsets.apps"})
    EXPECT_FALSE(AgentCan(denied)) << "the health agent may " << denied;
  // The check itself can say yes: lockstepd's account, impersonated alike, may list nodes.
  EXPECT_TRUE(AgentCan("list nodes", "system:serviceaccount:lockstep:lockstepd"));
  // The storage agent: mounts on the host (privileged, Bidirectional), and nothing in the API.
  ASSERT_EQ(Kubectl("apply -f " + deploy + "/storage-agent.yaml"), 0);
  Result<Json> sds =
      kc().Get("/apis/apps/v1/namespaces/lockstep/daemonsets/lockstep-storage-agent");
  ASSERT_TRUE(sds.ok()) << sds.status().ToString();
  const Json& spod = (*sds)["spec"]["template"]["spec"];
  EXPECT_EQ(spod["automountServiceAccountToken"], false);
  EXPECT_EQ(spod["containers"][0]["args"][0], "--mounts-only");
  EXPECT_EQ(spod["containers"][0]["securityContext"]["privileged"], true);
  EXPECT_EQ(spod["containers"][0]["volumeMounts"][3]["mountPropagation"], "Bidirectional");
  EXPECT_EQ(spod["volumes"][3]["hostPath"]["path"], "/mnt");
  for (const char* denied : {"get nodes", "list pods", "create pods", "get secrets",
                             "get configmaps", "create events"})
    EXPECT_FALSE(AgentCan(denied, kStorageAgent)) << "the storage agent may " << denied;
  // No binding gives either anything.
  for (const char* bindings : {"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                               "/apis/rbac.authorization.k8s.io/v1/rolebindings"}) {
    Result<Json> list = kc().Get(bindings);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    for (const Json& b : (*list)["items"])
      for (const Json& s : b.value("subjects", Json::array())) {
        EXPECT_NE(s.value("name", ""), "lockstep-health-agent") << b["metadata"]["name"];
        EXPECT_NE(s.value("name", ""), "lockstep-storage-agent") << b["metadata"]["name"];
      }
  }
}

}  // namespace
}  // namespace lockstep::testing
