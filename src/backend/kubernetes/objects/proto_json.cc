#include "backend/kubernetes/objects/proto_json.h"

#include <memory>
#include <utility>
#include <vector>

#include "backend/kubernetes/objects/pod_events.h"
#include "common/utf8.h"

namespace lockstep::kube::proto_json {

namespace {

// metav1.Time writes Go's zero time as JSON null, and in protobuf as an empty message, which
// reads as 1970-01-01T00:00:00Z (as Kubernetes' own decoder reads it, the zero time).
bool IsZeroTime(const pb::Time& t) {
  return t.seconds() == 0 && t.nanos() == 0;
}

std::string Utf8(const std::string& value) {
  return FirstNonUtf8Byte(value) ? CoercedToUtf8(value) : value;
}

}  // namespace

Json Text(const std::string& value) {
  return Utf8(value);
}

void Put(Json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = Text(value);
}
void PutInt(Json& j, const char* key, std::int64_t value) {
  if (value != 0) j[key] = value;
}
void PutTrue(Json& j, const char* key, bool value) {
  if (value) j[key] = true;
}
void PutTime(Json& j, const char* key, bool present, const pb::Time& t) {
  if (present && !IsZeroTime(t)) j[key] = FormatRfc3339(t.seconds());
}
void PutStrings(Json& j, const char* key, const Repeated<std::string>& values) {
  if (values.empty()) return;
  Json& a = j[key] = Json::array();
  for (const std::string& v : values) a.push_back(Text(v));
}
void PutStringMap(Json& j, const char* key, const ProtoMap<std::string>& values) {
  if (values.empty()) return;
  Json& m = j[key] = Json::object();
  for (const auto& [k, v] : values) m[Utf8(k)] = Text(v);
}
void PutQuantities(Json& j, const char* key, const ProtoMap<pb::Quantity>& values) {
  if (values.empty()) return;
  Json& m = j[key] = Json::object();
  for (const auto& [k, v] : values) m[Utf8(k)] = Text(v.string());
}
namespace {

Json OwnerReferenceJson(const pb::OwnerReference& o) {
  Json j = {{"apiVersion", Text(o.apiversion())},
            {"kind", Text(o.kind())},
            {"name", Text(o.name())},
            {"uid", Text(o.uid())}};
  if (o.has_controller()) j["controller"] = o.controller();
  if (o.has_blockownerdeletion()) j["blockOwnerDeletion"] = o.blockownerdeletion();
  return j;
}

}  // namespace

Json MetadataJson(const pb::ObjectMeta& m) {
  Json j = Json::object();
  Put(j, "name", m.name());
  Put(j, "generateName", m.generatename());
  Put(j, "namespace", m.namespace_());
  Put(j, "selfLink", m.selflink());
  Put(j, "uid", m.uid());
  Put(j, "resourceVersion", m.resourceversion());
  PutInt(j, "generation", m.generation());
  PutTime(j, "creationTimestamp", m.has_creationtimestamp(), m.creationtimestamp());
  PutTime(j, "deletionTimestamp", m.has_deletiontimestamp(), m.deletiontimestamp());
  if (m.has_deletiongraceperiodseconds())
    j["deletionGracePeriodSeconds"] = m.deletiongraceperiodseconds();
  PutStringMap(j, "labels", m.labels());
  PutStringMap(j, "annotations", m.annotations());
  PutArray(j, "ownerReferences", m.ownerreferences(), OwnerReferenceJson);
  PutStrings(j, "finalizers", m.finalizers());
  Put(j, "clusterName", m.clustername());
  return j;
}

Status CheckFieldIsUtf8(std::string_view kind, std::string_view field, const std::string& value) {
  if (!FirstNonUtf8Byte(value)) return Status::Ok();
  return InvalidArgument("protobuf: " + std::string(kind) + " " + std::string(field) +
                         " is not UTF-8 (" + DescribeNonUtf8(value) + ")");
}

Status CheckIdentityIsUtf8(std::string_view kind, const pb::ObjectMeta& m) {
  LOCKSTEP_RETURN_IF_ERROR(CheckFieldIsUtf8(kind, "metadata.name", m.name()));
  LOCKSTEP_RETURN_IF_ERROR(CheckFieldIsUtf8(kind, "metadata.generateName", m.generatename()));
  LOCKSTEP_RETURN_IF_ERROR(CheckFieldIsUtf8(kind, "metadata.namespace", m.namespace_()));
  LOCKSTEP_RETURN_IF_ERROR(CheckFieldIsUtf8(kind, "metadata.uid", m.uid()));
  LOCKSTEP_RETURN_IF_ERROR(CheckFieldIsUtf8(kind, "metadata.resourceVersion", m.resourceversion()));
  for (const auto& [key, value] : m.labels()) {
    if (!FirstNonUtf8Byte(key) && !FirstNonUtf8Byte(value)) continue;
    // The key in the message is made UTF-8: the message itself must be writable as JSON.
    const std::string field = "metadata.labels[\"" + CoercedToUtf8(key) + "\"]";
    LOCKSTEP_RETURN_IF_ERROR(CheckFieldIsUtf8(kind, field + " (the key)", key));
    LOCKSTEP_RETURN_IF_ERROR(CheckFieldIsUtf8(kind, field, value));
  }
  return Status::Ok();
}

namespace {

google::protobuf::ArenaOptions FirstBlock() {
  constexpr std::size_t kBytes = 64 << 10;  // a large object's messages; more come from malloc
  thread_local std::unique_ptr<char[]> block(new char[kBytes]);
  google::protobuf::ArenaOptions o;
  o.initial_block = block.get();
  o.initial_block_size = kBytes;
  return o;
}

}  // namespace

google::protobuf::Arena& ReusedArena() {
  thread_local google::protobuf::Arena arena(FirstBlock());
  arena.Reset();
  return arena;
}

}  // namespace lockstep::kube::proto_json
