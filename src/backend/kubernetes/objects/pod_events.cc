#include "backend/kubernetes/objects/pod_events.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
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

std::string FormatRfc3339(Time t) {
  const std::time_t seconds = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<Time> ParseRfc3339(const std::string& text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, used = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) !=
          6 ||
      used != 19)
    return std::nullopt;
  std::size_t i = 19;
  if (i < text.size() && text[i] == '.') {  // fractions of a second: dropped
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  }
  long offset = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    int oh = 0, om = 0, n = 0;
    if (std::sscanf(text.c_str() + i + 1, "%2d:%2d%n", &oh, &om, &n) != 2 || n != 5)
      return std::nullopt;
    offset = (text[i] == '+' ? 1 : -1) * (oh * 3600L + om * 60L);
    i += 6;
  } else if (i < text.size() && (text[i] == 'Z' || text[i] == 'z')) {
    ++i;
  } else {
    return std::nullopt;
  }
  if (i != text.size() || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<Time>(timegm(&tm)) - offset;
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
    if (std::optional<Time> at = ParseRfc3339(internal::StringAt(*t, "finishedAt")))
      e.finished_at = std::max(e.finished_at, *at);
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
