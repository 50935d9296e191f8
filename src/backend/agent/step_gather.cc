#include "backend/agent/step_gather.h"

#include <algorithm>
#include <limits>

#include "common/base64.h"

namespace lockstep::agent {

Result<GatherPart> DecodeGatherPart(const nlohmann::json& ev, const std::string& where) {
  GatherPart p;
  const auto uint_field = [&](const char* key) -> Result<std::uint64_t> {
    // Numbers that JSON wrote signed (an int32 step id) count as long as they are not negative.
    if (!ev.contains(key) || !ev[key].is_number_integer() ||
        (!ev[key].is_number_unsigned() && ev[key].get<std::int64_t>() < 0))
      return InvalidArgument(where + ": '" + key + "' must be a non-negative integer");
    return ev[key].get<std::uint64_t>();
  };
  LOCKSTEP_ASSIGN_OR_RETURN(job, uint_field("job_id"));
  LOCKSTEP_ASSIGN_OR_RETURN(step, uint_field("step_id"));
  LOCKSTEP_ASSIGN_OR_RETURN(fence, uint_field("fence"));
  if (job == 0 || step > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))
    return InvalidArgument(where + ": no such step");
  p.job = job;
  p.step = static_cast<std::int32_t>(step);
  p.fence = fence;
  if (!ev.contains("nodes") || !ev["nodes"].is_array() || ev["nodes"].empty())
    return InvalidArgument(where + ": 'nodes' must be a non-empty array of node names");
  for (const auto& n : ev["nodes"]) {
    if (!n.is_string()) return InvalidArgument(where + ": 'nodes' must hold node names");
    p.nodes.push_back(n.get<std::string>());
  }
  if (!ev.contains("data") || !ev["data"].is_string())
    return InvalidArgument(where + ": 'data' must be a base64 string");
  Result<std::string> data = Base64Decode(ev["data"].get<std::string>());
  if (!data.ok()) return InvalidArgument(where + ": 'data': " + data.status().message());
  p.data = std::move(*data);
  return p;
}

nlohmann::json GatherPartEvent(const GatherPart& part) {
  return {{"type", "gather"},         {"job_id", part.job}, {"step_id", part.step},
          {"fence", part.fence},      {"nodes", part.nodes},
          {"data", Base64Encode(part.data)}};
}

nlohmann::json GatherDoneCommand(JobId job, std::int32_t step, std::uint64_t fence,
                                 const std::string& data, bool ok) {
  return {{"type", "gather_done"}, {"job_id", job},  {"step_id", step},
          {"fence", fence},        {"ok", ok},       {"data", Base64Encode(data)}};
}

nlohmann::json MpiLayoutJson(const backend::StepLaunch& step,
                             const std::map<std::string, std::string>& agent_of) {
  // Nodes in rank order: the controller numbers ranks node after node.
  std::vector<std::pair<int, std::string>> order;
  for (const auto& [node, tasks] : step.tasks_by_node)
    if (!tasks.empty()) order.emplace_back(tasks.front().rank, node);
  std::sort(order.begin(), order.end());
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& [first, node] : order) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const backend::StepTask& t : step.tasks_by_node.at(node)) ranks.push_back(t.rank);
    auto agent = agent_of.find(node);
    nodes.push_back({{"node", node},
                     {"agent", agent == agent_of.end() ? std::string() : agent->second},
                     {"ranks", std::move(ranks)}});
  }
  return nodes;
}

Result<std::optional<std::string>> StepGathers::Add(const GatherPart& part,
                                                    const std::set<std::string>& members) {
  for (const std::string& n : part.nodes)
    if (!members.count(n))
      return InvalidArgument("gather: node " + n + " is not a node of step " +
                             std::to_string(part.job) + "." + std::to_string(part.step));
  const auto key = std::make_tuple(part.job, part.step, part.fence);
  Fence& f = fences_[key];
  for (const std::string& n : part.nodes)
    if (f.covered.count(n))
      return InvalidArgument("gather: node " + n + " sent its part of fence " +
                             std::to_string(part.fence) + " of step " + std::to_string(part.job) +
                             "." + std::to_string(part.step) + " twice");
  f.covered.insert(part.nodes.begin(), part.nodes.end());
  f.data += part.data;
  if (f.covered.size() < members.size()) return std::optional<std::string>();
  std::string data = std::move(f.data);
  fences_.erase(key);
  return std::optional<std::string>(std::move(data));
}

std::vector<std::uint64_t> StepGathers::Drop(JobId job, std::int32_t step) {
  std::vector<std::uint64_t> dropped;
  for (auto it = fences_.begin(); it != fences_.end();) {
    if (std::get<0>(it->first) == job && std::get<1>(it->first) == step) {
      dropped.push_back(std::get<2>(it->first));
      it = fences_.erase(it);
    } else {
      ++it;
    }
  }
  return dropped;
}

}  // namespace lockstep::agent
