// The events of a Kubernetes watch and an incremental parser for the stream that carries them:
// newline-delimited JSON objects {"type": ..., "object": ...}, arriving in arbitrary pieces
// (chunks of a chunked HTTP body split events anywhere, even inside a UTF-8 sequence). The
// protobuf stream's parser is in proto_codec.h.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep::kube {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

const char* WatchEventTypeName(WatchEventType type);

struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  // The object; for kBookmark only metadata.resourceVersion is meaningful; for kError a
  // meta/v1 Status (code 410 with reason Expired or Gone when the resourceVersion is too old).
  nlohmann::json object;

  std::string ResourceVersion() const;
};

// Splits a watch's byte stream into events. Not thread-safe: one per stream.
class WatchStreamParser {
 public:
  virtual ~WatchStreamParser() = default;
  // Feeds the next bytes; returns the events they complete (possibly none).
  virtual Result<std::vector<WatchEvent>> Feed(std::string_view bytes) = 0;
  // At the end of the stream: an error if an incomplete event remains.
  virtual Status Finish() const = 0;
};

// The JSON stream's.
class WatchEventParser : public WatchStreamParser {
 public:
  // `drop_managed_fields`: the events' objects come without metadata.managedFields.
  explicit WatchEventParser(bool drop_managed_fields = false)
      : drop_managed_fields_(drop_managed_fields) {}
  // A malformed line is an error naming the line's start; the parser then skips that line and
  // can continue.
  Result<std::vector<WatchEvent>> Feed(std::string_view bytes) override;
  Status Finish() const override;
  size_t buffered() const { return pending_.size(); }

 private:
  std::string pending_;  // bytes after the last newline
  bool drop_managed_fields_;
};

// The type named `name` ("ADDED"...); InvalidArgument for another.
Result<WatchEventType> WatchEventTypeOf(const std::string& name);

// Parses one line ({"type":..., "object":...}), without the object's metadata.managedFields
// when `drop_managed_fields`.
Result<WatchEvent> ParseWatchEvent(std::string_view line, bool drop_managed_fields = false);

}  // namespace lockstep::kube
