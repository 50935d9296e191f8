#include "engine/priority.h"

#include <algorithm>
#include <cmath>

#include "engine/fairshare.h"

namespace lockstep::engine {

PriorityContext MakePriorityContext(const Snapshot& s, const PriorityWeights& w, Time at) {
  PriorityContext ctx;
  ctx.now = at;
  if (w.fairshare > 0) ctx.fairshare = FairTreeFactors(s.accounts, s.associations);
  double cpus = 0, mem = 0, gpus = 0;
  for (const Node& n : s.nodes) {
    cpus += n.cpus;
    mem += static_cast<double>(n.mem_mb);
    gpus += static_cast<double>(n.gpus.size());
  }
  ctx.total_nodes = std::max<double>(1, static_cast<double>(s.nodes.size()));
  ctx.total_cpus = std::max(1.0, cpus);
  ctx.total_mem = std::max(1.0, mem);
  ctx.total_gpus = std::max(1.0, gpus);
  for (const Partition& p : s.partitions)
    ctx.max_partition_factor = std::max<double>(ctx.max_partition_factor, p.priority_job_factor);
  for (const Qos& q : s.qos)
    ctx.max_qos_priority = std::max<double>(ctx.max_qos_priority, q.priority);
  return ctx;
}

PriorityBreakdown ComputePriority(const Job& job, const JobShape& shape, const Snapshot& s,
                                  const PriorityContext& ctx, const PriorityWeights& w) {
  PriorityBreakdown b;
  if (job.held_by_user || job.held_by_admin) return b;
  if (job.admin_priority > 0) {
    b.total = job.admin_priority;
    return b;
  }
  // Age counts from when the job became eligible (its begin time, if later than submit).
  Time eligible = std::max(job.submit_time, job.begin_time);
  double age =
      w.max_age > 0
          ? std::clamp(static_cast<double>(ctx.now - eligible) / static_cast<double>(w.max_age),
                       0.0, 1.0)
          : 0.0;
  b.age = w.age * age;
  if (job.assoc < ctx.fairshare.size()) b.fairshare = w.fairshare * ctx.fairshare[job.assoc];

  Tres tres = TresOf(shape, shape.nodes);
  double size = 0.5 * (static_cast<double>(tres.nodes) / ctx.total_nodes +
                       static_cast<double>(tres.cpus) / ctx.total_cpus);
  size = std::clamp(size, 0.0, 1.0);
  if (w.favor_small) size = 1.0 - size;
  b.job_size = w.job_size * size;
  if (job.partition < s.partitions.size())
    b.partition =
        w.partition * s.partitions[job.partition].priority_job_factor / ctx.max_partition_factor;
  if (job.qos < s.qos.size() && ctx.max_qos_priority > 0)
    b.qos = w.qos * s.qos[job.qos].priority / ctx.max_qos_priority;
  b.tres = w.tres_cpu * std::min(1.0, static_cast<double>(tres.cpus) / ctx.total_cpus) +
           w.tres_mem * std::min(1.0, static_cast<double>(tres.mem_mb) / ctx.total_mem) +
           w.tres_gpu * std::min(1.0, static_cast<double>(tres.gpus) / ctx.total_gpus);
  b.nice = job.nice;
  double total = b.age + b.fairshare + b.job_size + b.partition + b.qos + b.tres - job.nice;
  // Slurm keeps a runnable job's priority at 1 or more; 0 means held.
  b.total = static_cast<std::uint32_t>(std::clamp(std::round(total), 1.0, 4294967295.0));
  return b;
}

}  // namespace lockstep::engine
