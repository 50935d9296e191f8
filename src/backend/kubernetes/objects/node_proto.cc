#include "backend/kubernetes/objects/node_proto.h"

#include "backend/kubernetes/objects/proto_json.h"

namespace lockstep::kube {
namespace {

using proto_json::Json;
using proto_json::Put;
using proto_json::PutArray;
using proto_json::PutQuantities;
using proto_json::PutStrings;
using proto_json::PutTime;
using proto_json::PutTrue;
using proto_json::Text;

Json TaintJson(const pb::Taint& t) {
  Json j = {{"key", Text(t.key())}, {"effect", Text(t.effect())}};
  Put(j, "value", t.value());
  PutTime(j, "timeAdded", t.has_timeadded(), t.timeadded());
  return j;
}

Json SpecJson(const pb::NodeSpec& s) {
  Json j = Json::object();
  Put(j, "podCIDR", s.podcidr());
  PutStrings(j, "podCIDRs", s.podcidrs());
  Put(j, "providerID", s.providerid());
  Put(j, "externalID", s.externalid());
  PutTrue(j, "unschedulable", s.unschedulable());
  PutArray(j, "taints", s.taints(), TaintJson);
  return j;
}

Json ConditionJson(const pb::NodeCondition& c) {
  Json j = {{"type", Text(c.type())}, {"status", Text(c.status())}};
  PutTime(j, "lastHeartbeatTime", c.has_lastheartbeattime(), c.lastheartbeattime());
  PutTime(j, "lastTransitionTime", c.has_lasttransitiontime(), c.lasttransitiontime());
  Put(j, "reason", c.reason());
  Put(j, "message", c.message());
  return j;
}

Json StatusJson(const pb::NodeStatus& s) {
  Json j = Json::object();
  PutQuantities(j, "capacity", s.capacity());
  PutQuantities(j, "allocatable", s.allocatable());
  Put(j, "phase", s.phase());
  PutArray(j, "conditions", s.conditions(), ConditionJson);
  PutArray(j, "addresses", s.addresses(), [](const pb::NodeAddress& a) {
    return Json{{"type", Text(a.type())}, {"address", Text(a.address())}};
  });
  return j;
}

}  // namespace

Result<Json> NodeJsonFromProto(std::string_view message) {
  const pb::Node* node = proto_json::ParseInReusedArena<pb::Node>(message);
  if (node == nullptr) return InvalidArgument("protobuf: malformed Node");
  LOCKSTEP_RETURN_IF_ERROR(proto_json::CheckIdentityIsUtf8("Node", node->metadata()));
  return Json{{"metadata", proto_json::MetadataJson(node->metadata())},
              {"spec", SpecJson(node->spec())},
              {"status", StatusJson(node->status())}};
}

}  // namespace lockstep::kube
