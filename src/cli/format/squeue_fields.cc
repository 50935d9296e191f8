#include "cli/format/squeue_fields.h"

#include <fmt/format.h>

#include <array>

#include "cli/format/field_format.h"
#include "cli/format/job_view.h"

namespace lockstep::cli {
namespace {

struct HeaderEntry {
  char letter;
  const char* header;
  bool cut;
};

// squeue's letters that lockstep fills, with their headers (src/squeue/opts.c, print.c).
constexpr std::array<HeaderEntry, 52> kHeaders = {{
    {'a', "ACCOUNT", true},
    {'A', "JOBID", true},
    {'b', "TRES_PER_NODE", true},
    {'B', "EXEC_HOST", true},
    {'C', "CPUS", true},
    {'D', "NODES", true},
    {'e', "END_TIME", true},
    {'E', "DEPENDENCY", true},
    {'f', "FEATURES", true},
    {'F', "ARRAY_JOB_ID", true},
    {'g', "GROUP", true},
    {'G', "GROUP", true},
    {'i', "JOBID", true},
    {'j', "NAME", true},
    {'k', "COMMENT", true},
    {'K', "ARRAY_TASK_ID", true},
    {'l', "TIME_LIMIT", true},
    {'L', "TIME_LEFT", true},
    {'m', "MIN_MEMORY", true},
    {'M', "TIME", true},
    {'n', "REQ_NODES", true},
    {'N', "NODELIST", false},
    {'o', "COMMAND", true},
    {'p', "PRIORITY", true},
    {'P', "PARTITION", true},
    {'q', "QOS", true},
    {'Q', "PRIORITY", true},
    {'r', "REASON", true},
    {'R', "NODELIST(REASON)", false},
    {'S', "START_TIME", true},
    {'t', "ST", true},
    {'T', "STATE", true},
    {'u', "USER", true},
    {'U', "UID", true},
    {'v', "RESERVATION", true},
    {'V', "SUBMIT_TIME", true},
    {'w', "WCKEY", true},
    {'W', "LICENSES", true},
    {'x', "EXC_NODES", true},
    {'y', "NICE", true},
    {'Y', "SCHEDNODES", false},
    {'Z', "WORK_DIR", true},
    {'c', "MIN_CPUS", true},
    {'h', "OVER_SUBSCRIBE", true},
    // Requests lockstep has no counterpart for, printed as Slurm prints them when not given.
    {'d', "MIN_TMP_DISK", true},
    {'H', "SOCKETS_PER_NODE", true},
    {'I', "CORES_PER_SOCKET", true},
    {'J', "THREADS_PER_CORE", true},
    {'O', "CONTIGUOUS", true},
    {'s', "", true},  // 22.05: the select plugin's data, empty
    {'X', "CORE_SPEC", true},
    {'z', "S:C:T", true},
}};

// Slurm prints a missing string with printf("%s", NULL): "(null)".
std::string OrNull(std::string s) {
  return s.empty() ? std::string("(null)") : s;
}

std::string Int(const nlohmann::json& job, const char* key) {
  return fmt::format("{}", JIntOr(job, key, 0));
}

// _print_time: a time stamp, or "N/A" for 0.
std::string TimeOrNa(Time t) {
  return t == 0 ? std::string("N/A") : TimeStamp(t);
}

SqueueCell Limit(const nlohmann::json& job, bool left, Time now) {
  TimeLimit limit = JobTimeLimit(job);
  if (limit.unlimited) return {"UNLIMITED", true};
  if (limit.unset) return {"NOT_SET", true};
  Seconds value = left ? limit.seconds - JobTimeUsed(job, now) : limit.seconds;
  return {SqueueDuration(value), false};
}

// END_TIME: the recorded end, else the start (or expected start) plus the limit; "NONE" for an
// unfinished job without a limit (Slurm: time_limit INFINITE and end_time in the future).
std::string EndTime(const nlohmann::json& job, Time now) {
  Time end = JIntOr(job, "end_time", 0);
  TimeLimit limit = JobTimeLimit(job);
  std::string state = JobState(job);
  bool unfinished = IsPendingState(state) || IsActiveState(state);
  if (end == 0 && unfinished) {
    Time start = JobStartOrExpected(job);
    if (start != 0 && limit.unlimited) return "NONE";
    if (start != 0 && !limit.unset) end = start + limit.seconds;
  }
  if (limit.unlimited && end > now) return "NONE";
  return TimeOrNa(end);
}

SqueueCell ReasonList(const nlohmann::json& job) {
  std::string state = JobState(job);
  bool show_reason = state != "COMPLETING" &&
                     (IsPendingState(state) || state == "TIMEOUT" || state == "OUT_OF_MEMORY" ||
                      state == "DEADLINE" || state == "FAILED" || state == "STAGE_OUT");
  if (show_reason) {
    std::string reason = JStr(job, "reason");
    return {"(" + (reason.empty() ? std::string("None") : reason) + ")", true};
  }
  return {JStr(job, "nodes"), false};
}

}  // namespace

std::optional<SqueueCell> SqueueHeader(char letter) {
  for (const auto& entry : kHeaders) {
    if (entry.letter == letter) return SqueueCell{entry.header, entry.cut};
  }
  return std::nullopt;
}

SqueueCell SqueueValue(char letter, const SqueueRow& row, Time now) {
  const nlohmann::json& job = *row.job;
  switch (letter) {
    case 'a':
      return {OrNull(JStr(job, "account"))};
    case 'A':
      return {Int(job, "job_id")};
    case 'b': {
      std::string tres = JStr(job, "tres_per_node");
      return {tres.empty() ? std::string("N/A") : TresPerText(tres)};
    }
    case 'B': {
      std::string host = JStr(job, "batch_host");
      return {host.empty() ? std::string("n/a") : host};
    }
    case 'c':
      return {"1"};
    case 'd':
    case 'O':
      return {"0"};
    case 'H':
    case 'I':
    case 'J':
      return {"*"};
    case 's':
      return {""};
    case 'X':
      return {"N/A"};
    case 'z':
      return {"*:*:*"};
    case 'C':
      return {Int(job, "cpus")};
    case 'D':
      return {Int(job, "node_count")};
    case 'e':
      return {EndTime(job, now)};
    case 'E':
      return {OrNull(JStr(job, "dependency"))};
    case 'f':
      return {OrNull(JStr(job, "features"))};
    case 'F': {
      bool is_array = row.task || !ArrayTaskString(job).empty() || ArrayTaskId(job);
      return {is_array && JIntOr(job, "array_job_id", 0) != 0 ? Int(job, "array_job_id")
                                                              : Int(job, "job_id")};
    }
    case 'g': {
      std::string group = JStr(job, "group");
      return {group.empty() ? Int(job, "gid") : group};
    }
    case 'G':
      return {Int(job, "gid")};
    case 'h':
      return {JBool(job, "exclusive") ? "NO" : JBool(job, "exclusive_user") ? "USER" : "OK"};
    case 'i':
      return {DisplayJobId(job, row.task)};
    case 'j':
      return {JStr(job, "name")};
    case 'k':
      return {OrNull(JStr(job, "comment"))};
    case 'K': {
      if (row.task) return {fmt::format("{}", *row.task)};
      std::string tasks = ArrayTaskString(job);
      if (!tasks.empty()) return {tasks};
      if (auto task = ArrayTaskId(job)) return {fmt::format("{}", *task)};
      return {"N/A"};
    }
    case 'l':
      return Limit(job, false, now);
    case 'L':
      return Limit(job, true, now);
    case 'm':
      return {ConvertUnits(JIntOr(job, "mem_mb", 0), 2)};
    case 'M':
      return {SqueueDuration(JobTimeUsed(job, now)), false};
    case 'n':
      return {JStr(job, "req_nodes")};
    case 'N':
      return {JStr(job, "nodes"), false};
    case 'o':
      return {OrNull(JStr(job, "command"))};
    case 'p': {
      double normalized = static_cast<double>(JIntOr(job, "priority", 0)) / 4294967295.0;
      return {fmt::format("{:16.14f}", normalized)};
    }
    case 'P':
      return {JStr(job, "partition")};
    case 'q':
      return {OrNull(JStr(job, "qos"))};
    case 'Q':
      return {Int(job, "priority")};
    case 'r': {
      std::string reason = JStr(job, "reason");
      return {reason.empty() ? std::string("None") : reason};
    }
    case 'R':
      return ReasonList(job);
    case 'S':
      return {TimeOrNa(JobStartOrExpected(job))};
    case 't':
      return {CompactJobState(JobState(job))};
    case 'T':
      return {JobState(job)};
    case 'u':
      return {JStr(job, "user")};
    case 'U':
      return {Int(job, "uid")};
    case 'v':
      return {OrNull(JStr(job, "reservation"))};
    case 'V':
      return {TimeOrNa(JIntOr(job, "submit_time", 0))};
    case 'w':
      return {OrNull(JStr(job, "wckey"))};
    case 'W':
      return {OrNull(JStr(job, "licenses"))};
    case 'x':
      return {JStr(job, "exc_nodes")};
    case 'y':
      return {Int(job, "nice")};
    case 'Y':
      return {OrNull(JStr(job, "sched_nodes")), false};
    case 'Z':
      return {OrNull(JStr(job, "work_dir"))};
    default:
      return {""};
  }
}

}  // namespace lockstep::cli
