// sacct --json: Slurm 22.05's slurmdb job records in openapi dbv0.0.38, built the way that
// plugin's parser tables build them (src/plugins/openapi/dbv0.0.38/parse.c, parse_job and
// parse_job_step): each entry a "/" path, dictionaries made in the order of their first key.
// The golden key list is tests/data/slurm_json/sacct_job_keys.txt.
#include <algorithm>
#include <cstring>

#include "cli/format/slurm_json.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

using nlohmann::ordered_json;
using slurm_json::Int;
using slurm_json::SetPath;
using slurm_json::Str;

// Slurm's TRES ids (the first four are fixed by Slurm; gres/gpu is the first GRES it adds).
ordered_json TresList(std::int64_t cpus, std::int64_t mem_mb, std::int64_t nodes,
                      std::int64_t gpus) {
  ordered_json list = ordered_json::array();
  auto add = [&list](const char* type, const char* name, int id, std::int64_t count) {
    if (count > 0) list.push_back({{"type", type}, {"name", name}, {"id", id}, {"count", count}});
  };
  add("cpu", "", 1, cpus);
  add("mem", "", 2, mem_mb);
  add("node", "", 4, nodes);
  add("billing", "", 5, cpus);
  add("gres", "gpu", 1001, gpus);
  return list;
}

// JOB_EXIT_CODE: {"status", "return_code"} and, when a signal ended it, "signal".
ordered_json ExitCode(std::int64_t code, std::int64_t signo) {
  ordered_json o;
  o["status"] = signo != 0 ? "SIGNALED" : code != 0 ? "FAILED" : "SUCCESS";
  o["return_code"] = code;
  if (signo != 0) {
    const char* name = sigabbrev_np(static_cast<int>(signo));
    o["signal"] = {{"signal_id", signo}, {"name", name ? name : std::to_string(signo)}};
  }
  return o;
}

// Seconds between start and end (now while it runs); 0 before it starts.
std::int64_t Elapsed(std::int64_t start, std::int64_t end, Time now) {
  if (start <= 0) return 0;
  return std::max<std::int64_t>(0, (end > 0 ? end : now) - start);
}

// The number of hosts in a hostlist ("gpu[001-002]" is 2).
std::int64_t HostCount(const std::string& hosts) {
  if (hosts.empty()) return 0;
  Result<std::vector<std::string>> list = ExpandHostlist(hosts);
  return list.ok() ? static_cast<std::int64_t>(list->size()) : 1;
}

ordered_json SacctStep(const nlohmann::json& job, const nlohmann::json& step, Time now) {
  const std::int64_t start = Int(step, "start_time"), end = Int(step, "end_time");
  const std::string nodes = Str(step, "nodes");
  const std::int64_t ntasks = std::max<std::int64_t>(1, Int(step, "ntasks"));
  ordered_json o;
  SetPath(o, "time/elapsed", Elapsed(start, end, now));
  SetPath(o, "time/end", end);
  o["exit_code"] = ExitCode(Int(step, "exit_code"), Int(step, "signal"));
  SetPath(o, "nodes/count", HostCount(nodes));
  SetPath(o, "nodes/range", nodes);
  SetPath(o, "tasks/count", ntasks);
  o["pid"] = nullptr;
  SetPath(o, "CPU/requested_frequency/min", nullptr);
  SetPath(o, "CPU/requested_frequency/max", nullptr);
  SetPath(o, "CPU/governor", ordered_json::array());
  o["kill_request_user"] = nullptr;
  SetPath(o, "time/start", start);
  o["state"] = Str(step, "state");
  SetPath(o, "statistics/CPU/actual_frequency", 0);
  SetPath(o, "statistics/energy/consumed", 0);
  SetPath(o, "step/job_id", Int(job, "job_id"));
  SetPath(o, "step/het/component", nullptr);
  const nlohmann::json& id = step.contains("step_id") ? step["step_id"] : nlohmann::json();
  SetPath(o, "step/id",
          id.is_number() ? ordered_json(id.get<std::int64_t>())
                         : ordered_json(id.is_string() ? id.get<std::string>() : ""));
  SetPath(o, "step/name", Str(step, "name"));
  SetPath(o, "time/suspended", 0);
  SetPath(o, "time/system/seconds", 0);
  SetPath(o, "time/system/microseconds", 0);
  SetPath(o, "task/distribution", "Unknown");
  SetPath(o, "time/total/seconds", 0);
  SetPath(o, "time/total/microseconds", 0);
  SetPath(o, "time/user/seconds", 0);
  SetPath(o, "time/user/microseconds", 0);
  // Usage statistics (jobacct_gather): lockstep gathers none, so the lists are empty.
  for (const char* path : {"tres/requested/average", "tres/requested/total",
                           "tres/consumed/average", "tres/consumed/total"})
    SetPath(o, path, ordered_json::array());
  const std::int64_t job_nodes = std::max<std::int64_t>(1, Int(job, "node_count"));
  const std::int64_t step_nodes = o["nodes"]["count"].get<std::int64_t>();
  SetPath(o, "tres/allocated",
          TresList(Int(job, "cpus") * step_nodes / job_nodes,
                   Int(job, "mem_mb") * step_nodes / job_nodes, step_nodes,
                   Int(job, "gpus") * step_nodes / job_nodes));
  for (const char* path :
       {"tres/requested/max", "tres/requested/min", "tres/consumed/max", "tres/consumed/min"})
    SetPath(o, path, ordered_json::array());
  return o;
}

// A job's sizes and times, as both halves of its record use them.
struct SacctFacts {
  std::int64_t start = 0, end = 0, cpus = 0, mem = 0, nodes = 0, gpus = 0;
  bool ran = false;
};

SacctFacts SacctFactsOf(const nlohmann::json& job) {
  SacctFacts f;
  f.start = Int(job, "start_time");
  f.end = Int(job, "end_time");
  f.cpus = Int(job, "cpus");
  f.mem = Int(job, "mem_mb");
  f.nodes = Int(job, "node_count");
  f.gpus = Int(job, "gpus");
  f.ran = f.start > 0;
  return f;
}

// parse_job from "account" to "job_id".
void AddSacctHead(ordered_json& o, const nlohmann::json& job, const SacctFacts& f,
                  const SlurmJsonContext& ctx) {
  const std::int64_t gid = Int(job, "gid");
  std::string group = ctx.group_name ? ctx.group_name(gid) : "";
  if (group.empty()) group = std::to_string(gid);
  const std::string array_task = slurm_json::ArrayTaskString(job);
  o["account"] = Str(job, "account");
  SetPath(o, "comment/administrator", nullptr);
  o["allocation_nodes"] = f.ran ? f.nodes : 0;
  SetPath(o, "array/job_id", Int(job, "array_job_id"));
  SetPath(o, "array/limits/max/running/tasks", slurm_json::ArrayMaxTasks(job));
  SetPath(o, "array/task", array_task.empty() ? ordered_json() : ordered_json(array_task));
  SetPath(o, "array/task_id",
          job.contains("array_task_id") ? ordered_json(Int(job, "array_task_id")) : ordered_json());
  o["association"] = {{"account", Str(job, "account")},
                      {"cluster", ctx.cluster},
                      {"partition", Str(job, "partition")},
                      {"user", Str(job, "user")}};
  o["cluster"] = ctx.cluster;
  o["constraints"] = Str(job, "features");
  o["container"] = "";
  o["derived_exit_code"] = ExitCode(0, 0);
  SetPath(o, "comment/job", nullptr);
  SetPath(o, "time/elapsed", Elapsed(f.start, f.end, ctx.now));
  SetPath(o, "time/eligible", Int(job, "eligible_time"));
  SetPath(o, "time/end", f.end);
  o["exit_code"] = ExitCode(Int(job, "exit_code"), Int(job, "signal"));
  o["flags"] = ordered_json::array();
  o["group"] = group;
  SetPath(o, "het/job_id", 0);
  SetPath(o, "het/job_offset", nullptr);
  o["job_id"] = Int(job, "job_id");
}

// parse_job from "name" to "working_directory", with the steps.
void AddSacctTail(ordered_json& o, const nlohmann::json& job, const SacctFacts& f,
                  const SlurmJsonContext& ctx) {
  o["name"] = Str(job, "name");
  SetPath(o, "mcs/label", "");
  o["nodes"] = f.ran ? Str(job, "nodes") : "None assigned";
  o["partition"] = Str(job, "partition");
  o["priority"] = Int(job, "priority");
  o["qos"] = Str(job, "qos");
  SetPath(o, "required/CPUs", f.cpus);
  SetPath(o, "required/memory", f.mem);
  o["kill_request_user"] = nullptr;
  SetPath(o, "reservation/id", 0);
  SetPath(o, "reservation/name", 0);
  SetPath(o, "time/start", f.start);
  SetPath(o, "state/current", Str(job, "state"));
  SetPath(o, "state/reason", slurm_json::StateReason(job));
  SetPath(o, "time/submission", Int(job, "submit_time"));
  ordered_json steps = ordered_json::array();
  if (job.contains("steps") && job["steps"].is_array())
    for (const nlohmann::json& step : job["steps"])
      if (step.is_object()) steps.push_back(SacctStep(job, step, ctx.now));
  o["steps"] = std::move(steps);
  SetPath(o, "time/suspended", 0);
  SetPath(o, "comment/system", nullptr);
  const bool limited = job.contains("time_limit") && job["time_limit"].is_number();
  SetPath(o, "time/system/seconds", 0);
  SetPath(o, "time/system/microseconds", 0);
  SetPath(o, "time/limit", limited ? ordered_json(Int(job, "time_limit") / 60) : ordered_json());
  SetPath(o, "time/total/seconds", 0);
  SetPath(o, "time/total/microseconds", 0);
  const ordered_json tres = TresList(f.cpus, f.mem, f.nodes, f.gpus);
  SetPath(o, "tres/allocated", f.ran ? tres : ordered_json::array());
  SetPath(o, "tres/requested", tres);
  o["user"] = Str(job, "user");
  SetPath(o, "time/user/seconds", 0);
  SetPath(o, "time/user/microseconds", 0);
  o["wckey"] = {{"wckey", ""}, {"flags", ordered_json::array()}};
  o["working_directory"] = Str(job, "work_dir");
}

ordered_json SacctMeta() {
  return slurm_json::Meta("openapi/dbv0.0.38", "Slurm OpenAPI DB v0.0.38");
}

ordered_json SacctJob(const nlohmann::json& job, const SlurmJsonContext& ctx) {
  const SacctFacts f = SacctFactsOf(job);
  ordered_json o;
  AddSacctHead(o, job, f, ctx);
  AddSacctTail(o, job, f, ctx);
  return o;
}

}  // namespace

Result<nlohmann::ordered_json> SacctJson(const nlohmann::json& jobs, const SlurmJsonContext& ctx) {
  Result<const nlohmann::json*> list = slurm_json::JobList(jobs, "sacct");
  if (!list.ok()) return list.status();
  ordered_json out;
  out["meta"] = SacctMeta();
  out["errors"] = ordered_json::array();
  out["jobs"] = ordered_json::array();
  for (const nlohmann::json& job : **list) out["jobs"].push_back(SacctJob(job, ctx));
  return out;
}

Status WriteSacctJson(const nlohmann::json& jobs, const SlurmJsonContext& ctx,
                      const TextSink& write) {
  Result<const nlohmann::json*> list = slurm_json::JobList(jobs, "sacct");
  if (!list.ok()) return list.status();
  slurm_json::WriteJobsDocument(
      SacctMeta(), **list, [&](const nlohmann::json& job) { return SacctJob(job, ctx); }, write);
  return Status::Ok();
}

}  // namespace lockstep::cli
