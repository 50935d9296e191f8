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

}  // namespace

void Put(Json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
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
  if (!values.empty()) j[key] = Json(std::vector<std::string>(values.begin(), values.end()));
}
void PutStringMap(Json& j, const char* key, const ProtoMap<std::string>& values) {
  if (values.empty()) return;
  Json& m = j[key] = Json::object();
  for (const auto& [k, v] : values) m[k] = v;
}
void PutQuantities(Json& j, const char* key, const ProtoMap<pb::Quantity>& values) {
  if (values.empty()) return;
  Json& m = j[key] = Json::object();
  for (const auto& [k, v] : values) m[k] = v.string();
}
namespace {

Json OwnerReferenceJson(const pb::OwnerReference& o) {
  Json j = {
      {"apiVersion", o.apiversion()}, {"kind", o.kind()}, {"name", o.name()}, {"uid", o.uid()}};
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
    // The key in the message is made UTF-8: the message itself must be writable as JSON.
    const std::string field = "metadata.labels[\"" + CoercedToUtf8(key) + "\"]";
    LOCKSTEP_RETURN_IF_ERROR(CheckFieldIsUtf8(kind, field + " (the key)", key));
    LOCKSTEP_RETURN_IF_ERROR(CheckFieldIsUtf8(kind, field, value));
  }
  return Status::Ok();
}

namespace {

// `j`'s object keys that are not UTF-8, made so; the values under them are kept.
void CoerceKeys(Json& j) {
  std::vector<std::string> bad;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (FirstNonUtf8Byte(it.key())) bad.push_back(it.key());
  for (const std::string& key : bad) {
    Json value = std::move(j[key]);
    j.erase(key);
    j[CoercedToUtf8(key)] = std::move(value);
  }
}

}  // namespace

void CoerceToUtf8(Json& j) {
  if (j.is_string()) {
    std::string& s = j.get_ref<std::string&>();
    if (FirstNonUtf8Byte(s)) s = CoercedToUtf8(s);
  } else if (j.is_object()) {
    CoerceKeys(j);
    for (Json& v : j) CoerceToUtf8(v);
  } else if (j.is_array()) {
    for (Json& v : j) CoerceToUtf8(v);
  }
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
