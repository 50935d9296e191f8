// A pod's status as lockstep's task events: started, and exited with an exit code, a signal and
// whether the OOM killer ended it (the agent's TaskExit convention: a signal gives exit code 0).
// Pure functions; safe to call from any thread. Rules in docs/kubernetes.md, "Objects".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::kube {

enum class PodPhase : std::uint8_t { kPending, kRunning, kSucceeded, kFailed, kUnknown };

const char* PodPhaseName(PodPhase p);

struct PodStatusEvent {
  PodPhase phase = PodPhase::kPending;
  std::string node;      // spec.nodeName
  bool started = false;  // its container ran (TaskStarted)
  bool ended = false;    // Succeeded or Failed (TaskExited)
  // When ended:
  int exit_code = 0;     // 0 when a signal ended it
  int signal = 0;        // exit codes 129-192 are 128 + signal; or the runtime's terminated.signal
  bool oom = false;      // terminated.reason OOMKilled
  bool evicted = false;  // status.reason Evicted (node pressure, the eviction API)
  bool deadline_exceeded = false;  // status.reason DeadlineExceeded (activeDeadlineSeconds)
  // The latest terminated.finishedAt of the containers read, as the kubelet wrote it (Unix
  // seconds); 0 when none says.
  Time finished_at = 0;
  std::string reason;   // status.reason, else the container's terminated or waiting reason
  std::string message;  // the message that goes with `reason`
  // Pending with a container waiting for a reason that will not clear by itself
  // (InvalidImageName, ErrImageNeverPull, CreateContainerConfigError): the controller should
  // fail the task rather than wait.
  bool cannot_start = false;
};

// The event for the pod's container named `container` (lockstep's pods have one, "job"), or,
// when `container` is empty, for all its containers: OOM when any was OOM-killed, the exit of
// the first that failed (in status order), else 0. A Failed pod without a terminated container
// (evicted or past its deadline before its status was written, or refused by the kubelet) ended
// with signal 9 (SIGKILL) when evicted or past its deadline, else exit code 1. A pod without
// status.phase is Pending. Error (NotFound): `container` named but absent from the statuses.
Result<PodStatusEvent> PodStatusEventOf(const nlohmann::json& pod,
                                        const std::string& container = "");

// An RFC 3339 time in UTC as the apiserver writes it ("2024-05-01T10:00:00Z", fractions and
// offsets accepted) as Unix seconds; nullopt when it is not one.
std::optional<Time> ParseRfc3339(const std::string& text);
// Unix seconds as the apiserver writes times, in UTC: "2024-05-01T10:00:00Z".
std::string FormatRfc3339(Time t);

}  // namespace lockstep::kube
