// sbcast through the agents (docs/api.md, "Broadcast"): lockstepd queues one "bcast" command
// per agent of the order's nodes and waits for each node's "bcast_done" event. The agent writes
// the piece as the job's user (agent_bcast.cc); here only the waiting is done.
#include <chrono>

#include "backend/agent/agent_backend.h"
#include "backend/agent/agent_messages.h"

namespace lockstep::agent {
namespace {

// Beyond the order's own timeout (which bounds the agent's write): the command's way to the
// agent by long poll and the report's way back (agents send events every 50 ms).
constexpr std::chrono::seconds kReportSlack{5};

}  // namespace

Result<std::vector<backend::BroadcastResult>> AgentBackend::Broadcast(
    const backend::BroadcastOrder& order) {
  if (order.nodes.empty()) return InvalidArgument("sbcast: the job has no node");
  std::uint64_t id = 0;
  std::vector<Answer> answers;
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return Status(StatusCode::kUnavailable, "lockstepd is stopping");
  id = ++next_broadcast_;
  PendingBroadcast& pending = broadcasts_[id];
  std::map<std::string, std::vector<std::string>> nodes_of_agent;
  for (const std::string& node : order.nodes) {
    auto served = node_agent_.find(node);
    if (served == node_agent_.end() || agents_.at(served->second)->lost) {
      pending.errors[node] = "no agent serves this node";
      continue;
    }
    nodes_of_agent[served->second].push_back(node);
    pending.waiting[node] = served->second;
  }
  for (auto& [name, nodes] : nodes_of_agent) {
    AgentState& agent = *agents_.at(name);
    agent.commands.push_back(BroadcastCommand(id, order, nodes));
    if (agent.waiter) woken_.push_back(&agent);
  }
  answers = TakeAnswersLocked();
  lock.unlock();
  Deliver(std::move(answers));

  lock.lock();
  const auto deadline = std::chrono::steady_clock::now() + order.timeout + kReportSlack;
  broadcast_done_.wait_until(lock, deadline,
                             [&] { return stopping_ || broadcasts_.at(id).waiting.empty(); });
  PendingBroadcast done = std::move(broadcasts_.at(id));
  broadcasts_.erase(id);
  const bool stopped = stopping_;
  lock.unlock();
  const std::string late =
      stopped ? "lockstepd stopped before the node answered"
              : "the node did not answer within " +
                    std::to_string(std::chrono::duration_cast<std::chrono::seconds>(order.timeout +
                                                                                    kReportSlack)
                                       .count()) +
                    " s";
  std::vector<backend::BroadcastResult> results;
  for (const std::string& node : order.nodes) {
    auto answered = done.errors.find(node);
    results.push_back({node, answered != done.errors.end() ? answered->second : late});
  }
  return results;
}

void AgentBackend::BroadcastDone(std::uint64_t id, const std::string& agent,
                                 const std::string& node, std::string error) {
  std::lock_guard<std::mutex> lock(mu_);
  auto pending = broadcasts_.find(id);
  if (pending == broadcasts_.end()) return;  // timed out, or lockstepd restarted since
  auto waiting = pending->second.waiting.find(node);
  if (waiting == pending->second.waiting.end() || waiting->second != agent) return;
  pending->second.waiting.erase(waiting);
  pending->second.errors[node] = std::move(error);
  broadcast_done_.notify_all();
}

}  // namespace lockstep::agent
