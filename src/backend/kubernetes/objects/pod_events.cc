#include "backend/kubernetes/objects/pod_events.h"

#include <vector>

#include "backend/kubernetes/objects/json_util.h"

namespace lockstep::kube {
namespace {

using internal::Json;

constexpr int kSigKill = 9;
constexpr int kMaxSignal = 64;

PodPhase PhaseOf(const std::string& s) {
  if (s.empty() || s == "Pending") return PodPhase::kPending;
  if (s == "Running") return PodPhase::kRunning;
  if (s == "Succeeded") return PodPhase::kSucceeded;
  if (s == "Failed") return PodPhase::kFailed;
  return PodPhase::kUnknown;
}

bool Fatal(const std::string& waiting_reason) {
  return waiting_reason == "InvalidImageName" || waiting_reason == "ErrImageNeverPull" ||
         waiting_reason == "CreateContainerConfigError";
}

struct Exit {
  int code = 0, signal = 0;
};

// Exit code and signal of one terminated state, the agent's way.
Exit ExitOf(const Json& terminated) {
  auto field = [&](const char* key) {
    return static_cast<int>(internal::Integer(internal::Child(terminated, key)).value_or(0));
  };
  const int code = field("exitCode"), sig = field("signal");
  if (sig > 0) return {0, sig};
  if (code > 128 && code <= 128 + kMaxSignal) return {0, code - 128};
  return {code, 0};
}

}  // namespace

const char* PodPhaseName(PodPhase p) {
  switch (p) {
    case PodPhase::kPending:
      return "Pending";
    case PodPhase::kRunning:
      return "Running";
    case PodPhase::kSucceeded:
      return "Succeeded";
    case PodPhase::kFailed:
      return "Failed";
    case PodPhase::kUnknown:
      return "Unknown";
  }
  return "Unknown";
}

Result<PodStatusEvent> PodStatusEventOf(const Json& pod, const std::string& container) {
  PodStatusEvent e;
  e.phase = PhaseOf(internal::StringAt(pod, "status", "phase"));
  e.node = internal::StringAt(pod, "spec", "nodeName");
  e.ended = e.phase == PodPhase::kSucceeded || e.phase == PodPhase::kFailed;
  e.reason = internal::StringAt(pod, "status", "reason");
  e.message = internal::StringAt(pod, "status", "message");
  e.evicted = e.reason == "Evicted";
  e.deadline_exceeded = e.reason == "DeadlineExceeded";

  std::vector<const Json*> statuses;
  if (const Json* cs = internal::Path(pod, "status", "containerStatuses"); cs && cs->is_array()) {
    for (const Json& c : *cs)
      if (container.empty() || internal::StringAt(c, "name") == container) statuses.push_back(&c);
  }
  const Json* all = internal::Path(pod, "status", "containerStatuses");
  if (!container.empty() && statuses.empty() && all && all->is_array() && !all->empty()) {
    return NotFound(internal::Describe(pod, "pod") + ": no status of container \"" + container +
                    "\"");
  }

  bool terminated_seen = false, failure_seen = false;
  for (const Json* c : statuses) {
    const Json* state = internal::Child(*c, "state");
    if (!state) continue;
    if (internal::Child(*state, "running")) e.started = true;
    if (const Json* w = internal::Child(*state, "waiting")) {
      std::string why = internal::StringAt(*w, "reason");
      if (Fatal(why)) e.cannot_start = true;
      if (e.reason.empty() && !why.empty()) {
        e.reason = why;
        e.message = internal::StringAt(*w, "message");
      }
    }
    const Json* t = internal::Child(*state, "terminated");
    if (!t) continue;
    terminated_seen = true;
    e.started = true;
    std::string why = internal::StringAt(*t, "reason");
    if (why == "OOMKilled") e.oom = true;
    const Exit x = ExitOf(*t);
    if (!failure_seen && (x.code != 0 || x.signal != 0)) {
      failure_seen = true;
      e.exit_code = x.code, e.signal = x.signal;
      if (e.reason.empty()) {
        e.reason = why;
        e.message = internal::StringAt(*t, "message");
      }
    }
  }
  if (e.phase == PodPhase::kRunning) e.started = true;
  if (e.phase == PodPhase::kFailed && !terminated_seen) {
    if (e.evicted || e.deadline_exceeded)
      e.signal = kSigKill;
    else
      e.exit_code = 1;
  }
  if (e.phase == PodPhase::kFailed && terminated_seen && !failure_seen && !e.oom) {
    // Failed, yet every container exited 0: killed from outside before a code was kept.
    if (e.evicted || e.deadline_exceeded)
      e.signal = kSigKill;
    else
      e.exit_code = 1;
  }
  if (!e.ended) e.exit_code = 0, e.signal = 0;
  return e;
}

}  // namespace lockstep::kube
