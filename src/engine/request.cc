#include "engine/request.h"

#include <algorithm>

namespace lockstep::engine {
namespace {

std::int32_t CeilDiv(std::int32_t a, std::int32_t b) {
  return b <= 0 ? a : (a + b - 1) / b;
}

Seconds DurationOf(const JobRequest& r, const Partition& p) {
  if (r.time_limit > 0) return r.time_limit;
  if (p.default_time != kUnlimited && p.default_time > 0) return p.default_time;
  return p.max_time;  // Slurm: no DefaultTime means the partition's MaxTime
}

}  // namespace

JobShape ShapeOf(const Job& job, const Partition& partition) {
  const JobRequest& r = job.req;
  JobShape s;
  s.nodes = std::max(1, r.min_nodes);
  s.max_nodes = std::max(s.nodes, r.max_nodes);
  s.tasks_per_node =
      r.ntasks_per_node > 0 ? r.ntasks_per_node : CeilDiv(std::max(1, r.ntasks), s.nodes);
  NodeNeed& n = s.per_node;
  n.cpus = s.tasks_per_node * std::max(1, r.cpus_per_task);
  if (r.gpus_per_node > 0) {
    n.gpus = r.gpus_per_node;
  } else if (r.gpus_per_task > 0) {
    n.gpus = r.gpus_per_task * s.tasks_per_node;
  } else if (r.gpus > 0) {
    n.gpus = CeilDiv(r.gpus, s.nodes);
  }
  n.gpu_type = r.gpu_type;
  if (r.mem_per_node_mb > 0) {
    n.mem_mb = r.mem_per_node_mb;
  } else if (r.mem_per_cpu_mb > 0) {
    n.mem_mb = r.mem_per_cpu_mb * n.cpus;
  } else if (r.mem_per_gpu_mb > 0) {
    n.mem_mb = r.mem_per_gpu_mb * n.gpus;
  } else {
    n.whole_memory = r.mem_whole_node;
  }
  n.exclusive = r.exclusive;
  s.features = r.features;
  s.duration = DurationOf(r, partition);
  s.filter = r.node_filter.get();
  s.reservation = job.reservation;
  return s;
}

JobShape ShapeIn(const Job& job, const Snapshot& s) {
  static const Partition kNoPartition;
  return ShapeOf(job,
                 job.partition < s.partitions.size() ? s.partitions[job.partition] : kNoPartition);
}

Tres TresOf(const JobShape& shape, std::int32_t nodes) {
  Tres t;
  t.nodes = nodes;
  t.cpus = static_cast<std::int64_t>(shape.per_node.cpus) * nodes;
  t.mem_mb = shape.per_node.mem_mb * nodes;
  t.gpus = static_cast<std::int64_t>(shape.per_node.gpus) * nodes;
  return t;
}

}  // namespace lockstep::engine
