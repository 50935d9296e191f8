// The fixture of kubernetes_node_test: the real apiserver of kubernetes_test_fixture.h plus a real
// node on this machine (scripts/kube-node.sh: containerd, runc, a kubelet v1.20.2), so that job
// pods really run: nobody plays the kubelet. One node per machine: run under
// `flock /tmp/kube-tests.lock` like every Kubernetes test. The tests skip with the reason when
// the node is not built (failing under CI) or when this host cannot run one (not root, no
// overlay file system, another kubelet on its port).
#pragma once

#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/kubernetes_test_fixture.h"

namespace lockstep::testing {

class RealNodeTest : public KubernetesBackendTest {
 protected:
  static void SetUpTestSuite() {
    node_skip_.clear();
    skip_reason_.clear();
    setup_error_.clear();
    node_up_ = false;
    const char* work = std::getenv("KUBE_WORK");
    const std::string w = work && *work ? work : "/var/tmp/kube-apiserver";
    if (!std::filesystem::exists(w + "/bin/kubelet") ||
        !std::filesystem::exists(w + "/node-images/pause.tar")) {
      skip_reason_ = "the real node is not built (" + w +
                     "/bin/kubelet or its images are missing): run scripts/kube-node.sh build";
      return;
    }
    if (std::string why = HostCannotRunANode(); !why.empty()) {
      node_skip_ = "this host cannot run a Kubernetes node: " + why;
      return;
    }
    StartApiServer("");
    if (!skip_reason_.empty() || !setup_error_.empty()) return;
    node_up_ = true;  // from here on, TearDownTestSuite runs `down`: a half-started node too
    if (NodeScript("up") != 0) {
      setup_error_ = "scripts/kube-node.sh up failed; see " + run_dir_ + "/node/logs";
      return;
    }
    node_ = LocalHostName();
    job_image_ = "docker.io/local/busybox:1";
  }

  static void TearDownTestSuite() {
    if (node_up_) (void)NodeScript("down");  // before the apiserver: it deletes pods through it
    node_up_ = false;
    job_image_ = "busybox:default";
    KubernetesBackendTest::TearDownTestSuite();
  }

  void SetUp() override {
    if (!node_skip_.empty()) GTEST_SKIP() << node_skip_;
    KubernetesBackendTest::SetUp();
  }

  static int NodeScript(const std::string& cmd) {
    const std::string line =
        env_ + " " + kube::testing::SourceDir() + "/scripts/kube-node.sh " + cmd + " >&2";
    return std::system(line.c_str());
  }

  // Labels the node for the lockstepd of `tag` (its node_selector), as an operator would.
  static void LabelNode(const std::string& tag) {
    Json patch = {{"metadata", {{"labels", {{"lockstep-test", tag}}}}}};
    Result<Json> r = kc().Patch(kube::NodePath(node_), kube::PatchType::kStrategicMerge, patch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  // lockstepd for the real node, its pods in namespace `tag`, SIGKILL `kill_wait_s` after
  // SIGTERM (the pods' terminationGracePeriodSeconds); waits for the node to be idle.
  std::unique_ptr<Cluster> StartOnNode(const std::string& tag, const std::string& extra = "",
                                       int kill_wait_s = 1) {
    LabelNode(tag);
    ClusterOptions o;
    o.kill_wait_s = kill_wait_s;
    o.daemon_args = {"--log-level", "debug"};
    auto c = std::make_unique<Cluster>(o);
    WriteClusterYaml(*c, tag, extra);
    c->Start(/*with_agent=*/false);
    EXPECT_TRUE(c->WaitNodes("idle", 1, 30)) << c->Get("/api/v1/nodes").dump();
    return c;
  }

  // scripts/image.sh's image of this build (docker.io/lockstep/lockstepd:<version>), imported
  // into the node; false (with the failure reported) when it could not be.
  static bool ImportLockstepImage() {
    const std::string bin = LOCKSTEP_BIN_DIR;
    const std::string cmd = "BUILD_DIR=" + bin.substr(0, bin.rfind('/')) + " " +
                            kube::testing::SourceDir() + "/scripts/image.sh 2>/dev/null | tail -1";
    std::string tarball = Output(cmd);
    EXPECT_TRUE(std::filesystem::exists(tarball)) << "scripts/image.sh printed: " << tarball;
    return std::filesystem::exists(tarball) && NodeScript("import " + tarball) == 0;
  }

  // A directory for storage tests (`/var/tmp/<prefix>-XXXXXX`, readable by every user), made a
  // shared mount of its own: propagation into pods (HostToContainer, Bidirectional) needs one,
  // which this machine's private / is not (docs/storage.md): what a site does once for its
  // storage. Root only.
  static void MakeSharedMountDir(const std::string& prefix, std::string& dir) {
    std::string tmpl = "/var/tmp/" + prefix + "-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
    namespace fs = std::filesystem;
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    ASSERT_EQ(::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr), 0);
    ASSERT_EQ(::mount(nullptr, dir.c_str(), nullptr, MS_SHARED, nullptr), 0);
  }

  // What `cmd` printed, its last newline taken off; "" when it failed.
  static std::string Output(const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return "";
    char buf[1024];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (::pclose(p) != 0) return "";
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  static std::string PodPhase(const std::string& ns, const std::string& pod) {
    Result<Json> p = kc().Get(kube::PodPath(ns, pod));
    return p.ok() ? (*p)["status"].value("phase", "") : "";
  }

  static inline std::string node_;       // the Node's name: this host's
  static inline std::string node_skip_;  // why this host cannot run a node
  static inline bool node_up_ = false;

 private:
  static std::string LocalHostName() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
  }

  static std::string HostCannotRunANode() {
    const std::string line = kube::testing::SourceDir() + "/scripts/kube-node.sh check";
    std::string why;
    if (FILE* p = ::popen(line.c_str(), "r")) {
      char buf[512];
      while (std::fgets(buf, sizeof buf, p)) why += buf;
      if (::pclose(p) == 0) why.clear();
    }
    while (!why.empty() && why.back() == '\n') why.pop_back();
    if (!why.empty()) return why;
    if (PortTaken(10250))
      return "127.0.0.1:10250 is taken (another kubelet?): run the Kubernetes tests under "
             "flock /tmp/kube-tests.lock";
    return "";
  }

  static bool PortTaken(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    const bool taken = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return taken;
  }
};

}  // namespace lockstep::testing
