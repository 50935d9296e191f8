// squeue --json: Slurm 22.05's job_info in openapi v0.0.38 (src/plugins/openapi/v0.0.38/jobs.c),
// key for key in the order Slurm prints them (tests/data/slurm_json/squeue_*.json were printed by
// Slurm 22.05.8 and are the golden key sets).
#include "cli/format/slurm_json.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

using nlohmann::ordered_json;
using slurm_json::Int;
using slurm_json::Str;

bool IsRunningLike(const std::string& state) {
  return state == "RUNNING" || state == "COMPLETING" || state == "SUSPENDED";
}

std::int64_t PerNode(std::int64_t total, std::int64_t nodes) {
  return nodes > 0 ? total / nodes : total;
}

// Slurm prints an unset count (NO_VAL16) as null.
ordered_json CountOrNull(std::int64_t v) {
  return v > 0 ? ordered_json(v) : ordered_json();
}

// The allocation, present once the job has nodes (Slurm omits the key before). lockstep
// allocates CPU counts, not core numbers, so each node's "sockets" map is empty.
ordered_json JobResources(const nlohmann::json& job, const std::vector<std::string>& hosts) {
  std::int64_t nodes = std::max<std::int64_t>(1, Int(job, "node_count"));
  ordered_json out;
  out["nodes"] = Str(job, "nodes");
  out["allocated_cores"] = Int(job, "cpus");
  out["allocated_hosts"] = static_cast<std::int64_t>(hosts.size());
  ordered_json list = ordered_json::array();
  for (const std::string& host : hosts) {
    ordered_json n;
    n["sockets"] = ordered_json::object();
    n["nodename"] = host;
    n["cpus_used"] = 0;
    n["memory_used"] = 0;
    n["memory_allocated"] = PerNode(Int(job, "mem_mb"), nodes);
    list.push_back(std::move(n));
  }
  out["allocated_nodes"] = std::move(list);
  return out;
}

// Expands "gpu[001-002],cpu7" into host names; the API's node lists are Slurm hostlists.
std::vector<std::string> Hosts(const std::string& list) {
  if (list.empty()) return {};
  Result<std::vector<std::string>> hosts = ExpandHostlist(list);
  return hosts.ok() ? *hosts : std::vector<std::string>{list};
}

// What the keys are computed from, once per job.
struct JobFacts {
  std::string state;
  bool pending = false;
  bool held = false;  // a held job is not eligible and has priority 0 in Slurm
  bool limited = false;
  std::int64_t nodes = 0, cpus = 0, gpus = 0, mem = 0, start = 0, end = 0, gid = 0;
  std::vector<std::string> hosts;
  std::string group;
};

JobFacts FactsOf(const nlohmann::json& job, const SlurmJsonContext& ctx) {
  JobFacts f;
  f.state = Str(job, "state");
  f.pending = f.state == "PENDING";
  f.held = f.pending && Str(job, "reason").rfind("JobHeld", 0) == 0;
  f.nodes = Int(job, "node_count");
  f.cpus = Int(job, "cpus");
  f.gpus = Int(job, "gpus");
  f.mem = Int(job, "mem_mb");
  f.start = f.pending ? Int(job, "expected_start") : Int(job, "start_time");
  f.limited = job.contains("time_limit") && job["time_limit"].is_number();
  f.end = Int(job, "end_time");
  if (f.end == 0 && !f.pending && f.start > 0 && f.limited)
    f.end = f.start + Int(job, "time_limit");
  f.hosts = Hosts(Str(job, "nodes"));
  f.gid = Int(job, "gid");
  f.group = ctx.group_name ? ctx.group_name(f.gid) : "";
  if (f.group.empty()) f.group = std::to_string(f.gid);
  return f;
}

// account .. federation_siblings_viable.
void AddIdentityAndRequest(ordered_json& o, const nlohmann::json& job, const JobFacts& f,
                           const SlurmJsonContext& ctx) {
  o["account"] = Str(job, "account");
  o["accrue_time"] = f.held ? 0 : Int(job, "eligible_time");
  o["admin_comment"] = "";
  o["array_job_id"] = Int(job, "array_job_id");
  o["array_task_id"] =
      job.contains("array_task_id") ? ordered_json(Int(job, "array_task_id")) : ordered_json();
  o["array_max_tasks"] = slurm_json::ArrayMaxTasks(job);
  o["array_task_string"] = slurm_json::ArrayTaskString(job);
  o["association_id"] = 0;
  o["batch_features"] = "";
  o["batch_flag"] = true;  // every lockstep job has a batch script (srun's is its command)
  o["batch_host"] = Str(job, "batch_host");
  o["flags"] =
      IsRunningLike(f.state) ? ordered_json::array({"JOB_WAS_RUNNING"}) : ordered_json::array();
  o["burst_buffer"] = "";
  o["burst_buffer_state"] = "";
  o["cluster"] = ctx.cluster;
  o["cluster_features"] = "";
  o["command"] = Str(job, "command");
  o["comment"] = "";
  o["container"] = "";
  o["contiguous"] = false;
  o["core_spec"] = nullptr;
  o["thread_spec"] = nullptr;
  o["cores_per_socket"] = nullptr;
  o["billable_tres"] = f.pending ? ordered_json() : ordered_json(static_cast<double>(f.cpus));
  o["cpus_per_task"] = nullptr;
  o["cpu_frequency_minimum"] = nullptr;
  o["cpu_frequency_maximum"] = nullptr;
  o["cpu_frequency_governor"] = nullptr;
  o["cpus_per_tres"] = "";
  o["deadline"] = 0;
  o["delay_boot"] = 0;
  o["dependency"] = Str(job, "dependency");
  o["derived_exit_code"] = 0;
  o["eligible_time"] = f.held ? 0 : Int(job, "eligible_time");
  o["end_time"] = f.end;
  o["excluded_nodes"] = Str(job, "exc_nodes");
  // Slurm's exit_code is the wait status: the code in the high byte, the signal in the low.
  o["exit_code"] = (Int(job, "exit_code") << 8) | Int(job, "signal");
  o["features"] = Str(job, "features");
  o["federation_origin"] = "";
  o["federation_siblings_active"] = "";
  o["federation_siblings_viable"] = "";
}

// gres_detail .. priority.
void AddAllocationAndSize(ordered_json& o, const nlohmann::json& job, const JobFacts& f) {
  ordered_json gres_detail = ordered_json::array();
  if (f.gpus > 0 && !f.hosts.empty())
    for (std::size_t i = 0; i < f.hosts.size(); ++i)
      gres_detail.push_back("gpu(CNT:" + std::to_string(PerNode(f.gpus, f.nodes)) + ")");
  o["gres_detail"] = std::move(gres_detail);
  o["group_id"] = f.gid;
  o["group_name"] = f.group;
  o["job_id"] = Int(job, "job_id");
  if (!f.hosts.empty()) o["job_resources"] = JobResources(job, f.hosts);
  o["job_state"] = f.state;
  o["last_sched_evaluation"] = f.pending ? 0 : Int(job, "start_time");
  o["licenses"] = "";
  o["max_cpus"] = 0;
  o["max_nodes"] = 0;
  o["mcs_label"] = "";
  o["memory_per_tres"] = "";
  o["name"] = Str(job, "name");
  o["nodes"] = Str(job, "nodes");
  o["nice"] = Int(job, "nice") != 0 ? ordered_json(Int(job, "nice")) : ordered_json();
  o["tasks_per_core"] = nullptr;
  o["tasks_per_node"] = 0;
  o["tasks_per_socket"] = nullptr;
  o["tasks_per_board"] = 0;
  o["cpus"] = f.cpus;
  o["node_count"] = f.nodes;
  o["tasks"] = Int(job, "tasks");
  o["het_job_id"] = 0;
  o["het_job_id_set"] = "";
  o["het_job_offset"] = 0;
  o["partition"] = Str(job, "partition");
  o["prefer"] = "";
  o["memory_per_node"] = CountOrNull(PerNode(f.mem, f.nodes));
  o["memory_per_cpu"] = nullptr;
  // pn_min_cpus: the CPUs of one task (-c), as Slurm sets it without --mincpus.
  o["minimum_cpus_per_node"] = std::max<std::int64_t>(1, PerNode(f.cpus, Int(job, "tasks")));
  o["minimum_tmp_disk_per_node"] = 0;
  o["preempt_time"] = 0;
  o["pre_sus_time"] = 0;
  o["priority"] = f.held ? 0 : Int(job, "priority");
}

// profile .. current_working_directory.
void AddStateFilesAndTres(ordered_json& o, const nlohmann::json& job, const JobFacts& f) {
  o["profile"] = nullptr;
  o["qos"] = Str(job, "qos");
  o["reboot"] = false;
  o["required_nodes"] = Str(job, "req_nodes");
  o["requeue"] = job.value("requeue", true);
  o["resize_time"] = 0;
  o["restart_cnt"] = Int(job, "restart_count");
  o["resv_name"] = "";
  o["shared"] = nullptr;
  o["show_flags"] = ordered_json::array({"SHOW_ALL", "SHOW_DETAIL", "SHOW_LOCAL"});
  o["sockets_per_board"] = 0;
  o["sockets_per_node"] = nullptr;
  o["start_time"] = f.start;
  o["state_description"] = "";
  o["state_reason"] = slurm_json::StateReason(job);
  o["standard_error"] = Str(job, "stderr");
  o["standard_input"] = "/dev/null";
  o["standard_output"] = Str(job, "stdout");
  o["submit_time"] = Int(job, "submit_time");
  o["suspend_time"] = 0;
  o["system_comment"] = "";
  o["time_limit"] = f.limited ? ordered_json(Int(job, "time_limit") / 60) : ordered_json();
  o["time_minimum"] = 0;
  o["threads_per_core"] = nullptr;
  o["tres_bind"] = "";
  o["tres_freq"] = "";
  o["tres_per_job"] = "";
  // lockstep's "gres/gpu:8" is Slurm 22.05's "gres:gpu:8".
  std::string per_node = Str(job, "tres_per_node");
  if (per_node.rfind("gres/", 0) == 0) per_node[4] = ':';
  o["tres_per_node"] = per_node;
  o["tres_per_socket"] = "";
  o["tres_per_task"] = "";
  o["tres_req_str"] = slurm_json::TresText(f.cpus, f.mem, f.nodes, f.gpus);
  o["tres_alloc_str"] =
      f.hosts.empty()
          ? ""
          : slurm_json::TresText(f.cpus, f.mem, static_cast<std::int64_t>(f.hosts.size()), f.gpus);
  o["user_id"] = Int(job, "uid");
  o["user_name"] = Str(job, "user");
  o["wckey"] = "";
  o["current_working_directory"] = Str(job, "work_dir");
}

ordered_json SqueueMeta() { return slurm_json::Meta("openapi/v0.0.38", "Slurm OpenAPI v0.0.38"); }

ordered_json SqueueJob(const nlohmann::json& job, const SlurmJsonContext& ctx) {
  const JobFacts f = FactsOf(job, ctx);
  ordered_json o;
  AddIdentityAndRequest(o, job, f, ctx);
  AddAllocationAndSize(o, job, f);
  AddStateFilesAndTres(o, job, f);
  return o;
}

}  // namespace

Result<nlohmann::ordered_json> SqueueJson(const nlohmann::json& jobs, const SlurmJsonContext& ctx) {
  Result<const nlohmann::json*> list = slurm_json::JobList(jobs, "squeue");
  if (!list.ok()) return list.status();
  ordered_json out;
  out["meta"] = SqueueMeta();
  out["errors"] = ordered_json::array();
  out["jobs"] = ordered_json::array();
  for (const nlohmann::json& job : **list) out["jobs"].push_back(SqueueJob(job, ctx));
  return out;
}

Status WriteSqueueJson(const nlohmann::json& jobs, const SlurmJsonContext& ctx,
                       const TextSink& write) {
  Result<const nlohmann::json*> list = slurm_json::JobList(jobs, "squeue");
  if (!list.ok()) return list.status();
  slurm_json::WriteJobsDocument(
      SqueueMeta(), **list, [&](const nlohmann::json& job) { return SqueueJob(job, ctx); },
      write);
  return Status::Ok();
}

}  // namespace lockstep::cli
