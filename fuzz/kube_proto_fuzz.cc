// Fuzzes the readers of Kubernetes' protobuf encoding, which lockstepd reads from the apiserver
// (or whatever answers at its address): the Pod and Node decoders (objects/pod_proto.h,
// node_proto.h) on the input as a bare message, and the codec (client/proto_codec.h) on the
// input as an object's envelope, a List streamed item by item and a watch stream fed in two
// pieces. Properties: nothing crashes or throws; what decodes is a JSON object that can be
// written out (its strings valid UTF-8), as the informers and their handlers do with it; what
// is refused is refused with a message in UTF-8, which logs and JSON answers can carry.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "backend/kubernetes/client/proto_codec.h"
#include "backend/kubernetes/objects/node_proto.h"
#include "backend/kubernetes/objects/pod_proto.h"
#include "common/log.h"
#include "common/utf8.h"
#include "fuzz_check.h"

namespace {

using lockstep::kube::ProtoObjectDecoder;

// Writing a value out throws on strings that are not UTF-8.
void CheckWritable(const nlohmann::json& value) {
  FUZZ_CHECK(value.is_object());
  (void)value.dump();
}

void CheckResult(const lockstep::Result<nlohmann::json>& object) {
  if (object.ok()) {
    CheckWritable(*object);
  } else {
    FUZZ_CHECK(!lockstep::FirstNonUtf8Byte(object.status().message()));
  }
}

void CheckMessage(std::string_view message, ProtoObjectDecoder decode) {
  CheckResult(decode(message));
}

void CheckEnvelope(std::string_view envelope, ProtoObjectDecoder decode) {
  CheckResult(lockstep::kube::DecodeProtoObject(envelope, decode));
}

void CheckList(std::string_view bytes, ProtoObjectDecoder decode) {
  std::istringstream in{std::string(bytes)};
  CheckResult(lockstep::kube::ParseProtoListStream(
      in, decode, [](nlohmann::json item) { CheckWritable(item); }));
}

void CheckWatch(std::string_view bytes, ProtoObjectDecoder decode) {
  lockstep::kube::ProtoWatchEventParser parser(decode);
  const std::size_t half = bytes.size() / 2;
  for (std::string_view piece : {bytes.substr(0, half), bytes.substr(half)}) {
    lockstep::Result<std::vector<lockstep::kube::WatchEvent>> events = parser.Feed(piece);
    if (!events.ok()) {
      FUZZ_CHECK(!lockstep::FirstNonUtf8Byte(events.status().message()));
      continue;
    }
    for (const lockstep::kube::WatchEvent& e : *events) CheckWritable(e.object);
  }
  (void)parser.Finish();
}

}  // namespace

// Objects left out of lists and watches are logged as warnings, and protobuf checks strings
// without NDEBUG (this build), logging each that is not UTF-8: not while fuzzing, which would
// spend its time writing them.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  lockstep::log::Options quiet;
  quiet.level = lockstep::log::Level::kOff;
  FUZZ_CHECK(lockstep::log::Init(quiet).ok());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckMessage(bytes, &lockstep::kube::PodJsonFromProto);
  CheckMessage(bytes, &lockstep::kube::SchedulingPodJsonFromProto);
  CheckMessage(bytes, &lockstep::kube::NodeJsonFromProto);
  CheckEnvelope(bytes, &lockstep::kube::PodJsonFromProto);
  CheckEnvelope(bytes, &lockstep::kube::NodeJsonFromProto);
  CheckList(bytes, &lockstep::kube::PodJsonFromProto);
  CheckWatch(bytes, &lockstep::kube::NodeJsonFromProto);
  return 0;
}
