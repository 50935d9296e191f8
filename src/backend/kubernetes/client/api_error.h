// Errors of the Kubernetes API as lockstep Statuses. A failed call's Status message starts with
// the HTTP code and the apiserver's reason, then its message and the request:
//   "409 Conflict: Operation cannot be fulfilled on nodes \"n1\": the object has been modified
//    (PUT /api/v1/nodes/n1)"
// so callers branch on ApiErrorOf(status).reason (or the Is* helpers) rather than on text.
// Connection failures have code 0 and reason "ConnectionError".
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace lockstep::kube {

struct ApiError {
  int http_code = 0;   // 0: no HTTP response (connection failure, timeout)
  std::string reason;  // Conflict, NotFound, AlreadyExists, Gone, Expired, ... ("" if unknown)
  std::string message;
};

// The StatusCode for an HTTP code and reason: 404 kNotFound, 409 AlreadyExists kAlreadyExists,
// 409 Conflict and 410 kFailedPrecondition, 401/403 kPermissionDenied, 400/422 kInvalidArgument,
// 0/429/5xx kUnavailable, anything else kInternal.
StatusCode StatusCodeForHttp(int http_code, std::string_view reason);

// A Status from an error response: `body` is the apiserver's Status object when it sent one
// (reason and message are taken from it), else any text. `request` is "VERB /path".
Status StatusFromResponse(int http_code, const std::string& body, const std::string& request);

// A Status from a Status object carried by a watch ERROR event.
Status StatusFromStatusObject(const std::string& status_json, const std::string& request);

// A connection-level failure (no HTTP response).
Status ConnectionError(const std::string& what, const std::string& request);

// Parses the prefix that the functions above write. A Status of another origin gives
// {0, "", message}.
ApiError ApiErrorOf(const Status& status);

bool IsConflict(const Status& status);       // 409 Conflict: stale resourceVersion
bool IsAlreadyExists(const Status& status);  // 409 AlreadyExists
bool IsNotFound(const Status& status);       // 404
// 410 Gone or Expired: a resourceVersion older than the server keeps ("too old resource version")
// or an expired continue token; the cure is a fresh list.
bool IsGone(const Status& status);
// Worth retrying later: no response, 429, 5xx.
bool IsRetryable(const Status& status);

}  // namespace lockstep::kube
