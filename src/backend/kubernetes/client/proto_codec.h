// Reading Kubernetes' protobuf encoding (application/vnd.kubernetes.protobuf), which the
// apiserver encodes about twice as fast as JSON and in less than half the bytes, into the JSON
// form of the API that lockstep's handlers read, so that there is one representation past the
// client. Kubernetes' own components talk to the apiserver this way.
//
// On the wire every object is the 4 bytes "k8s\0" and a runtime.Unknown {typeMeta, raw}, raw
// being the kind's own message; a List's raw holds {metadata: ListMeta, items: repeated
// object}; a watch is a sequence of frames, each a 4-byte big-endian length and a meta/v1
// WatchEvent {type, object: {raw: an object in its envelope}}. Built-in kinds only: custom
// resources have no protobuf encoding.
//
// Only the kind's decoder knows its fields; objects/pod_proto.h has Pods', node_proto.h Nodes':
//   lo.protobuf = &PodJsonFromProto;
//   client.ListEach(PodsPath(""), lo, on_item);   // items in JSON form
#pragma once

#include <cstdint>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/kubernetes/client/api_json.h"
#include "backend/kubernetes/client/watch_event.h"
#include "common/status.h"

namespace lockstep::kube {

inline constexpr const char* kProtobufMediaType = "application/vnd.kubernetes.protobuf";
inline constexpr const char* kProtobufWatchMediaType =
    "application/vnd.kubernetes.protobuf;stream=watch";

// Decodes one kind's message (the raw bytes of an object's envelope: a Pod...) into the object's
// JSON form, without apiVersion and kind (the envelope's typeMeta adds them). A message that
// does not parse is InvalidArgument.
using ProtoObjectDecoder = Result<nlohmann::json> (*)(std::string_view message);

// An object in its envelope. A meta/v1 Status (an error, a watch's ERROR event) is decoded
// whatever `decode` is; other kinds go to `decode`.
Result<nlohmann::json> DecodeProtoObject(std::string_view envelope, ProtoObjectDecoder decode);

// A List read from `in` as it arrives: each item, decoded, goes to `on_item` on this thread.
// Returns the List without its items ({"apiVersion", "kind", "metadata": {"resourceVersion",
// "continue", "remainingItemCount"}, "items": []}). A truncated or malformed list is
// InvalidArgument; an item that `decode` refuses is left out with a warning (log.h).
Result<nlohmann::json> ParseProtoListStream(std::istream& in, ProtoObjectDecoder decode,
                                            const ListItemHandler& on_item);

// The frames of a protobuf watch. A malformed frame is an error; the parser then skips it. An
// event whose object the kind's decoder refuses is left out with a warning (log.h), as is such
// an item of a List (ParseProtoListStream).
class ProtoWatchEventParser : public WatchStreamParser {
 public:
  explicit ProtoWatchEventParser(ProtoObjectDecoder decode) : decode_(decode) {}
  Result<std::vector<WatchEvent>> Feed(std::string_view bytes) override;
  Status Finish() const override;

  // Frames longer than this are refused (the apiserver's objects are at most a few MB).
  static constexpr std::uint32_t kMaxFrameBytes = 64u << 20;

 private:
  // The frame's event; nothing when it is left out.
  Result<std::optional<WatchEvent>> ParseFrame(std::string_view frame) const;

  ProtoObjectDecoder decode_;
  std::string pending_;  // the bytes of an incomplete frame
};

// A watch frame: the 4-byte length, then WatchEvent {type, object {raw: envelope}} (for tests).
std::string EncodeProtoWatchFrameForTest(const std::string& type, const std::string& envelope);
// An object's envelope: "k8s\0" + Unknown {typeMeta {apiVersion, kind}, raw: message}.
std::string EncodeProtoEnvelope(const std::string& api_version, const std::string& kind,
                                const std::string& message);

}  // namespace lockstep::kube
