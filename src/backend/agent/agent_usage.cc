// sstat's data: every `usage_interval` the agent samples what each running task used so far
// (Launcher::Usage) and sends it to lockstepd as "usage" events, with its job, run, step, node
// and rank. lockstepd keeps the latest sample of each task while its step runs.
#include <ctime>

#include "backend/agent/agent.h"
#include "backend/agent/agent_unit.h"

namespace lockstep::agent {

void Agent::SampleUsageIfDue() {
  if (options_.usage_interval.count() <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_usage_) return;
  next_usage_ = now + options_.usage_interval;
  struct Task {
    std::uint64_t job;
    int run;
    std::string step;
    int step_id;
    std::string node;
    int rank;
    pid_t pid;
  };
  std::vector<Task> tasks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& u : units_)
      for (std::size_t i = 0; i < u->pids.size(); ++i)
        if (u->alive.count(u->pids[i]))
          tasks.push_back({u->job, u->run, u->step, u->step_id, u->node,
                           i < u->ranks.size() ? u->ranks[i] : 0, u->pids[i]});
  }
  // Read off the lock: /proc and cgroup files of many tasks.
  std::vector<nlohmann::json> events;
  for (const Task& t : tasks) {
    Result<TaskUsageSample> s = launcher_->Usage(t.pid);
    if (!s.ok()) continue;  // reaped meanwhile
    events.push_back({{"type", "usage"},
                      {"job_id", t.job},
                      {"run", t.run},
                      {"step", t.step},
                      {"step_id", t.step_id},
                      {"node", t.node},
                      {"rank", t.rank},
                      {"time", static_cast<long long>(std::time(nullptr))},
                      {"cpu_usec", s->cpu_usec},
                      {"rss_bytes", s->rss_bytes},
                      {"max_rss_bytes", s->max_rss_bytes},
                      {"vm_bytes", s->vm_bytes},
                      {"pages", s->pages},
                      {"read_bytes", s->read_bytes},
                      {"write_bytes", s->write_bytes},
                      {"pids", s->pids}});
  }
  std::lock_guard<std::mutex> lock(mu_);
  // Only the latest sample matters: while lockstepd is away, samples not yet sent are replaced,
  // so that the outbox does not grow with every interval.
  std::erase_if(outbox_, [](const nlohmann::json& e) { return e.value("type", "") == "usage"; });
  for (auto& e : events) Report(std::move(e));
}

}  // namespace lockstep::agent
