// lockstepd's own part of an admission webhook call (docs/benchmarks.md, "Admission webhook"):
// one AdmissionReview of a pod within policy, decoded, judged by a site's rules and Kubernetes'
// defaults, written to the audit log and answered, beside a refused one. The API server's side
// (its request, TLS, the round trip) is measured against the real apiserver by
// kubernetes_test --gtest_filter=KubernetesAdmissionTest.TheWebhooksAddedLatencyPerPodCreation.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backend/kubernetes/admission/admission_review.h"

namespace {

using Json = nlohmann::json;

struct Fixture {
  Fixture() {
    std::string t = (std::filesystem::temp_directory_path() / "admission_bench_XXXXXX").string();
    dir = ::mkdtemp(t.data());
    std::ofstream(dir + "/policy.yaml")
        << "rules:\n  - name: gpu-cap\n    match: {groups: [ml]}\n    limits: {gpus_per_job: 8}\n"
           "  - name: images\n    match: {kinds: [pod]}\n    require: {images: [\"docker.io/*\"]}\n";
    lockstep::policy::GateOptions o;
    o.policy_file = dir + "/policy.yaml";
    o.kubernetes_defaults = true;
    o.audit_log = dir + "/audit.log";
    auto opened = lockstep::policy::PolicyGate::Open(o);
    gate = std::move(*opened);
  }
  ~Fixture() { std::filesystem::remove_all(dir); }
  std::string dir;
  std::unique_ptr<lockstep::policy::PolicyGate> gate;
};

std::string Review(bool privileged) {
  Json res = {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "1"}};
  Json container = {{"name", "main"},
                    {"image", "docker.io/local/busybox:1"},
                    {"command", {"sh", "-c", "sleep 3600"}},
                    {"resources", {{"requests", res}, {"limits", res}}},
                    {"securityContext", {{"privileged", privileged}}}};
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "ml"}, {"labels", {{"app", "train"}}}}},
              {"spec", {{"schedulerName", "lockstep"}, {"containers", {container}}}}};
  return Json{{"apiVersion", "admission.k8s.io/v1"},
              {"kind", "AdmissionReview"},
              {"request",
               {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
                {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                {"namespace", "ml"},
                {"operation", "CREATE"},
                {"userInfo", {{"username", "kubernetes-admin"}, {"groups", {"system:masters"}}}},
                {"object", pod}}}}
      .dump();
}

// The body in, the answer's text out: what the webhook listener's function does.
void BM_ReviewPod(benchmark::State& state) {
  static Fixture f;
  const std::string body = Review(state.range(0) != 0);
  for (auto _ : state) {
    Json review = Json::parse(body);
    auto answer = lockstep::kube::ReviewAdmission(*f.gate, review, {});
    std::string text = answer->dump();
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_ReviewPod)->Arg(0)->Arg(1)->ArgName("privileged")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
