#include "backend/kubernetes/client/watch_event.h"

#include "backend/kubernetes/client/api_json.h"

namespace lockstep::kube {

const char* WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "?";
}

std::string WatchEvent::ResourceVersion() const {
  if (!object.is_object()) return "";
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return "";
  auto rv = md->find("resourceVersion");
  return rv != md->end() && rv->is_string() ? rv->get<std::string>() : std::string();
}

Result<WatchEventType> WatchEventTypeOf(const std::string& t) {
  if (t == "ADDED") return WatchEventType::kAdded;
  if (t == "MODIFIED") return WatchEventType::kModified;
  if (t == "DELETED") return WatchEventType::kDeleted;
  if (t == "BOOKMARK") return WatchEventType::kBookmark;
  if (t == "ERROR") return WatchEventType::kError;
  return InvalidArgument("watch stream: unknown event type '" + t + "'");
}

Result<WatchEvent> ParseWatchEvent(std::string_view line, bool drop_managed_fields) {
  auto preview = [&] { return std::string(line.substr(0, 80)); };
  Result<nlohmann::json> parsed = ParseApiJson(line, 2, drop_managed_fields);
  if (!parsed.ok() || !parsed->is_object())
    return InvalidArgument("watch stream: not a JSON object: " + preview());
  nlohmann::json& j = *parsed;
  auto type = j.find("type");
  auto object = j.find("object");
  if (type == j.end() || !type->is_string() || object == j.end()) {
    return InvalidArgument("watch stream: event without type or object: " + preview());
  }
  Result<WatchEventType> kind = WatchEventTypeOf(type->get_ref<const std::string&>());
  if (!kind.ok()) return kind.status();
  WatchEvent ev;
  ev.type = *kind;
  ev.object = std::move(*object);
  return ev;
}

Result<std::vector<WatchEvent>> WatchEventParser::Feed(std::string_view bytes) {
  std::vector<WatchEvent> events;
  size_t start = 0;
  Status first_error;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != '\n') continue;
    std::string_view piece = bytes.substr(start, i - start);
    std::string line;
    std::string_view whole = piece;
    if (!pending_.empty()) {
      line = std::move(pending_);
      pending_.clear();
      line.append(piece);
      whole = line;
    }
    start = i + 1;
    if (whole.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    Result<WatchEvent> ev = ParseWatchEvent(whole, drop_managed_fields_);
    if (!ev.ok()) {
      if (first_error.ok()) first_error = ev.status();
      continue;
    }
    events.push_back(std::move(*ev));
  }
  pending_.append(bytes.substr(start));
  if (!first_error.ok()) return first_error;
  return events;
}

Status WatchEventParser::Finish() const {
  if (pending_.find_first_not_of(" \t\r\n") == std::string::npos) return Status::Ok();
  // The apiserver ends every event with a newline; a final object without one is still whole
  // if it parses.
  if (ParseWatchEvent(pending_).ok()) return Status::Ok();
  return InvalidArgument("watch stream ended inside an event (" + std::to_string(pending_.size()) +
                         " bytes pending)");
}

}  // namespace lockstep::kube
