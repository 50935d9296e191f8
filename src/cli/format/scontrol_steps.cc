#include "cli/format/scontrol_steps.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "cli/format/field_format.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

// The id a step record carries: "batch" or its number.
std::string StepName(const nlohmann::json& step) {
  const nlohmann::json id = step.value("step_id", nlohmann::json());
  return id.is_string() ? id.get<std::string>() : id.dump();
}

// Slurm's step states print as the job's do; a step that has ended is no longer Slurm's to show.
bool IsRunning(const nlohmann::json& step) {
  const std::string state = JStr(step, "state");
  return state == "RUNNING" || state == "SUSPENDED";
}

// "StepId=42.0", or for an array's task "StepId=40_2.batch" (the job's id left out, as Slurm).
std::string StepIdText(const nlohmann::json& job, const std::string& step) {
  if (JInt(job, "array_job_id") && JInt(job, "array_task_id"))
    return fmt::format("StepId={}_{}.{}", JIntOr(job, "array_job_id", 0),
                       JIntOr(job, "array_task_id", 0), step);
  return fmt::format("StepId={}.{}", JIntOr(job, "job_id", 0), step);
}

// A step's TRES (tres_alloc_str): Slurm's id order, without the job's billing.
std::string StepTres(const nlohmann::json& step, std::int64_t nodes) {
  std::vector<std::string> parts;
  if (std::int64_t cpus = JIntOr(step, "cpus", 0)) parts.push_back(fmt::format("cpu={}", cpus));
  if (std::int64_t mem = JIntOr(step, "mem_mb", 0))
    parts.push_back(fmt::format("mem={}", ConvertUnits(mem, 2)));
  if (nodes) parts.push_back(fmt::format("node={}", nodes));
  if (std::int64_t gpus = JIntOr(step, "gpus", 0))
    parts.push_back(fmt::format("gres/gpu={}", gpus));
  return parts.empty() ? "(null)" : fmt::format("{}", fmt::join(parts, ","));
}

std::string Join(const std::vector<std::string>& lines, const ScontrolOptions& options) {
  return fmt::format("{}", fmt::join(lines, options.one_liner ? " " : "\n   ")) +
         (options.one_liner ? "\n" : "\n\n");
}

// One step's record. Lockstep's steps have no limit of their own (the job's applies), no
// network, no reserved ports and no CPU frequency request; srun steps place their tasks in
// blocks, the batch step has no distribution (Slurm prints none for it).
std::string StepRecord(const nlohmann::json& job, const nlohmann::json& step,
                       const ScontrolOptions& options) {
  const std::string name = StepName(step);
  const bool batch = name == "batch";
  const std::string nodes = JStr(step, "nodes");
  Result<std::vector<std::string>> hosts = ExpandHostlist(nodes);
  const std::int64_t node_count = hosts.ok() ? static_cast<std::int64_t>(hosts->size()) : 0;
  const Time start = JIntOr(step, "start_time", 0);
  const std::string srun_host = JStr(step, "srun_host");
  return Join(
      {fmt::format("{} UserId={} StartTime={} TimeLimit=UNLIMITED", StepIdText(job, name),
                   JIntOr(job, "uid", 0), start ? TimeStamp(start) : std::string("Unknown")),
       fmt::format("State={} Partition={} NodeList={}", JStr(step, "state"), JStr(job, "partition"),
                   nodes.empty() ? "(null)" : nodes),
       fmt::format("Nodes={} CPUs={} Tasks={} Name={} Network=(null)", node_count,
                   JIntOr(step, "cpus", 0), JIntOr(step, "ntasks", batch ? 1 : 0),
                   JStr(step, "name")),
       "TRES=" + StepTres(step, node_count), "ResvPorts=(null)",
       std::string("CPUFreqReq=Default") + (batch ? "" : " Dist=Block"),
       fmt::format("SrunHost:Pid={}:{}", srun_host.empty() ? "(null)" : srun_host,
                   JIntOr(step, "srun_pid", 0))},
      options);
}

}  // namespace

Result<std::string> FormatScontrolShowSteps(const nlohmann::json& jobs, const std::string& step,
                                            const ScontrolOptions& options) {
  std::vector<const nlohmann::json*> records;
  if (jobs.is_object() && !jobs.contains("jobs")) {
    records.push_back(&jobs);
  } else {
    Result<std::vector<const nlohmann::json*>> many = Records(jobs, "jobs");
    if (!many.ok()) return many.status();
    records = std::move(*many);
  }
  std::string out;
  for (const nlohmann::json* job : records)
    for (const nlohmann::json& s : job->value("steps", nlohmann::json::array()))
      if (IsRunning(s) && (step.empty() || StepName(s) == step))
        out += StepRecord(*job, s, options);
  return out;
}

}  // namespace lockstep::cli
