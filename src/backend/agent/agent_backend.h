// lockstepd's side of lockstep's node agents, as a backend (backend/backend.h) like any other:
// agents register their nodes and what still runs there, long-poll for commands (the poll is
// also their heartbeat) and post events and step output, which become EventSink calls. An agent
// silent for node_timeout makes its nodes DOWN. The HTTP routes are in agent_routes.h.
//
// Thread-safety: every method may be called from any thread. Its own mutex guards the agents;
// each agent has its own wake-up (the waiter of its poll), so a command for one agent answers
// only that agent's poll. Waiters are called without the mutex held.
// Ownership: borrows the sink, which must outlive it; owns a watchdog thread, which is also the
// timer that answers polls whose wait ended.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/agent/job_hook_orders.h"
#include "backend/agent/step_gather.h"
#include "backend/backend.h"
#include "common/clock.h"

namespace lockstep::agent {

struct AgentBackendOptions {
  std::vector<std::string> nodes;  // the configured nodes agents may serve
  Seconds node_timeout = 30;       // silent this long: DOWN (Slurm's SlurmdTimeout)
  Clock* clock = &SystemClock();   // not owned
  // How often the watchdog looks for silent agents (real time).
  std::chrono::milliseconds check_period{1000};
  // The agents' health checks: the "health" command each agent gets when it registers
  // (type, program, interval_s, timeout_s, node_states); null: none.
  nlohmann::json health_settings;
  // The cluster's `prolog:` and `epilog:` (job_hook_orders.h): they go with the launches and
  // the runs' ends. An empty program: none.
  JobHookSettings prolog, epilog;
  // The tasks' RLIMIT_CORE in MiB (`health.core_dumps.max_size`); -1: the agent's own.
  std::int64_t core_max_mb = -1;
  // Agents may register any node name, not only `nodes` (health-only agents on Kubernetes,
  // whose nodes are the cluster's Node objects: the sink ignores names it does not know).
  bool any_node = false;
};

// Answers an agent's poll: {"commands": [...]} and "register": true when the agent must
// register. Called once, from any thread, never with the backend's mutex held.
using PollWaiter = std::function<void(nlohmann::json)>;

class AgentBackend : public backend::Backend {
 public:
  AgentBackend(backend::EventSink& sink, AgentBackendOptions options);
  ~AgentBackend() override;  // answers every poll (no commands) and stops the watchdog
  AgentBackend(const AgentBackend&) = delete;
  AgentBackend& operator=(const AgentBackend&) = delete;

  // --- backend::Backend ---
  Status Launch(backend::LaunchOrder order) override;
  Status Terminate(backend::RunId run, Seconds grace) override;
  Status Signal(backend::RunId run, int signo) override;
  Status SignalBatch(backend::RunId run, int signo) override;
  bool SupportsSteps() const override { return true; }
  bool SupportsSuspend() const override { return true; }
  bool SupportsMpi() const override { return true; }
  Status Suspend(backend::RunId run, bool stop) override;
  Status LaunchStep(backend::StepLaunch step) override;
  Status SignalStep(JobId job, std::int32_t step, int signo, Seconds grace) override;
  // The run's output file, when this host has it and the job's user owns it.
  Result<std::string> Logs(const backend::LogsRequest& request) override;
  // sbcast (agent_broadcast.cc): one "bcast" command per agent, naming its nodes of the order
  // (an agent of several nodes on one host writes once for them), then waits for each node's
  // "bcast_done" event, up to the order's timeout and a little more for the report's way back.
  Result<std::vector<backend::BroadcastResult>> Broadcast(
      const backend::BroadcastOrder& order) override;

  // --- The agents' API (docs/api.md, "Agents"); bodies are checked whole before use. ---
  Status Register(const nlohmann::json& body);
  // The agent's commands, through `done`: at once when some are queued, when `wait` is 0, or
  // when the agent must register (first, or again after it was declared lost); else as soon as
  // one is queued, or with none when `wait` (real time) ends. A newer poll of the same agent
  // answers the older one at once, with no commands. Never blocks.
  void Poll(const std::string& agent, std::chrono::milliseconds wait, PollWaiter done);
  Status Events(const nlohmann::json& body);
  Status Output(const nlohmann::json& body);
  // Health reports of the agent's nodes (docs/api.md, "Agents"), to the sink's NodeHealth.
  Status Health(const nlohmann::json& body);

  // Replaces the health settings (the "health" command; AgentBackendOptions::health_settings),
  // say when the cluster's storage list changed: sent at once to every registered agent, and to
  // every agent that registers later.
  void SetHealthSettings(nlohmann::json settings);

  // Each registered agent and how long ago it was last heard of (its last poll, registration
  // or report), for lockstepd's metrics.
  std::vector<std::pair<std::string, double>> HeartbeatAges() const;

  // Declares the nodes of agents silent for node_timeout DOWN. The watchdog calls it every
  // check_period; tests call it after moving their clock.
  void CheckAgents();

 private:
  struct AgentState {
    std::string name;
    std::vector<std::string> nodes;
    Clock::Monotonic last_seen;
    bool lost = false;  // declared silent: it must register again
    bool launches = true;  // false: a checker only (Registration::launches)
    std::deque<nlohmann::json> commands;
    // Its poll in progress, if any: answered by a command, a newer poll, or its deadline.
    PollWaiter waiter;
    std::chrono::steady_clock::time_point deadline;
  };
  // A poll's answer, to be given once the mutex is released.
  struct Answer {
    PollWaiter done;
    nlohmann::json body;
  };

  // Queues `command` for the agent serving `node`; false when no agent serves it. A poll
  // waiting for it is answered by TakeAnswersLocked, so that one answer carries every command
  // queued under one hold of the mutex.
  bool SendLocked(const std::string& node, nlohmann::json command);
  // Whether `agent` may report `node`'s health: it registered the node, and (when it launches)
  // no other agent registered it since.
  bool ChecksNodeLocked(const std::string& agent, const std::string& node) const;
  // The answers of the polls whose agents got commands since the last call.
  std::vector<Answer> TakeAnswersLocked();
  // Takes the agent's queued commands (and its waiter, if any) into an answer.
  Answer AnswerLocked(AgentState& agent);
  // The polls whose deadline is not after `now` (real time), answered with their commands.
  std::vector<Answer> ExpireLocked(std::chrono::steady_clock::time_point now);
  static void Deliver(std::vector<Answer> answers);
  // Runs `locked` under the mutex, then answers the polls its commands woke.
  template <typename F>
  Status WithAnswers(F&& locked);
  Status TerminateLocked(backend::RunId run, Seconds grace);
  // The run ended (or is being ended): each of its nodes' agents runs the epilog once the
  // run's processes there are gone.
  void RunEndedLocked(const backend::RunId& run);
  // The prolog order for `node` of `run` (null without a prolog).
  nlohmann::json PrologOrderLocked(const backend::RunId& run, const std::string& node) const;
  Status SignalLocked(backend::RunId run, int signo);
  Status LaunchStepLocked(const backend::StepLaunch& step);
  Status SignalStepLocked(JobId job, std::int32_t step, int signo, Seconds grace);
  // An agent's part of an MPI step's fence (step_gather.h): kept, and once every node of the
  // step has sent its part, the whole goes to each of the step's agents.
  Status GatherLocked(const std::string& agent, const GatherPart& part);
  // The step's tasks ended on a node: its fences still gathering fail on every agent.
  void FailGathersLocked(JobId job, std::int32_t step);
  // One node of each agent among `nodes`: where a command for every agent of a step goes once.
  std::vector<std::string> OneNodePerAgentLocked(const std::set<std::string>& nodes) const;
  // A node's outcome of broadcast `id`, from an agent's event; one of another agent's nodes, or
  // of a broadcast no longer waited for, is dropped.
  void BroadcastDone(std::uint64_t id, const std::string& agent, const std::string& node,
                     std::string error);
  void WatchdogLoop();

  backend::EventSink& sink_;
  const AgentBackendOptions options_;
  Clock& clock_;
  const std::set<std::string> configured_;

  mutable std::mutex mu_;
  nlohmann::json health_settings_;  // guarded by mu_: options_.health_settings, or newer
  bool stopping_ = false;                                    // guarded by mu_
  std::map<std::string, std::unique_ptr<AgentState>> agents_;  // guarded by mu_
  // guarded by mu_: node -> the agent that launches its tasks. Checkers (health-only and
  // mounts-only agents) are not in it: one node may have several.
  std::map<std::string, std::string> node_agent_;
  // guarded by mu_: the nodes each run has processes on (its batch step and its steps).
  std::map<backend::RunId, std::set<std::string>> run_nodes_;
  // guarded by mu_: the hook variables of runs launched, until they end (prolog, epilog).
  std::map<backend::RunId, RunHookEnv> run_hooks_;
  // guarded by mu_: the nodes of each step, for signals.
  std::map<std::pair<JobId, std::int32_t>, std::set<std::string>> step_nodes_;
  StepGathers gathers_;  // guarded by mu_: MPI steps' fences waiting for parts
  // guarded by mu_: agents whose poll waits and who got commands (TakeAnswersLocked).
  std::vector<AgentState*> woken_;
  // guarded by mu_: when the watchdog wakes next (a newer earlier deadline wakes it sooner).
  std::chrono::steady_clock::time_point watchdog_next_;
  std::condition_variable watchdog_wake_;
  // Broadcasts waiting for their nodes (agent_broadcast.cc), guarded by mu_: each node still
  // waited for, with the agent that serves it, and the outcomes so far ("" ok).
  struct PendingBroadcast {
    std::map<std::string, std::string> waiting;  // node -> its agent
    std::map<std::string, std::string> errors;   // node -> error, for nodes that answered
  };
  std::uint64_t next_broadcast_ = 0;                     // guarded by mu_
  std::map<std::uint64_t, PendingBroadcast> broadcasts_;  // guarded by mu_
  std::condition_variable broadcast_done_;               // with mu_: a node answered, or stop
  std::thread watchdog_;
};

}  // namespace lockstep::agent
