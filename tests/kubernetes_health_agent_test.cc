// The health-only lockstep-agent on Kubernetes against a real apiserver (docs/kubernetes.md,
// "Node health"): lockstepd in kubernetes mode takes a health-only agent's reports for a Node (a
// health program exiting 2 drains it with a `health:` reason, exiting 0 resumes it), and the
// DaemonSet of deploy/kubernetes/health-agent.yaml applies with kubectl, with a ServiceAccount
// that may do nothing in the API, checked by impersonation.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/kubernetes_test_fixture.h"

namespace lockstep::testing {
namespace {

constexpr char kAgent[] = "system:serviceaccount:lockstep:lockstep-health-agent";

std::string KubeWork() {
  const char* w = std::getenv("KUBE_WORK");
  return w && *w ? w : "/var/tmp/kube-apiserver";
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
  // No binding gives it anything.
  for (const char* bindings : {"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                               "/apis/rbac.authorization.k8s.io/v1/rolebindings"}) {
    Result<Json> list = kc().Get(bindings);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    for (const Json& b : (*list)["items"])
      for (const Json& s : b.value("subjects", Json::array()))
        EXPECT_NE(s.value("name", ""), "lockstep-health-agent") << b["metadata"]["name"];
  }
}

}  // namespace
}  // namespace lockstep::testing
