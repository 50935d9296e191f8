#include "sim/workload.h"

#include <algorithm>
#include <bit>
#include <string>

namespace lockstep::sim {
namespace {

// CPUs of the first node of a partition: SWF jobs are sized in processors. The cluster a trace
// describes is homogeneous, or thin nodes first and then nodes of one more CPU (trace_swf.cc),
// so a job spread over nodes of the first node's size fits on any of them.
std::int32_t CpusPerNode(const config::ClusterConfig& c, std::uint32_t partition) {
  const auto& p = c.base.partitions[partition];
  if (p.nodes.empty()) return 1;
  return std::max(1, c.base.nodes[p.nodes.front()].cpus);
}

}  // namespace

std::uint32_t AssociationOf(const trace::TraceJob& t, config::ClusterConfig& cluster) {
  static const std::string kDefaultUser = "user";
  return cluster.AssociationFor(t.user.empty() ? kDefaultUser : t.user, t.account);
}

engine::Job ToEngineJob(const trace::TraceJob& t, const config::ClusterConfig& cluster,
                        std::uint32_t assoc) {
  engine::Job j;
  j.id = static_cast<JobId>(t.id);
  j.name = "job" + std::to_string(t.id);
  j.submit_time = t.submit;
  j.partition = cluster.default_partition;
  if (!t.partition.empty()) {
    std::uint32_t p = cluster.PartitionIndex(t.partition);
    if (p != engine::kNone) j.partition = p;
  }
  j.qos = cluster.default_qos;
  j.assoc = assoc;
  j.user = cluster.base.associations[assoc].user;
  engine::JobRequest& r = j.req;
  if (t.gpus_per_node > 0 || t.nodes > 0) {
    r.min_nodes = std::max(1, t.nodes);
    r.gpus_per_node = t.gpus_per_node;
    r.ntasks = r.min_nodes;
    r.cpus_per_task = std::max(1, t.procs / r.min_nodes);
    if (!t.gpu_type.empty()) {
      std::uint32_t type = cluster.GpuTypeIndex(t.gpu_type);
      if (type != engine::kNone) r.gpu_type = type;
    }
    r.mem_per_node_mb = t.mem_mb_per_node;
  } else {
    std::int32_t cpn = CpusPerNode(cluster, j.partition);
    r.min_nodes = std::max(1, (t.procs + cpn - 1) / cpn);
    r.ntasks = std::max(1, t.procs);
    r.cpus_per_task = 1;
  }
  r.max_nodes = r.min_nodes;
  r.time_limit = t.time_limit > 0 ? t.time_limit : std::max<Seconds>(1, RunTimeOf(t));
  return j;
}

std::int64_t UnitsOf(const engine::Job& job, const engine::Allocation& a, bool gpu_cluster) {
  std::int64_t units = 0;
  for (const engine::NodeAllocation& n : a.nodes)
    units += gpu_cluster ? std::popcount(n.gpus) : n.cpus;
  return units;
}

}  // namespace lockstep::sim
