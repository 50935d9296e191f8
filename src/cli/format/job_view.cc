#include "cli/format/job_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "cli/format/field_format.h"

namespace lockstep::cli {

std::string CompactJobState(std::string_view state) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kCodes = {{
      {"PENDING", "PD"},      {"RUNNING", "R"},         {"SUSPENDED", "S"},
      {"COMPLETING", "CG"},   {"COMPLETED", "CD"},      {"CANCELLED", "CA"},
      {"FAILED", "F"},        {"TIMEOUT", "TO"},        {"NODE_FAIL", "NF"},
      {"PREEMPTED", "PR"},    {"OUT_OF_MEMORY", "OOM"}, {"BOOT_FAIL", "BF"},
      {"DEADLINE", "DL"},     {"CONFIGURING", "CF"},    {"REQUEUED", "RQ"},
      {"REQUEUE_HOLD", "RH"}, {"REQUEUE_FED", "RF"},    {"RESIZING", "RS"},
      {"REVOKED", "RV"},      {"SIGNALING", "SI"},      {"SPECIAL_EXIT", "SE"},
      {"STAGE_OUT", "SO"},    {"STOPPED", "ST"},        {"RESV_DEL_HOLD", "RD"},
  }};
  for (const auto& [name, code] : kCodes) {
    if (name == state) return std::string(code);
  }
  return std::string(state);
}

std::string JobState(const nlohmann::json& job) {
  std::string state = JStr(job, "state");
  if (state.empty()) return "PENDING";
  std::transform(state.begin(), state.end(), state.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return state;
}

bool IsPendingState(std::string_view state) {
  return state == "PENDING" || state == "SPECIAL_EXIT";  // SE: pending, held (requeuehold)
}

bool IsActiveState(std::string_view state) {
  return state == "RUNNING" || state == "COMPLETING" || state == "SUSPENDED";
}

std::string ArrayTaskString(const nlohmann::json& job) {
  std::string s = JStr(job, "array_task_str");
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  return s;
}

std::optional<std::int64_t> ArrayTaskId(const nlohmann::json& job) {
  if (JIntOr(job, "array_job_id", 0) == 0) return std::nullopt;
  return JInt(job, "array_task_id");
}

std::string DisplayJobId(const nlohmann::json& job, std::optional<std::int64_t> task_override) {
  if (std::int64_t het = JIntOr(job, "het_job_id", 0))  // "43+1", as Slurm shows components
    return fmt::format("{}+{}", het, JIntOr(job, "het_job_offset", 0));
  std::int64_t array_job = JIntOr(job, "array_job_id", 0);
  std::int64_t job_id = JIntOr(job, "job_id", 0);
  if (array_job == 0) array_job = job_id;
  if (task_override) return fmt::format("{}_{}", array_job, *task_override);
  std::string tasks = ArrayTaskString(job);
  if (!tasks.empty()) return fmt::format("{}_[{}]", array_job, tasks);
  if (auto task = ArrayTaskId(job)) return fmt::format("{}_{}", array_job, *task);
  return fmt::format("{}", job_id);
}

Seconds JobTimeUsed(const nlohmann::json& job, Time now) {
  std::string state = JobState(job);
  Time start = JIntOr(job, "start_time", 0);
  if (start == 0 || IsPendingState(state)) return 0;
  Time end = JIntOr(job, "end_time", 0);
  if (state == "RUNNING" || end == 0) end = now;
  // As Slurm's: the time a job spent suspended is not time used.
  const Time suspended_at = JIntOr(job, "suspend_time", 0);
  if (state == "SUSPENDED" && suspended_at > 0) end = suspended_at;
  return std::max<Seconds>(0, end - start - JIntOr(job, "suspended_seconds", 0));
}

TimeLimit JobTimeLimit(const nlohmann::json& job) {
  TimeLimit limit;
  if (JIsNull(job, "time_limit")) {
    limit.unlimited = true;
  } else if (auto seconds = JInt(job, "time_limit")) {
    limit.seconds = *seconds;
    if (*seconds >= kUnlimited) limit.unlimited = true;
  } else {
    limit.unset = true;
  }
  return limit;
}

std::string ExitCodeString(const nlohmann::json& object) {
  return fmt::format("{}:{}", JIntOr(object, "exit_code", 0), JIntOr(object, "signal", 0));
}

Time JobStartOrExpected(const nlohmann::json& job) {
  Time start = JIntOr(job, "start_time", 0);
  if (start != 0) return start;
  if (IsPendingState(JobState(job))) return JIntOr(job, "expected_start", 0);
  return 0;
}

}  // namespace lockstep::cli
