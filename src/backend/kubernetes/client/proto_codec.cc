#include "backend/kubernetes/client/proto_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/wire_format_lite.h>

#include <optional>
#include <utility>

#include "common/log.h"
#include "common/utf8.h"
#include "k8s_runtime.pb.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

constexpr std::string_view kMagic("k8s\0", 4);

// The strings of the envelope, lists and Status: bytes in protobuf, so made UTF-8 as the
// apiserver's JSON would have them (common/utf8.h).
Json Text(const std::string& value) {
  return FirstNonUtf8Byte(value) ? CoercedToUtf8(value) : value;
}

void SetIfNotEmpty(Json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = Text(value);
}

Json ListMetaJson(const pb::ListMeta& m) {
  Json j = Json::object();
  SetIfNotEmpty(j, "selfLink", m.selflink());
  SetIfNotEmpty(j, "resourceVersion", m.resourceversion());
  SetIfNotEmpty(j, "continue", m.continue_());
  if (m.has_remainingitemcount()) j["remainingItemCount"] = m.remainingitemcount();
  return j;
}

// meta/v1 Status in its JSON form, as StatusFromStatusObject (api_error.h) reads it.
Result<Json> StatusJson(const std::string& message) {
  pb::Status s;
  if (!s.ParseFromString(message)) return InvalidArgument("protobuf: malformed Status");
  Json j = {{"metadata", ListMetaJson(s.metadata())}};
  SetIfNotEmpty(j, "status", s.status());
  SetIfNotEmpty(j, "message", s.message());
  SetIfNotEmpty(j, "reason", s.reason());
  if (s.has_code()) j["code"] = s.code();
  if (s.has_details()) {
    Json d = Json::object();
    SetIfNotEmpty(d, "name", s.details().name());
    SetIfNotEmpty(d, "group", s.details().group());
    SetIfNotEmpty(d, "kind", s.details().kind());
    SetIfNotEmpty(d, "uid", s.details().uid());
    if (s.details().retryafterseconds() != 0)
      d["retryAfterSeconds"] = s.details().retryafterseconds();
    j["details"] = std::move(d);
  }
  return j;
}

Result<Json> DecodeUnknown(const pb::Unknown& u, ProtoObjectDecoder decode) {
  const std::string& kind = u.typemeta().kind();
  if (kind != "Status" && decode == nullptr)
    return InvalidArgument("protobuf: no decoder for kind " + CoercedToUtf8(kind));
  Result<Json> object = kind == "Status" ? StatusJson(u.raw()) : decode(u.raw());
  if (!object.ok()) return object.status();
  (*object)["apiVersion"] = Text(u.typemeta().apiversion());
  (*object)["kind"] = Text(kind);
  return object;
}

Result<pb::Unknown> ParseEnvelope(std::string_view envelope) {
  if (envelope.substr(0, kMagic.size()) != kMagic)
    return InvalidArgument("protobuf: an object must start with \"k8s\\0\"");
  envelope.remove_prefix(kMagic.size());
  pb::Unknown u;
  if (!u.ParseFromArray(envelope.data(), static_cast<int>(envelope.size())))
    return InvalidArgument("protobuf: malformed envelope");
  return u;
}

std::uint32_t BigEndian32(std::string_view bytes) {
  auto b = [&](int i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

// Reads a length-delimited field's bytes.
bool ReadBytes(CodedInputStream& in, std::string* out) {
  std::uint32_t size = 0;
  return in.ReadVarint32(&size) && in.ReadString(out, static_cast<int>(size));
}

// The List message inside the envelope's raw field: metadata (1), items (2).
Status ReadListBody(CodedInputStream& in, ProtoObjectDecoder decode, const ListItemHandler& on_item,
                    Json* list) {
  std::string bytes;
  while (std::uint32_t tag = in.ReadTagNoLastTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const bool delimited =
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    if (field == 1 && delimited) {
      pb::ListMeta meta;
      if (!ReadBytes(in, &bytes) || !meta.ParseFromString(bytes))
        return InvalidArgument("protobuf list: malformed metadata");
      (*list)["metadata"] = ListMetaJson(meta);
    } else if (field == 2 && delimited) {
      if (!ReadBytes(in, &bytes)) return InvalidArgument("protobuf list: truncated item");
      Result<Json> item = decode(bytes);
      // One object the decoder refuses (its name not UTF-8...) must not keep the whole list,
      // and so an informer, from ever completing, listing again and again: it is left out, with
      // a warning, as a watch leaves out an event whose object its decoder refuses.
      if (!item.ok()) {
        log::Warning("kubernetes: an item of a list left out: {}", item.status().message());
        continue;
      }
      on_item(std::move(*item));
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return InvalidArgument("protobuf list: truncated field " + std::to_string(field));
    }
  }
  // A tag of 0 ends the body at its limit, or early: at the end of the stream or a bad byte.
  return in.BytesUntilLimit() == 0 ? Status::Ok()
                                   : InvalidArgument("protobuf list: truncated or malformed");
}

}  // namespace

Result<Json> DecodeProtoObject(std::string_view envelope, ProtoObjectDecoder decode) {
  Result<pb::Unknown> u = ParseEnvelope(envelope);
  if (!u.ok()) return u.status();
  return DecodeUnknown(*u, decode);
}

Result<Json> ParseProtoListStream(std::istream& stream, ProtoObjectDecoder decode,
                                  const ListItemHandler& on_item) {
  google::protobuf::io::IstreamInputStream raw(&stream);
  CodedInputStream in(&raw);
  std::string magic;
  if (!in.ReadString(&magic, static_cast<int>(kMagic.size())) || magic != kMagic)
    return InvalidArgument("protobuf list: does not start with \"k8s\\0\"");
  Json list = {{"metadata", Json::object()}, {"items", Json::array()}};
  std::string kind;
  // The envelope: typeMeta (1) and raw (2), read field by field so that items are handed over
  // as they arrive rather than once the whole list is in.
  while (std::uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    std::string bytes;
    if (field == 1) {
      pb::TypeMeta tm;
      if (!ReadBytes(in, &bytes) || !tm.ParseFromString(bytes))
        return InvalidArgument("protobuf list: malformed typeMeta");
      list["apiVersion"] = Text(tm.apiversion());
      list["kind"] = Text(tm.kind());
      kind = tm.kind();
    } else if (field == 2) {
      std::uint32_t size = 0;
      if (!in.ReadVarint32(&size)) return InvalidArgument("protobuf list: truncated");
      if (kind == "Status") {  // an error instead of the list
        if (!in.ReadString(&bytes, static_cast<int>(size)))
          return InvalidArgument("protobuf list: truncated Status");
        Result<Json> st = StatusJson(bytes);
        if (!st.ok()) return st.status();
        return InvalidArgument("the apiserver answered a list with a Status: " +
                               st->value("message", ""));
      }
      const CodedInputStream::Limit limit = in.PushLimit(static_cast<int>(size));
      LOCKSTEP_RETURN_IF_ERROR(ReadListBody(in, decode, on_item, &list));
      in.PopLimit(limit);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return InvalidArgument("protobuf list: truncated envelope");
    }
  }
  if (!list.contains("kind")) return InvalidArgument("protobuf list: no typeMeta");
  return list;
}

Result<std::vector<WatchEvent>> ProtoWatchEventParser::Feed(std::string_view bytes) {
  pending_.append(bytes);
  std::vector<WatchEvent> events;
  Status first_error;
  std::size_t at = 0;
  while (pending_.size() - at >= 4) {
    const std::uint32_t size = BigEndian32(std::string_view(pending_).substr(at, 4));
    if (size > kMaxFrameBytes) {
      // The stream cannot be resynchronised past a bad length.
      pending_.clear();
      return InvalidArgument("protobuf watch: a frame of " + std::to_string(size) + " bytes");
    }
    if (pending_.size() - at - 4 < size) break;
    Result<std::optional<WatchEvent>> ev =
        ParseFrame(std::string_view(pending_).substr(at + 4, size));
    at += 4 + size;
    if (!ev.ok()) {
      if (first_error.ok()) first_error = ev.status();
      continue;
    }
    if (ev->has_value()) events.push_back(std::move(**ev));
  }
  pending_.erase(0, at);
  if (!first_error.ok()) return first_error;
  return events;
}

Status ProtoWatchEventParser::Finish() const {
  if (pending_.empty()) return Status::Ok();
  return InvalidArgument("protobuf watch stream ended inside a frame (" +
                         std::to_string(pending_.size()) + " bytes pending)");
}

Result<std::optional<WatchEvent>> ProtoWatchEventParser::ParseFrame(std::string_view frame) const {
  pb::WatchEvent e;
  if (!e.ParseFromArray(frame.data(), static_cast<int>(frame.size())))
    return InvalidArgument("protobuf watch: malformed event");
  Result<WatchEventType> type = WatchEventTypeOf(Text(e.type()));
  if (!type.ok()) return type.status();
  Result<pb::Unknown> envelope = ParseEnvelope(e.object().raw());
  if (!envelope.ok())
    return Status(envelope.status().code(),
                  envelope.status().message() + " (a " + e.type() + " event)");
  Result<Json> object = DecodeUnknown(*envelope, decode_);
  if (!object.ok()) {
    // A whole event whose object the decoder refuses: the watch goes on without it. As an
    // error, the watch would start again from before it, and meet it again, forever.
    log::Warning("kubernetes: a watch's {} event left out: {}", e.type(),
                 object.status().message());
    return std::optional<WatchEvent>();
  }
  WatchEvent ev;
  ev.type = *type;
  ev.object = std::move(*object);
  return std::optional<WatchEvent>(std::move(ev));
}

std::string EncodeProtoEnvelope(const std::string& api_version, const std::string& kind,
                                const std::string& message) {
  pb::Unknown u;
  u.mutable_typemeta()->set_apiversion(api_version);
  u.mutable_typemeta()->set_kind(kind);
  u.set_raw(message);
  return std::string(kMagic) + u.SerializeAsString();
}

std::string EncodeProtoWatchFrameForTest(const std::string& type, const std::string& envelope) {
  pb::WatchEvent e;
  e.set_type(type);
  e.mutable_object()->set_raw(envelope);
  const std::string body = e.SerializeAsString();
  const auto n = static_cast<std::uint32_t>(body.size());
  std::string frame = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                       static_cast<char>(n >> 8), static_cast<char>(n)};
  return frame + body;
}

}  // namespace lockstep::kube
