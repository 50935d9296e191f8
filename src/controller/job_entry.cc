#include "controller/job_entry.h"

#include <cstdio>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace lockstep::controller {
namespace {

struct StateName {
  JobState state;
  const char* name;
  const char* compact;
};

constexpr StateName kStates[] = {
    {JobState::kPending, "PENDING", "PD"},       {JobState::kRunning, "RUNNING", "R"},
    {JobState::kCompleting, "COMPLETING", "CG"}, {JobState::kCompleted, "COMPLETED", "CD"},
    {JobState::kFailed, "FAILED", "F"},          {JobState::kCancelled, "CANCELLED", "CA"},
    {JobState::kTimeout, "TIMEOUT", "TO"},       {JobState::kNodeFail, "NODE_FAIL", "NF"},
    {JobState::kPreempted, "PREEMPTED", "PR"},   {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM"},
    {JobState::kSuspended, "SUSPENDED", "S"},
};

}  // namespace

const char* JobStateName(JobState s) {
  return kStates[static_cast<int>(s)].name;
}
const char* JobStateCompact(JobState s) {
  return kStates[static_cast<int>(s)].compact;
}

bool ParseJobState(std::string_view text, JobState* out) {
  std::string up(text);
  std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const StateName& s : kStates) {
    if (up == s.name || up == s.compact) {
      *out = s.state;
      return true;
    }
  }
  return false;
}

bool IsFinished(JobState s) {
  return s != JobState::kPending && !HoldsAllocation(s);
}

bool HoldsAllocation(JobState s) {
  return s == JobState::kRunning || s == JobState::kCompleting || s == JobState::kSuspended;
}

std::string JobEntry::DisplayId() const {
  if (is_het_component()) return std::to_string(het_job_id) + "+" + std::to_string(het_offset);
  if (!is_array_task()) return std::to_string(id);
  return std::to_string(array_job_id) + "_" + std::to_string(array_task_id);
}

const char* JobEntry::ShownState() const {
  return state == JobState::kPending && special_exit ? "SPECIAL_EXIT" : JobStateName(state);
}

std::string JobKey(JobId id) {
  char key[24];
  std::snprintf(key, sizeof key, "%020llu", static_cast<unsigned long long>(id));
  return key;
}

std::string EntryToJson(const JobEntry& e) {
  return EntryToJson(e, jobspec::JobSpecToJson(*e.spec));
}

std::string EntryToJson(const JobEntry& e, std::string_view spec_json) {
  nlohmann::json j;
  j["id"] = e.id;
  j["uid"] = e.uid;
  j["gid"] = e.gid;
  j["user"] = e.user;
  j["state"] = JobStateName(e.state);
  j["reason"] = e.reason;
  j["submit_time"] = e.submit_time;
  j["start_time"] = e.start_time;
  j["end_time"] = e.end_time;
  j["exit_code"] = e.exit_code;
  j["signal"] = e.signal;
  j["restart_count"] = e.restart_count;
  j["admin_priority"] = e.admin_priority;
  j["held_by_user"] = e.held_by_user;
  j["held_by_admin"] = e.held_by_admin;
  if (e.special_exit) j["special_exit"] = true;
  if (e.requeue_held) j["requeue_held"] = true;
  if (!e.comment.empty()) j["comment"] = e.comment;
  j["array_job_id"] = e.array_job_id;
  j["array_task_id"] = e.array_task_id;
  if (e.is_het_component()) {
    j["het_job_id"] = e.het_job_id;
    j["het_offset"] = e.het_offset;
    j["het_size"] = e.het_size;
  }
  j["cancel_requested"] = e.cancel_requested;
  j["timed_out"] = e.timed_out;
  if (e.preempted) j["preempted"] = true;
  if (e.requeue_at_end) j["requeue_at_end"] = true;
  j["next_step_id"] = e.next_step_id;
  if (e.suspend_time > 0) j["suspend_time"] = e.suspend_time;
  if (e.suspended_seconds > 0) j["suspended_seconds"] = e.suspended_seconds;
  if (!e.failure_cause.empty()) {
    j["failure_cause"] = e.failure_cause;
    j["failure_detail"] = e.failure_detail;
    j["failure_run"] = e.failure_run;
  }
  nlohmann::json placement = nlohmann::json::array();
  for (const PlacedNode& p : e.placement)
    placement.push_back(
        {{"node", p.node}, {"cpus", p.cpus}, {"mem_mb", p.mem_mb}, {"gpus", p.gpus}});
  j["placement"] = std::move(placement);
  // The spec is spliced in as it was serialized, rather than parsed back into `j`. An array
  // task that asks what its array asked names the array's stored spec instead.
  if (spec_json.empty()) {
    j["spec_of"] = e.array_job_id;
    return j.dump();
  }
  std::string out = j.dump();
  out.insert(1, std::string("\"spec\":").append(spec_json).append(","));
  return out;
}

Result<JobEntry> EntryFromJson(std::string_view text) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    JobEntry e;
    if (!j.contains("spec_of")) {
      Result<jobspec::JobSpec> spec = jobspec::JobSpecFromJson(j.at("spec").dump());
      if (!spec.ok()) return spec.status();
      e.spec = std::make_shared<const jobspec::JobSpec>(std::move(*spec));
    }
    e.id = j.at("id").get<JobId>();
    e.uid = j.at("uid").get<std::uint32_t>();
    e.gid = j.at("gid").get<std::uint32_t>();
    e.user = j.at("user").get<std::string>();
    if (!ParseJobState(j.at("state").get<std::string>(), &e.state))
      return InvalidArgument("job record: unknown state " + j.at("state").dump());
    e.reason = j.at("reason").get<std::string>();
    e.submit_time = j.at("submit_time").get<Time>();
    e.start_time = j.at("start_time").get<Time>();
    e.end_time = j.at("end_time").get<Time>();
    e.exit_code = j.at("exit_code").get<std::int32_t>();
    e.signal = j.at("signal").get<std::int32_t>();
    e.restart_count = j.at("restart_count").get<std::int32_t>();
    e.admin_priority = j.at("admin_priority").get<std::uint32_t>();
    e.held_by_user = j.at("held_by_user").get<bool>();
    e.held_by_admin = j.at("held_by_admin").get<bool>();
    e.special_exit = j.value("special_exit", false);  // absent unless requeued so
    e.requeue_held = j.value("requeue_held", false);
    e.comment = j.value("comment", "");  // absent unless set
    e.array_job_id = j.at("array_job_id").get<JobId>();
    e.array_task_id = j.at("array_task_id").get<std::uint32_t>();
    e.het_job_id = j.value("het_job_id", JobId{0});  // absent unless a component
    e.het_offset = j.value("het_offset", 0u);
    e.het_size = j.value("het_size", 0u);
    e.cancel_requested = j.at("cancel_requested").get<bool>();
    e.timed_out = j.at("timed_out").get<bool>();
    e.preempted = j.value("preempted", false);  // absent unless preempted
    e.requeue_at_end = j.value("requeue_at_end", false);
    e.next_step_id = j.at("next_step_id").get<std::int32_t>();
    e.suspend_time = j.value("suspend_time", Time{0});  // absent unless it was suspended
    e.suspended_seconds = j.value("suspended_seconds", Seconds{0});
    e.failure_cause = j.value("failure_cause", "");  // absent in records written before it
    e.failure_detail = j.value("failure_detail", "");
    e.failure_run = j.value("failure_run", -1);
    for (const auto& p : j.at("placement"))
      e.placement.push_back({p.at("node").get<std::string>(), p.at("cpus").get<std::int32_t>(),
                             p.at("mem_mb").get<std::int64_t>(),
                             p.at("gpus").get<std::uint64_t>()});
    return e;
  } catch (const nlohmann::json::exception& ex) {
    return InvalidArgument(std::string("job record: ") + ex.what());
  }
}

Result<JobRecordHead> HeadFromJson(std::string_view text) {
  // The spec (most of a record) is skipped as it is read, never built.
  const nlohmann::json::parser_callback_t skip_spec =
      [](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        return !(depth == 1 && event == nlohmann::json::parse_event_t::key && parsed == "spec");
      };
  try {
    nlohmann::json j = nlohmann::json::parse(text, skip_spec);
    JobRecordHead h;
    h.id = j.at("id").get<JobId>();
    if (!ParseJobState(j.at("state").get<std::string>(), &h.state))
      return InvalidArgument("job record: unknown state " + j.at("state").dump());
    h.submit_time = j.at("submit_time").get<Time>();
    h.end_time = j.at("end_time").get<Time>();
    h.user = j.at("user").get<std::string>();
    h.array_job_id = j.at("array_job_id").get<JobId>();
    h.array_task_id = j.at("array_task_id").get<std::uint32_t>();
    h.het_job_id = j.value("het_job_id", JobId{0});
    return h;
  } catch (const nlohmann::json::exception& ex) {
    return InvalidArgument(std::string("job record: ") + ex.what());
  }
}

}  // namespace lockstep::controller
