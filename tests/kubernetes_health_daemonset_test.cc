// The health-only agent of deploy/kubernetes/health-agent.yaml as a real DaemonSet pod on the real
// node (fixture: kubernetes_node_fixture.h): scripts/image.sh's image, the node labelled as GPU
// Feature Discovery would, lockstepd in kubernetes mode serving HTTPS. The pod becomes Ready, runs
// as the manifest says (non-root, read-only root file system), its reports reach lockstepd, and
// the site's health program from the ConfigMap `lockstep-health-program` drains the Node in
// lockstep when it fails and resumes it when it passes again.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/kubernetes_node_fixture.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kTag[] = "node-h";
constexpr char kGpuLabel[] = "nvidia.com/gpu.present";
constexpr char kPodSelector[] = "app.kubernetes.io/component=health-agent";

std::string KubeWork() {
  const char* w = std::getenv("KUBE_WORK");
  return w && *w ? w : "/var/tmp/kube-apiserver";
}

class HealthDaemonSetTest : public RealNodeTest {
 protected:
  void SetUp() override {
    RealNodeTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* tool : {"kubectl", "kube-controller-manager", "kube-scheduler"})
      if (!fs::exists(KubeWork() + "/bin/" + tool)) {
        const std::string why = std::string(tool) +
                                " is not built: run scripts/kube-apiserver.sh build kubectl "
                                "kube-controller-manager kube-scheduler";
        if (std::getenv("CI")) FAIL() << why;
        GTEST_SKIP() << why;
      }
  }

  static std::string KubectlLine(const std::string& args) {
    return "KUBECONFIG=" + run_dir_ + "/kubeconfig " + KubeWork() + "/bin/kubectl " + args;
  }
  static int Kubectl(const std::string& args) {
    return std::system((KubectlLine(args) + " >&2").c_str());
  }

  // This host as its pods reach it: their bridge's address, the first of the pods' range
  // (scripts/kube-node.sh's KUBE_POD_CIDR; the pods have no route beyond that range).
  static std::string PodGateway() {
    std::string cidr = Output("sed -n 's/^KUBE_POD_CIDR=//p' " + run_dir_ + "/node/env");
    const std::size_t dot = cidr.rfind('.');
    return dot == std::string::npos ? "" : cidr.substr(0, dot) + ".1";
  }

  static void LabelGpuNode(bool gpu) {
    Json value = gpu ? Json("true") : Json(nullptr);  // null removes the label
    Json patch = {{"metadata", {{"labels", {{kGpuLabel, value}}}}}};
    Result<Json> r = kc().Patch(kube::NodePath(node_), kube::PatchType::kStrategicMerge, patch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  // The DaemonSet's pods.
  static Json AgentPods() {
    kube::ListOptions o;
    o.label_selector = kPodSelector;
    Result<Json> l = kc().List(kube::PodsPath("lockstep"), o);
    return l.ok() ? (*l)["items"] : Json::array();
  }

  static bool PodReady(const Json& pod) {
    for (const Json& c : pod["status"].value("conditions", Json::array()))
      if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
    return false;
  }

  // The site's health program, as an operator ships it: the ConfigMap's `check.sh`.
  static void WriteHealthProgram(const std::string& dir, const std::string& script) {
    std::ofstream(dir + "/check.sh") << "#!/bin/sh\n" << script;
    ASSERT_EQ(Kubectl("-n lockstep create configmap lockstep-health-program --from-file=check.sh=" +
                      dir + "/check.sh --dry-run=client -o yaml | " + KubectlLine("apply -f -")),
              0);
  }

  // The kubelet refreshes a ConfigMap volume when it syncs the pod: at once on a change of the
  // pod, else at its sync period (a minute). The test changes an annotation so as not to wait.
  static void NudgeKubelet(const std::string& pod, int generation) {
    Json patch = {
        {"metadata", {{"annotations", {{"lockstep-test/nudge", std::to_string(generation)}}}}}};
    Result<Json> r =
        kc().Patch(kube::PodPath("lockstep", pod), kube::PatchType::kStrategicMerge, patch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  // `sinfo -N` as a user reads it: "<state> <reason>" of the node.
  static std::string StateAndReason(Cluster& c) {
    CommandResult r = c.Run({"sinfo", "-N", "-h", "-o", "%T %E"});
    std::string s = r.out;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  static int HealthReports(Cluster& c) {
    for (const Json& n : c.Get("/api/v1/health").value("nodes", Json::array()))
      if (n.value("name", "") == node_) return n.value("reports", 0);
    return 0;
  }
};

TEST_F(HealthDaemonSetTest, DaemonSetPodReportsAndItsProgramDrainsAndResumesTheNode) {
  ASSERT_EQ(NodeScript("controllers"), 0);
  ASSERT_TRUE(ImportLockstepImage());
  const std::string dir = run_dir_ + "/health-daemonset";
  fs::create_directories(dir);
  const std::string ip = PodGateway();
  ASSERT_FALSE(ip.empty());
  // lockstepd's certificate names its Service, as the agent reaches it by that name.
  const std::string tls =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=lockstepd"
      " -addext subjectAltName=IP:" +
      ip + ",DNS:lockstepd.lockstep.svc -keyout " + dir + "/tls.key -out " + dir +
      "/tls.crt 2>/dev/null";
  ASSERT_EQ(std::system(tls.c_str()), 0);

  // lockstepd in kubernetes mode on this host, over HTTPS (the pods reach it at their bridge's
  // address, which exists once the first pod runs), with the health program where the
  // DaemonSet mounts it.
  const int port = kube::testing::FreePort();
  LabelNode(kTag);
  ClusterOptions o;
  o.daemon_args = {"--log-level", "debug",          "--listen",  "0.0.0.0:" + std::to_string(port),
                   "--tls-cert",  dir + "/tls.crt", "--tls-key", dir + "/tls.key"};
  Cluster c(o);
  WriteClusterYaml(c, kTag, "health:\n  program: /etc/lockstep/health/check.sh\n  interval: 1\n");
  c.Start(/*with_agent=*/false);
  ASSERT_TRUE(c.WaitNodes("idle", 1, 30)) << c.Get("/api/v1/nodes").dump();
  CommandResult token = c.Run({"token"});  // an operator's (root's), as the README asks
  ASSERT_EQ(token.exit_code, 0) << token.err;
  const std::string line = token.out.substr(0, token.out.find('\n'));
  ASSERT_TRUE(Contains(line, "LOCKSTEP_TOKEN=")) << token.out;

  // The operator's steps of deploy/kubernetes/README.md for the DaemonSet.
  const std::string deploy = kube::testing::SourceDir() + "/deploy/kubernetes";
  ASSERT_EQ(Kubectl("apply -f " + deploy + "/namespace.yaml"), 0);
  (void)Kubectl("-n lockstep delete secret lockstepd-tls lockstep-health-agent --ignore-not-found");
  ASSERT_EQ(Kubectl("-n lockstep create secret tls lockstepd-tls --cert=" + dir +
                    "/tls.crt --key=" + dir + "/tls.key"),
            0);
  ASSERT_EQ(
      Kubectl("-n lockstep create secret generic lockstep-health-agent --from-literal=token=" +
              line.substr(line.find('=') + 1)),
      0);
  WriteHealthProgram(dir, "echo all good\nexit 0\n");
  ASSERT_EQ(Kubectl("apply -f " + deploy + "/health-agent.yaml"), 0);
  // What this one-machine cluster lacks, nothing else: no cluster DNS and no kube-proxy, so the
  // Service's name is an alias of lockstepd's address, on the test's free port.
  const std::string url = "https://lockstepd.lockstep.svc:" + std::to_string(port);
  const std::string patch =
      "[{\"op\": \"add\", \"path\": \"/spec/template/spec/hostAliases\", \"value\": [{\"ip\": \"" +
      ip +
      "\", \"hostnames\": [\"lockstepd.lockstep.svc\"]}]},"
      " {\"op\": \"test\", \"path\": \"/spec/template/spec/containers/0/args/1\", \"value\": "
      "\"--socket\"},"
      " {\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/args/2\", \"value\": "
      "\"" +
      url + "\"}]";
  ASSERT_EQ(
      Kubectl("-n lockstep patch daemonset lockstep-health-agent --type=json -p '" + patch + "'"),
      0);
  EXPECT_TRUE(AgentPods().empty());  // no GPU node yet: no pod
  LabelGpuNode(true);

  std::string pod;
  ASSERT_TRUE(WaitFor(
      [&] {
        Json pods = AgentPods();
        if (pods.size() != 1 || !PodReady(pods[0])) return false;
        pod = pods[0]["metadata"]["name"];
        return pods[0]["spec"].value("nodeName", "") == node_;
      },
      seconds(90)))
      << AgentPods().dump() << "\n"
      << Output(KubectlLine("-n lockstep get events 2>&1"));
  ASSERT_TRUE(WaitFor([&] { return HealthReports(c) > 0; }, kWait))
      << c.Get("/api/v1/health").dump() << "\n"
      << Output(KubectlLine("-n lockstep logs " + pod + " 2>&1"));
  EXPECT_EQ(StateAndReason(c), "idle none");

  // As the manifest says: the image's user, not root, and nothing written to the root file system.
  EXPECT_EQ(Output(KubectlLine("-n lockstep exec " + pod + " -- id -u")), "10001");
  EXPECT_TRUE(Contains(Output(KubectlLine("-n lockstep exec " + pod +
                                          " -- sh -c 'echo x > /probe 2>&1; true' 2>&1")),
                       "Read-only file system"));

  // The program fails: the node is drained with its first line; it passes: resumed.
  WriteHealthProgram(dir, "echo 'ECC storm on GPU 3'\nexit 2\n");
  NudgeKubelet(pod, 1);
  EXPECT_TRUE(WaitFor([&] { return StateAndReason(c) == "drained health: ECC storm on GPU 3"; },
                      seconds(90)))
      << StateAndReason(c) << "\n"
      << Output(KubectlLine("-n lockstep logs " + pod + " 2>&1"));
  WriteHealthProgram(dir, "echo all good\nexit 0\n");
  NudgeKubelet(pod, 2);
  EXPECT_TRUE(WaitFor([&] { return StateAndReason(c) == "idle none"; }, seconds(90)))
      << StateAndReason(c);

  // Leave the node to the other tests: no GPU label, no agent pod.
  LabelGpuNode(false);
  EXPECT_EQ(Kubectl("-n lockstep delete daemonset lockstep-health-agent"), 0);
  // Its pod goes once the kubelet has stopped it; a kubelet slowed down by a loaded machine may
  // not within a minute (the node then shows NotReady), so the pod is then deleted by force.
  if (!WaitFor([&] { return AgentPods().empty(); }, seconds(60)))
    Kubectl(std::string("-n lockstep delete pod --force --grace-period=0 -l ") + kPodSelector);
  EXPECT_TRUE(WaitFor([&] { return AgentPods().empty(); }, seconds(60))) << AgentPods().dump();
  EXPECT_EQ(Kubectl("-n lockstep delete secret lockstepd-tls lockstep-health-agent"), 0);
  EXPECT_EQ(Kubectl("-n lockstep delete configmap lockstep-health-program"), 0);
}

}  // namespace
}  // namespace lockstep::testing
