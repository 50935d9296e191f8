#include "controller/incremental_snapshot.h"

#include <fmt/format.h>

#include <algorithm>

namespace lockstep::controller {
namespace {

JobId IdOf(const engine::Job& j) {
  return j.id;
}
JobId IdOf(const engine::FinishedJob& f) {
  return f.id;
}

}  // namespace

IncrementalSnapshot::IncrementalSnapshot(engine::Snapshot base) : s_(std::move(base)) {
  s_.pending.clear();
  s_.running.clear();
  s_.finished.clear();
}

template <typename T>
void IncrementalSnapshot::Unplace(std::vector<T>& v, std::uint32_t index) {
  // Swap with the last and pop: the engine orders jobs by its own keys, never by position.
  if (index + 1 != v.size()) {
    v[index] = std::move(v.back());
    slots_[IdOf(v[index])].index = index;
  }
  v.pop_back();
}

template <typename T>
void IncrementalSnapshot::Place(std::vector<T>& v, List list, JobId id, T value) {
  auto it = slots_.find(id);
  if (it != slots_.end() && it->second.list == list) {
    v[it->second.index] = std::move(value);
    return;
  }
  if (it != slots_.end()) Remove(id);
  slots_[id] = {list, static_cast<std::uint32_t>(v.size())};
  v.push_back(std::move(value));
}

void IncrementalSnapshot::SetPending(engine::Job job) {
  JobId id = job.id;
  Place(s_.pending, List::kPending, id, std::move(job));
}

void IncrementalSnapshot::SetRunning(engine::Job job) {
  JobId id = job.id;
  Place(s_.running, List::kRunning, id, std::move(job));
}

void IncrementalSnapshot::SetFinished(JobId id, engine::Outcome outcome) {
  Place(s_.finished, List::kFinished, id, engine::FinishedJob{id, outcome});
}

void IncrementalSnapshot::Remove(JobId id) {
  auto it = slots_.find(id);
  if (it == slots_.end()) return;
  Slot slot = it->second;
  slots_.erase(it);
  switch (slot.list) {
    case List::kPending:
      Unplace(s_.pending, slot.index);
      break;
    case List::kRunning:
      Unplace(s_.running, slot.index);
      break;
    case List::kFinished:
      Unplace(s_.finished, slot.index);
      break;
  }
}

std::vector<std::string> IncrementalSnapshot::Describe(const engine::Snapshot& s) {
  std::vector<std::pair<JobId, std::string>> lines;
  auto job = [&](const char* list, const engine::Job& j) {
    std::string alloc;
    for (const engine::NodeAllocation& a : j.allocation.nodes)
      alloc += fmt::format("{}:{}:{}:{:x} ", a.node, a.cpus, a.mem_mb, a.gpus);
    const engine::JobRequest& r = j.req;
    lines.emplace_back(
        j.id,
        fmt::format("{} {} {} u{} a{} p{} q{} n{}-{} t{} c{} m{}/{}/{} g{}/{}/{}:{} f{:x} x{} "
                    "s{}/{} tl{} sub{} beg{} nice{} hold{}{} rq{} ap{} dep{}{} arr{}_{}%{} "
                    "start{} [{}]",
                    list, j.id, j.name, j.user, j.assoc, j.partition, j.qos, r.min_nodes,
                    r.max_nodes, r.ntasks, r.cpus_per_task, r.mem_per_node_mb, r.mem_per_cpu_mb,
                    r.mem_per_gpu_mb, r.gpus, r.gpus_per_node, r.gpus_per_task, r.gpu_type,
                    r.features, r.exclusive, r.max_switches, r.switches_wait, r.time_limit,
                    j.submit_time, j.begin_time, j.nice, j.held_by_user, j.held_by_admin, j.requeue,
                    j.admin_priority, j.dependencies.size(), j.dependencies_any, j.array_job_id,
                    j.array_task_id, j.array_max_running, j.start_time, alloc));
  };
  for (const engine::Job& j : s.pending) job("pending", j);
  for (const engine::Job& j : s.running) job("running", j);
  for (const engine::FinishedJob& f : s.finished)
    lines.emplace_back(f.id, fmt::format("finished {} {}", f.id, static_cast<int>(f.outcome)));
  std::sort(lines.begin(), lines.end());
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (auto& [id, line] : lines) out.push_back(std::move(line));
  return out;
}

}  // namespace lockstep::controller
