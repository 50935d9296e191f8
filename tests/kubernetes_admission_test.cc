// The admission webhook against the real apiserver (docs/policy.md, "Kubernetes"): lockstepd
// serves it over TLS, the apiserver calls it for pods that name lockstep's scheduler, and
// `kubectl apply` of a privileged pod or one with a hostPath is refused with the rule's message,
// while a pod within policy is admitted and bound. Also the webhook's added latency per pod
// creation, judged (server-side dry runs, with and without the webhook, in one run).
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "common/base64.h"
#include "tests/kubernetes_test_fixture.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;

std::string KubeWork() {
  const char* w = std::getenv("KUBE_WORK");
  return w && *w ? w : "/var/tmp/kube-apiserver";
}

// `kubectl apply -f -` of `manifest` against the test's apiserver: its exit status and what it
// printed (both streams).
std::pair<int, std::string> KubectlApply(const std::string& run_dir, const Json& manifest) {
  const std::string file = run_dir + "/manifest.json";
  std::ofstream(file) << manifest.dump();
  const std::string line = "KUBECONFIG=" + run_dir + "/kubeconfig " + KubeWork() +
                           "/bin/kubectl apply -f " + file + " 2>&1";
  std::string out;
  FILE* p = ::popen(line.c_str(), "r");
  char buf[1024];
  for (std::size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = p ? ::pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

Json Pod(const std::string& ns, const std::string& name, Json spec_extra = Json::object(),
         Json container_extra = Json::object()) {
  Json res = {{"cpu", "1"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}};
  Json container = {{"name", "main"}, {"image", "busybox"}, {"resources", {{"requests", res}, {"limits", res}}}};
  container.update(container_extra);
  Json spec = {{"schedulerName", "lockstep"}, {"containers", Json::array({container})}};
  spec.update(spec_extra);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", spec}};
}

class KubernetesAdmissionTest : public KubernetesBackendTest {
 protected:
  void SetUp() override {
    KubernetesBackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!fs::exists(KubeWork() + "/bin/kubectl")) {
      const std::string why = "kubectl is not built: run scripts/kube-apiserver.sh build kubectl";
      if (std::getenv("CI")) FAIL() << why;
      GTEST_SKIP() << why;
    }
  }

  // lockstepd with the webhook on a free port (a certificate for 127.0.0.1, its own CA), and
  // the ValidatingWebhookConfiguration the apiserver follows, for namespaces labelled for it.
  std::unique_ptr<Cluster> StartWithWebhook(const std::string& ns) {
    const std::string tls = run_dir_ + "/" + ns + "-webhook";
    fs::create_directories(tls);
    EXPECT_EQ(std::system(("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=lockstepd"
                           " -addext subjectAltName=IP:127.0.0.1 -keyout " + tls + "/tls.key -out " +
                           tls + "/tls.crt 2>/dev/null").c_str()),
              0);
    port_ = kube::testing::FreePort();
    CreateNode(ns, ns + "-1", 8);
    // A site rule beside the defaults: gangs of at most 4 nodes.
    std::ofstream(tls + "/policy.yaml")
        << "rules:\n  - name: small-gangs\n    match: {kinds: [podgroup]}\n"
           "    limits: {nodes_per_job: 4}\n";
    // The apiserver's own user (the kubeconfig's) is lockstepd's too: trusted, so that the pods
    // lockstepd makes for sbatch jobs are not judged again.
    std::unique_ptr<Cluster> c = StartLockstepd(
        ns, 1,
        "admission:\n  policy_file: " + tls + "/policy.yaml\n  webhook:\n    listen: 127.0.0.1:" + std::to_string(port_) +
            "\n    tls_cert: " + tls + "/tls.crt\n    tls_key: " + tls + "/tls.key\n"
            "    trusted_users: [system:serviceaccount:lockstep:lockstepd]\n"
            "storage:\n  - {name: data, host_path: /srv/data}\n");
    EXPECT_TRUE(kc().Patch("/api/v1/namespaces/" + ns, kube::PatchType::kMerge,
                           {{"metadata", {{"labels", {{"lockstep.dev/admission", "enforce"}}}}}})
                    .ok());
    std::string ca = c->ReadFile(tls + "/tls.crt");
    Json rules = Json::array(
        {{{"operations", {"CREATE", "UPDATE"}}, {"apiGroups", {""}}, {"apiVersions", {"v1"}}, {"resources", {"pods"}}},
         {{"operations", {"CREATE", "UPDATE"}}, {"apiGroups", {"scheduling.x-k8s.io"}}, {"apiVersions", {"*"}}, {"resources", {"podgroups"}}}});
    Json config = {
        {"apiVersion", "admissionregistration.k8s.io/v1"},
        {"kind", "ValidatingWebhookConfiguration"},
        {"metadata", {{"name", "lockstep-" + ns}}},
        {"webhooks",
         {{{"name", "pods.lockstep.dev"},
           {"clientConfig",
            {{"url", "https://127.0.0.1:" + std::to_string(port_) + "/validate"},
             {"caBundle", Base64Encode(ca)}}},
           {"rules", rules},
           {"namespaceSelector", {{"matchLabels", {{"lockstep.dev/admission", "enforce"}}}}},
           {"failurePolicy", "Fail"},
           {"sideEffects", "None"},
           {"timeoutSeconds", 5},
           {"admissionReviewVersions", {"v1"}}}}}};
    Result<Json> made =
        kc().Create("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", config);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return c;
  }
  void TearDown() override {
    if (!webhook_ns_.empty())
      (void)kc().Delete("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/lockstep-" +
                        webhook_ns_);
    KubernetesBackendTest::TearDown();
  }

  int port_ = 0;
  std::string webhook_ns_;
};

TEST_F(KubernetesAdmissionTest, KubectlApplyOfAPrivilegedOrHostPathPodIsRefusedAndAGoodOneBinds) {
  const std::string ns = webhook_ns_ = "kbe-adm";
  std::unique_ptr<Cluster> c = StartWithWebhook(ns);
  auto [status, out] =
      KubectlApply(run_dir_, Pod(ns, "priv", Json::object(), {{"securityContext", {{"privileged", true}}}}));
  EXPECT_NE(status, 0);
  EXPECT_TRUE(Contains(out, "admission webhook \"pods.lockstep.dev\" denied the request")) << out;
  EXPECT_TRUE(Contains(out, "policy rule 'default-no-privileged'")) << out;
  EXPECT_FALSE(kc().Get(kube::PodPath(ns, "priv")).ok());

  std::tie(status, out) = KubectlApply(
      run_dir_, Pod(ns, "hostpath", {{"volumes", {{{"name", "etc"}, {"hostPath", {{"path", "/etc"}}}}}}}));
  EXPECT_NE(status, 0);
  EXPECT_TRUE(Contains(out, "policy rule 'default-no-host-path'")) << out;
  EXPECT_TRUE(Contains(out, "hostPath /etc is not allowed")) << out;

  // Within policy (a hostPath under the declared storage included): admitted, and lockstep
  // binds it.
  std::tie(status, out) = KubectlApply(
      run_dir_, Pod(ns, "good", {{"volumes", {{{"name", "d"}, {"hostPath", {{"path", "/srv/data/x"}}}}}}}));
  EXPECT_EQ(status, 0) << out;
  auto node_of = [&](const std::string& name) {
    Result<Json> p = kc().Get(kube::PodPath(ns, name));
    return p.ok() ? (*p)["spec"].value("nodeName", "") : "<gone>";
  };
  EXPECT_TRUE(WaitFor([&] { return node_of("good") == ns + "-1"; }, kWait)) << node_of("good");

  // Each decision is in the audit log, which an ordinary user cannot read.
  CommandResult log = c->Run({"policy", "log", "--json"});
  ASSERT_EQ(log.exit_code, 0) << log.err;
  EXPECT_TRUE(Contains(log.out, "\"verdict\":\"deny\"") && Contains(log.out, "default-no-privileged"))
      << log.out;
  EXPECT_TRUE(Contains(log.out, "default-no-host-path")) << log.out;
  EXPECT_TRUE(Contains(log.out, "\"name\":\"good\"")) << log.out;
  log = c->Run({"policy", "log"}, "/tmp", 65534);
  EXPECT_NE(log.exit_code, 0);
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  (void)kc().Delete(kube::PodPath(ns, "good"), now);
}

TEST_F(KubernetesAdmissionTest, APodGroupOverASitesRuleIsRefused) {
  const std::string ns = webhook_ns_ = "kbe-adg";
  std::unique_ptr<Cluster> c = StartWithWebhook(ns);
  const std::string crd_file = std::string(LOCKSTEP_SOURCE_DIR_FOR_TEST) + "/deploy/kubernetes/podgroup-crd.yaml";
  ASSERT_EQ(std::system(("KUBECONFIG=" + run_dir_ + "/kubeconfig " + KubeWork() +
                         "/bin/kubectl apply -f " + crd_file + " >&2").c_str()),
            0);
  auto group = [&](const std::string& name, int members) {
    return Json{{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"spec", {{"minMember", members}}}};
  };
  // The CRD is served once established: apply until it is (a barrier, not a sleep).
  std::pair<int, std::string> r;
  ASSERT_TRUE(WaitFor([&] {
    r = KubectlApply(run_dir_, group("small", 2));
    return r.first == 0;
  }, kWait)) << r.second;
  r = KubectlApply(run_dir_, group("big", 8));
  EXPECT_NE(r.first, 0);
  EXPECT_TRUE(Contains(r.second, "policy rule 'small-gangs'")) << r.second;
  EXPECT_TRUE(Contains(r.second, "at most 4 nodes per job (asked for 8)")) << r.second;
}

TEST_F(KubernetesAdmissionTest, TheWebhooksAddedLatencyPerPodCreation) {
  const std::string ns = webhook_ns_ = "kbe-adl";
  std::unique_ptr<Cluster> c = StartWithWebhook(ns);
  const std::string plain = "kbe-adl-plain";  // a namespace the webhook does not see
  ASSERT_TRUE(kc().Create("/api/v1/namespaces", {{"apiVersion", "v1"},
                                                 {"kind", "Namespace"},
                                                 {"metadata", {{"name", plain}}}})
                  .ok());
  // Server-side dry runs: judged by the webhook (sideEffects: None) and not stored, so a
  // thousand creations leave nothing behind. Alternated, so both see the same machine.
  const int n = std::getenv("ADMISSION_LATENCY_PODS") ? std::atoi(std::getenv("ADMISSION_LATENCY_PODS")) : 1000;
  std::vector<double> with, without;
  for (int i = 0; i < n; ++i) {
    for (const std::string& where : {ns, plain}) {
      const auto start = std::chrono::steady_clock::now();
      Result<Json> r = kc().Create(kube::PodsPath(where) + "?dryRun=All",
                                   Pod(where, "p" + std::to_string(i)));
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      (where == ns ? with : without).push_back(ms);
    }
  }
  auto at = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * v.size()))];
  };
  const double median = at(with, 0.5) - at(without, 0.5), p99 = at(with, 0.99) - at(without, 0.99);
  std::fprintf(stderr,
               "[ figure ] pod creation over %d pods: with the webhook median %.2f ms p99 %.2f ms; "
               "without median %.2f ms p99 %.2f ms; added median %.2f ms p99 %.2f ms\n",
               n, at(with, 0.5), at(with, 0.99), at(without, 0.5), at(without, 0.99), median, p99);
  // Every one was judged: the audit log has a line for each (operators read it).
  CommandResult log = c->Run({"policy", "log", "--json", "-n", std::to_string(n + 10)});
  EXPECT_EQ(static_cast<int>(std::count(log.out.begin(), log.out.end(), '\n')), n) << log.err;
  (void)kc().Delete("/api/v1/namespaces/" + plain);
}

}  // namespace
}  // namespace lockstep::testing
