// What the decoders of core/v1 objects in protobuf (pod_proto.h, node_proto.h) share: the
// API's JSON conventions for the values of k8s_core.proto, its ObjectMeta, and the arena a
// message is parsed into. Internal to objects/: it includes the generated k8s_core.pb.h.
#pragma once

#include <google/protobuf/arena.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "k8s_core.pb.h"

namespace lockstep::kube::proto_json {

using Json = nlohmann::json;
template <class T>
using Repeated = google::protobuf::RepeatedPtrField<T>;
template <class V>
using ProtoMap = google::protobuf::Map<std::string, V>;

// Strings in protobuf are bytes: the apiserver stores what a client sent it in protobuf (the
// kubelet sends a container's termination message as the last 4096 bytes of its file, whatever
// they are), and writes the bytes that are not UTF-8 as U+FFFD only in its JSON. So every string
// the decoders put in their JSON goes through Text (or Put...), which makes it UTF-8 as the
// apiserver's JSON has it, each bad byte a U+FFFD (CoercedToUtf8): what they return can always
// be written out.
Json Text(const std::string& value);

// Most of the API's JSON fields are `omitempty`: set only when not empty.
void Put(Json& j, const char* key, const std::string& value);
void PutInt(Json& j, const char* key, std::int64_t value);
void PutTrue(Json& j, const char* key, bool value);
// metav1.Time as RFC 3339 seconds; Go's zero time (an empty message) is left out, as its JSON
// null would be.
void PutTime(Json& j, const char* key, bool present, const pb::Time& t);
void PutStrings(Json& j, const char* key, const Repeated<std::string>& values);
void PutStringMap(Json& j, const char* key, const ProtoMap<std::string>& values);
void PutQuantities(Json& j, const char* key, const ProtoMap<pb::Quantity>& values);
template <class T, class ToJson>
void PutArray(Json& j, const char* key, const Repeated<T>& items, ToJson to_json) {
  if (items.empty()) return;
  Json& a = j[key] = Json::array();
  for (const T& item : items) a.push_back(to_json(item));
}

// All of ObjectMeta but managedFields.
Json MetadataJson(const pb::ObjectMeta& m);

// Except the fields an object is known and selected by: InvalidArgument naming the field
// ("protobuf: Pod metadata.labels["app"] is not UTF-8 (byte 0xff at offset 3)") when its name,
// generateName, namespace, uid, resourceVersion or labels are not UTF-8. The apiserver validates
// them (DNS names, label syntax) or sets them, so such an object comes from something else; it
// is refused rather than keyed by a name the apiserver would never give it.
Status CheckIdentityIsUtf8(std::string_view kind, const pb::ObjectMeta& m);
// The same for one more such field of `kind` ("spec.nodeName").
Status CheckFieldIsUtf8(std::string_view kind, std::string_view field, const std::string& value);

// This thread's arena, emptied: an object is some hundred small strings and maps, parsed into
// a first block that each call on the thread reuses, so that they cost no malloc and free each.
// What was parsed into it before is gone.
google::protobuf::Arena& ReusedArena();

// `message` parsed as an M into ReusedArena(): valid until this thread's next parse; null when
// it does not parse.
template <class M>
const M* ParseInReusedArena(std::string_view message) {
  M* m = google::protobuf::Arena::CreateMessage<M>(&ReusedArena());
  return m->ParseFromArray(message.data(), static_cast<int>(message.size())) ? m : nullptr;
}

}  // namespace lockstep::kube::proto_json
