// Limits a node cannot hold a job to (docs/agent-processes.md): a host without a cgroup memory
// or cpuset controller (v2, or v1 on a hybrid host) runs a job's tasks, but nothing stops them
// using more memory or other CPUs than they were given. The node says so (scontrol show node's
// LimitsEnforced=), and so does sbatch, as a warning, when such a node may run the job.
#include <fmt/format.h>

#include "common/hostlist.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {

std::string LimitsEnforced(bool memory, bool cpus) {
  if (memory && cpus) return "memory,cpus";
  if (memory) return "memory";
  if (cpus) return "cpus";
  return "none";
}

std::vector<std::string> Controller::LimitWarningsLocked(const jobspec::JobSpec& spec) const {
  // The partitions that may run it: -p's list, or the default one.
  std::vector<std::uint32_t> parts;
  std::string_view list = spec.partition;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::uint32_t p = cluster_.PartitionIndex(list.substr(0, comma));
    if (p != engine::kNone) parts.push_back(p);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  if (spec.partition.empty()) parts.push_back(cluster_.default_partition);
  std::vector<std::string> no_memory, no_cpus;
  for (std::uint32_t p : parts) {
    if (p >= cluster_.base.partitions.size()) continue;
    for (std::uint32_t n : cluster_.base.partitions[p].nodes) {
      const NodeInfo& info = nodes_[n];
      if (!info.reported) continue;
      const std::string& name = cluster_.base.nodes[n].name;
      if (!info.enforces_memory) no_memory.push_back(name);
      if (!info.enforces_cpus) no_cpus.push_back(name);
    }
  }
  std::vector<std::string> warnings;
  const bool asks_memory = spec.mem_mb > 0 || spec.mem_per_cpu_mb > 0 || spec.mem_per_gpu_mb > 0;
  if (asks_memory && !no_memory.empty())
    warnings.push_back(fmt::format(
        "the memory this job asks for is not enforced on {} (no cgroup memory controller there; "
        "scontrol show node: LimitsEnforced): it may use more",
        CompressHostlist(no_memory)));
  if (!spec.exclusive && !no_cpus.empty())
    warnings.push_back(fmt::format(
        "the CPUs this job is given are not enforced on {} (no cgroup cpu controller there; "
        "scontrol show node: LimitsEnforced): its tasks may use more",
        CompressHostlist(no_cpus)));
  return warnings;
}

}  // namespace lockstep::controller
