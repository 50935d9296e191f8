#include "backend/kubernetes/objects/pod_proto.h"

#include <cstdint>
#include <utility>

#include "backend/kubernetes/objects/proto_json.h"

namespace lockstep::kube {
namespace {

using proto_json::Json;
using proto_json::Put;
using proto_json::PutArray;
using proto_json::PutInt;
using proto_json::PutQuantities;
using proto_json::PutStringMap;
using proto_json::PutStrings;
using proto_json::PutTime;
using proto_json::PutTrue;
using proto_json::Text;

// What a pod's JSON holds of its spec (DecodePod).
enum class View : std::uint8_t {
  kWhole,      // all that k8s_core.proto declares
  kPlacement,  // containers as what placing reads: name, resources, restartPolicy
  kLife,       // no containers, nodeSelector, affinity, tolerations, overhead
};

// What placing a pod reads of a container: its requests and whether it is a sidecar.
Json ContainerPlacementJson(const pb::Container& c) {
  Json j = {{"name", Text(c.name())}};
  Json resources = Json::object();
  PutQuantities(resources, "limits", c.resources().limits());
  PutQuantities(resources, "requests", c.resources().requests());
  j["resources"] = std::move(resources);
  Put(j, "restartPolicy", c.restartpolicy());
  return j;
}

Json ContainerJson(const pb::Container& c) {
  Json j = ContainerPlacementJson(c);
  Put(j, "image", c.image());
  PutStrings(j, "command", c.command());
  PutStrings(j, "args", c.args());
  Put(j, "workingDir", c.workingdir());
  PutArray(j, "ports", c.ports(), [](const pb::ContainerPort& p) {
    Json port = {{"containerPort", p.containerport()}};
    Put(port, "name", p.name());
    PutInt(port, "hostPort", p.hostport());
    Put(port, "protocol", p.protocol());
    Put(port, "hostIP", p.hostip());
    return port;
  });
  PutArray(j, "env", c.env(), [](const pb::EnvVar& e) {
    Json var = {{"name", Text(e.name())}};
    Put(var, "value", e.value());
    return var;
  });
  Put(j, "terminationMessagePath", c.terminationmessagepath());
  Put(j, "terminationMessagePolicy", c.terminationmessagepolicy());
  Put(j, "imagePullPolicy", c.imagepullpolicy());
  return j;
}

Json RequirementJson(const pb::NodeSelectorRequirement& r) {
  Json j = {{"key", Text(r.key())}, {"operator", Text(r.operator_())}};
  PutStrings(j, "values", r.values());
  return j;
}

Json TermJson(const pb::NodeSelectorTerm& t) {
  Json j = Json::object();
  PutArray(j, "matchExpressions", t.matchexpressions(), RequirementJson);
  PutArray(j, "matchFields", t.matchfields(), RequirementJson);
  return j;
}

Json NodeAffinityJson(const pb::NodeAffinity& a) {
  Json j = Json::object();
  if (a.has_requiredduringschedulingignoredduringexecution()) {
    Json required = {{"nodeSelectorTerms", Json::array()}};
    for (const pb::NodeSelectorTerm& t :
         a.requiredduringschedulingignoredduringexecution().nodeselectorterms())
      required["nodeSelectorTerms"].push_back(TermJson(t));
    j["requiredDuringSchedulingIgnoredDuringExecution"] = std::move(required);
  }
  PutArray(j, "preferredDuringSchedulingIgnoredDuringExecution",
           a.preferredduringschedulingignoredduringexecution(),
           [](const pb::PreferredSchedulingTerm& p) {
             return Json{{"weight", p.weight()}, {"preference", TermJson(p.preference())}};
           });
  return j;
}

Json TolerationJson(const pb::Toleration& t) {
  Json j = Json::object();
  Put(j, "key", t.key());
  Put(j, "operator", t.operator_());
  Put(j, "value", t.value());
  Put(j, "effect", t.effect());
  if (t.has_tolerationseconds()) j["tolerationSeconds"] = t.tolerationseconds();
  return j;
}

Json SpecJson(const pb::PodSpec& s, View view) {
  Json j = Json::object();
  if (view != View::kLife) {
    Json (*container)(const pb::Container&) =
        view == View::kWhole ? ContainerJson : ContainerPlacementJson;
    j["containers"] = Json::array();
    for (const pb::Container& c : s.containers()) j["containers"].push_back(container(c));
    PutArray(j, "initContainers", s.initcontainers(), container);
    PutStringMap(j, "nodeSelector", s.nodeselector());
    if (s.has_affinity() && s.affinity().has_nodeaffinity())
      j["affinity"] = {{"nodeAffinity", NodeAffinityJson(s.affinity().nodeaffinity())}};
    PutArray(j, "tolerations", s.tolerations(), TolerationJson);
    PutQuantities(j, "overhead", s.overhead());
  }
  Put(j, "restartPolicy", s.restartpolicy());
  if (s.has_terminationgraceperiodseconds())
    j["terminationGracePeriodSeconds"] = s.terminationgraceperiodseconds();
  if (s.has_activedeadlineseconds()) j["activeDeadlineSeconds"] = s.activedeadlineseconds();
  Put(j, "dnsPolicy", s.dnspolicy());
  Put(j, "serviceAccountName", s.serviceaccountname());
  Put(j, "serviceAccount", s.serviceaccount());
  Put(j, "nodeName", s.nodename());
  PutTrue(j, "hostNetwork", s.hostnetwork());
  Put(j, "hostname", s.hostname());
  Put(j, "subdomain", s.subdomain());
  Put(j, "schedulerName", s.schedulername());
  Put(j, "priorityClassName", s.priorityclassname());
  if (s.has_priority()) j["priority"] = s.priority();
  Put(j, "runtimeClassName", s.runtimeclassname());
  if (s.has_enableservicelinks()) j["enableServiceLinks"] = s.enableservicelinks();
  Put(j, "preemptionPolicy", s.preemptionpolicy());
  return j;
}

Json ContainerStateJson(const pb::ContainerState& s) {
  Json j = Json::object();
  if (s.has_waiting()) {
    Json w = Json::object();
    Put(w, "reason", s.waiting().reason());
    Put(w, "message", s.waiting().message());
    j["waiting"] = std::move(w);
  }
  if (s.has_running()) {
    Json r = Json::object();
    PutTime(r, "startedAt", s.running().has_startedat(), s.running().startedat());
    j["running"] = std::move(r);
  }
  if (s.has_terminated()) {
    const pb::ContainerStateTerminated& t = s.terminated();
    Json r = {{"exitCode", t.exitcode()}};
    PutInt(r, "signal", t.signal());
    Put(r, "reason", t.reason());
    Put(r, "message", t.message());
    PutTime(r, "startedAt", t.has_startedat(), t.startedat());
    PutTime(r, "finishedAt", t.has_finishedat(), t.finishedat());
    Put(r, "containerID", t.containerid());
    j["terminated"] = std::move(r);
  }
  return j;
}

Json ContainerStatusJson(const pb::ContainerStatus& c) {
  Json j = {{"name", Text(c.name())},
            {"state", ContainerStateJson(c.state())},
            {"lastState", ContainerStateJson(c.laststate())},
            {"ready", c.ready()},
            {"restartCount", c.restartcount()},
            {"image", Text(c.image())},
            {"imageID", Text(c.imageid())}};
  Put(j, "containerID", c.containerid());
  if (c.has_started()) j["started"] = c.started();
  return j;
}

Json StatusJson(const pb::PodStatus& s) {
  Json j = Json::object();
  Put(j, "phase", s.phase());
  PutArray(j, "conditions", s.conditions(), [](const pb::PodCondition& c) {
    Json cond = {{"type", Text(c.type())}, {"status", Text(c.status())}};
    PutTime(cond, "lastProbeTime", c.has_lastprobetime(), c.lastprobetime());
    PutTime(cond, "lastTransitionTime", c.has_lasttransitiontime(), c.lasttransitiontime());
    Put(cond, "reason", c.reason());
    Put(cond, "message", c.message());
    return cond;
  });
  Put(j, "message", s.message());
  Put(j, "reason", s.reason());
  Put(j, "nominatedNodeName", s.nominatednodename());
  Put(j, "hostIP", s.hostip());
  Put(j, "podIP", s.podip());
  PutArray(j, "podIPs", s.podips(), [](const pb::PodIP& ip) {
    return Json{{"ip", Text(ip.ip())}};
  });
  PutTime(j, "startTime", s.has_starttime(), s.starttime());
  PutArray(j, "initContainerStatuses", s.initcontainerstatuses(), ContainerStatusJson);
  PutArray(j, "containerStatuses", s.containerstatuses(), ContainerStatusJson);
  Put(j, "qosClass", s.qosclass());
  return j;
}

// `scheduling`: the scheduler's view (SchedulingPodJsonFromProto), else the whole pod.
Result<Json> DecodePod(std::string_view message, bool scheduling) {
  const pb::Pod* pod = proto_json::ParseInReusedArena<pb::Pod>(message);
  if (pod == nullptr) return InvalidArgument("protobuf: malformed Pod");
  LOCKSTEP_RETURN_IF_ERROR(proto_json::CheckIdentityIsUtf8("Pod", pod->metadata()));
  // The node a pod is bound to, which the apiserver validates as a name too.
  LOCKSTEP_RETURN_IF_ERROR(
      proto_json::CheckFieldIsUtf8("Pod", "spec.nodeName", pod->spec().nodename()));
  const View view = !scheduling                     ? View::kWhole
                    : pod->spec().nodename().empty() ? View::kPlacement
                                                     : View::kLife;
  Json j = Json::object();
  j["metadata"] = proto_json::MetadataJson(pod->metadata());
  j["spec"] = SpecJson(pod->spec(), view);
  j["status"] = StatusJson(pod->status());
  return j;
}

}  // namespace

Result<Json> PodJsonFromProto(std::string_view message) {
  return DecodePod(message, /*scheduling=*/false);
}

Result<Json> SchedulingPodJsonFromProto(std::string_view message) {
  return DecodePod(message, /*scheduling=*/true);
}

}  // namespace lockstep::kube
