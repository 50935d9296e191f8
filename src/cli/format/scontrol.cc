#include "cli/format/scontrol.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <utility>
#include <vector>

#include "cli/format/field_format.h"
#include "cli/format/job_view.h"
#include "cli/format/sinfo_record.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

// A record's lines; joined with "\n   " (or " " for -o) and followed by a blank line.
using Lines = std::vector<std::string>;

std::string Join(const Lines& lines, const ScontrolOptions& options) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i) out += options.one_liner ? " " : "\n   ";
    out += lines[i];
  }
  return out + (options.one_liner ? "\n" : "\n\n");
}

std::string OrNull(std::string s) {
  return s.empty() ? std::string("(null)") : s;
}

std::string Stamp(Time t) {
  return t == 0 ? std::string("Unknown") : TimeStamp(t);
}

// The records in `input`: an array, the API's envelope {key: [...]}, or a single object.
Result<std::vector<const nlohmann::json*>> Many(const nlohmann::json& input, const char* key) {
  if (input.is_object() && !input.contains(key)) return std::vector<const nlohmann::json*>{&input};
  return Records(input, key);
}

// ReqTRES/AllocTRES as scontrol prints them: TRES in Slurm's id order.
std::string Tres(std::int64_t cpus, std::int64_t mem_mb, std::int64_t nodes, std::int64_t gpus,
                 bool billing) {
  std::vector<std::string> parts;
  if (cpus) parts.push_back(fmt::format("cpu={}", cpus));
  if (mem_mb) parts.push_back(fmt::format("mem={}", ConvertUnits(mem_mb, 2)));
  if (nodes) parts.push_back(fmt::format("node={}", nodes));
  if (billing && cpus) parts.push_back(fmt::format("billing={}", cpus));
  if (gpus) parts.push_back(fmt::format("gres/gpu={}", gpus));
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string LimitText(const TimeLimit& limit) {
  if (limit.unlimited) return "UNLIMITED";
  if (limit.unset) return "Partition_Limit";
  return LongDuration(limit.seconds);
}

Lines JobLines(const nlohmann::json& job, Time now) {
  std::string state = JobState(job);
  bool pending = IsPendingState(state);
  TimeLimit limit = JobTimeLimit(job);
  Lines l;
  std::string first = fmt::format("JobId={} ", JIntOr(job, "job_id", 0));
  if (std::int64_t array = JIntOr(job, "array_job_id", 0)) {
    std::string tasks = ArrayTaskString(job);
    first += tasks.empty() ? fmt::format("ArrayJobId={} ArrayTaskId={} ", array,
                                         JIntOr(job, "array_task_id", 0))
                           : fmt::format("ArrayJobId={} ArrayTaskId={} ", array, tasks);
  }
  if (std::int64_t het = JIntOr(job, "het_job_id", 0))
    first += fmt::format("HetJobId={} HetJobOffset={} ", het, JIntOr(job, "het_job_offset", 0));
  l.push_back(first + "JobName=" + JStr(job, "name"));
  if (job.contains("het_job_id_set")) l.push_back("HetJobIdSet=" + JStr(job, "het_job_id_set"));
  std::string group = JStr(job, "group");
  std::int64_t gid = JIntOr(job, "gid", 0);
  l.push_back(fmt::format("UserId={}({}) GroupId={}({}) MCS_label=N/A", JStr(job, "user"),
                          JIntOr(job, "uid", 0), group.empty() ? fmt::format("{}", gid) : group,
                          gid));
  l.push_back(fmt::format("Priority={} Nice={} Account={} QOS={}", JIntOr(job, "priority", 0),
                          JIntOr(job, "nice", 0), OrNull(JStr(job, "account")),
                          OrNull(JStr(job, "qos"))));
  std::string reason = JStr(job, "reason");
  std::replace_if(
      reason.begin(), reason.end(), [](unsigned char c) { return std::isspace(c); }, '_');
  l.push_back(fmt::format("JobState={} Reason={} Dependency={}", state,
                          reason.empty() ? "None" : reason, OrNull(JStr(job, "dependency"))));
  l.push_back(fmt::format("Requeue={} Restarts={} BatchFlag=1 Reboot=0 ExitCode={}",
                          JBool(job, "requeue") ? 1 : 0, JIntOr(job, "restart_count", 0),
                          ExitCodeString(job)));
  // lockstep's failure attribution (docs/health.md): the cause of the last run that did not
  // complete, with its evidence.
  if (auto failure = job.find("failure"); failure != job.end() && failure->is_object())
    l.push_back(fmt::format("FailureCause={} FailureDetail={}", JStr(*failure, "cause"),
                            JStr(*failure, "detail")));
  l.push_back(fmt::format("RunTime={} TimeLimit={} TimeMin=N/A",
                          LongDuration(JobTimeUsed(job, now)), LimitText(limit)));
  l.push_back(fmt::format("SubmitTime={} EligibleTime={}", Stamp(JIntOr(job, "submit_time", 0)),
                          Stamp(JIntOr(job, "eligible_time", 0))));
  Time start = JobStartOrExpected(job);
  Time end = JIntOr(job, "end_time", 0);
  // scontrol suspend: the time suspended moves the end (SuspendTime= says since when).
  const Time suspended_at = JIntOr(job, "suspend_time", 0);
  if (end == 0 && start != 0 && !limit.unlimited && !limit.unset)
    end = start + limit.seconds + JIntOr(job, "suspended_seconds", 0);
  l.push_back(fmt::format("StartTime={} EndTime={} Deadline=N/A", Stamp(start),
                          limit.unlimited && (end == 0 || end > now) ? "Unknown" : Stamp(end)));
  l.push_back(fmt::format("SuspendTime={} SecsPreSuspend={}",
                          suspended_at > 0 ? Stamp(suspended_at) : "None",
                          suspended_at > 0 ? JobTimeUsed(job, now) : 0));
  l.push_back(fmt::format("Partition={} AllocNode:Sid=(null):0", OrNull(JStr(job, "partition"))));
  l.push_back(fmt::format("ReqNodeList={} ExcNodeList={}", OrNull(JStr(job, "req_nodes")),
                          OrNull(JStr(job, "exc_nodes"))));
  std::string nodelist = "NodeList=" + OrNull(JStr(job, "nodes"));
  if (!JStr(job, "sched_nodes").empty()) nodelist += " SchedNodeList=" + JStr(job, "sched_nodes");
  l.push_back(nodelist);
  if (!JStr(job, "batch_host").empty()) l.push_back("BatchHost=" + JStr(job, "batch_host"));
  std::int64_t cpus = JIntOr(job, "cpus", 0), nodes = JIntOr(job, "node_count", 0);
  l.push_back(fmt::format("NumNodes={} NumCPUs={} NumTasks={} CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
                          nodes, cpus, JIntOr(job, "tasks", 1)));
  std::string tres = Tres(cpus, JIntOr(job, "mem_mb", 0), nodes, JIntOr(job, "gpus", 0), true);
  l.push_back("ReqTRES=" + tres);
  l.push_back("AllocTRES=" + (pending ? std::string("(null)") : tres));
  l.push_back("Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*");
  l.push_back(fmt::format("MinCPUsNode=1 MinMemoryNode={} MinTmpDiskNode=0",
                          ConvertUnits(JIntOr(job, "mem_mb", 0), 2)));
  l.push_back(fmt::format("Features={} DelayBoot=00:00:00", OrNull(JStr(job, "features"))));
  l.push_back(fmt::format(
      "OverSubscribe={} Contiguous=0 Licenses=(null) Network=(null)",
      JBool(job, "exclusive") ? "NO" : JBool(job, "exclusive_user") ? "USER" : "OK"));
  l.push_back("Command=" + OrNull(JStr(job, "command")));
  l.push_back("WorkDir=" + OrNull(JStr(job, "work_dir")));
  // Slurm's line only when set (--comment, scontrol update Comment=).
  if (!JStr(job, "comment").empty()) l.push_back("Comment=" + JStr(job, "comment"));
  if (!JStr(job, "stderr").empty()) l.push_back("StdErr=" + JStr(job, "stderr"));
  l.push_back("StdIn=/dev/null");
  if (!JStr(job, "stdout").empty()) l.push_back("StdOut=" + JStr(job, "stdout"));
  // Slurm's line for --switches: the count, and how long it may still hold the job back.
  if (const std::int64_t switches = JIntOr(job, "max_switches", 0); switches > 0)
    l.push_back(fmt::format("Switches={}@{}", switches,
                            LongDuration(JIntOr(job, "switches_wait", 0))));
  static constexpr std::pair<const char*, const char*> kTresPer[] = {
      {"tres_per_job", "TresPerJob="}, {"tres_per_node", "TresPerNode="},
      {"tres_per_task", "TresPerTask="}};
  for (const auto& [key, label] : kTresPer)
    if (const std::string tres = JStr(job, key); !tres.empty())
      l.push_back(label + TresPerText(tres));
  return l;
}

// scontrol's node state (node_state_string_complete): "IDLE+DRAIN", "DOWN+NOT_RESPONDING".
std::string ScontrolNodeState(const NodeState& s) {
  std::string name = s.longname;
  bool no_respond = !name.empty() && name.back() == '*';
  if (no_respond) name.pop_back();
  std::string out;
  if (name == "drained")
    out = "IDLE+DRAIN";
  else if (name == "draining")
    out = "ALLOCATED+DRAIN";
  else if (name == "completing")
    out = "IDLE+COMPLETING";
  else if (name == "failing")
    out = "ALLOCATED+FAIL";
  else if (name == "fail")
    out = "IDLE+FAIL";
  else
    out = name;
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return no_respond ? out + "+NOT_RESPONDING" : out;
}

Lines NodeLines(const nlohmann::json& node) {
  SinfoNode n = ReadSinfoNode(node);
  std::int64_t gpus = JIntOr(node, "gpus", 0), gpus_alloc = JIntOr(node, "gpus_alloc", 0);
  std::int64_t mem_alloc = JIntOr(node, "mem_alloc_mb", 0);
  std::vector<std::string> parts;
  if (auto it = node.find("partitions"); it != node.end() && it->is_array()) {
    for (const auto& p : *it) {
      if (p.is_string()) parts.push_back(EscapeControl(p.get_ref<const std::string&>()));
    }
  }
  Lines l;
  l.push_back(fmt::format("NodeName={} CoresPerSocket={}", n.name, n.cores));
  l.push_back(
      fmt::format("CPUAlloc={} CPUEfctv={} CPUTot={} CPULoad=N/A", n.cpus_alloc, n.cpus, n.cpus));
  l.push_back("AvailableFeatures=" + OrNull(n.features));
  l.push_back("ActiveFeatures=" + OrNull(n.features));
  l.push_back("Gres=" + OrNull(n.gres));
  l.push_back(fmt::format("NodeAddr={} NodeHostName={}", n.name, n.name));
  l.push_back(fmt::format("RealMemory={} AllocMem={} FreeMem=N/A Sockets={} Boards=1", n.mem,
                          mem_alloc, n.sockets));
  l.push_back(
      fmt::format("State={} ThreadsPerCore={} TmpDisk={} Weight={} Owner=N/A "
                  "MCS_label=N/A",
                  ScontrolNodeState(n.state), n.threads, n.disk, n.weight));
  l.push_back("Partitions=" + fmt::format("{}", fmt::join(parts, ",")));
  l.push_back("CfgTRES=" + Tres(n.cpus, n.mem, 0, gpus, true));
  l.push_back("AllocTRES=" + Tres(n.cpus_alloc, mem_alloc, 0, gpus_alloc, false));
  // lockstep's own line: the limits the node holds jobs to (memory, cpus; none without cgroups).
  if (const std::string limits = JStr(node, "limits_enforced"); !limits.empty())
    l.push_back("LimitsEnforced=" + limits);
  if (!n.reason.empty()) {
    l.push_back(fmt::format("Reason={} [{}@{}]", n.reason,
                            n.reason_user.empty() ? "slurm" : n.reason_user, Stamp(n.reason_time)));
  }
  return l;
}

std::string DurationOr(const nlohmann::json& p, const char* key, const char* unset) {
  if (JIsNull(p, key)) return "UNLIMITED";
  auto seconds = JInt(p, key);
  if (!seconds) return unset;
  return LongDuration(*seconds);
}

Lines PartitionLines(const nlohmann::json& p, std::int64_t total_cpus) {
  std::string state = JStr(p, "state");
  std::transform(state.begin(), state.end(), state.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  auto max_nodes = JInt(p, "max_nodes");
  Lines l;
  l.push_back("PartitionName=" + JStr(p, "name"));
  l.push_back("AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL");
  l.push_back(fmt::format("AllocNodes=ALL Default={} QoS=N/A", JBool(p, "default") ? "YES" : "NO"));
  l.push_back(
      fmt::format("DefaultTime={} DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO",
                  // No DefaultTime set: Slurm says NONE (the partition's MaxTime applies).
                  JIsNull(p, "default_time") ? std::string("NONE")
                                             : DurationOr(p, "default_time", "NONE")));
  // Slurm's INFINITE: no limit is UNLIMITED, however the API spells it (null or INT32_MAX).
  const bool unlimited = !max_nodes || *max_nodes >= std::numeric_limits<std::int32_t>::max();
  l.push_back(fmt::format("MaxNodes={} MaxTime={} MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED",
                          unlimited ? std::string("UNLIMITED") : fmt::format("{}", *max_nodes),
                          DurationOr(p, "max_time", "UNLIMITED")));
  l.push_back("Nodes=" + OrNull(JStr(p, "nodes")));
  l.push_back(
      fmt::format("PriorityJobFactor={} PriorityTier={} RootOnly=NO ReqResv=NO OverSubscribe=NO",
                  JIntOr(p, "priority_job_factor", 1), JIntOr(p, "priority_tier", 1)));
  l.push_back("OverTimeLimit=NONE PreemptMode=OFF");
  l.push_back(fmt::format("State={} TotalCPUs={} TotalNodes={} SelectTypeParameters=NONE",
                          state.empty() ? "UP" : state, total_cpus, JIntOr(p, "node_count", 0)));
  l.push_back("JobDefaults=(null)");
  l.push_back("DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED");
  return l;
}

}  // namespace

Result<std::string> FormatScontrolShowJob(const nlohmann::json& jobs,
                                          const ScontrolOptions& options) {
  Result<std::vector<const nlohmann::json*>> records = Many(jobs, "jobs");
  if (!records.ok()) return records.status();
  if (records->empty()) return std::string("No jobs in the system\n");
  std::string out;
  for (const nlohmann::json* job : *records) out += Join(JobLines(*job, options.now), options);
  return out;
}

Result<std::string> FormatScontrolShowNode(const nlohmann::json& nodes,
                                           const ScontrolOptions& options) {
  Result<std::vector<const nlohmann::json*>> records = Many(nodes, "nodes");
  if (!records.ok()) return records.status();
  if (records->empty()) return std::string("No nodes in the system\n");
  std::string out;
  for (const nlohmann::json* node : *records) out += Join(NodeLines(*node), options);
  return out;
}

Result<std::string> FormatScontrolShowPartition(const nlohmann::json& partitions,
                                                const nlohmann::json& nodes,
                                                const ScontrolOptions& options) {
  Result<std::vector<const nlohmann::json*>> records = Many(partitions, "partitions");
  if (!records.ok()) return records.status();
  Result<std::vector<const nlohmann::json*>> node_records = Records(nodes, "nodes");
  if (!node_records.ok()) return node_records.status();
  if (records->empty()) return std::string("No partitions in the system\n");
  std::string out;
  for (const nlohmann::json* p : *records) {
    std::string name = JStr(*p, "name");
    std::int64_t total_cpus = 0;
    for (const nlohmann::json* n : *node_records) {
      auto it = n->find("partitions");
      if (it != n->end() && it->is_array() &&
          std::find(it->begin(), it->end(), nlohmann::json(name)) != it->end()) {
        total_cpus += JIntOr(*n, "cpus", 0);
      }
    }
    out += Join(PartitionLines(*p, total_cpus), options);
  }
  return out;
}

Result<std::string> FormatScontrolShowHostnames(std::string_view hostlist) {
  if (hostlist.find_first_not_of(" \t\n") == std::string_view::npos) return std::string();
  Result<std::vector<std::string>> hosts = ExpandHostlist(hostlist);
  if (!hosts.ok()) return hosts.status();
  std::string out;
  for (const std::string& host : *hosts) out += host + "\n";
  return out;
}

}  // namespace lockstep::cli
