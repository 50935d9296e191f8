// Pods and Nodes read in protobuf (pod_proto.h, node_proto.h) against the same objects in JSON,
// from a real kube-apiserver (client/test_apiserver.h): every field the decoders promise must
// come out as the JSON has it.
#include "backend/kubernetes/objects/pod_proto.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "backend/kubernetes/client/informer.h"
#include "backend/kubernetes/client/proto_codec.h"
#include "backend/kubernetes/client/test_apiserver.h"
#include "backend/kubernetes/objects/node_proto.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;

// Empty values ("", 0, false, null, {}, []) out, recursively: pod_proto.h leaves some out where
// the JSON carries them.
Json DropEmpty(const Json& j) {
  if (j.is_object()) {
    Json out = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      Json v = DropEmpty(it.value());
      const bool empty = v.is_null() ||
                         (v.is_string() && v.get_ref<const std::string&>().empty()) ||
                         (v.is_number() && v == 0) || (v.is_boolean() && !v.get<bool>()) ||
                         (v.is_structured() && v.empty());
      if (!empty) out[it.key()] = std::move(v);
    }
    return out;
  }
  if (j.is_array()) {
    Json out = Json::array();
    for (const Json& v : j) out.push_back(DropEmpty(v));
    return out;
  }
  return j;
}

// The JSON pod without what pod_proto.h does not decode.
Json Decodable(Json pod) {
  pod["metadata"].erase("managedFields");
  Json& spec = pod["spec"];
  for (const char* k : {"volumes", "securityContext", "imagePullSecrets", "hostAliases",
                        "dnsConfig", "readinessGates", "topologySpreadConstraints",
                        "ephemeralContainers", "automountServiceAccountToken", "hostPID", "hostIPC",
                        "shareProcessNamespace", "setHostnameAsFQDN"})
    spec.erase(k);
  if (spec.contains("affinity")) {
    spec["affinity"].erase("podAffinity");
    spec["affinity"].erase("podAntiAffinity");
  }
  for (const char* list : {"containers", "initContainers"}) {
    if (!spec.contains(list)) continue;
    for (Json& c : spec[list]) {
      for (const char* k :
           {"volumeMounts", "volumeDevices", "securityContext", "livenessProbe", "readinessProbe",
            "startupProbe", "lifecycle", "envFrom", "stdin", "stdinOnce", "tty"})
        c.erase(k);
      if (c.contains("env"))
        for (Json& e : c["env"]) e.erase("valueFrom");
    }
  }
  pod["status"].erase("ephemeralContainerStatuses");
  return pod;
}

class PodProtoTest : public testing::ApiServerTest {
 protected:
  static constexpr const char* kNs = "proto";

  // The namespace's pods by name, listed in JSON (decoder null) or protobuf.
  static std::map<std::string, Json> ListPods(ProtoObjectDecoder decoder) {
    ListOptions lo;
    lo.drop_managed_fields = decoder == nullptr;
    lo.protobuf = decoder;
    std::map<std::string, Json> pods;
    Result<Json> list = admin().ListEach(PodsPath(kNs), lo, [&](Json p) {
      const std::string name = p["metadata"]["name"];
      pods[name] = std::move(p);
    });
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    if (list.ok()) {
      EXPECT_FALSE((*list)["metadata"].value("resourceVersion", "").empty());
    }
    return pods;
  }

  static Json RichPod() {
    Json res = {{"cpu", "2500m"}, {"memory", "3Gi"}, {"nvidia.com/gpu", "1"}};
    Json term = {{"matchExpressions",
                  {{{"key", "gpu"}, {"operator", "In"}, {"values", {"a100", "h100"}}},
                   {{"key", "spare"}, {"operator", "DoesNotExist"}}}}};
    return {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata",
         {{"name", "rich"},
          {"namespace", kNs},
          {"labels", {{"app", "train"}, {"scheduling.x-k8s.io/pod-group", "pg"}}},
          {"annotations", {{"lockstep.dev/gang-size", "8"}, {"note", ""}}},
          {"finalizers", {"lockstep.dev/test"}},
          {"ownerReferences",
           {{{"apiVersion", "batch/v1"},
             {"kind", "Job"},
             {"name", "j"},
             {"uid", "3c1c0f4e-0000-4000-8000-000000000001"},
             {"controller", true},
             {"blockOwnerDeletion", false}}}}}},
        {"spec",
         {{"schedulerName", "lockstep"},
          {"priorityClassName", "proto-high"},
          {"activeDeadlineSeconds", 3600},
          {"terminationGracePeriodSeconds", 0},
          {"hostname", "rich-0"},
          {"subdomain", "workers"},
          {"nodeSelector", {{"pool", "a"}, {"zone", "z1"}}},
          {"affinity",
           {{"nodeAffinity",
             {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", {term}}}},
              {"preferredDuringSchedulingIgnoredDuringExecution",
               {{{"weight", 10},
                 {"preference",
                  {{"matchFields",
                    {{{"key", "metadata.name"},
                      {"operator", "NotIn"},
                      {"values", {"n9"}}}}}}}}}}}}}},
          {"tolerations",
           {{{"key", "dedicated"},
             {"operator", "Equal"},
             {"value", "ml"},
             {"effect", "NoSchedule"}},
            {{"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 0}}}},
          {"initContainers",
           {{{"name", "fetch"},
             {"image", "busybox"},
             {"command", {"sh", "-c"}},
             {"args", {"echo hi"}},
             {"resources", {{"requests", {{"cpu", "1"}}}}}}}},
          {"containers",
           {{{"name", "main"},
             {"image", "trainer:1"},
             {"workingDir", "/w"},
             {"ports", {{{"name", "rdzv"}, {"containerPort", 29500}, {"protocol", "TCP"}}}},
             {"env",
              {{{"name", "A"}, {"value", "1"}},
               {{"name", "EMPTY"}},
               {{"name", "NODE"},
                {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}}}},
             {"resources", {{"requests", res}, {"limits", res}}}},
            {{"name", "side"}, {"image", "busybox"}}}}}},
    };
  }
};

TEST_F(PodProtoTest, PodsReadInProtobufEqualTheirJson) {
  CreateNamespace(kNs);
  ASSERT_TRUE(admin()
                  .Create("/apis/scheduling.k8s.io/v1/priorityclasses",
                          {{"apiVersion", "scheduling.k8s.io/v1"},
                           {"kind", "PriorityClass"},
                           {"metadata", {{"name", "proto-high"}}},
                           {"value", 1000}})
                  .ok());
  ASSERT_TRUE(
      admin()
          .Create(NodesPath(),
                  {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "proto-node"}}}})
          .ok());
  ASSERT_TRUE(admin().Create(PodsPath(kNs), RichPod()).ok());
  Json plain = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"generateName", "plain-"}, {"namespace", kNs}}},
                {"spec",
                 {{"containers",
                   {{{"name", "c"},
                     {"image", "busybox"},
                     {"resources", {{"requests", {{"cpu", "250m"}}}}}}}}}}};
  Result<Json> made = admin().Create(PodsPath(kNs), plain);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  // Bound and run, as a kubelet reports it: conditions, container states of every kind.
  ASSERT_TRUE(admin().Bind(kNs, "rich", "proto-node").ok());
  Json status = {
      {"phase", "Running"},
      {"hostIP", "10.0.0.7"},
      {"podIP", "10.244.0.9"},
      {"podIPs", {{{"ip", "10.244.0.9"}}}},
      {"startTime", "2026-12-01T10:00:00Z"},
      {"message", "m"},
      {"reason", "r"},
      {"conditions",
       {{{"type", "Ready"},
         {"status", "False"},
         {"lastTransitionTime", "2026-12-01T10:00:05Z"},
         {"reason", "ContainersNotReady"}}}},
      {"initContainerStatuses",
       {{{"name", "fetch"},
         {"ready", true},
         {"restartCount", 0},
         {"image", "busybox"},
         {"imageID", "docker://sha256:1"},
         {"state",
          {{"terminated",
            {{"exitCode", 0},
             {"reason", "Completed"},
             {"startedAt", "2026-12-01T10:00:01Z"},
             {"finishedAt", "2026-12-01T10:00:02Z"}}}}}}}},
      {"containerStatuses",
       {{{"name", "main"},
         {"ready", false},
         {"restartCount", 2},
         {"image", "trainer:1"},
         {"imageID", "docker://sha256:2"},
         {"containerID", "docker://c1"},
         {"started", true},
         {"state", {{"running", {{"startedAt", "2026-12-01T10:00:03Z"}}}}},
         {"lastState",
          {{"terminated", {{"exitCode", 137}, {"signal", 9}, {"reason", "OOMKilled"}}}}}},
        {{"name", "side"},
         {"ready", false},
         {"restartCount", 0},
         {"image", "busybox"},
         {"imageID", ""},
         {"state", {{"waiting", {{"reason", "ErrImagePull"}, {"message", "no"}}}}}}}}};
  ASSERT_TRUE(
      admin()
          .Patch(PodPath(kNs, "rich") + "/status", PatchType::kStrategicMerge, {{"status", status}})
          .ok());
  // Deleted, held by its finalizer: deletionTimestamp and deletionGracePeriodSeconds.
  ASSERT_TRUE(admin().Delete(PodPath(kNs, "rich")).ok());

  std::map<std::string, Json> json = ListPods(nullptr);
  std::map<std::string, Json> proto = ListPods(&PodJsonFromProto);
  ASSERT_EQ(json.size(), 2u);
  ASSERT_EQ(proto.size(), 2u);
  for (auto& [name, pod] : json) {
    ASSERT_TRUE(proto.count(name)) << name;
    Json decoded = proto[name];
    decoded.erase("apiVersion");
    decoded.erase("kind");
    pod.erase("apiVersion");
    pod.erase("kind");
    EXPECT_EQ(DropEmpty(decoded), DropEmpty(Decodable(pod))) << name;
  }
  const Json& rich = proto["rich"];
  EXPECT_EQ(rich["spec"]["priority"], 1000);
  EXPECT_EQ(rich["spec"]["nodeName"], "proto-node");
  EXPECT_TRUE(rich["metadata"].contains("deletionTimestamp"));
  // An exit code of 0 is kept: "terminated" without it would read as unknown.
  EXPECT_EQ(rich["status"]["initContainerStatuses"][0]["state"]["terminated"]["exitCode"], 0);

  // Paged (a page per pod), as an informer re-lists from etcd: the same pods.
  ListOptions paged;
  paged.limit = 1;
  paged.protobuf = &PodJsonFromProto;
  Result<Json> all = admin().ListAll(PodsPath(kNs), paged);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ((*all)["items"].size(), 2u);
  for (const Json& p : (*all)["items"]) EXPECT_EQ(p, proto[p["metadata"]["name"]]);
  EXPECT_FALSE((*all)["metadata"].value("resourceVersion", "").empty());

  // A scheduler's view: the bound pod without what placing it read, the unbound one with
  // only what placing reads of its containers.
  std::map<std::string, Json> scheduling = ListPods(&SchedulingPodJsonFromProto);
  ASSERT_EQ(scheduling.size(), 2u);
  Json bound = proto["rich"];
  for (const char* k :
       {"containers", "initContainers", "nodeSelector", "affinity", "tolerations", "overhead"}) {
    EXPECT_TRUE(k == std::string("overhead") || bound["spec"].contains(k)) << k;
    bound["spec"].erase(k);
  }
  EXPECT_EQ(scheduling["rich"], bound);
  EXPECT_EQ(scheduling["rich"]["spec"]["nodeName"], "proto-node");
  EXPECT_EQ(scheduling["rich"]["status"]["containerStatuses"].size(), 2u);
  const std::string plain_name = (*made)["metadata"]["name"];
  Json unbound = proto[plain_name];
  for (Json& c : unbound["spec"]["containers"]) {
    Json placement = {{"name", c["name"]}, {"resources", c["resources"]}};
    c = std::move(placement);
  }
  EXPECT_EQ(scheduling[plain_name], unbound);
  EXPECT_EQ(scheduling[plain_name]["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "250m");
  EXPECT_FALSE(scheduling[plain_name]["spec"]["containers"][0].contains("image"));

  // Clean up for the watch below: the finalizer goes, the pod with it.
  ASSERT_TRUE(
      admin()
          .Patch(PodPath(kNs, "rich"), PatchType::kMerge, {{"metadata", {{"finalizers", nullptr}}}})
          .ok());
}

TEST_F(PodProtoTest, AnInformerInProtobufSeesWhatOneInJsonSees) {
  CreateNamespace("proto-watch");
  auto pod = [](const std::string& name) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "proto-watch"}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  };
  ASSERT_TRUE(admin().Create(PodsPath("proto-watch"), pod("before")).ok());
  InformerOptions io;
  io.path = PodsPath("proto-watch");
  io.protobuf = &PodJsonFromProto;
  std::mutex mu;
  std::map<std::string, std::string> phases;  // name -> phase ("gone" once deleted)
  InformerHandlers h;
  auto seen = [&](const Json& p, bool present) {
    std::lock_guard<std::mutex> lock(mu);
    phases[p["metadata"]["name"]] = present ? p["status"].value("phase", "") : "gone";
  };
  h.on_add = [&](const Json& p) { seen(p, true); };
  h.on_update = [&](const Json&, const Json& p) { seen(p, true); };
  h.on_delete = [&](const Json& p) { seen(p, false); };
  Informer informer(&admin(), io, h);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(30)));
  ASSERT_TRUE(admin().Create(PodsPath("proto-watch"), pod("after")).ok());
  ASSERT_TRUE(admin()
                  .Patch(PodPath("proto-watch", "after") + "/status", PatchType::kStrategicMerge,
                         {{"status", {{"phase", "Succeeded"}}}})
                  .ok());
  DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(admin().Delete(PodPath("proto-watch", "before"), now).ok());
  auto phase = [&](const std::string& name) {
    std::lock_guard<std::mutex> lock(mu);
    return phases.count(name) ? phases[name] : "";
  };
  EXPECT_TRUE(
      testing::WaitFor([&] { return phase("after") == "Succeeded"; }, std::chrono::seconds(30)));
  EXPECT_TRUE(
      testing::WaitFor([&] { return phase("before") == "gone"; }, std::chrono::seconds(30)));
  std::optional<Json> cached = informer.Get("proto-watch/after");
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ((*cached)["kind"], "Pod");
  EXPECT_EQ((*cached)["spec"]["containers"][0]["image"], "busybox");
  EXPECT_EQ(informer.stats().errors, 0);
  informer.Stop();
}

// A Node as a kubelet reports it, with what node_proto.h leaves out (nodeInfo, images,
// daemonEndpoints, volumesInUse) present in the JSON.
TEST_F(PodProtoTest, NodesReadInProtobufEqualTheirJson) {
  Json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", "proto-rich-node"},
                 {"labels", {{"proto-test", "yes"}, {"nvidia.com/gpu.product", "H100"}}},
                 {"annotations", {{"note", "n"}}}}},
               {"spec",
                {{"podCIDR", "10.244.1.0/24"},
                 {"podCIDRs", {"10.244.1.0/24"}},
                 {"providerID", "test://proto-rich-node"},
                 {"unschedulable", true},
                 {"taints",
                  {{{"key", "dedicated"}, {"value", "ml"}, {"effect", "NoSchedule"}},
                   {{"key", "node.kubernetes.io/unreachable"},
                    {"effect", "NoExecute"},
                    {"timeAdded", "2026-12-01T10:00:00Z"}}}}}}};
  ASSERT_TRUE(admin().Create(NodesPath(), node).ok());
  Json res = {{"cpu", "128"}, {"memory", "1Ti"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}};
  Json status = {{"capacity", res},
                 {"allocatable", res},
                 {"conditions",
                  {{{"type", "Ready"},
                    {"status", "True"},
                    {"lastHeartbeatTime", "2026-12-01T10:00:05Z"},
                    {"lastTransitionTime", "2026-12-01T09:00:00Z"},
                    {"reason", "KubeletReady"},
                    {"message", "kubelet is posting ready status"}},
                   {{"type", "MemoryPressure"}, {"status", "False"}}}},
                 {"addresses",
                  {{{"type", "InternalIP"}, {"address", "10.0.0.7"}},
                   {{"type", "Hostname"}, {"address", "proto-rich-node"}}}},
                 {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}},
                 {"nodeInfo",
                  {{"machineID", "m"},
                   {"systemUUID", "s"},
                   {"bootID", "b"},
                   {"kernelVersion", "6.1"},
                   {"osImage", "Debian"},
                   {"containerRuntimeVersion", "containerd://1.7"},
                   {"kubeletVersion", "v1.20.2"},
                   {"kubeProxyVersion", "v1.20.2"},
                   {"operatingSystem", "linux"},
                   {"architecture", "amd64"}}},
                 {"images", {{{"names", {"busybox:1"}}, {"sizeBytes", 4000000}}}},
                 {"volumesInUse", {"kubernetes.io/csi/x"}}};
  ASSERT_TRUE(admin()
                  .Patch(NodePath("proto-rich-node") + "/status", PatchType::kStrategicMerge,
                         {{"status", status}})
                  .ok());
  auto list = [](ProtoObjectDecoder decoder) {
    ListOptions lo;
    lo.label_selector = "proto-test=yes";
    lo.drop_managed_fields = decoder == nullptr;
    lo.protobuf = decoder;
    std::vector<Json> nodes;
    Result<Json> r =
        admin().ListEach(NodesPath(), lo, [&](Json n) { nodes.push_back(std::move(n)); });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return nodes;
  };
  std::vector<Json> json = list(nullptr);
  std::vector<Json> proto = list(&NodeJsonFromProto);
  ASSERT_EQ(json.size(), 1u);
  ASSERT_EQ(proto.size(), 1u);
  Json expected = json[0];
  expected.erase("apiVersion");
  expected.erase("kind");
  expected["metadata"].erase("managedFields");
  for (const char* k :
       {"daemonEndpoints", "nodeInfo", "images", "volumesInUse", "volumesAttached", "config"})
    expected["status"].erase(k);
  EXPECT_EQ(DropEmpty(proto[0]), DropEmpty(expected));
  EXPECT_EQ(proto[0]["spec"]["taints"][1]["timeAdded"], "2026-12-01T10:00:00Z");
  EXPECT_EQ(proto[0]["status"]["allocatable"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(proto[0]["spec"]["unschedulable"], true);
  EXPECT_FALSE(proto[0]["status"].contains("images"));
}

}  // namespace
}  // namespace lockstep::kube
