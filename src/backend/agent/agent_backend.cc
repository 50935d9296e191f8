#include "common/log.h"
#include "backend/agent/agent_backend.h"

#include <algorithm>
#include <cstdio>

#include "backend/agent/agent_messages.h"
#include "backend/output_file.h"

namespace lockstep::agent {
namespace {

nlohmann::json EmptyAnswer() {
  return {{"commands", nlohmann::json::array()}};
}

// The most sbcast data (base64) one poll's answer carries.
constexpr std::size_t kAnswerDataBytes = 4u << 20;

nlohmann::json MustRegister() {
  return {{"commands", nlohmann::json::array()}, {"register", true}};
}

}  // namespace

AgentBackend::AgentBackend(backend::EventSink& sink, AgentBackendOptions options)
    : sink_(sink),
      options_(std::move(options)),
      clock_(*options_.clock),
      configured_(options_.nodes.begin(), options_.nodes.end()),
      health_settings_(options_.health_settings) {
  watchdog_ = std::thread([this] { WatchdogLoop(); });
}

AgentBackend::~AgentBackend() {
  std::vector<Answer> answers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    broadcast_done_.notify_all();
    for (auto& [name, agent] : agents_)
      if (agent->waiter) answers.push_back({std::move(agent->waiter), EmptyAnswer()});
  }
  watchdog_wake_.notify_all();
  watchdog_.join();
  Deliver(std::move(answers));
}

void AgentBackend::SetHealthSettings(nlohmann::json settings) {
  (void)WithAnswers([&] {
    health_settings_ = std::move(settings);
    for (auto& [name, agent] : agents_) {
      if (agent->lost) continue;  // it gets them when it registers again
      agent->commands.push_back(health_settings_);
      if (agent->waiter) woken_.push_back(agent.get());
    }
    return Status::Ok();
  });
}

bool AgentBackend::SendLocked(const std::string& node, nlohmann::json command) {
  auto served = node_agent_.find(node);
  if (served == node_agent_.end()) return false;
  AgentState& agent = *agents_.at(served->second);
  command["node"] = node;
  agent.commands.push_back(std::move(command));
  if (agent.waiter) woken_.push_back(&agent);  // answered by TakeAnswersLocked
  return true;
}

AgentBackend::Answer AgentBackend::AnswerLocked(AgentState& agent) {
  Answer a{std::move(agent.waiter), EmptyAnswer()};
  agent.waiter = nullptr;
  // sbcast's pieces carry data: an answer takes them up to kAnswerDataBytes (at least one
  // command), the rest waits for the next poll, so an answer stays within what the agent's
  // client reads (8 MiB).
  std::size_t data_bytes = 0;
  while (!agent.commands.empty()) {
    const nlohmann::json& next = agent.commands.front();
    const bool carries = next.contains("data") && next["data"].is_string();
    const std::size_t size = carries ? next["data"].get_ref<const std::string&>().size() : 0;
    if (data_bytes > 0 && data_bytes + size > kAnswerDataBytes) break;
    data_bytes += size;
    a.body["commands"].push_back(std::move(agent.commands.front()));
    agent.commands.pop_front();
  }
  agent.last_seen = clock_.MonotonicNow();
  return a;
}

std::vector<AgentBackend::Answer> AgentBackend::TakeAnswersLocked() {
  std::vector<Answer> answers;
  for (AgentState* agent : woken_)
    if (agent->waiter && !agent->commands.empty()) answers.push_back(AnswerLocked(*agent));
  woken_.clear();
  return answers;
}

std::vector<AgentBackend::Answer> AgentBackend::ExpireLocked(
    std::chrono::steady_clock::time_point now) {
  std::vector<Answer> answers;
  for (auto& [name, agent] : agents_)
    if (agent->waiter && agent->deadline <= now) answers.push_back(AnswerLocked(*agent));
  return answers;
}

void AgentBackend::Deliver(std::vector<Answer> answers) {
  for (Answer& a : answers) a.done(std::move(a.body));
}

Status AgentBackend::Launch(backend::LaunchOrder order) {
  if (order.nodes.empty()) return InvalidArgument("launch: the allocation has no node");
  return WithAnswers([&] {
    const std::string first = order.nodes.front().node;
    std::set<std::string>& nodes = run_nodes_[order.id()];
    for (const backend::PlacedNode& p : order.nodes) nodes.insert(p.node);
    if (!options_.prolog.program.empty() || !options_.epilog.program.empty())
      run_hooks_[order.id()] = HookEnvOfLaunch(order);
    nlohmann::json command = LaunchCommand(order);
    if (nlohmann::json prolog = PrologOrderLocked(order.id(), first); !prolog.is_null())
      command["prolog"] = std::move(prolog);
    if (options_.core_max_mb >= 0) command["core_max_mb"] = options_.core_max_mb;
    if (!SendLocked(first, std::move(command))) {
      run_nodes_.erase(order.id());
      run_hooks_.erase(order.id());
      return Status(StatusCode::kUnavailable, "no agent serves node " + first);
    }
    return Status::Ok();
  });
}

Status AgentBackend::Terminate(backend::RunId run, Seconds grace) {
  return WithAnswers([&] { return TerminateLocked(run, grace); });
}

Status AgentBackend::TerminateLocked(backend::RunId run, Seconds grace) {
  auto it = run_nodes_.find(run);
  if (it == run_nodes_.end()) return Status::Ok();  // nothing of it runs on any agent
  for (const std::string& node : it->second)
    SendLocked(node,
               {{"type", "terminate"}, {"job_id", run.job}, {"run", run.run}, {"grace_s", grace}});
  RunEndedLocked(run);
  return Status::Ok();
}

void AgentBackend::RunEndedLocked(const backend::RunId& run) {
  auto hooks = run_hooks_.find(run);
  // With a prolog alone, job_end still lets the agent forget the run's prolog.
  if (!options_.epilog.program.empty() || !options_.prolog.program.empty()) {
    auto nodes = run_nodes_.find(run);
    RunHookEnv env;
    if (hooks != run_hooks_.end()) env = hooks->second;
    env.common.try_emplace("SLURM_JOB_ID", std::to_string(run.job));
    env.common.try_emplace("SLURM_RESTART_COUNT", std::to_string(run.run));
    if (nodes != run_nodes_.end())
      for (const std::string& node : nodes->second) {
        nlohmann::json end = {{"type", "job_end"}, {"job_id", run.job}, {"run", run.run}};
        if (!options_.epilog.program.empty())
          end["epilog"] = HookOrder(options_.epilog, env, node);
        SendLocked(node, std::move(end));
      }
  }
  if (hooks != run_hooks_.end()) run_hooks_.erase(hooks);
}

nlohmann::json AgentBackend::PrologOrderLocked(const backend::RunId& run,
                                               const std::string& node) const {
  if (options_.prolog.program.empty()) return nullptr;
  auto hooks = run_hooks_.find(run);
  RunHookEnv env;
  if (hooks != run_hooks_.end()) env = hooks->second;
  env.common.try_emplace("SLURM_JOB_ID", std::to_string(run.job));
  env.common.try_emplace("SLURM_RESTART_COUNT", std::to_string(run.run));
  return HookOrder(options_.prolog, env, node);
}

Status AgentBackend::Signal(backend::RunId run, int signo) {
  return WithAnswers([&] { return SignalLocked(run, signo); });
}

Status AgentBackend::SignalLocked(backend::RunId run, int signo) {
  auto it = run_nodes_.find(run);
  if (it == run_nodes_.end()) return NotFound("job " + std::to_string(run.job) + " runs on no agent");
  for (const std::string& node : it->second)
    SendLocked(node, {{"type", "signal"}, {"job_id", run.job}, {"signal", signo}});
  return Status::Ok();
}

Status AgentBackend::SignalBatch(backend::RunId run, int signo) {
  return WithAnswers([&]() -> Status {
    auto it = run_nodes_.find(run);
    if (it == run_nodes_.end())
      return NotFound("job " + std::to_string(run.job) + " runs on no agent");
    // The agent of the node with the batch script signals its shell; the others have none.
    for (const std::string& node : it->second)
      SendLocked(node, {{"type", "signal"}, {"job_id", run.job}, {"signal", signo}, {"batch", true}});
    return Status::Ok();
  });
}

Status AgentBackend::Suspend(backend::RunId run, bool stop) {
  return WithAnswers([&]() -> Status {
    auto it = run_nodes_.find(run);
    if (it == run_nodes_.end())
      return NotFound("job " + std::to_string(run.job) + " runs on no agent");
    // Every node of the run: its batch step and the steps launched there.
    for (const std::string& node : it->second)
      SendLocked(node, {{"type", stop ? "suspend" : "resume"},
                        {"job_id", run.job},
                        {"run", run.run}});
    return Status::Ok();
  });
}

Status AgentBackend::LaunchStep(backend::StepLaunch step) {
  return WithAnswers([&] { return LaunchStepLocked(step); });
}

Status AgentBackend::LaunchStepLocked(const backend::StepLaunch& step) {
  std::set<std::string>& run = run_nodes_[{step.job, step.run}];
  std::set<std::string>& nodes = step_nodes_[{step.job, step.step}];
  Status status = Status::Ok();
  const backend::RunId id{step.job, step.run};
  if (!options_.prolog.program.empty() && !run_hooks_.count(id))
    run_hooks_[id] = HookEnvOfStep(step);  // lockstepd restarted since the batch launch
  for (const auto& [node, tasks] : step.tasks_by_node) {
    run.insert(node);
    nodes.insert(node);
    nlohmann::json command = StepLaunchCommand(step, tasks);
    if (!step.mpi.empty()) command["mpi_layout"] = MpiLayoutJson(step, node_agent_);
    if (nlohmann::json prolog = PrologOrderLocked(id, node); !prolog.is_null())
      command["prolog"] = std::move(prolog);
    if (options_.core_max_mb >= 0) command["core_max_mb"] = options_.core_max_mb;
    if (!SendLocked(node, std::move(command)))
      status = Status(StatusCode::kUnavailable, "no agent serves node " + node);
  }
  return status;
}

Status AgentBackend::SignalStep(JobId job, std::int32_t step, int signo, Seconds grace) {
  return WithAnswers([&] { return SignalStepLocked(job, step, signo, grace); });
}

Status AgentBackend::SignalStepLocked(JobId job, std::int32_t step, int signo, Seconds grace) {
  auto it = step_nodes_.find({job, step});
  if (it == step_nodes_.end()) return Status::Ok();
  for (const std::string& node : it->second) {
    if (signo == 0)
      SendLocked(node,
                 {{"type", "terminate"}, {"job_id", job}, {"step_id", step}, {"grace_s", grace}});
    else
      SendLocked(node, {{"type", "signal"}, {"job_id", job}, {"step_id", step}, {"signal", signo}});
  }
  return Status::Ok();
}

Status AgentBackend::GatherLocked(const std::string& agent, const GatherPart& part) {
  const std::string step = std::to_string(part.job) + "." + std::to_string(part.step);
  auto members = step_nodes_.find({part.job, part.step});
  if (members == step_nodes_.end()) return NotFound("gather: step " + step + " is unknown");
  for (const std::string& node : part.nodes) {
    auto served = node_agent_.find(node);
    if (served == node_agent_.end() || served->second != agent)
      return PermissionDenied("gather: agent " + agent + " does not serve node " + node +
                              " (step " + step + ")");
  }
  Result<std::optional<std::string>> done = gathers_.Add(part, members->second);
  if (!done.ok()) return done.status();
  if (!done->has_value()) return Status::Ok();
  for (const std::string& node : OneNodePerAgentLocked(members->second))
    SendLocked(node, GatherDoneCommand(part.job, part.step, part.fence, **done, true));
  return Status::Ok();
}

void AgentBackend::FailGathersLocked(JobId job, std::int32_t step) {
  const std::vector<std::uint64_t> dropped = gathers_.Drop(job, step);
  if (dropped.empty()) return;
  auto members = step_nodes_.find({job, step});
  if (members == step_nodes_.end()) return;
  for (const std::string& node : OneNodePerAgentLocked(members->second))
    for (std::uint64_t fence : dropped)
      SendLocked(node, GatherDoneCommand(job, step, fence, "", false));
}

std::vector<std::string> AgentBackend::OneNodePerAgentLocked(
    const std::set<std::string>& nodes) const {
  std::set<std::string> agents;
  std::vector<std::string> out;
  for (const std::string& node : nodes) {
    auto served = node_agent_.find(node);
    if (served != node_agent_.end() && agents.insert(served->second).second) out.push_back(node);
  }
  return out;
}

Result<std::string> AgentBackend::Logs(const backend::LogsRequest& request) {
  Result<std::string> text = backend::ReadOwnOutput(request.stdout_path, request.uid);
  if (text.ok() || text.status().code() == StatusCode::kPermissionDenied) return text;
  return NotFound("job " + std::to_string(request.run.job) + " writes its output to " +
                  request.stdout_path + (request.node.empty() ? "" : " on " + request.node) +
                  ", which is not readable here (" + text.status().message() + ")");
}

Status AgentBackend::Register(const nlohmann::json& body) {
  Result<Registration> reg = DecodeRegistration(body);
  if (!reg.ok()) return reg.status();
  for (const std::string& node : reg->nodes)
    if (!options_.any_node && !configured_.count(node))
      return NotFound("register: node " + node + " is not in the cluster configuration");
  std::vector<backend::NodeReport> reports;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<AgentState>& agent = agents_[reg->agent];
    if (!agent) agent = std::make_unique<AgentState>();
    agent->name = reg->agent;
    agent->nodes = reg->nodes;
    agent->last_seen = clock_.MonotonicNow();
    agent->lost = false;
    agent->launches = reg->launches;
    for (const std::string& node : reg->nodes) {
      if (!reg->launches) continue;  // a checker: the node is not its to report
      node_agent_[node] = reg->agent;
      backend::NodeReport r;
      r.name = node;
      r.address = reg->address;
      if (auto seen = reg->gpus_seen.find(node); seen != reg->gpus_seen.end())
        r.gpus_seen = seen->second;
      if (auto limits = reg->limits.find(node); limits != reg->limits.end()) {
        r.enforces_memory = limits->second.memory;
        r.enforces_cpus = limits->second.cpus;
      }
      reports.push_back(std::move(r));
    }
    // The health checks' settings (the cluster's `health:` section) come with registration.
    if (!health_settings_.is_null()) agent->commands.push_back(health_settings_);
    for (const RunningUnit& u : reg->running) {
      run_nodes_[u.run].insert(u.node.empty() ? reg->nodes.front() : u.node);
      if (u.step_id >= 0) step_nodes_[{u.run.job, u.step_id}].insert(u.node);
    }
  }
  if (!reg->launches) return Status::Ok();
  std::set<backend::RunId> alive;
  for (const RunningUnit& u : reg->running) alive.insert(u.run);
  sink_.NodesReported(std::move(reports), /*complete=*/false);
  sink_.RunsAlive(reg->nodes, std::vector<backend::RunId>(alive.begin(), alive.end()));
  return Status::Ok();
}

void AgentBackend::Poll(const std::string& name, std::chrono::milliseconds wait,
                        PollWaiter done) {
  std::vector<Answer> answers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = agents_.find(name);
    if (it == agents_.end() || it->second->lost) {
      answers.push_back({std::move(done), MustRegister()});
    } else {
      AgentState& agent = *it->second;
      // A newer poll: the older one's connection is most likely gone; it gets no commands.
      if (agent.waiter) answers.push_back({std::move(agent.waiter), EmptyAnswer()});
      agent.waiter = std::move(done);
      agent.last_seen = clock_.MonotonicNow();
      const auto now = std::chrono::steady_clock::now();
      agent.deadline = now + wait;
      if (stopping_ || wait.count() <= 0 || !agent.commands.empty()) {
        answers.push_back(AnswerLocked(agent));
      } else if (agent.deadline < watchdog_next_) {
        watchdog_next_ = agent.deadline;
        watchdog_wake_.notify_all();
      }
    }
  }
  Deliver(std::move(answers));
}

template <typename F>
Status AgentBackend::WithAnswers(F&& locked) {
  std::vector<Answer> answers;
  Status status = Status::Ok();
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = locked();
    answers = TakeAnswersLocked();
  }
  Deliver(std::move(answers));
  return status;
}

Status AgentBackend::Events(const nlohmann::json& body) {
  Result<std::vector<AgentEvent>> events = DecodeEvents(body);
  if (!events.ok()) return events.status();
  const std::string agent = body.value("agent", "");
  std::vector<backend::TaskUsage> usage;
  for (const AgentEvent& ev : *events) {
    if (ev.gather) {
      // A part the step cannot use (it ended, the agent does not serve the node) is dropped:
      // its fence waits for the node's own part, or fails when the step ends; the other events
      // of the batch still count.
      Status st = WithAnswers([&] { return GatherLocked(agent, *ev.gather); });
      if (!st.ok()) log::Warning("{}", st.message());
    } else if (ev.bcast_id != 0) {
      const bool named = body.contains("agent") && body["agent"].is_string();
      BroadcastDone(ev.bcast_id, named ? body["agent"].get<std::string>() : "", ev.node,
                    ev.exit.error);
    } else if (ev.usage) {
      usage.push_back(*ev.usage);
    } else if (!ev.hook.empty()) {
      sink_.JobHookFailed({ev.run, ev.node, ev.hook, ev.hook_program, ev.hook_detail});
    } else if (ev.batch) {
      std::vector<Answer> answers;
      {
        std::lock_guard<std::mutex> lock(mu_);
        RunEndedLocked(ev.run);
        run_nodes_.erase(ev.run);
        answers = TakeAnswersLocked();
      }
      Deliver(std::move(answers));
      if (ev.launch_failed)
        sink_.LaunchFailed(ev.run, ev.exit.error);
      else
        sink_.RunExited(ev.run, ev.exit);
    } else {
      (void)WithAnswers([&] {
        FailGathersLocked(ev.run.job, ev.step_id);
        return Status::Ok();
      });
      sink_.StepNodeExited(ev.run.job, ev.step_id, ev.node, ev.exit);
    }
  }
  if (!usage.empty()) sink_.StepUsage(std::move(usage));
  return Status::Ok();
}

Status AgentBackend::Output(const nlohmann::json& body) {
  Result<std::vector<backend::OutputChunk>> chunks = DecodeOutput(body);
  if (!chunks.ok()) return chunks.status();
  sink_.StepOutput(std::move(*chunks));
  return Status::Ok();
}

Status AgentBackend::Health(const nlohmann::json& body) {
  Result<HealthReports> decoded = DecodeHealth(body);
  if (!decoded.ok()) return decoded.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const backend::NodeHealthReport& r : decoded->reports)
      if (!ChecksNodeLocked(decoded->agent, r.node))
        return PermissionDenied("health: node " + r.node + " is not served by agent " +
                                decoded->agent);
  }
  for (backend::NodeHealthReport& r : decoded->reports) sink_.NodeHealth(std::move(r));
  return Status::Ok();
}

bool AgentBackend::ChecksNodeLocked(const std::string& agent, const std::string& node) const {
  auto it = agents_.find(agent);
  if (it == agents_.end()) return false;
  const AgentState& a = *it->second;
  if (a.launches) {  // the node's launching agent: the one that registered it last
    auto served = node_agent_.find(node);
    return served != node_agent_.end() && served->second == agent;
  }
  return std::find(a.nodes.begin(), a.nodes.end(), node) != a.nodes.end();
}

void AgentBackend::CheckAgents() {
  std::vector<backend::NodeReport> lost;
  std::vector<Answer> answers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::Monotonic deadline =
        clock_.MonotonicNow() - std::chrono::seconds(options_.node_timeout);
    for (auto& [name, agent] : agents_) {
      if (agent->lost || agent->last_seen >= deadline) continue;
      agent->lost = true;
      if (agent->waiter) answers.push_back({std::move(agent->waiter), MustRegister()});
      agent->waiter = nullptr;
      if (!agent->launches) continue;  // a silent checker: its nodes still run
      for (const std::string& node : agent->nodes) {
        log::Warning("node {} not responding: DOWN", node);
        backend::NodeReport r;
        r.name = node;
        r.ready = false;
        r.down_reason = "not responding";
        lost.push_back(std::move(r));
      }
    }
  }
  Deliver(std::move(answers));
  if (!lost.empty()) sink_.NodesReported(std::move(lost), /*complete=*/false);
}

// The timer of the polls (their deadlines) and of the silent agents' check (check_period).
void AgentBackend::WatchdogLoop() {
  using SteadyClock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lock(mu_);
  SteadyClock::time_point next_check = SteadyClock::now() + options_.check_period;
  while (!stopping_) {
    const SteadyClock::time_point now = SteadyClock::now();
    std::vector<Answer> answers = ExpireLocked(now);
    const bool check = now >= next_check;
    if (check) next_check = now + options_.check_period;
    if (!answers.empty() || check) {
      lock.unlock();
      Deliver(std::move(answers));
      if (check) CheckAgents();
      lock.lock();
      continue;  // deadlines may have passed meanwhile
    }
    watchdog_next_ = next_check;
    for (const auto& [name, agent] : agents_)
      if (agent->waiter) watchdog_next_ = std::min(watchdog_next_, agent->deadline);
    watchdog_wake_.wait_until(lock, watchdog_next_);
  }
}

std::vector<std::pair<std::string, double>> AgentBackend::HeartbeatAges() const {
  std::vector<std::pair<std::string, double>> out;
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::Monotonic now = clock_.MonotonicNow();
  for (const auto& [name, agent] : agents_)
    out.emplace_back(name, std::chrono::duration<double>(now - agent->last_seen).count());
  return out;
}

}  // namespace lockstep::agent
