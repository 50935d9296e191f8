#include "controller/job_env.h"

#include <unistd.h>

#include <algorithm>

#include "common/hostlist.h"
#include "controller/controller_internal.h"
#include "engine/gpu_devices.h"
#include "engine/request.h"

namespace lockstep::controller {
namespace {

std::string JoinInts(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

std::string HostName() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

std::vector<std::string> CudaDeviceNames(const engine::Node& node) {
  const std::vector<int> physical = engine::PhysicalGpuOf(node);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < node.gpus.size(); ++i) {
    const engine::GpuDevice& d = node.gpus[i];
    if (d.parent < 0)
      names.push_back(std::to_string(physical[i]));
    else
      names.push_back(d.uuid.empty() ? std::to_string(d.index) : d.uuid);
  }
  return names;
}

JobEnvInput MakeJobEnvInput(const JobEntry& job, const config::ClusterConfig& cluster,
                            const std::function<std::string(const std::string&)>& address_of) {
  JobEnvInput in;
  in.job = &job;
  const jobspec::JobSpec& s = *job.spec;
  std::uint32_t p =
      s.partition.empty() ? cluster.default_partition : cluster.PartitionIndex(s.partition);
  in.partition = cluster.base.partitions[p].name;
  std::uint32_t q = s.qos.empty() ? cluster.default_qos : cluster.QosIndex(s.qos);
  in.qos = q < cluster.base.qos.size() ? cluster.base.qos[q].name : "normal";
  in.account = s.account.empty() ? "root" : s.account;
  for (const PlacedNode& n : job.placement) {
    in.nodes.push_back(n.node);
    in.cpus_per_node.push_back(n.cpus);
    const std::uint32_t index = cluster.NodeIndex(n.node);
    const std::vector<std::string> names = index < cluster.base.nodes.size()
                                               ? CudaDeviceNames(cluster.base.nodes[index])
                                               : std::vector<std::string>{};
    std::vector<int> gpus;
    std::vector<std::string> cuda;
    for (int d = 0; d < 64; ++d) {
      if (!(n.gpus >> d & 1)) continue;
      gpus.push_back(d);
      cuda.push_back(static_cast<std::size_t>(d) < names.size() ? names[d] : std::to_string(d));
    }
    in.gpus_per_node.push_back(std::move(gpus));
    in.cuda_devices_per_node.push_back(std::move(cuda));
  }
  int nodes = std::max<int>(1, static_cast<int>(in.nodes.size()));
  if (s.ntasks_per_node > 0) {
    in.ntasks = s.ntasks > 0 ? s.ntasks : s.ntasks_per_node * nodes;
  } else {
    in.ntasks = s.ntasks > 0 ? s.ntasks : nodes;
  }
  // Block distribution, as Slurm's default: the first nodes get the extra tasks.
  for (int i = 0; i < nodes; ++i)
    in.tasks_per_node.push_back(in.ntasks / nodes + (i < in.ntasks % nodes ? 1 : 0));
  in.master_addr = in.nodes.empty() ? "127.0.0.1" : address_of(in.nodes.front());
  // One port per job, in a range torch's default (29500) starts.
  in.master_port = 29500 + static_cast<int>(job.id % 10000);
  if (s.array && s.array->indices.empty()) {  // dropped by lockstepd (DropArrayIndices)
    in.array_count = s.array->count;
    in.array_min = s.array->min;
    in.array_max = s.array->max;
  } else if (s.array) {
    in.array_count = static_cast<std::uint32_t>(s.array->indices.size());
    in.array_min = s.array->indices.front();
    in.array_max = s.array->indices.back();
  }
  return in;
}

std::map<std::string, std::string> BatchEnvironment(
    const JobEnvInput& in, const std::map<std::string, std::string>& submit_env) {
  const JobEntry& job = *in.job;
  std::map<std::string, std::string> env = submit_env;
  auto set = [&](const std::string& k, const std::string& v) { env[k] = v; };
  std::string id = std::to_string(job.id);
  std::string nodelist = CompressHostlist(in.nodes);
  set("SLURM_JOB_ID", id);
  set("SLURM_JOBID", id);
  set("SLURM_JOB_NAME", job.spec->name);
  set("SLURM_JOB_USER", job.user);
  set("SLURM_JOB_UID", std::to_string(job.uid));
  set("SLURM_JOB_GID", std::to_string(job.gid));
  set("SLURM_JOB_ACCOUNT", in.account);
  set("SLURM_JOB_PARTITION", in.partition);
  set("SLURM_JOB_QOS", in.qos);
  set("SLURM_CLUSTER_NAME", "lockstep");
  set("SLURM_JOB_NODELIST", nodelist);
  set("SLURM_NODELIST", nodelist);
  set("SLURM_JOB_NUM_NODES", std::to_string(in.nodes.size()));
  set("SLURM_NNODES", std::to_string(in.nodes.size()));
  set("SLURM_NTASKS", std::to_string(in.ntasks));
  set("SLURM_NPROCS", std::to_string(in.ntasks));
  if (job.spec->ntasks_per_node > 0)
    set("SLURM_NTASKS_PER_NODE", std::to_string(job.spec->ntasks_per_node));
  set("SLURM_TASKS_PER_NODE", CompressCounts(in.tasks_per_node));
  set("SLURM_JOB_CPUS_PER_NODE", CompressCounts(in.cpus_per_node));
  set("SLURM_CPUS_ON_NODE",
      in.cpus_per_node.empty() ? "0" : std::to_string(in.cpus_per_node.front()));
  if (job.spec->cpus_per_task > 0)
    set("SLURM_CPUS_PER_TASK", std::to_string(job.spec->cpus_per_task));
  if (job.spec->cpus_per_gpu > 0)
    set("SLURM_CPUS_PER_GPU", std::to_string(job.spec->cpus_per_gpu));
  set("SLURM_SUBMIT_DIR", job.spec->work_dir);
  set("SLURM_SUBMIT_HOST", submit_env.count("HOSTNAME") ? submit_env.at("HOSTNAME") : HostName());
  set("SLURM_JOB_START_TIME", std::to_string(job.start_time));
  set("SLURM_RESTART_COUNT", std::to_string(job.restart_count));
  set("SLURMD_NODENAME", in.nodes.empty() ? "" : in.nodes.front());
  set("SLURM_NODEID", "0");
  set("SLURM_PROCID", "0");
  set("SLURM_LOCALID", "0");
  set("SLURM_GTIDS", "0");
  const std::vector<int> gpus =
      in.gpus_per_node.empty() ? std::vector<int>{} : in.gpus_per_node.front();
  if (!gpus.empty()) {
    set("SLURM_GPUS_ON_NODE", std::to_string(gpus.size()));
    set("SLURM_JOB_GPUS", JoinInts(gpus));
    set("CUDA_VISIBLE_DEVICES", Join(in.cuda_devices_per_node.front()));
    if (job.spec->gpus > 0) set("SLURM_GPUS", std::to_string(job.spec->gpus));
    if (job.spec->gpus_per_node > 0)
      set("SLURM_GPUS_PER_NODE", std::to_string(job.spec->gpus_per_node));
    if (job.spec->gpus_per_task > 0)
      set("SLURM_GPUS_PER_TASK", std::to_string(job.spec->gpus_per_task));
  }
  if (job.is_array_task()) {
    set("SLURM_ARRAY_JOB_ID", std::to_string(job.array_job_id));
    set("SLURM_ARRAY_TASK_ID", std::to_string(job.array_task_id));
    set("SLURM_ARRAY_TASK_COUNT", std::to_string(in.array_count));
    set("SLURM_ARRAY_TASK_MIN", std::to_string(in.array_min));
    set("SLURM_ARRAY_TASK_MAX", std::to_string(in.array_max));
  }
  set("MASTER_ADDR", in.master_addr);
  set("MASTER_PORT", std::to_string(in.master_port));
  set("WORLD_SIZE", std::to_string(in.ntasks));
  set("RANK", "0");
  set("LOCAL_RANK", "0");
  AddHetGroupVariables(in, env);
  return env;
}

void AddHetGroupVariables(const JobEnvInput& in, std::map<std::string, std::string>& env) {
  if (in.het_components.empty()) return;
  // What Slurm 22.05 repeats per component (seen in its salloc and sbatch environments).
  static constexpr const char* kPerComponent[] = {
      "SLURM_JOB_ID",          "SLURM_JOBID",         "SLURM_JOB_NAME",
      "SLURM_JOB_NODELIST",    "SLURM_NODELIST",      "SLURM_JOB_NUM_NODES",
      "SLURM_NNODES",          "SLURM_JOB_PARTITION", "SLURM_NTASKS",
      "SLURM_NPROCS",          "SLURM_TASKS_PER_NODE", "SLURM_JOB_CPUS_PER_NODE",
  };
  const std::string size = std::to_string(in.het_components.size());
  env["SLURM_HET_SIZE"] = size;
  env["SLURM_PACK_SIZE"] = size;
  for (std::size_t i = 0; i < in.het_components.size(); ++i) {
    JobEnvInput own = in.het_components[i];
    own.het_components.clear();
    const std::map<std::string, std::string> vars = BatchEnvironment(own, {});
    for (const char* name : kPerComponent) {
      auto it = vars.find(name);
      if (it == vars.end()) continue;
      env[std::string(name) + "_HET_GROUP_" + std::to_string(i)] = it->second;
      env[std::string(name) + "_PACK_GROUP_" + std::to_string(i)] = it->second;
    }
  }
}

std::map<std::string, std::string> StepTaskEnvironment(
    const JobEnvInput& in, const StepTask& t, const std::map<std::string, std::string>& base) {
  std::map<std::string, std::string> env = base;
  auto set = [&](const std::string& k, const std::string& v) { env[k] = v; };
  std::string nodelist = CompressHostlist(t.step_nodes);
  // The job's own variables, also for an srun that came from outside it (--jobid --overlap),
  // whose environment has none of them.
  if (in.job) {
    const std::string id = std::to_string(in.job->id), job_nodes = CompressHostlist(in.nodes);
    set("SLURM_JOB_ID", id);
    set("SLURM_JOBID", id);
    set("SLURM_JOB_NAME", in.job->spec->name);
    set("SLURM_JOB_USER", in.job->user);
    set("SLURM_JOB_PARTITION", in.partition);
    set("SLURM_JOB_NODELIST", job_nodes);
    set("SLURM_NODELIST", job_nodes);
    set("SLURM_JOB_NUM_NODES", std::to_string(in.nodes.size()));
    set("SLURM_NNODES", std::to_string(in.nodes.size()));
    // The CPUs of the job on this task's node, as srun(1) sets them.
    set("SLURM_JOB_CPUS_PER_NODE", CompressCounts(in.cpus_per_node));
    const auto at = std::find(in.nodes.begin(), in.nodes.end(), t.step_nodes[t.node_index]);
    if (at != in.nodes.end())
      set("SLURM_CPUS_ON_NODE", std::to_string(in.cpus_per_node[at - in.nodes.begin()]));
    if (in.job->spec->cpus_per_gpu > 0)
      set("SLURM_CPUS_PER_GPU", std::to_string(in.job->spec->cpus_per_gpu));
  }
  set("SLURM_STEP_ID", std::to_string(t.step_id));
  set("SLURM_STEPID", std::to_string(t.step_id));
  set("SLURM_STEP_NODELIST", nodelist);
  set("SLURM_STEP_NUM_NODES", std::to_string(t.step_nodes.size()));
  set("SLURM_STEP_NUM_TASKS", std::to_string(t.step_tasks));
  set("SLURM_STEP_TASKS_PER_NODE", CompressCounts(t.step_tasks_per_node));
  set("SLURM_NTASKS", std::to_string(t.step_tasks));
  set("SLURM_NPROCS", std::to_string(t.step_tasks));
  set("SLURM_PROCID", std::to_string(t.rank));
  set("SLURM_LOCALID", std::to_string(t.local_rank));
  set("SLURM_NODEID", std::to_string(t.node_index));
  set("SLURMD_NODENAME", t.step_nodes[t.node_index]);
  if (!t.gpus.empty()) {
    set("CUDA_VISIBLE_DEVICES",
        t.cuda_devices.size() == t.gpus.size() ? Join(t.cuda_devices) : JoinInts(t.gpus));
    set("SLURM_STEP_GPUS", JoinInts(t.gpus));
    set("SLURM_GPUS_ON_NODE", std::to_string(t.gpus.size()));
  }
  // torchrun-style scripts choose their own rendezvous (MASTER_ADDR=$(scontrol show hostnames
  // | head -n1), MASTER_PORT=29400) before srun: what the step's environment has is kept. The
  // batch script got the job's values, which are the step's too.
  if (!base.count("MASTER_ADDR")) set("MASTER_ADDR", in.master_addr);
  if (!base.count("MASTER_PORT")) set("MASTER_PORT", std::to_string(in.master_port));
  set("WORLD_SIZE", std::to_string(t.step_tasks));
  set("RANK", std::to_string(t.rank));
  set("LOCAL_RANK", std::to_string(t.local_rank));
  set("LOCAL_WORLD_SIZE", std::to_string(t.step_tasks_per_node[t.node_index]));
  return env;
}

}  // namespace lockstep::controller
