#include "cli/format/sacct_fields.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/format/field_format.h"
#include "cli/format/sacct.h"
#include "cli/format/job_view.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

using K = SacctKind;

// Slurm 22.05's field table in its order (src/sacct/sacct.c), which decides what an abbreviation
// means ("p" is Partition) and is the order --helpformat prints; lockstep's own fields follow.
constexpr std::array<SacctField, 111> kFields = {{
    {"Account", 10, K::kString},
    {"AdminComment", 15, K::kString},
    {"AllocCPUS", 10, K::kNumber},
    {"AllocNodes", 10, K::kString},
    {"AllocTRES", 10, K::kString},
    {"AssocID", 7, K::kNumber},
    {"AveCPU", 10, K::kString},
    {"AveCPUFreq", 10, K::kString},
    {"AveDiskRead", 14, K::kString},
    {"AveDiskWrite", 14, K::kString},
    {"AvePages", 10, K::kString},
    {"AveRSS", 10, K::kString},
    {"AveVMSize", 10, K::kString},
    {"BlockID", 16, K::kString},
    {"Cluster", 10, K::kString},
    {"Comment", 14, K::kString},
    {"Constraints", 19, K::kString},
    {"ConsumedEnergy", 14, K::kString},
    {"ConsumedEnergyRaw", 17, K::kNumber},
    {"Container", 19, K::kString},
    {"CPUTime", 10, K::kDuration},
    {"CPUTimeRAW", 10, K::kNumber},
    {"DBIndex", -21, K::kNumber},
    {"DerivedExitCode", 15, K::kString},
    {"Elapsed", 10, K::kDuration},
    {"ElapsedRaw", 10, K::kNumber},
    {"Eligible", 19, K::kDate},
    {"End", 19, K::kDate},
    {"ExitCode", 8, K::kString},
    {"Flags", 19, K::kString},
    {"GID", 6, K::kNumber},
    {"Group", 9, K::kString},
    {"JobID", -12, K::kString},
    {"JobIDRaw", -12, K::kString},
    {"JobName", 10, K::kString},
    {"Layout", 9, K::kString},
    {"MaxDiskRead", 12, K::kString},
    {"MaxDiskReadNode", 15, K::kString},
    {"MaxDiskReadTask", 15, K::kNumber},
    {"MaxDiskWrite", 12, K::kString},
    {"MaxDiskWriteNode", 16, K::kString},
    {"MaxDiskWriteTask", 16, K::kNumber},
    {"MaxPages", 8, K::kString},
    {"MaxPagesNode", 12, K::kString},
    {"MaxPagesTask", 14, K::kNumber},
    {"MaxRSS", 10, K::kString},
    {"MaxRSSNode", 10, K::kString},
    {"MaxRSSTask", 10, K::kNumber},
    {"MaxVMSize", 10, K::kString},
    {"MaxVMSizeNode", 14, K::kString},
    {"MaxVMSizeTask", 14, K::kNumber},
    {"McsLabel", 12, K::kString},
    {"MinCPU", 10, K::kString},
    {"MinCPUNode", 10, K::kString},
    {"MinCPUTask", 10, K::kNumber},
    {"NCPUS", 10, K::kNumber},
    {"NNodes", 8, K::kNumber},
    {"NodeList", 15, K::kString},
    {"NTasks", 8, K::kNumber},
    {"Partition", 10, K::kString},
    {"Priority", 10, K::kNumber},
    {"QOS", 10, K::kString},
    {"QOSRAW", 6, K::kNumber},
    {"Reason", 22, K::kString},
    {"ReqCPUFreq", 10, K::kString},
    {"ReqCPUFreqGov", 13, K::kString},
    {"ReqCPUFreqMax", 13, K::kString},
    {"ReqCPUFreqMin", 13, K::kString},
    {"ReqCPUS", 8, K::kNumber},
    {"ReqMem", 10, K::kString},
    {"ReqNodes", 8, K::kString},
    {"ReqTRES", 10, K::kString},
    {"Reservation", 20, K::kString},
    {"ReservationId", 8, K::kNumber},
    {"Reserved", 10, K::kDuration},
    {"ResvCPU", 10, K::kDuration},
    {"ResvCPURAW", 10, K::kNumber},
    {"Start", 19, K::kDate},
    {"State", 10, K::kString},
    {"Submit", 19, K::kDate},
    {"SubmitLine", 20, K::kString},
    {"Suspended", 10, K::kDuration},
    {"SystemComment", 15, K::kString},
    {"SystemCPU", 10, K::kString},
    {"Timelimit", 10, K::kString},
    {"TimelimitRaw", 10, K::kString},
    {"TotalCPU", 10, K::kString},
    {"TRESUsageInAve", 14, K::kString},
    {"TRESUsageInMax", 14, K::kString},
    {"TRESUsageInMaxNode", 18, K::kString},
    {"TRESUsageInMaxTask", 18, K::kString},
    {"TRESUsageInMin", 14, K::kString},
    {"TRESUsageInMinNode", 18, K::kString},
    {"TRESUsageInMinTask", 18, K::kString},
    {"TRESUsageInTot", 14, K::kString},
    {"TRESUsageOutAve", 15, K::kString},
    {"TRESUsageOutMax", 15, K::kString},
    {"TRESUsageOutMaxNode", 19, K::kString},
    {"TRESUsageOutMaxTask", 19, K::kString},
    {"TRESUsageOutMin", 15, K::kString},
    {"TRESUsageOutMinNode", 19, K::kString},
    {"TRESUsageOutMinTask", 19, K::kString},
    {"TRESUsageOutTot", 15, K::kString},
    {"UID", 6, K::kNumber},
    {"User", 9, K::kString},
    {"UserCPU", 10, K::kString},
    {"WCKey", 10, K::kString},
    {"WCKeyID", 10, K::kNumber},
    {"WorkDir", 20, K::kString},
    // lockstep's: how many times the job went back to the queue (Slurm 23.02's field), and why
    // its last run did not complete (docs/health.md).
    {"Restarts", 8, K::kNumber},
    {"FailureCause", 12, K::kString},
}};

std::string Num(std::int64_t v) {
  return fmt::format("{}", v);
}

std::optional<std::string> NonEmpty(std::string s) {
  if (s.empty()) return std::nullopt;
  return s;
}

// The TRES string sacct shows for a job (ReqTRES, AllocTRES), names in alphabetical order. GPUs
// of a type (a MIG slice's, "a100_1g.10gb") count under it too, as Slurm records them when
// AccountingStorageTRES names the type: "gres/gpu:a100_1g.10gb=1,gres/gpu=1".
std::string TresString(std::int64_t cpus, std::int64_t mem_mb, std::int64_t nodes,
                       std::int64_t gpus, const std::string& gpu_type = "") {
  std::vector<std::string> parts;
  parts.push_back(fmt::format("billing={}", cpus));
  parts.push_back(fmt::format("cpu={}", cpus));
  if (gpus > 0 && !gpu_type.empty()) parts.push_back(fmt::format("gres/gpu:{}={}", gpu_type, gpus));
  if (gpus > 0) parts.push_back(fmt::format("gres/gpu={}", gpus));
  if (mem_mb > 0) parts.push_back(fmt::format("mem={}", ConvertUnits(mem_mb, 2)));
  parts.push_back(fmt::format("node={}", nodes));
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string StepSuffix(const nlohmann::json& step) {
  auto it = step.find("step_id");
  if (it == step.end()) return "";
  if (it->is_string()) return "." + EscapeControl(it->get_ref<const std::string&>());
  if (it->is_number()) return "." + Num(JIntOr(step, "step_id", 0));
  return "";
}

std::string StateWithCanceller(const nlohmann::json& object) {
  std::string state = JobState(object);
  if (state == "CANCELLED") {
    if (auto uid = JInt(object, "cancelled_by")) return fmt::format("CANCELLED by {}", *uid);
  }
  return state;
}

Seconds StepElapsed(const nlohmann::json& step, Time now) {
  Time start = JIntOr(step, "start_time", 0);
  if (start == 0) return 0;
  Time end = JIntOr(step, "end_time", 0);
  return (end == 0 ? now : end) - start;
}

std::int64_t StepNodeCount(const nlohmann::json& step) {
  if (auto n = JInt(step, "node_count")) return *n;
  auto hosts = ExpandHostlist(JStr(step, "nodes"));
  return hosts.ok() ? static_cast<std::int64_t>(hosts->size()) : 0;
}

std::optional<std::string> JobValue(std::string_view f, const nlohmann::json& job, Time now) {
  std::string state = JobState(job);
  bool pending = IsPendingState(state);
  std::int64_t cpus = JIntOr(job, "cpus", 0);
  if (f == "AllocCPUS" || f == "NCPUS" || f == "ReqCPUS") return Num(cpus);
  if (f == "AllocNodes") return Num(pending ? 0 : JIntOr(job, "node_count", 0));
  if (f == "AllocTRES" || f == "ReqTRES") {
    if (f == "AllocTRES" && pending) return std::nullopt;
    return TresString(cpus, JIntOr(job, "mem_mb", 0), JIntOr(job, "node_count", 0),
                      JIntOr(job, "gpus", 0), EscapeControl(JStr(job, "gpu_type")));
  }
  if (f == "CPUTime" || f == "CPUTimeRAW") return Num(JobTimeUsed(job, now) * cpus);
  if (f == "Elapsed" || f == "ElapsedRaw") return Num(JobTimeUsed(job, now));
  if (f == "Eligible") return Num(JIntOr(job, "eligible_time", 0));
  if (f == "End") return Num(JIntOr(job, "end_time", 0));
  if (f == "Start") return Num(JIntOr(job, "start_time", 0));
  if (f == "Submit") return Num(JIntOr(job, "submit_time", 0));
  if (f == "GID") return Num(JIntOr(job, "gid", 0));
  if (f == "Group") return NonEmpty(JStr(job, "group"));
  if (f == "NNodes" || f == "ReqNodes") return Num(JIntOr(job, "node_count", 0));
  if (f == "NodeList") {
    std::string nodes = JStr(job, "nodes");
    return nodes.empty() ? std::string("None assigned") : nodes;
  }
  if (f == "Partition") return NonEmpty(JStr(job, "partition"));
  if (f == "Priority") return Num(JIntOr(job, "priority", 0));
  if (f == "QOS") return NonEmpty(JStr(job, "qos"));
  if (f == "Reason") return NonEmpty(JStr(job, "reason"));
  if (f == "ReqMem") return ConvertUnits(JIntOr(job, "mem_mb", 0), 2);
  if (f == "Reservation") return NonEmpty(JStr(job, "reservation"));
  if (f == "Restarts") return Num(JIntOr(job, "restart_count", 0));
  if (f == "FailureCause") {
    auto failure = job.find("failure");
    if (failure == job.end() || !failure->is_object()) return std::nullopt;
    return NonEmpty(JStr(*failure, "cause"));
  }
  if (f == "Timelimit" || f == "TimelimitRaw") {
    TimeLimit limit = JobTimeLimit(job);
    if (limit.unlimited) return std::string("UNLIMITED");
    if (limit.unset) return std::string("Partition_Limit");
    return f == "Timelimit" ? LongDuration(limit.seconds) : Num(limit.seconds / 60);
  }
  if (f == "UID") return Num(JIntOr(job, "uid", 0));
  if (f == "User") return NonEmpty(JStr(job, "user"));
  if (f == "WorkDir") return NonEmpty(JStr(job, "work_dir"));
  if (f == "Constraints") return NonEmpty(JStr(job, "features"));
  if (f == "Comment") return NonEmpty(JStr(job, "comment"));
  if (f == "SubmitLine") return NonEmpty(EscapeControl(JStr(job, "submit_line")));
  if (f == "DerivedExitCode") return std::string("0:0");
  if (f == "Suspended") return Num(0);
  return std::nullopt;
}

std::optional<std::string> StepValue(std::string_view f, const nlohmann::json& job,
                                     const nlohmann::json& step, Time now) {
  std::int64_t cpus = JIntOr(step, "cpus", JIntOr(job, "cpus", 0));
  if (f == "AllocCPUS" || f == "NCPUS") return Num(cpus);
  if (f == "AllocNodes" || f == "NNodes") return Num(StepNodeCount(step));
  if (f == "AllocTRES") {
    return TresString(cpus, JIntOr(step, "mem_mb", 0), StepNodeCount(step),
                      JIntOr(step, "gpus", 0));
  }
  if (f == "CPUTime" || f == "CPUTimeRAW") return Num(StepElapsed(step, now) * cpus);
  if (f == "Elapsed" || f == "ElapsedRaw") return Num(StepElapsed(step, now));
  if (f == "Eligible" || f == "Start" || f == "Submit") return Num(JIntOr(step, "start_time", 0));
  if (f == "End") return Num(JIntOr(step, "end_time", 0));
  if (f == "NodeList") return NonEmpty(JStr(step, "nodes"));
  if (f == "NTasks") return Num(JIntOr(step, "tasks", 1));
  if (f == "Suspended") return Num(0);
  return std::nullopt;
}

}  // namespace

std::span<const SacctField> AllSacctFields() {
  return kFields;
}

std::string SacctHelpFormat() {
  std::string out;
  for (std::size_t i = 0; i < kFields.size(); ++i) {
    if (i % 4 != 0) out += ' ';
    else if (i != 0) out += '\n';
    out += fmt::format("{:<19}", kFields[i].name);
  }
  return out + '\n';
}

const SacctField* FindSacctField(std::string_view typed) {
  if (typed.empty()) return nullptr;
  for (const SacctField& field : kFields) {
    std::string_view name = field.name;
    if (typed.size() > name.size()) continue;
    bool match = true;
    for (std::size_t i = 0; i < typed.size() && match; ++i) {
      match = std::tolower(static_cast<unsigned char>(typed[i])) ==
              std::tolower(static_cast<unsigned char>(name[i]));
    }
    if (match) return &field;
  }
  return nullptr;
}

std::optional<std::string> SacctValue(const SacctField& field, const SacctRow& row, Time now) {
  std::string_view f = field.name;
  const nlohmann::json& job = *row.job;
  // Fields a step line shares with its job, or derives from it.
  if (f == "JobID") return DisplayJobId(job) + (row.step ? StepSuffix(*row.step) : "");
  if (f == "JobIDRaw")
    return Num(JIntOr(job, "job_id", 0)) + (row.step ? StepSuffix(*row.step) : "");
  if (f == "Account") return NonEmpty(JStr(job, "account"));
  if (f == "JobName") return NonEmpty(JStr(row.step ? *row.step : job, "name"));
  if (f == "State") return StateWithCanceller(row.step ? *row.step : job);
  if (f == "ExitCode") return ExitCodeString(row.step ? *row.step : job);
  std::optional<std::string> value =
      row.step ? StepValue(f, job, *row.step, now) : JobValue(f, job, now);
  // Dates and durations come back as seconds; print them as Slurm does.
  if (value && field.kind == SacctKind::kDate) {
    Time t = std::stoll(*value);
    return t == 0 ? std::string("Unknown") : TimeStamp(t);
  }
  if (value && field.kind == SacctKind::kDuration) return LongDuration(std::stoll(*value));
  return value;
}

}  // namespace lockstep::cli
