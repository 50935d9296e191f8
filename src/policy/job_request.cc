#include "policy/job_request.h"

#include <algorithm>

namespace lockstep::policy {
namespace {

std::vector<std::string> SplitCommas(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

}  // namespace

Request RequestOfJob(const jobspec::JobSpec& s, std::string operation) {
  Request r;
  r.kind = Kind::kJob;
  r.operation = std::move(operation);
  r.name = s.name;
  r.account = s.account;
  r.qos = s.qos;
  r.partitions = SplitCommas(s.partition);
  // Sizes as the job asks at most: -N's upper bound, every task's CPUs, every node's memory.
  const std::int64_t nodes = std::max<std::int64_t>({1, s.min_nodes, s.max_nodes});
  const std::int64_t cpt = std::max<std::int32_t>(1, s.cpus_per_task);
  std::int64_t tasks = std::max<std::int32_t>(1, s.ntasks);
  if (s.ntasks_per_node > 0) tasks = std::max(tasks, std::int64_t{s.ntasks_per_node} * nodes);
  std::int64_t gpus = s.gpus;
  gpus = std::max(gpus, std::int64_t{s.gpus_per_node} * nodes);
  gpus = std::max(gpus, std::int64_t{s.gpus_per_task} * tasks);
  std::int64_t cpus = tasks * cpt;
  if (s.cpus_per_gpu > 0) cpus = std::max(cpus, std::int64_t{s.cpus_per_gpu} * gpus);
  r.nodes = nodes;
  r.gpus = gpus;
  r.cpus = cpus;
  std::int64_t mem = s.mem_mb * nodes;
  mem = std::max(mem, s.mem_per_cpu_mb * cpus);
  mem = std::max(mem, s.mem_per_gpu_mb * gpus);
  if (mem > 0) r.memory_mb = mem;
  if (s.time_limit > 0) r.time_limit = s.time_limit;
  if (!s.container_image.empty()) r.images.push_back(s.container_image);
  return r;
}

}  // namespace lockstep::policy
