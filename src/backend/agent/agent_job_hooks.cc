// lockstep-agent's Prolog and Epilog (docs/health.md, "Prolog and Epilog"). As slurmd does by
// default, the prolog runs on a node when the first of a run's tasks is to start there (the
// batch script, or an srun step), and every other launch of that run there waits for it; the
// epilog runs on each node of the run once lockstepd says the run ended (job_end) and its
// processes there are gone. A failure is reported to lockstepd, which drains the node; after a
// failed prolog nothing of the run starts there.
#include <signal.h>

#include "backend/agent/agent.h"
#include "backend/agent/agent_unit.h"
#include "common/log.h"

namespace lockstep::agent {
namespace {

constexpr std::size_t kEndedKept = 4096;  // job_end repeats are recognised among the latest

JobHookRun DecodeHookRun(const nlohmann::json& order, const char* context) {
  JobHookRun run;
  run.program = order.value("program", "");
  run.timeout = std::chrono::seconds(order.value("timeout_s", 300));
  if (order.contains("env") && order["env"].is_object())
    run.env = order["env"].get<std::map<std::string, std::string>>();
  run.env["SLURM_SCRIPT_CONTEXT"] = context;  // as Slurm 21.08+ sets it
  return run;
}

}  // namespace

void Agent::StartHookThreadLocked(std::function<void()> body) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  hook_threads_.push_back({std::thread([body = std::move(body), done] {
                             body();
                             *done = true;
                           }),
                           done});
}

void Agent::JoinHookThreads(bool only_finished) {
  std::vector<HookThread> joining;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = hook_threads_.begin(); it != hook_threads_.end();) {
      if (only_finished && !*it->done) {
        ++it;
        continue;
      }
      joining.push_back(std::move(*it));
      it = hook_threads_.erase(it);
    }
  }
  for (HookThread& t : joining) t.thread.join();
}

void Agent::ReportHookFailureLocked(const HookKey& key, const std::string& hook,
                                    const JobHookRun& run, const std::string& detail) {
  log::Error("job {}: {} {} failed on {}: {}", key.job, hook, run.program, key.node, detail);
  Report({{"type", "hook_failed"},
          {"hook", hook},
          {"job_id", key.job},
          {"run", key.run},
          {"node", key.node},
          {"program", run.program},
          {"detail", detail}});
}

void Agent::LaunchAfterProlog(std::shared_ptr<Unit> unit, nlohmann::json command) {
  const HookKey key{unit->job, unit->run, unit->node};
  std::unique_lock<std::mutex> lock(mu_);
  auto [it, first] = prologs_.try_emplace(key, PrologState::kRunning, "");
  if (first) {
    const JobHookRun run = DecodeHookRun(command["prolog"], "prolog_slurmd");
    lock.unlock();
    const JobHookOutcome outcome = RunJobHook(run);
    lock.lock();
    prologs_[key] = {outcome.ok ? PrologState::kPassed : PrologState::kFailed, outcome.detail};
    if (!outcome.ok) ReportHookFailureLocked(key, "prolog", run, outcome.detail);
    prolog_done_.notify_all();
  } else {
    prolog_done_.wait(lock, [&] {
      auto p = prologs_.find(key);
      return p == prologs_.end() || p->second.first != PrologState::kRunning;
    });
  }
  auto p = prologs_.find(key);
  const bool failed = p == prologs_.end() || p->second.first == PrologState::kFailed;
  if (failed || unit->terminated) {
    unit->launching = false;
    if (failed)
      unit->exit_code = 1;
    else
      unit->signal = SIGKILL;
    MaybeReportLocked(unit);
    return;
  }
  lock.unlock();
  SpawnTasks(unit, command);
}

void Agent::JobEnd(const nlohmann::json& c) {
  const HookKey key{c.value("job_id", std::uint64_t{0}), c.value("run", 0), c.value("node", "")};
  std::lock_guard<std::mutex> lock(mu_);
  if (!ended_.insert(key).second) return;  // lockstepd may say it twice (terminate, then exit)
  ended_order_.push_back(key);
  if (ended_order_.size() > kEndedKept) {
    ended_.erase(ended_order_.front());
    ended_order_.pop_front();
  }
  std::optional<JobHookRun> epilog;
  if (c.contains("epilog") && c["epilog"].is_object())
    epilog = DecodeHookRun(c["epilog"], "epilog_slurmd");
  epilogs_due_[key] = std::move(epilog);
  MaybeRunEpilogLocked(key);
}

void Agent::MaybeRunEpilogLocked(const HookKey& key) {
  auto due = epilogs_due_.find(key);
  if (due == epilogs_due_.end()) return;
  for (const auto& u : units_)
    if (u->job == key.job && u->run == key.run && u->node == key.node) return;  // not yet
  std::optional<JobHookRun> epilog = std::move(due->second);
  epilogs_due_.erase(due);
  prologs_.erase(key);
  if (!epilog) return;
  StartHookThreadLocked([this, key, run = std::move(*epilog)] {
    const JobHookOutcome outcome = RunJobHook(run);
    if (outcome.ok) return;
    std::lock_guard<std::mutex> lock(mu_);
    ReportHookFailureLocked(key, "epilog", run, outcome.detail);
  });
}

}  // namespace lockstep::agent
