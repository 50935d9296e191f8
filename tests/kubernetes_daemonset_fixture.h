// The fixture of the tests that run deploy/kubernetes's DaemonSets as real pods on the real node
// (kubernetes_node_fixture.h): scripts/image.sh's image imported into the node, lockstepd in
// kubernetes mode on this host serving HTTPS under its Service's name, the operator's steps of
// deploy/kubernetes/README.md (the namespace, the TLS Secret, the agents' token Secret, the
// manifest), and the one patch this one-machine cluster needs: no cluster DNS and no kube-proxy,
// so the Service's name is an alias of lockstepd's address, on the test's free port.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/kubernetes_node_fixture.h"

namespace lockstep::testing {

class DaemonSetTest : public RealNodeTest {
 protected:
  void SetUp() override {
    RealNodeTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* tool : {"kubectl", "kube-controller-manager", "kube-scheduler"})
      if (!std::filesystem::exists(KubeWork() + "/bin/" + tool)) {
        const std::string why = std::string(tool) +
                                " is not built: run scripts/kube-apiserver.sh build kubectl "
                                "kube-controller-manager kube-scheduler";
        if (std::getenv("CI")) FAIL() << why;
        GTEST_SKIP() << why;
      }
  }

  static std::string KubeWork() {
    const char* w = std::getenv("KUBE_WORK");
    return w && *w ? w : "/var/tmp/kube-apiserver";
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

  // The pods of namespace `lockstep` with the label selector.
  static Json PodsOf(const std::string& selector) {
    kube::ListOptions o;
    o.label_selector = selector;
    Result<Json> l = kc().List(kube::PodsPath("lockstep"), o);
    return l.ok() ? (*l)["items"] : Json::array();
  }

  static bool PodReady(const Json& pod) {
    for (const Json& c : pod["status"].value("conditions", Json::array()))
      if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
    return false;
  }

  // The name of the one Ready pod of `selector` on this node, waiting up to 90 s; "" if none.
  static std::string WaitReadyPod(const std::string& selector) {
    std::string pod;
    WaitFor(
        [&] {
          Json pods = PodsOf(selector);
          if (pods.size() != 1 || !PodReady(pods[0])) return false;
          pod = pods[0]["metadata"]["name"];
          return pods[0]["spec"].value("nodeName", "") == node_;
        },
        seconds(90));
    return pod;
  }

  // lockstepd in kubernetes mode for the node labelled `tag`, over HTTPS on a free port with a
  // certificate for its Service's name (the pods reach it at their bridge's address, which
  // exists once the first pod runs); waits for the node to be idle.
  std::unique_ptr<Cluster> StartServing(const std::string& tag, const std::string& yaml) {
    tls_dir_ = run_dir_ + "/" + tag + "-tls";
    std::filesystem::create_directories(tls_dir_);
    gateway_ = PodGateway();
    EXPECT_FALSE(gateway_.empty());
    const std::string tls =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=lockstepd"
        " -addext subjectAltName=IP:" +
        gateway_ + ",DNS:lockstepd.lockstep.svc -keyout " + tls_dir_ + "/tls.key -out " +
        tls_dir_ + "/tls.crt 2>/dev/null";
    EXPECT_EQ(std::system(tls.c_str()), 0);
    port_ = kube::testing::FreePort();
    LabelNode(tag);
    ClusterOptions o;
    o.daemon_args = {"--log-level", "debug",  "--listen", "0.0.0.0:" + std::to_string(port_),
                     "--tls-cert", tls_dir_ + "/tls.crt", "--tls-key", tls_dir_ + "/tls.key"};
    auto c = std::make_unique<Cluster>(o);
    WriteClusterYaml(*c, tag, yaml);
    c->Start(/*with_agent=*/false);
    EXPECT_TRUE(c->WaitNodes("idle", 1, 30)) << c->Get("/api/v1/nodes").dump();
    return c;
  }

  // README.md's steps: the namespace, lockstepd's TLS Secret and the Secret `token_secret` with
  // an operator's lockstep token (root's, from `lockstep token`).
  void CreateSecrets(Cluster& c, const std::string& token_secret) {
    CommandResult token = c.Run({"token"});
    ASSERT_EQ(token.exit_code, 0) << token.err;
    const std::string line = token.out.substr(0, token.out.find('\n'));
    ASSERT_TRUE(Contains(line, "LOCKSTEP_TOKEN=")) << token.out;
    const std::string deploy = kube::testing::SourceDir() + "/deploy/kubernetes";
    ASSERT_EQ(Kubectl("apply -f " + deploy + "/namespace.yaml"), 0);
    (void)Kubectl("-n lockstep delete secret lockstepd-tls " + token_secret + " --ignore-not-found");
    ASSERT_EQ(Kubectl("-n lockstep create secret tls lockstepd-tls --cert=" + tls_dir_ +
                      "/tls.crt --key=" + tls_dir_ + "/tls.key"),
              0);
    ASSERT_EQ(Kubectl("-n lockstep create secret generic " + token_secret +
                      " --from-literal=token=" + line.substr(line.find('=') + 1)),
              0);
  }

  // Applies deploy/kubernetes/`manifest` and points DaemonSet `name` at this lockstepd (its
  // first container's args[1] must be --socket), with `more_ops` (JSON patch operations, each
  // with a leading comma) applied in the same patch.
  void ApplyAgent(const std::string& manifest, const std::string& name,
                  const std::string& more_ops = "") {
    const std::string deploy = kube::testing::SourceDir() + "/deploy/kubernetes";
    ASSERT_EQ(Kubectl("apply -f " + deploy + "/" + manifest), 0);
    const std::string url = "https://lockstepd.lockstep.svc:" + std::to_string(port_);
    const std::string patch =
        "[{\"op\": \"add\", \"path\": \"/spec/template/spec/hostAliases\", \"value\": [{\"ip\": "
        "\"" +
        gateway_ +
        "\", \"hostnames\": [\"lockstepd.lockstep.svc\"]}]},"
        " {\"op\": \"test\", \"path\": \"/spec/template/spec/containers/0/args/1\", \"value\": "
        "\"--socket\"},"
        " {\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/args/2\", \"value\": "
        "\"" +
        url + "\"}" + more_ops + "]";
    ASSERT_EQ(Kubectl("-n lockstep patch daemonset " + name + " --type=json -p '" + patch + "'"),
              0);
  }

  // Deletes DaemonSet `name` and waits for its pods (`selector`) to go. A kubelet slowed down by
  // a loaded machine may not stop one within a minute (the node then shows NotReady): it is then
  // deleted by force.
  static void DeleteAgent(const std::string& name, const std::string& selector) {
    EXPECT_EQ(Kubectl("-n lockstep delete daemonset " + name), 0);
    if (!WaitFor([&] { return PodsOf(selector).empty(); }, seconds(60)))
      Kubectl("-n lockstep delete pod --force --grace-period=0 -l " + selector);
    EXPECT_TRUE(WaitFor([&] { return PodsOf(selector).empty(); }, seconds(60)))
        << PodsOf(selector).dump();
  }

  std::string tls_dir_;  // lockstepd's certificate and key
  std::string gateway_;  // this host's address as the pods reach it
  int port_ = 0;         // lockstepd's HTTPS port
};

}  // namespace lockstep::testing
