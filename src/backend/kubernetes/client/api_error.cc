#include "backend/kubernetes/client/api_error.h"

#include <nlohmann/json.hpp>

namespace lockstep::kube {
namespace {

std::string DefaultReason(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "";
  }
}

Status Make(int code, std::string reason, const std::string& message, const std::string& request) {
  if (reason.empty()) reason = DefaultReason(code);
  if (reason.empty()) reason = "Unknown";
  std::string text = std::to_string(code) + " " + reason + ": " + message;
  if (!request.empty()) text += " (" + request + ")";
  return Status(StatusCodeForHttp(code, reason), std::move(text));
}

}  // namespace

StatusCode StatusCodeForHttp(int http_code, std::string_view reason) {
  if (http_code == 0 || http_code == 429 || http_code >= 500) return StatusCode::kUnavailable;
  switch (http_code) {
    case 404:
      return StatusCode::kNotFound;
    case 409:
      return reason == "AlreadyExists" ? StatusCode::kAlreadyExists
                                       : StatusCode::kFailedPrecondition;
    case 410:
      return StatusCode::kFailedPrecondition;
    case 401:
    case 403:
      return StatusCode::kPermissionDenied;
    case 400:
    case 422:
      return StatusCode::kInvalidArgument;
    default:
      return StatusCode::kInternal;
  }
}

Status StatusFromResponse(int http_code, const std::string& body, const std::string& request) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.value("kind", "") == "Status") {
    return Make(http_code, j.value("reason", ""), j.value("message", ""), request);
  }
  std::string text = body.substr(0, 500);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return Make(http_code, "", text, request);
}

Status StatusFromStatusObject(const std::string& status_json, const std::string& request) {
  nlohmann::json j = nlohmann::json::parse(status_json, nullptr, false);
  if (!j.is_object()) return Make(500, "InternalError", "malformed Status object", request);
  int code = j.value("code", 500);
  return Make(code, j.value("reason", ""), j.value("message", ""), request);
}

Status ConnectionError(const std::string& what, const std::string& request) {
  std::string text = "0 ConnectionError: " + what;
  if (!request.empty()) text += " (" + request + ")";
  return Status(StatusCode::kUnavailable, std::move(text));
}

ApiError ApiErrorOf(const Status& status) {
  ApiError e;
  const std::string& m = status.message();
  size_t i = 0;
  while (i < m.size() && i < 3 && m[i] >= '0' && m[i] <= '9') ++i;
  const size_t colon = m.find(": ");
  if (i == 0 || i >= m.size() || m[i] != ' ' || colon == std::string::npos || colon < i) {
    e.message = m;
    return e;
  }
  e.http_code = std::stoi(m.substr(0, i));
  e.reason = m.substr(i + 1, colon - i - 1);
  e.message = m.substr(colon + 2);
  if (e.reason.find(' ') != std::string::npos) return ApiError{0, "", m};
  return e;
}

bool IsConflict(const Status& s) {
  const ApiError e = ApiErrorOf(s);
  return e.http_code == 409 && e.reason == "Conflict";
}
bool IsAlreadyExists(const Status& s) {
  const ApiError e = ApiErrorOf(s);
  return e.http_code == 409 && e.reason == "AlreadyExists";
}
bool IsNotFound(const Status& s) {
  return ApiErrorOf(s).http_code == 404;
}
bool IsGone(const Status& s) {
  const ApiError e = ApiErrorOf(s);
  return e.http_code == 410 || e.reason == "Expired" || e.reason == "Gone";
}
bool IsRetryable(const Status& s) {
  if (s.ok()) return false;
  const ApiError e = ApiErrorOf(s);
  if (e.reason == "ConnectionError") return true;
  return e.http_code == 429 || e.http_code >= 500;
}

}  // namespace lockstep::kube
