// The fixture of the kubernetes_test binary (kubernetes_test.cc, kubernetes_pods_test.cc): a real
// kube-apiserver v1.20.2 (over etcd) on free ports, one per binary, Nodes made by the test,
// lockstepd and the CLI as real processes. There is no kubelet: the test plays it, writing pods'
// and nodes' status. Without a built apiserver (`scripts/kube-apiserver.sh build`) the tests
// skip, or fail when the CI variable is set.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/client/test_apiserver.h"
#include "backend/kubernetes/objects/pod_events.h"
#include "tests/cluster_harness.h"

// Not in an anonymous namespace: the tests of both files share this one fixture class (and so one
// apiserver).
namespace lockstep::testing {

using kube::Json;
using kube::KubeClient;
using std::chrono::milliseconds;
using std::chrono::seconds;

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// How long a test waits for what lockstepd and the apiserver do (WaitFor, common/wait_for.h).
inline constexpr std::chrono::seconds kWait{20};

// A scheduling pass has looked at the pending job and said why it waits (a barrier in place of
// a sleep: the job is not started by that pass).
inline bool Considered(const nlohmann::json& job) {
  const std::string reason = job.value("reason", "");
  return job.value("state", "") != "PENDING" || (!reason.empty() && reason != "None");
}

// The wall clock as the kubelet writes it: "2026-12-01T10:00:00Z".
inline std::string NowRfc3339() {
  return kube::FormatRfc3339(static_cast<Time>(std::time(nullptr)));
}

class KubernetesBackendTest : public kube::testing::ApiServerTest {
 protected:
  static KubeClient& kc() { return *client_; }

  // A Node with `gpus` GPUs of GPU Feature Discovery's product label, Ready, labelled for
  // the test's lockstepd (its node_selector).
  static void CreateNode(const std::string& tag, const std::string& name, int gpus,
                         Json labels = Json::object()) {
    labels["lockstep-test"] = tag;
    labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3";
    Result<Json> n =
        kc().Create(kube::NodesPath(), {{"apiVersion", "v1"},
                                        {"kind", "Node"},
                                        {"metadata", {{"name", name}, {"labels", labels}}}});
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    Json resources = {{"cpu", "64"},
                      {"memory", "256Gi"},
                      {"pods", "110"},
                      {"nvidia.com/gpu", std::to_string(gpus)}};
    Json status = {
        {"status",
         {{"capacity", resources},
          {"allocatable", resources},
          {"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.1"}}}},
          {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
    Result<Json> s =
        kc().Patch(kube::NodePath(name) + "/status", kube::PatchType::kStrategicMerge, status);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
  }

  static void SetReady(const std::string& node, bool ready) {
    Json status = {{"status",
                    {{"conditions",
                      {{{"type", "Ready"},
                        {"status", ready ? "True" : "False"},
                        {"reason", ready ? "KubeletReady" : "KubeletNotReady"},
                        {"message", ready ? "ok" : "container runtime is down"}}}}}}};
    Result<Json> s =
        kc().Patch(kube::NodePath(node) + "/status", kube::PatchType::kStrategicMerge, status);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
  }

  // The job's pods, by name.
  static std::map<std::string, Json> JobPods(const std::string& ns, unsigned long long job) {
    kube::ListOptions o;
    o.label_selector = "lockstep.dev/job-id=" + std::to_string(job);
    Result<Json> list = kc().List(kube::PodsPath(ns), o);
    std::map<std::string, Json> out;
    if (!list.ok()) return out;
    for (const Json& p : (*list)["items"]) out[p["metadata"]["name"].get<std::string>()] = p;
    return out;
  }

  // The kubelet's part: the pod's phase and its container's state, started and finished `when`
  // (RFC 3339; now by default).
  static void SetPodPhase(const std::string& ns, const std::string& name, const std::string& phase,
                          int exit_code = 0, const std::string& when = NowRfc3339()) {
    Result<Json> pod = kc().Get(kube::PodPath(ns, name));
    ASSERT_TRUE(pod.ok()) << pod.status().ToString();
    Json state;
    if (phase == "Running")
      state = {{"running", {{"startedAt", when}}}};
    else
      state = {{"terminated",
                {{"exitCode", exit_code},
                 {"reason", exit_code == 0 ? "Completed" : "Error"},
                 {"startedAt", when},
                 {"finishedAt", when}}}};
    Json p = *pod;
    p["status"]["phase"] = phase;
    p["status"]["containerStatuses"] = Json::array({{{"name", "job"},
                                                     {"ready", phase == "Running"},
                                                     {"restartCount", 0},
                                                     {"image", p["spec"]["containers"][0]["image"]},
                                                     {"imageID", ""},
                                                     {"state", state}}});
    Result<Json> u = kc().Update(kube::PodPath(ns, name) + "/status", p);
    ASSERT_TRUE(u.ok()) << u.status().ToString();
  }

  static bool ServiceExists(const std::string& ns, unsigned long long job) {
    return kc().Get("/api/v1/namespaces/" + ns + "/services/lockstep-" + std::to_string(job)).ok();
  }

  // Runs a two-node job to COMPLETED, playing the kubelet; its id.
  static unsigned long long RunJobToCompletion(Cluster& c, const std::string& ns) {
    unsigned long long id = Submit(c, {"-N", "2", "--gpus-per-node=8", "--wrap", "true"});
    EXPECT_GT(id, 0u);
    EXPECT_TRUE(WaitFor([&] { return JobPods(ns, id).size() == 2; }, kWait));
    for (const auto& [name, pod] : JobPods(ns, id)) SetPodPhase(ns, name, "Succeeded");
    EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
    return id;
  }

  static std::string Env(const Json& pod, const std::string& name) {
    for (const Json& e : pod["spec"]["containers"][0]["env"])
      if (e["name"] == name) return e.value("value", "");
    return "<unset>";
  }

  // lockstepd's cluster.yaml in `c`'s directory: kubernetes mode for the nodes labelled `tag`,
  // its pods in namespace `tag`; `extra`: more lines of its kubernetes section. A test may
  // rewrite it between a KillDaemon() and a StartDaemon().
  static void WriteClusterYaml(Cluster& c, const std::string& tag, const std::string& extra) {
    std::ofstream(c.dir() + "/cluster.yaml")
        << "backend: kubernetes\n"
        << "kubernetes:\n"
        << "  kubeconfig: " << run_dir_ << "/kubeconfig\n"
        << "  namespace: " << tag << "\n"
        << "  node_selector: lockstep-test=" << tag << "\n"
        << "  image: " << job_image_ << "\n"
        << extra << "partitions:\n  - name: gpu\n    nodes: ALL\n    default: true\n"
        << "    max_time: UNLIMITED\n";
  }

  // lockstepd in kubernetes mode (WriteClusterYaml), logging at debug level: the backend's
  // per-pod lines are the tests' barriers (WaitForPodLine). nodes < 0: do not wait for it (a
  // standby).
  std::unique_ptr<Cluster> StartLockstepd(const std::string& tag, int nodes,
                                          const std::string& extra = "") {
    ClusterOptions o;
    o.kill_wait_s = 1;
    o.daemon_args = {"--log-level", "debug"};
    auto c = std::make_unique<Cluster>(o);
    WriteClusterYaml(*c, tag, extra);
    c->Start(/*with_agent=*/false);
    if (nodes >= 0) {
      EXPECT_TRUE(c->WaitNodes("idle", nodes, 30)) << c->Get("/api/v1/nodes").dump();
    }
    return c;
  }

  // The image of jobs without --container-image (kubernetes.image).
  static inline std::string job_image_ = "busybox:default";

  static std::string DaemonLog(Cluster& c) { return c.ReadFile(c.dir() + "/lockstepd.log"); }

  // `lockstep up --backend kubernetes` against the test's apiserver, as a user types it, with
  // `extra` options, its state in `c`'s directory; `lockstep down` when it goes.
  struct LockstepUp {
    LockstepUp(Cluster& cluster, const std::vector<std::string>& extra = {})
        : c(cluster), state(cluster.dir() + "/up") {
      std::vector<std::string> args = {"up", "--backend", "kubernetes", "--kubeconfig",
                                       run_dir_ + "/kubeconfig", "--state-dir", state};
      args.insert(args.end(), extra.begin(), extra.end());
      result = c.Run(args);
    }
    ~LockstepUp() { c.Run({"down", "--state-dir", state}); }
    Cluster& c;
    const std::string state;
    CommandResult result;  // what `lockstep up` said
  };

  // A barrier for what must not follow a pod change: waits until lockstepd's Kubernetes backend
  // has handled pod `pod` of `job` in phase `phase` (its debug line "pod <pod> job <job> run <r>
  // phase <phase> ..."), by which time a run that this change ended would have been reported
  // (the line then says "-> report"); the line, or "" after kWait.
  static std::string WaitForPodLine(Cluster& c, const std::string& pod, unsigned long long job,
                                    const std::string& phase) {
    const std::string head = "pod " + pod + " job " + std::to_string(job) + " run ";
    const std::string tail = " phase " + phase;
    std::string found;
    WaitFor(
        [&] {
          std::istringstream log(DaemonLog(c));
          for (std::string line; std::getline(log, line);)
            if (Contains(line, head) && Contains(line, tail)) {
              found = line;
              return true;
            }
          return false;
        },
        kWait);
    return found;
  }

  // The messages of the Events with `reason` about pod ns/`pod`.
  static std::vector<std::string> PodEvents(const std::string& ns, const std::string& pod,
                                            const std::string& reason) {
    std::vector<std::string> out;
    Result<Json> list = kc().List("/api/v1/namespaces/" + ns + "/events");
    if (!list.ok()) return out;
    for (const Json& e : (*list)["items"])
      if (e.value("reason", "") == reason &&
          e.value("involvedObject", Json::object()).value("name", "") == pod)
        out.push_back(e.value("message", ""));
    return out;
  }
};

}  // namespace lockstep::testing
