#include "controller/snapshot_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace lockstep::controller {

std::vector<std::string> DescribeJobs(const engine::Snapshot& s) {
  std::vector<std::pair<JobId, std::string>> lines;
  auto job = [&](const char* list, const engine::Job& j) {
    std::string alloc;
    for (const engine::NodeAllocation& a : j.allocation.nodes)
      alloc += fmt::format("{}:{}:{}:{:x} ", a.node, a.cpus, a.mem_mb, a.gpus);
    std::string deps;
    for (const engine::Dependency& d : j.dependencies)
      deps += fmt::format("{}:{}+{} ", static_cast<int>(d.kind), d.target, d.delay);
    const engine::JobRequest& r = j.req;
    lines.emplace_back(
        j.id,
        fmt::format("{} {} {} u{} a{} p{} q{} n{}-{} t{} c{} m{}/{}/{}/{} g{}/{}/{}:{} f{:x} x{} "
                    "s{}/{} tl{} sub{} beg{} nice{} hold{}{} rq{} ap{} dep{}{}({}) arr{}_{}%{} "
                    "het{}/{} xu{} start{} [{}]",
                    list, j.id, j.name, j.user, j.assoc, j.partition, j.qos, r.min_nodes,
                    r.max_nodes, r.ntasks, r.cpus_per_task, r.mem_per_node_mb, r.mem_per_cpu_mb,
                    r.mem_per_gpu_mb, r.mem_whole_node, r.gpus, r.gpus_per_node, r.gpus_per_task, r.gpu_type,
                    r.features, r.exclusive, r.max_switches, r.switches_wait, r.time_limit,
                    j.submit_time, j.begin_time, j.nice, j.held_by_user, j.held_by_admin, j.requeue,
                    j.admin_priority, j.dependencies.size(), j.dependencies_any, deps, j.array_job_id,
                    j.array_task_id, j.array_max_running, j.het_offset, j.het_size,
                    r.exclusive_user, j.start_time, alloc));
  };
  for (const engine::Job& j : s.pending) job("pending", j);
  for (const engine::Job& j : s.running) job("running", j);
  std::sort(lines.begin(), lines.end());
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (auto& [id, line] : lines) out.push_back(std::move(line));
  return out;
}

}  // namespace lockstep::controller
