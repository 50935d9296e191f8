#include "cli/slurm/node_filter.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

#include "cli/slurm/job_filter.h"

namespace lockstep::cli {
namespace {

// sinfo(1) -t names and the API state (without '*') each stands for; "" for a name whose
// meaning is the '*' (not responding) rather than a state.
constexpr std::pair<std::string_view, std::string_view> kStateNames[] = {
    {"alloc", "allocated"},   {"allocated", "allocated"}, {"comp", "completing"},
    {"completing", "completing"}, {"down", "down"},       {"drain", "drain"},
    {"drained", "drained"},   {"draining", "draining"},   {"idle", "idle"},
    {"mix", "mixed"},         {"mixed", "mixed"},         {"no_respond", ""},
    {"fail", "fail"},         {"failing", "failing"},     {"future", "future"},
    {"maint", "maint"},       {"reserved", "reserved"},   {"resv", "reserved"},
    {"planned", "planned"},   {"unk", "unknown"},         {"unknown", "unknown"},
    {"inval", "inval"},       {"reboot", "reboot"},       {"power_down", "power_down"},
    {"powered_down", "powered_down"}, {"power_up", "power_up"}, {"cloud", "cloud"},
    {"npc", "npc"},
};

std::string_view Meaning(std::string_view wanted) {
  for (const auto& [name, meaning] : kStateNames)
    if (name == wanted) return meaning;
  return "?";
}

}  // namespace

Status AddNodeStates(NodeFilter& filter, const std::string& states) {
  for (std::string s : CommaSet(states)) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s == "all") continue;
    if (Meaning(s) == "?") return InvalidArgument("Invalid node state specified: " + s);
    filter.states.insert(s);
  }
  return Status::Ok();
}

bool NodeStateMatches(const std::string& node_state, const std::string& wanted) {
  const bool not_responding = !node_state.empty() && node_state.back() == '*';
  std::string_view state(node_state);
  if (not_responding) state.remove_suffix(1);
  std::string_view meaning = Meaning(wanted);
  if (meaning.empty()) return not_responding;
  if (meaning == "drain") return state == "drained" || state == "draining";
  return state == meaning;
}

nlohmann::json FilterSinfo(const nlohmann::json& partitions, const nlohmann::json& nodes,
                           const NodeFilter& filter) {
  nlohmann::json parts = nlohmann::json::array(), kept = nlohmann::json::array();
  for (const nlohmann::json& p : partitions)
    if (filter.partitions.empty() || filter.partitions.count(p.value("name", "")))
      parts.push_back(p);
  for (const nlohmann::json& n : nodes) {
    const std::string state = n.value("state", "");
    const bool not_responding = !state.empty() && state.back() == '*';
    if ((filter.responding_only && not_responding) || (filter.dead_only && !not_responding))
      continue;
    if (!filter.nodes.empty() && !filter.nodes.count(n.value("name", ""))) continue;
    if (!filter.states.empty() &&
        std::none_of(filter.states.begin(), filter.states.end(),
                     [&](const std::string& w) { return NodeStateMatches(state, w); }))
      continue;
    if (!filter.partitions.empty()) {
      const nlohmann::json in = n.value("partitions", nlohmann::json::array());
      if (std::none_of(in.begin(), in.end(), [&](const nlohmann::json& name) {
            return filter.partitions.count(name.get<std::string>()) > 0;
          }))
        continue;
    }
    kept.push_back(n);
  }
  // With a filter on nodes, sinfo shows only the partitions that still have one.
  if (filter.nodes.empty() && filter.states.empty() && !filter.responding_only &&
      !filter.dead_only)
    return {{"partitions", std::move(parts)}, {"nodes", std::move(kept)}};
  nlohmann::json used = nlohmann::json::array();
  for (const nlohmann::json& p : parts) {
    const std::string name = p.value("name", "");
    if (std::any_of(kept.begin(), kept.end(), [&](const nlohmann::json& n) {
          const nlohmann::json in = n.value("partitions", nlohmann::json::array());
          return std::find(in.begin(), in.end(), name) != in.end();
        }))
      used.push_back(p);
  }
  return {{"partitions", std::move(used)}, {"nodes", std::move(kept)}};
}

}  // namespace lockstep::cli
