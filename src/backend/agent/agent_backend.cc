#include "backend/agent/agent_backend.h"

#include <cstdio>

#include "backend/agent/agent_messages.h"
#include "backend/agent/output_file.h"

namespace lockstep::agent {

AgentBackend::AgentBackend(backend::EventSink& sink, AgentBackendOptions options)
    : sink_(sink),
      options_(std::move(options)),
      clock_(*options_.clock),
      configured_(options_.nodes.begin(), options_.nodes.end()) {
  watchdog_ = std::thread([this] { WatchdogLoop(); });
}

AgentBackend::~AgentBackend() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& [name, agent] : agents_) agent->wake.notify_all();
  }
  watchdog_wake_.notify_all();
  watchdog_.join();
}

bool AgentBackend::SendLocked(const std::string& node, nlohmann::json command) {
  auto served = node_agent_.find(node);
  if (served == node_agent_.end()) return false;
  AgentState& agent = *agents_.at(served->second);
  command["node"] = node;
  agent.commands.push_back(std::move(command));
  agent.wake.notify_all();
  return true;
}

Status AgentBackend::Launch(backend::LaunchOrder order) {
  if (order.nodes.empty()) return InvalidArgument("launch: the allocation has no node");
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& first = order.nodes.front().node;
  std::set<std::string>& nodes = run_nodes_[order.id()];
  for (const backend::PlacedNode& p : order.nodes) nodes.insert(p.node);
  if (!SendLocked(first, LaunchCommand(order))) {
    run_nodes_.erase(order.id());
    return Status(StatusCode::kUnavailable, "no agent serves node " + first);
  }
  return Status::Ok();
}

Status AgentBackend::Terminate(backend::RunId run, Seconds grace) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = run_nodes_.find(run);
  if (it == run_nodes_.end()) return Status::Ok();  // nothing of it runs on any agent
  for (const std::string& node : it->second)
    SendLocked(node,
               {{"type", "terminate"}, {"job_id", run.job}, {"run", run.run}, {"grace_s", grace}});
  return Status::Ok();
}

Status AgentBackend::Signal(backend::RunId run, int signo) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = run_nodes_.find(run);
  if (it == run_nodes_.end()) return NotFound("job " + std::to_string(run.job) + " runs on no agent");
  for (const std::string& node : it->second)
    SendLocked(node, {{"type", "signal"}, {"job_id", run.job}, {"signal", signo}});
  return Status::Ok();
}

Status AgentBackend::LaunchStep(backend::StepLaunch step) {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<std::string>& run = run_nodes_[{step.job, step.run}];
  std::set<std::string>& nodes = step_nodes_[{step.job, step.step}];
  Status status = Status::Ok();
  for (auto& [node, tasks] : step.tasks_by_node) {
    run.insert(node);
    nodes.insert(node);
    if (!SendLocked(node, StepLaunchCommand(step, tasks)))
      status = Status(StatusCode::kUnavailable, "no agent serves node " + node);
  }
  return status;
}

Status AgentBackend::SignalStep(JobId job, std::int32_t step, int signo, Seconds grace) {
  std::lock_guard<std::mutex> lock(mu_);
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

Result<std::string> AgentBackend::Logs(const backend::LogsRequest& request) {
  Result<std::string> text = ReadOwnOutput(request.stdout_path, request.uid);
  if (text.ok() || text.status().code() == StatusCode::kPermissionDenied) return text;
  return NotFound("job " + std::to_string(request.run.job) + " writes its output to " +
                  request.stdout_path + (request.node.empty() ? "" : " on " + request.node) +
                  ", which is not readable here (" + text.status().message() + ")");
}

Status AgentBackend::Register(const nlohmann::json& body) {
  Result<Registration> reg = DecodeRegistration(body);
  if (!reg.ok()) return reg.status();
  for (const std::string& node : reg->nodes)
    if (!configured_.count(node))
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
    for (const std::string& node : reg->nodes) {
      node_agent_[node] = reg->agent;
      backend::NodeReport r;
      r.name = node;
      r.address = reg->address;
      reports.push_back(std::move(r));
    }
    for (const RunningUnit& u : reg->running) {
      run_nodes_[u.run].insert(u.node.empty() ? reg->nodes.front() : u.node);
      if (u.step_id >= 0) step_nodes_[{u.run.job, u.step_id}].insert(u.node);
    }
  }
  std::set<backend::RunId> alive;
  for (const RunningUnit& u : reg->running) alive.insert(u.run);
  sink_.NodesReported(std::move(reports), /*complete=*/false);
  sink_.RunsAlive(reg->nodes, std::vector<backend::RunId>(alive.begin(), alive.end()));
  return Status::Ok();
}

nlohmann::json AgentBackend::Poll(const std::string& name, std::chrono::milliseconds wait) {
  const nlohmann::json must_register = {{"commands", nlohmann::json::array()}, {"register", true}};
  std::unique_lock<std::mutex> lock(mu_);
  auto it = agents_.find(name);
  if (it == agents_.end() || it->second->lost) return must_register;
  AgentState* agent = it->second.get();
  agent->last_seen = clock_.MonotonicNow();
  agent->wake.wait_for(lock, wait, [&] { return stopping_ || !agent->commands.empty(); });
  nlohmann::json out = {{"commands", nlohmann::json::array()}};
  while (!agent->commands.empty()) {
    out["commands"].push_back(std::move(agent->commands.front()));
    agent->commands.pop_front();
  }
  agent->last_seen = clock_.MonotonicNow();
  return out;
}

Status AgentBackend::Events(const nlohmann::json& body) {
  Result<std::vector<AgentEvent>> events = DecodeEvents(body);
  if (!events.ok()) return events.status();
  for (const AgentEvent& ev : *events) {
    if (ev.batch) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        run_nodes_.erase(ev.run);
      }
      sink_.RunExited(ev.run, ev.exit);
    } else {
      sink_.StepNodeExited(ev.run.job, ev.step_id, ev.node, ev.exit);
    }
  }
  return Status::Ok();
}

Status AgentBackend::Output(const nlohmann::json& body) {
  Result<std::vector<backend::OutputChunk>> chunks = DecodeOutput(body);
  if (!chunks.ok()) return chunks.status();
  sink_.StepOutput(std::move(*chunks));
  return Status::Ok();
}

void AgentBackend::CheckAgents() {
  std::vector<backend::NodeReport> lost;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Clock::Monotonic deadline =
        clock_.MonotonicNow() - std::chrono::seconds(options_.node_timeout);
    for (auto& [name, agent] : agents_) {
      if (agent->lost || agent->last_seen >= deadline) continue;
      agent->lost = true;
      for (const std::string& node : agent->nodes) {
        std::fprintf(stderr, "lockstepd: node %s not responding: DOWN\n", node.c_str());
        backend::NodeReport r;
        r.name = node;
        r.ready = false;
        r.down_reason = "not responding";
        lost.push_back(std::move(r));
      }
    }
  }
  if (!lost.empty()) sink_.NodesReported(std::move(lost), /*complete=*/false);
}

void AgentBackend::WatchdogLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    watchdog_wake_.wait_for(lock, options_.check_period, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    CheckAgents();
    lock.lock();
  }
}

}  // namespace lockstep::agent
