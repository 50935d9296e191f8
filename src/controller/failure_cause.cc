#include "controller/failure_cause.h"

#include <cstring>

namespace lockstep::controller {
namespace {

// "killed by signal 11 (SIGSEGV)".
std::string SignalEvidence(int signal) {
  std::string d = "killed by signal " + std::to_string(signal);
  if (const char* abbrev = ::sigabbrev_np(signal); abbrev != nullptr)
    d += std::string(" (SIG") + abbrev + ")";
  return d;
}

std::string UserEvidence(const JobEntry& job, const backend::ExitStatus& status) {
  std::string d = status.signal != 0 ? SignalEvidence(status.signal)
                                     : "exit code " + std::to_string(status.exit_code);
  if (!status.core_dump.empty()) d += "; " + status.core_dump;
  if (!job.app_evidence.empty()) d += "; " + job.app_evidence;
  return d;
}

}  // namespace

void AttributeEnd(JobEntry& job, const backend::ExitStatus& status, Seconds kill_wait) {
  const bool decided = job.failure_run == job.restart_count && !job.failure_cause.empty();
  std::string cause, detail;
  switch (job.state) {
    case JobState::kCompleted:
      job.failure_cause.clear();
      job.failure_detail.clear();
      job.failure_run = -1;
      job.app_evidence.clear();
      return;
    case JobState::kCancelled:
      cause = "cancelled", detail = "cancelled by its user or an operator";
      break;
    case JobState::kTimeout:
      cause = "timeout";
      detail = "reached its time limit; ended " + std::to_string(kill_wait) + " s after SIGTERM";
      break;
    case JobState::kOutOfMemory:
      cause = "oom", detail = "out of memory: the kernel's OOM killer ended a task";
      break;
    case JobState::kNodeFail:
      cause = "node", detail = NodeLossEvidence(job, job.reason);
      break;
    case JobState::kPreempted:
      cause = "preempted", detail = "preempted";
      break;
    default:  // FAILED
      if (job.reason == "LaunchFailed")
        cause = "launch", detail = "the launch failed";
      else
        cause = "user", detail = UserEvidence(job, status);
      break;
  }
  job.app_evidence.clear();
  if (decided) return;
  job.failure_cause = std::move(cause);
  job.failure_detail = std::move(detail);
  job.failure_run = job.restart_count;
}

std::string NodeLossEvidence(const JobEntry& job, const std::string& reason) {
  std::string nodes;
  for (const PlacedNode& p : job.placement) nodes += (nodes.empty() ? "" : ",") + p.node;
  return "node " + (nodes.empty() ? std::string("?") : nodes) + " lost (" + reason + ")";
}

}  // namespace lockstep::controller
