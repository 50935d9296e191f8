// scontrol update of what only a pending job may change (Slurm 22.05's list): Partition, QOS,
// NumNodes, NumCPUs, MinMemoryNode/MinMemoryCPU, Gres/TresPerNode, ReqNodeList, ExcNodeList,
// Dependency and StartTime; and an array's ArrayTaskThrottle, which may change while its tasks
// run. Each new spec is checked as a submission's is (jobspec::Validate, ValidateSpec's
// placement checks, the partition's state, dependencies on jobs that exist), before
// controller_update.cc changes anything; the engine's Job is rebuilt from the new spec by
// job_convert at the next replay.
#include <fmt/format.h>

#include <algorithm>

#include "common/hostlist.h"
#include "controller/controller_internal.h"
#include "controller/job_changes.h"
#include "controller/job_convert.h"
#include "jobspec/sbatch_internal.h"
#include "jobspec/validate.h"

namespace lockstep::controller {
namespace {

// Slurm's words for a field a job that runs may no longer change (ESLURM_JOB_NOT_PENDING).
constexpr char kNotPending[] = "Job is no longer pending execution";

Result<std::int64_t> IntField(const std::string& key, const nlohmann::json& v, std::int64_t min,
                              std::int64_t max) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max)
    return InvalidArgument(
        fmt::format("update: {} must be an integer from {} to {}", key, min, max));
  return v.get<std::int64_t>();
}

Result<std::string> StringField(const std::string& key, const nlohmann::json& v) {
  if (!v.is_string()) return InvalidArgument("update: " + key + " must be a string");
  return v.get<std::string>();
}

Status DecodeGres(const nlohmann::json& v, PendingJobChanges& c) {
  Result<std::string> text = StringField("gres", v);
  if (!text.ok()) return text.status();
  if (text->empty() || *text == "(null)") {  // Gres= clears the GPUs per node
    c.gpus_per_node.emplace(0, "");
    return Status::Ok();
  }
  Result<jobspec::sbatch_internal::GpuRequest> gpu = jobspec::sbatch_internal::ParseGres(*text);
  if (!gpu.ok())
    return InvalidArgument("update: Gres: '" + *text + "' " + gpu.status().message());
  c.gpus_per_node.emplace(gpu->count, gpu->type);
  return Status::Ok();
}

Status DecodeDependency(const nlohmann::json& v, PendingJobChanges& c) {
  Result<std::string> text = StringField("dependency", v);
  if (!text.ok()) return text.status();
  if (text->empty()) {  // Dependency= clears them
    c.dependencies.emplace();
    return Status::Ok();
  }
  Result<jobspec::sbatch_internal::Dependencies> d = jobspec::sbatch_internal::ParseDependencies(*text);
  if (!d.ok())
    return InvalidArgument("update: Dependency: '" + *text + "' " + d.status().message());
  c.dependencies.emplace(std::move(d->list), d->any);
  return Status::Ok();
}

// The number of tasks the engine gives `s` (job_convert's rule), to spread NumCPUs over.
std::int64_t TasksOf(const jobspec::JobSpec& s) {
  if (s.ntasks > 0) return s.ntasks;
  return std::int64_t{std::max(1, s.min_nodes)} * std::max(1, s.ntasks_per_node);
}

}  // namespace

Result<bool> DecodePendingChange(const std::string& key, const nlohmann::json& v,
                                 PendingJobChanges& c) {
  constexpr std::int64_t kCount = jobspec::kMaxResourceCount;
  auto set_int = [&](auto& field, std::int64_t min, std::int64_t max) -> Result<bool> {
    Result<std::int64_t> n = IntField(key, v, min, max);
    if (!n.ok()) return n.status();
    field = static_cast<std::remove_reference_t<decltype(*field)>>(*n);
    return true;
  };
  auto set_string = [&](std::optional<std::string>& field) -> Result<bool> {
    Result<std::string> s = StringField(key, v);
    if (!s.ok()) return s.status();
    field = std::move(*s);
    return true;
  };
  if (key == "partition") return set_string(c.partition);
  if (key == "qos") return set_string(c.qos);
  if (key == "nodelist") return set_string(c.nodelist);
  if (key == "exclude") return set_string(c.exclude);
  if (key == "min_nodes") return set_int(c.min_nodes, 1, kCount);
  if (key == "max_nodes") return set_int(c.max_nodes, 0, kCount);
  if (key == "num_cpus") return set_int(c.num_cpus, 1, kCount);
  if (key == "mem_per_node_mb") return set_int(c.mem_per_node_mb, 0, jobspec::kMaxMemoryMb);
  if (key == "mem_per_cpu_mb") return set_int(c.mem_per_cpu_mb, 0, jobspec::kMaxMemoryMb);
  if (key == "begin_time") return set_int(c.begin_time, 0, std::int64_t{1} << 40);
  if (key == "array_throttle") return set_int(c.array_throttle, 0, jobspec::kMaxArrayTasks);
  if (key == "gres") {
    LOCKSTEP_RETURN_IF_ERROR(DecodeGres(v, c));
    return true;
  }
  if (key == "dependency") {
    LOCKSTEP_RETURN_IF_ERROR(DecodeDependency(v, c));
    return true;
  }
  return false;
}

Status Controller::ApplyPendingChangesLocked(const JobEntry& e, const PendingJobChanges& c,
                                             const StoredTargets& stored,
                                             const std::string& label, jobspec::JobSpec& spec) {
  if (c.any_pending_only() && e.state != JobState::kPending)
    return FailedPrecondition(kNotPending);
  if (c.array_throttle) {
    if (!spec.array || !e.is_array_task())
      return InvalidArgument("update: ArrayTaskThrottle: job " + label + " is not a job array");
    spec.array->max_running = *c.array_throttle;
  }
  if (!c.any_pending_only()) return Status::Ok();
  if (c.partition) spec.partition = *c.partition;
  if (c.qos) spec.qos = *c.qos;
  if (c.min_nodes) {
    spec.min_nodes = *c.min_nodes;
    spec.max_nodes = c.max_nodes.value_or(0) > 0 ? *c.max_nodes : *c.min_nodes;
    if (spec.max_nodes < spec.min_nodes)
      return InvalidArgument("Node count specification invalid: " + std::to_string(*c.min_nodes) +
                             "-" + std::to_string(spec.max_nodes));
  }
  if (c.num_cpus) {
    // Slurm's NumCPUs is the job's CPUs at least: its tasks get enough CPUs each to hold them.
    if (spec.cpus_per_gpu > 0)
      return InvalidArgument("update: NumCPUs: job " + label + " asks --cpus-per-gpu");
    const std::int64_t tasks = TasksOf(spec);
    spec.cpus_per_task = static_cast<std::int32_t>((*c.num_cpus + tasks - 1) / tasks);
  }
  if (c.mem_per_node_mb) {  // one memory request replaces the others, as sbatch's options do
    spec.mem_mb = *c.mem_per_node_mb;
    spec.mem_whole_node = *c.mem_per_node_mb == 0;  // as --mem=0: all of each node's memory
    spec.mem_per_cpu_mb = spec.mem_per_gpu_mb = 0;
  }
  if (c.mem_per_cpu_mb) {
    spec.mem_per_cpu_mb = *c.mem_per_cpu_mb;
    spec.mem_mb = spec.mem_per_gpu_mb = 0;
    spec.mem_whole_node = false;
  }
  if (c.gpus_per_node) {
    spec.gpus_per_node = c.gpus_per_node->first;
    spec.gpu_type = c.gpus_per_node->second;
  }
  if (c.nodelist) spec.nodelist = *c.nodelist;
  if (c.exclude) spec.exclude = *c.exclude;
  if (c.begin_time) spec.begin_time = *c.begin_time;
  if (c.dependencies) {
    spec.dependencies = c.dependencies->first;
    spec.dependencies_any = c.dependencies->second;
    for (const jobspec::DependencySpec& d : spec.dependencies)
      if (d.type != jobspec::DependencyType::kSingleton && !d.has_task && d.job == e.id)
        return InvalidArgument("Job dependency problem: job " + label + " cannot depend on itself");
    LOCKSTEP_RETURN_IF_ERROR(ResolveDependenciesLocked(spec, stored));
  }
  return CheckChangedPlacementLocked(spec);
}

Status Controller::CheckChangedPlacementLocked(const jobspec::JobSpec& spec) {
  // As a submission: every number in range and every product fits, the names exist, the
  // request fits the partition's nodes, and the partition takes jobs.
  LOCKSTEP_RETURN_IF_ERROR(jobspec::Validate(spec, {.caller_is_operator = true}));
  const std::uint32_t p =
      spec.partition.empty() ? cluster_.default_partition : cluster_.PartitionIndex(spec.partition);
  if (p == engine::kNone)
    return InvalidArgument("Invalid partition name specified");  // Slurm's words, exactly
  if (!spec.qos.empty() && cluster_.QosIndex(spec.qos) == engine::kNone)
    return InvalidArgument("Invalid qos specification");
  for (const std::string* list : {&spec.nodelist, &spec.exclude}) {
    if (list->empty()) continue;
    Result<std::vector<std::string>> names = ExpandHostlist(*list);
    if (!names.ok()) return InvalidArgument("Invalid node name specified");
    for (const std::string& name : *names)
      if (cluster_.NodeIndex(name) == engine::kNone)
        return InvalidArgument("Invalid node name specified");
  }
  const engine::Partition& part = cluster_.base.partitions[p];
  // Slurm's ESLURM_INVALID_NODE_COUNT for more nodes than the partition has.
  if (static_cast<std::size_t>(std::max(1, spec.min_nodes)) > part.nodes.size())
    return InvalidArgument("Node count specification invalid");
  LOCKSTEP_RETURN_IF_ERROR(CheckPartitionOpenLocked(spec));
  return ValidatePlacement(spec, cluster_);
}

}  // namespace lockstep::controller
