// Status and Result<T>: the one error model of lockstep (after leveldb's Status and abseil's
// StatusOr). Every call that crosses a part's boundary returns one of these; no exception crosses
// a boundary. A broken invariant is a bug and aborts through LOCKSTEP_CHECK instead.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace lockstep {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad input: a script, option, config line, request or trace line
  kNotFound,
  kAlreadyExists,
  kPermissionDenied,
  kFailedPrecondition,
  kUnavailable,
  kIoError,
  kInternal,
};

const char* StatusCodeName(StatusCode code);

// A Status is cheap to copy when ok (an empty string).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: trace.swf:12: expected 18 fields, found 7"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status IoError(std::string m) {
  return {StatusCode::kIoError, std::move(m)};
}
inline Status Internal(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}

// Result<T> holds either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Internal("Result constructed from an ok Status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

[[noreturn]] void CheckFailed(const char* file, int line, const char* expr);

}  // namespace lockstep

// A broken invariant: abort loudly, in every build type (Envoy's RELEASE_ASSERT).
#define LOCKSTEP_CHECK(expr) ((expr) ? (void)0 : ::lockstep::CheckFailed(__FILE__, __LINE__, #expr))

// Propagate a non-ok Status to the caller.
#define LOCKSTEP_RETURN_IF_ERROR(expr) \
  do {                                 \
    ::lockstep::Status _st = (expr);   \
    if (!_st.ok()) return _st;         \
  } while (0)

// Declares `lhs` as the value of a Result<T> expression, or returns its error from the function.
#define LOCKSTEP_ASSIGN_OR_RETURN(lhs, expr)           \
  auto lhs##_result = (expr);                          \
  if (!lhs##_result.ok()) return lhs##_result.status(); \
  auto lhs = std::move(*lhs##_result)
