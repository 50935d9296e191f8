#include "controller/job_convert.h"

#include <algorithm>
#include <sstream>

#include "common/hostlist.h"
#include "jobspec/cpus_per_gpu.h"
#include "engine/request.h"

namespace lockstep::controller {
namespace {

std::uint32_t PartitionOf(const jobspec::JobSpec& s, const config::ClusterConfig& c) {
  return s.partition.empty() ? c.default_partition : c.PartitionIndex(s.partition);
}

std::uint32_t QosOf(const jobspec::JobSpec& s, const config::ClusterConfig& c) {
  return s.qos.empty() ? c.default_qos : c.QosIndex(s.qos);
}

// "a&b" (or "a,b") -> feature bits; kNone-valued bit set on an unknown feature.
bool FeatureMask(const std::string& constraint, const config::ClusterConfig& c, std::uint64_t* mask) {
  *mask = 0;
  std::string token;
  std::stringstream in(constraint);
  while (std::getline(in, token, '&')) {
    std::stringstream parts(token);
    std::string f;
    while (std::getline(parts, f, ',')) {
      if (f.empty()) continue;
      std::uint32_t i = c.FeatureIndex(f);
      if (i == engine::kNone || i >= 64) return false;
      *mask |= std::uint64_t{1} << i;
    }
  }
  return true;
}

// A hostlist ("gpu[01-04],cpu7") as sorted node indices; an error names what is not a node.
Result<std::vector<std::uint32_t>> NodeIndices(const std::string& hostlist,
                                              const config::ClusterConfig& c) {
  std::vector<std::uint32_t> out;
  if (hostlist.empty()) return out;
  auto names = ExpandHostlist(hostlist);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    std::uint32_t n = c.NodeIndex(name);
    if (n == engine::kNone) return InvalidArgument("invalid node name specified: " + name);
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// -w and -x as the engine's filter; null without either. A name that is no longer a node (the
// cluster changed since the job was accepted) makes the filter impossible rather than
// dropping it: the engine then says BadConstraints.
engine::NodeFilterPtr NodeFilterOf(const jobspec::JobSpec& s, const config::ClusterConfig& c) {
  if (s.nodelist.empty() && s.exclude.empty()) return nullptr;
  boost::intrusive_ptr<engine::NodeFilter> f(new engine::NodeFilter);
  auto required = NodeIndices(s.nodelist, c);
  auto excluded = NodeIndices(s.exclude, c);
  if (!required.ok() || !excluded.ok()) {
    f->required = {static_cast<std::uint32_t>(c.base.nodes.size())};  // no such node
    return f;
  }
  f->required = std::move(*required);
  f->excluded = std::move(*excluded);
  return f;
}

engine::JobRequest RequestOf(const jobspec::JobSpec& s, const config::ClusterConfig& c) {
  engine::JobRequest r;
  r.min_nodes = std::max(1, s.min_nodes);
  r.max_nodes = s.max_nodes > 0 ? s.max_nodes : r.min_nodes;
  r.ntasks_per_node = s.ntasks_per_node;
  r.ntasks = s.ntasks > 0 ? s.ntasks : r.min_nodes * std::max(1, s.ntasks_per_node);
  r.cpus_per_task = std::max(1, s.cpus_per_task);
  r.mem_per_node_mb = s.mem_mb;
  r.mem_whole_node = s.mem_whole_node;
  r.mem_per_cpu_mb = s.mem_per_cpu_mb;
  r.mem_per_gpu_mb = s.mem_per_gpu_mb;
  r.gpus = s.gpus;
  r.gpus_per_node = s.gpus_per_node;
  r.gpus_per_task = s.gpus_per_task;
  r.gpu_type = s.gpu_type.empty() ? engine::kNone : c.GpuTypeIndex(s.gpu_type);
  // A feature that no longer exists (a backend's placement feature, dropped, or not given yet
  // after a restart) must not let the job run anywhere: all 64 bits, which no node has while a
  // bit is free (and only a node with every one of 64 features when none is). The engine then
  // says BadConstraints.
  if (!FeatureMask(s.constraint, c, &r.features)) r.features = ~std::uint64_t{0};
  r.exclusive = s.exclusive;
  r.exclusive_user = s.exclusive_user;
  r.switches_wait = SwitchesWait(s, c);
  r.max_switches = r.switches_wait > 0 ? s.max_switches : 0;
  r.time_limit = s.time_limit;
  r.node_filter = NodeFilterOf(s, c);
  // As slurmctld: a node list longer than -N raises the node count to the list's length.
  if (r.node_filter != nullptr) {
    const auto listed = static_cast<std::int32_t>(r.node_filter->required.size());
    r.min_nodes = std::max(r.min_nodes, listed);
    r.max_nodes = std::max(r.max_nodes, r.min_nodes);
    r.ntasks = s.ntasks > 0 ? std::max(s.ntasks, r.min_nodes)
                            : r.min_nodes * std::max(1, s.ntasks_per_node);
  }
  // --cpus-per-gpu: the engine counts a node's CPUs as tasks x CPUs per task, so each node
  // carries one "task" holding all of its CPUs (ntasks stays what the user asked for).
  if (const auto bound = jobspec::CpusForGpus(s, r.min_nodes, r.ntasks)) {
    r.ntasks_per_node = 1;
    r.cpus_per_task = bound->cpus_per_node;
    r.gpus_per_node = bound->gpus_per_node;
    r.gpus_per_task = 0;
  }
  return r;
}

}  // namespace

Seconds SwitchesWait(const jobspec::JobSpec& s, const config::ClusterConfig& c) {
  if (s.max_switches <= 0 || c.max_switch_wait <= 0) return 0;
  return s.switches_wait > 0 ? std::min(s.switches_wait, c.max_switch_wait) : c.max_switch_wait;
}

Status ValidateSpec(const jobspec::JobSpec& s, config::ClusterConfig& c) {
  if (s.script.empty() && s.external.empty()) return InvalidArgument("the job has no batch script");
  return ValidatePlacement(s, c);
}

Status ValidatePlacement(const jobspec::JobSpec& s, config::ClusterConfig& c) {
  std::uint32_t p = PartitionOf(s, c);
  if (p == engine::kNone)
    return InvalidArgument("invalid partition name specified: " + s.partition);
  if (QosOf(s, c) == engine::kNone) return InvalidArgument("invalid qos specification: " + s.qos);
  if (!s.gpu_type.empty() && c.GpuTypeIndex(s.gpu_type) == engine::kNone)
    return InvalidArgument("invalid generic resource (gres) specification: no GPU of type " +
                           s.gpu_type);
  std::uint64_t mask = 0;
  if (!FeatureMask(s.constraint, c, &mask))
    return InvalidArgument("invalid feature specification: " + s.constraint);
  auto required = NodeIndices(s.nodelist, c);
  if (!required.ok()) return required.status();
  auto excluded = NodeIndices(s.exclude, c);
  if (!excluded.ok()) return excluded.status();
  for (std::uint32_t n : *required) {
    if (std::binary_search(excluded->begin(), excluded->end(), n))
      return InvalidArgument("requested node " + c.base.nodes[n].name +
                             " is both required (-w) and excluded (-x)");
    const auto& in = c.base.partitions[p].nodes;
    if (std::find(in.begin(), in.end(), n) == in.end())
      return InvalidArgument("requested node " + c.base.nodes[n].name +
                             " is not in partition " + c.base.partitions[p].name);
  }
  // The request must fit on enough nodes of the partition, at least when they are empty.
  engine::Job probe;
  probe.req = RequestOf(s, c);
  probe.partition = p;
  const engine::Partition& part = c.base.partitions[p];
  engine::JobShape shape = engine::ShapeOf(probe, part);
  // Slurm's EnforcePartLimits=NO (the default) accepts it: it pends with PartitionTimeLimit.
  if (shape.duration > part.max_time && s.time_limit > 0 && c.submit_limits.enforce_part_limits)
    return InvalidArgument(
        "Requested time limit is invalid (missing or exceeds some limit): above partition " +
        part.name + "'s MaxTime (scheduler.enforce_part_limits)");
  // Stops at the first `shape.nodes` capable nodes: with 10,000 nodes a scan of all of them
  // under the controller's lock was most of a submission's cost.
  int capable = 0;
  for (std::uint32_t n : part.nodes) {
    if (capable >= shape.nodes) break;
    const engine::Node& node = c.base.nodes[n];
    if (std::binary_search(excluded->begin(), excluded->end(), n)) continue;
    if ((node.features & mask) != mask) continue;
    if (node.cpus < shape.per_node.cpus) continue;
    if (shape.per_node.mem_mb > 0 && node.mem_mb < shape.per_node.mem_mb) continue;
    int gpus = 0;
    for (const engine::GpuDevice& g : node.gpus)
      if (shape.per_node.gpu_type == engine::kNone || g.type == shape.per_node.gpu_type) ++gpus;
    if (gpus < shape.per_node.gpus) continue;
    ++capable;
  }
  if (capable < shape.nodes)
    return InvalidArgument("requested node configuration is not available");
  return Status::Ok();
}

engine::Job ToEngineJob(const JobEntry& e, config::ClusterConfig& c) {
  const jobspec::JobSpec& s = *e.spec;
  engine::Job j;
  j.id = e.id;
  j.name = s.name;
  j.user = e.uid;
  j.assoc = c.AssociationFor(e.user, s.account);
  j.partition = PartitionOf(s, c);
  j.qos = QosOf(s, c);
  j.req = RequestOf(s, c);
  j.submit_time = e.submit_time;
  j.begin_time = s.begin_time;
  j.nice = s.nice;
  j.held_by_user = e.held_by_user;
  j.held_by_admin = e.held_by_admin;
  j.requeue = s.requeue.value_or(true);
  j.admin_priority = e.admin_priority;
  if (!s.reservation.empty()) {
    // A reservation since deleted names no window: the job waits (ReservationDeleted).
    auto r = c.reservation_ids.find(s.reservation);
    j.reservation = r == c.reservation_ids.end() ? kDeletedReservation : r->second;
  }
  // One engine dependency per spec dependency, in order (the controller resolves aftercorr's
  // task by position, controller_depend.cc).
  for (const jobspec::DependencySpec& d : s.dependencies) {
    const engine::DependencyKind kind = d.type == jobspec::DependencyType::kAfterCorr
                                            ? engine::DependencyKind::kAfterOk
                                            : static_cast<engine::DependencyKind>(d.type);
    j.dependencies.push_back({kind, d.job, Seconds{d.delay_minutes} * 60});
  }
  j.dependencies_any = s.dependencies_any;
  if (e.is_array_task()) {
    j.array_job_id = e.array_job_id;
    j.array_task_id = e.array_task_id;
    j.array_max_running = s.array ? s.array->max_running : 0;
  }
  if (e.is_het_component()) {  // at most kMaxHetComponents (128) components
    j.het_offset = static_cast<std::uint8_t>(e.het_offset);
    j.het_size = static_cast<std::uint8_t>(e.het_size);
  }
  j.start_time = e.start_time;
  return j;
}

}  // namespace lockstep::controller
