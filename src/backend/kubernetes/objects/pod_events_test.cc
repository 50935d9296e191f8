#include "backend/kubernetes/objects/pod_events.h"

#include <gtest/gtest.h>

namespace lockstep::kube {
namespace {

using nlohmann::json;

// A lockstep pod as the apiserver returns it after the kubelet has written `status`.
json Pod(const std::string& phase, const json& container_state, const json& pod_status = {}) {
  json pod = json::parse(R"({
    "kind": "Pod", "apiVersion": "v1",
    "metadata": {"name": "lockstep-1234-0", "namespace": "research",
                 "labels": {"lockstep.dev/job-id": "1234", "lockstep.dev/rank": "0"}},
    "spec": {"nodeName": "gpu-a-07", "schedulerName": "lockstep", "restartPolicy": "Never",
             "containers": [{"name": "job", "image": "busybox"}]},
    "status": {"hostIP": "10.0.7.21", "podIP": "10.244.7.40",
               "startTime": "2024-05-01T12:00:01Z", "qosClass": "Guaranteed"}
  })");
  pod["status"]["phase"] = phase;
  if (!container_state.is_null()) {
    pod["status"]["containerStatuses"] = json::array(
        {{{"name", "job"},
          {"state", container_state},
          {"lastState", json::object()},
          {"ready", false},
          {"restartCount", 0},
          {"image", "docker.io/library/busybox:latest"},
          {"imageID",
           "docker.io/library/"
           "busybox@sha256:3fbc632167424a6d997e74f52b878d7cc478225cffac6bc977eedfe51c7f4e79"},
          {"containerID", "containerd://5f1e0d9c8b7a6"},
          {"started", false}}});
  }
  for (auto it = pod_status.begin(); pod_status.is_object() && it != pod_status.end(); ++it)
    pod["status"][it.key()] = *it;
  return pod;
}

json Terminated(int code, const std::string& reason) {
  return {{"terminated",
           {{"exitCode", code},
            {"reason", reason},
            {"startedAt", "2024-05-01T12:00:02Z"},
            {"finishedAt", "2024-05-01T12:10:02Z"},
            {"containerID", "containerd://5f1e0d9c8b7a6"}}}};
}

PodStatusEvent Event(const json& pod, const std::string& container = "job") {
  Result<PodStatusEvent> e = PodStatusEventOf(pod, container);
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? *e : PodStatusEvent{};
}

TEST(PodEvents, PendingThenRunning) {
  PodStatusEvent e = Event(Pod("Pending", {{"waiting", {{"reason", "ContainerCreating"}}}}));
  EXPECT_EQ(e.phase, PodPhase::kPending);
  EXPECT_FALSE(e.started);
  EXPECT_FALSE(e.ended);
  EXPECT_FALSE(e.cannot_start);
  EXPECT_EQ(e.reason, "ContainerCreating");
  EXPECT_EQ(e.node, "gpu-a-07");

  e = Event(Pod("Running", {{"running", {{"startedAt", "2024-05-01T12:00:02Z"}}}}));
  EXPECT_EQ(e.phase, PodPhase::kRunning);
  EXPECT_TRUE(e.started);
  EXPECT_FALSE(e.ended);
  EXPECT_STREQ(PodPhaseName(e.phase), "Running");

  json bare = Pod("Pending", nullptr);
  bare["status"].erase("phase");
  EXPECT_EQ(Event(bare).phase, PodPhase::kPending);
}

TEST(PodEvents, SucceededAndFailedExitCodes) {
  PodStatusEvent e = Event(Pod("Succeeded", Terminated(0, "Completed")));
  EXPECT_TRUE(e.started);
  EXPECT_TRUE(e.ended);
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(e.finished_at, 1714565402);  // 2024-05-01T12:10:02Z
  EXPECT_EQ(Event(Pod("Running", {{"running", json::object()}})).finished_at, 0);

  e = Event(Pod("Failed", Terminated(3, "Error")));
  EXPECT_EQ(e.phase, PodPhase::kFailed);
  EXPECT_EQ(e.exit_code, 3);
  EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(e.reason, "Error");

  e = Event(Pod("Failed", Terminated(143, "Error")));  // SIGTERM
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_EQ(e.signal, 15);

  e = Event(Pod("Failed", Terminated(255, "Error")));  // exit(255), not a signal
  EXPECT_EQ(e.exit_code, 255);
  EXPECT_EQ(e.signal, 0);

  json with_signal = Terminated(0, "Error");
  with_signal["terminated"]["signal"] = 6;
  e = Event(Pod("Failed", with_signal));
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_EQ(e.signal, 6);
}

TEST(PodEvents, OomKilled) {
  PodStatusEvent e = Event(Pod("Failed", Terminated(137, "OOMKilled")));
  EXPECT_TRUE(e.oom);
  EXPECT_EQ(e.signal, 9);
  EXPECT_EQ(e.exit_code, 0);
  EXPECT_EQ(e.reason, "OOMKilled");
}

TEST(PodEvents, EvictedAndDeadlineExceeded) {
  PodStatusEvent e = Event(Pod("Failed", Terminated(137, "Error"),
                               {{"reason", "Evicted"},
                                {"message",
                                 "The node was low on resource: memory. "
                                 "Container job was using 61Gi, which exceeds its "
                                 "request of 60Gi. "}}));
  EXPECT_TRUE(e.evicted);
  EXPECT_EQ(e.signal, 9);
  EXPECT_EQ(e.reason, "Evicted");
  EXPECT_NE(e.message.find("low on resource"), std::string::npos);

  // Past activeDeadlineSeconds; the container's state was never written as terminated.
  e = Event(Pod("Failed", {{"running", {{"startedAt", "2024-05-01T12:00:02Z"}}}},
                {{"reason", "DeadlineExceeded"},
                 {"message", "Pod was active on the node longer than the specified deadline"}}));
  EXPECT_TRUE(e.deadline_exceeded);
  EXPECT_TRUE(e.started);
  EXPECT_TRUE(e.ended);
  EXPECT_EQ(e.signal, 9);
  EXPECT_EQ(e.exit_code, 0);
}

TEST(PodEvents, RefusedByTheKubelet) {
  // Bound to a node that cannot run it: Failed before any container ran.
  PodStatusEvent e = Event(Pod("Failed", nullptr,
                               {{"reason", "OutOfnvidia.com/gpu"},
                                {"message",
                                 "Pod Node didn't have enough resource: "
                                 "nvidia.com/gpu, requested: 4, used: 6, "
                                 "capacity: 8"}}));
  EXPECT_FALSE(e.started);
  EXPECT_TRUE(e.ended);
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_EQ(e.signal, 0);
  EXPECT_EQ(e.reason, "OutOfnvidia.com/gpu");
}

TEST(PodEvents, CannotStart) {
  PodStatusEvent e =
      Event(Pod("Pending", {{"waiting",
                             {{"reason", "InvalidImageName"},
                              {"message",
                               "Failed to apply default image tag \"Bad Image\": couldn't "
                               "parse image reference"}}}}));
  EXPECT_TRUE(e.cannot_start);
  EXPECT_EQ(e.reason, "InvalidImageName");
  e = Event(Pod("Pending", {{"waiting", {{"reason", "ImagePullBackOff"}}}}));
  EXPECT_FALSE(e.cannot_start);  // may clear by itself
}

TEST(PodEvents, AllContainersOrAMissingOne) {
  json pod = Pod("Failed", Terminated(0, "Completed"));
  json side = pod["status"]["containerStatuses"][0];
  side["name"] = "sidecar";
  side["state"] = Terminated(2, "Error");
  pod["status"]["containerStatuses"].push_back(side);
  PodStatusEvent e = Event(pod, "");
  EXPECT_EQ(e.exit_code, 2);  // the first that failed
  e = Event(pod, "job");
  EXPECT_EQ(e.exit_code, 1);  // Failed although "job" exited 0
  Result<PodStatusEvent> missing = PodStatusEventOf(pod, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "pod research/lockstep-1234-0: no status of container \"nope\"");
}

TEST(PodEvents, Rfc3339Times) {
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339("2024-05-01T12:10:02Z"), 1714565402);
  EXPECT_EQ(ParseRfc3339("2024-05-01T12:10:02.123456Z"), 1714565402);
  EXPECT_EQ(FormatRfc3339(1714565402), "2024-05-01T12:10:02Z");
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(ParseRfc3339("2024-05-01T14:10:02+02:00"), 1714565402);
  for (const char* bad : {"", "2024-05-01", "2024-05-01T12:10:02", "2024-13-01T00:00:00Z",
                          "2024-05-01T12:10:02Zjunk", "yesterday"})
    EXPECT_FALSE(ParseRfc3339(bad)) << bad;
}

}  // namespace
}  // namespace lockstep::kube
