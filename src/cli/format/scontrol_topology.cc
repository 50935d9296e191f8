#include "cli/format/scontrol_topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "cli/format/field_format.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

// "SwitchName=s0 Level=0 LinkSpeed=1 Nodes=n[1-4] " and for an upper switch its nodes and
// "Switches=s[0-1] ": 22.05 ends every field, the last too, with a space.
std::string SwitchLine(const nlohmann::json& sw) {
  std::string line = fmt::format("SwitchName={} Level={} LinkSpeed={} ", JStr(sw, "name"),
                                 JIntOr(sw, "level", 0), JIntOr(sw, "link_speed", 1));
  if (const std::string nodes = JStr(sw, "nodes"); !nodes.empty()) line += "Nodes=" + nodes + " ";
  if (const std::string children = JStr(sw, "switches"); !children.empty())
    line += "Switches=" + children + " ";
  return line + "\n";
}

// Slurm 23.11's topology/block record: "BlockName=b1 BlockIndex=0 Nodes=n[1-4] BlockSize=4".
std::string BlockLine(const nlohmann::json& block) {
  return fmt::format("BlockName={} BlockIndex={} Nodes={} BlockSize={}\n", JStr(block, "name"),
                     JIntOr(block, "index", 0), JStr(block, "nodes"),
                     JIntOr(block, "block_size", 0));
}

// Whether every host of `wanted` is among the record's nodes (Slurm's hostset_within).
bool HoldsAll(const nlohmann::json& record, const std::vector<std::string>& wanted) {
  Result<std::vector<std::string>> hosts = ExpandHostlist(JStr(record, "nodes"));
  if (!hosts.ok() || wanted.empty()) return false;
  return std::all_of(wanted.begin(), wanted.end(), [&](const std::string& h) {
    return std::find(hosts->begin(), hosts->end(), h) != hosts->end();
  });
}

}  // namespace

Result<std::string> FormatScontrolShowTopology(const nlohmann::json& topology,
                                               const std::string& name) {
  const nlohmann::json blocks = topology.value("blocks", nlohmann::json::array());
  const bool by_block = !blocks.empty();
  const nlohmann::json records =
      by_block ? blocks : topology.value("switches", nlohmann::json::array());
  if (!records.is_array() || records.empty()) return NotFound("No topology information available");
  auto line = [by_block](const nlohmann::json& r) {
    return by_block ? BlockLine(r) : SwitchLine(r);
  };
  std::string out;
  if (name.empty()) {
    for (const nlohmann::json& r : records) out += line(r);
    return out;
  }
  for (const nlohmann::json& r : records)
    if (JStr(r, "name") == name) return line(r);
  Result<std::vector<std::string>> wanted = ExpandHostlist(name);
  if (wanted.ok())
    for (const nlohmann::json& r : records)
      if (HoldsAll(r, *wanted)) out += line(r);
  if (out.empty())
    return NotFound(fmt::format("Topology information contains no {} or node named {}",
                                by_block ? "block" : "switch", name));
  return out;
}

}  // namespace lockstep::cli
