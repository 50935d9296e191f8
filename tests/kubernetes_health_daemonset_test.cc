// The health-only agent of deploy/kubernetes/health-agent.yaml as a real DaemonSet pod on the real
// node (fixture: kubernetes_daemonset_fixture.h): scripts/image.sh's image, the node labelled as GPU
// Feature Discovery would, lockstepd in kubernetes mode serving HTTPS. The pod becomes Ready, runs
// as the manifest says (non-root, read-only root file system), its reports reach lockstepd, and
// the site's health program from the ConfigMap `lockstep-health-program` drains the Node in
// lockstep when it fails and resumes it when it passes again.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/kubernetes_daemonset_fixture.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kTag[] = "node-h";
constexpr char kGpuLabel[] = "nvidia.com/gpu.present";
constexpr char kPodSelector[] = "app.kubernetes.io/component=health-agent";

class HealthDaemonSetTest : public DaemonSetTest {
 protected:
  static void LabelGpuNode(bool gpu) {
    Json value = gpu ? Json("true") : Json(nullptr);  // null removes the label
    Json patch = {{"metadata", {{"labels", {{kGpuLabel, value}}}}}};
    Result<Json> r = kc().Patch(kube::NodePath(node_), kube::PatchType::kStrategicMerge, patch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  static Json AgentPods() { return PodsOf(kPodSelector); }

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
  // lockstepd with the health program where the DaemonSet mounts it.
  std::unique_ptr<Cluster> cluster = StartServing(
      kTag, "health:\n  program: /etc/lockstep/health/check.sh\n  interval: 1\n");
  Cluster& c = *cluster;
  ASSERT_NO_FATAL_FAILURE(CreateSecrets(c, "lockstep-health-agent"));
  WriteHealthProgram(dir, "echo all good\nexit 0\n");
  ASSERT_NO_FATAL_FAILURE(ApplyAgent("health-agent.yaml", "lockstep-health-agent"));
  EXPECT_TRUE(AgentPods().empty());  // no GPU node yet: no pod
  LabelGpuNode(true);

  const std::string pod = WaitReadyPod(kPodSelector);
  ASSERT_FALSE(pod.empty()) << AgentPods().dump() << "\n"
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
  DeleteAgent("lockstep-health-agent", kPodSelector);
  EXPECT_EQ(Kubectl("-n lockstep delete secret lockstepd-tls lockstep-health-agent"), 0);
  EXPECT_EQ(Kubectl("-n lockstep delete configmap lockstep-health-program"), 0);
}

}  // namespace
}  // namespace lockstep::testing
