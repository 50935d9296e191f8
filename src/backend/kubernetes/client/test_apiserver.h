// Test-only: a real kube-apiserver v1.20.2 (over etcd, RBAC authorization) started with
// scripts/kube-apiserver.sh on free ports in its own temporary KUBE_RUN, one per test suite, and
// stopped at the end (a watchdog stops it too if the test process dies). Without a built
// apiserver (`scripts/kube-apiserver.sh build`) the tests skip, or fail when CI is set.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/client/kubeconfig.h"
#include "common/wait_for.h"

namespace lockstep::kube::testing {

inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

inline std::string SourceDir() {
  if (const char* d = std::getenv("LOCKSTEP_SOURCE_DIR"); d && *d) return d;
  return LOCKSTEP_SOURCE_DIR_FOR_TEST;
}

// The tests' one polling wait (common/wait_for.h), for the suites in this namespace.
using lockstep::testing::WaitFor;

// Derive a test suite from this; its tests call SetUp() as usual. A suite that needs more
// apiserver flags defines its own SetUpTestSuite() calling StartApiServer(flags).
class ApiServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { StartApiServer(""); }

  static void StartApiServer(const std::string& extra_apiserver_args) {
    skip_reason_.clear();
    setup_error_.clear();
    const char* work = std::getenv("KUBE_WORK");
    const std::string bin =
        std::string(work && *work ? work : "/var/tmp/kube-apiserver") + "/bin/kube-apiserver";
    if (!std::filesystem::exists(bin)) {
      skip_reason_ = "kube-apiserver is not built (" + bin +
                     " is missing): run scripts/kube-apiserver.sh build (about 4 minutes)";
      return;
    }
    char tmpl[] = "/tmp/lockstep-kube-test.XXXXXX";
    run_dir_ = mkdtemp(tmpl);
    env_ = "KUBE_RUN=" + run_dir_ + " API_PORT=" + std::to_string(FreePort()) +
           " ETCD_PORT=" + std::to_string(FreePort()) +
           " ETCD_PEER_PORT=" + std::to_string(FreePort()) +
           " KUBE_OWNER_PID=" + std::to_string(getpid()) +
           " KUBE_STOP_TIMEOUT=3 KUBE_AUTHZ=RBAC KUBE_APISERVER_EXTRA_ARGS='" +
           extra_apiserver_args + "'";
    const auto t0 = std::chrono::steady_clock::now();
    if (Script("up") != 0) {
      setup_error_ = "scripts/kube-apiserver.sh up failed; see " + run_dir_ + "/logs";
      return;
    }
    std::fprintf(stderr, "apiserver up in %.1f s (%s)\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                 run_dir_.c_str());
    Result<KubeConfig> cfg = LoadKubeConfigFile(run_dir_ + "/kubeconfig");
    if (!cfg.ok()) {
      setup_error_ = cfg.status().ToString();
      return;
    }
    config_ = std::make_unique<KubeConfig>(*cfg);
    Result<std::unique_ptr<KubeClient>> c = KubeClient::Create(*cfg);
    if (!c.ok()) {
      setup_error_ = c.status().ToString();
      return;
    }
    client_ = std::move(*c);
  }

  static void TearDownTestSuite() {
    client_.reset();
    config_.reset();
    if (!run_dir_.empty()) {
      (void)Script("down");  // by the PIDs the script recorded
      std::error_code ec;
      std::filesystem::remove_all(run_dir_, ec);
      run_dir_.clear();
    }
  }

  void SetUp() override {
    if (!skip_reason_.empty()) {
      if (std::getenv("CI")) FAIL() << skip_reason_;
      GTEST_SKIP() << skip_reason_;
    }
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
  }

  static int Script(const std::string& cmd) {
    const std::string line =
        env_ + " " + SourceDir() + "/scripts/kube-apiserver.sh " + cmd + " >&2";
    return std::system(line.c_str());
  }

  // The admin (group system:masters).
  static KubeClient& admin() { return *client_; }
  static const KubeConfig& admin_config() { return *config_; }

  // Another client as the admin with `options` (e.g. impersonation headers).
  static std::unique_ptr<KubeClient> NewClient(ClientOptions options = {}) {
    Result<std::unique_ptr<KubeClient>> c = KubeClient::Create(*config_, std::move(options));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  static void CreateNamespace(const std::string& name) {
    Result<Json> r = client_->Create(
        NamespacesPath(),
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
    ASSERT_TRUE(r.ok() || IsAlreadyExists(r.status())) << r.status().ToString();
  }

  static inline std::string skip_reason_;
  static inline std::string setup_error_;
  static inline std::string run_dir_;
  static inline std::string env_;
  static inline std::unique_ptr<KubeConfig> config_;
  static inline std::unique_ptr<KubeClient> client_;
};

}  // namespace lockstep::kube::testing
