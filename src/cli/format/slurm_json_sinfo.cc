// sinfo --json: Slurm 22.05's node_info in openapi v0.0.38 (src/plugins/openapi/v0.0.38/nodes.c),
// key for key in Slurm's order (tests/data/slurm_json/sinfo.json was printed by Slurm 22.05.8).
#include "cli/format/slurm_json.h"

namespace lockstep::cli {
namespace {

using nlohmann::ordered_json;
using slurm_json::Int;
using slurm_json::Str;

// lockstep's sinfo state ("drained", "mixed*", ...) as Slurm's JSON says it: a base state and
// flags ("idle" + DRAIN, "down" + NOT_RESPONDING).
struct NodeState {
  std::string base;
  ordered_json flags = ordered_json::array();
};

NodeState SplitState(const nlohmann::json& node) {
  std::string s = Str(node, "state");
  NodeState out;
  bool not_responding = !s.empty() && s.back() == '*';
  if (not_responding) s.pop_back();
  const bool busy = Int(node, "cpus_alloc") > 0 || Int(node, "gpus_alloc") > 0;
  const bool full = busy && Int(node, "cpus_alloc") >= Int(node, "cpus");
  if (s == "drained") {
    out.base = "idle";
    out.flags.push_back("DRAIN");
  } else if (s == "draining") {
    out.base = full ? "allocated" : "mixed";
    out.flags.push_back("DRAIN");
  } else if (s == "completing") {
    out.base = busy ? (full ? "allocated" : "mixed") : "idle";
    out.flags.push_back("COMPLETING");
  } else {
    out.base = s.empty() ? "unknown" : s;
  }
  if (not_responding) out.flags.push_back("NOT_RESPONDING");
  return out;
}

ordered_json SinfoNode(const nlohmann::json& node) {
  const std::int64_t cpus = Int(node, "cpus"), alloc = Int(node, "cpus_alloc");
  const std::int64_t mem = Int(node, "mem_mb"), mem_alloc = Int(node, "mem_alloc_mb");
  const std::int64_t gpus = Int(node, "gpus"), gpus_alloc = Int(node, "gpus_alloc");
  const std::string name = Str(node, "name");
  const NodeState state = SplitState(node);
  std::string used = "cpu=" + std::to_string(alloc);
  if (mem_alloc > 0) used += ",mem=" + slurm_json::MemoryText(mem_alloc);
  if (gpus_alloc > 0) used += ",gres/gpu=" + std::to_string(gpus_alloc);
  std::string gres_used = Str(node, "gres_used");
  if (gres_used.empty() && gpus > 0) gres_used = "gpu:0";

  ordered_json o;
  o["architecture"] = "";
  o["burstbuffer_network_address"] = "";
  o["boards"] = 1;
  o["boot_time"] = 0;
  o["comment"] = "";
  o["cores"] = cpus;  // one socket of single-threaded cores: lockstep counts CPUs only
  o["cpu_binding"] = 0;
  o["cpu_load"] = 0;
  o["extra"] = "";
  o["free_memory"] = 0;
  o["cpus"] = cpus;
  o["last_busy"] = 0;
  o["features"] = Str(node, "features");
  o["active_features"] = Str(node, "features");
  o["gres"] = Str(node, "gres");
  o["gres_drained"] = "N/A";
  o["gres_used"] = gres_used;
  o["mcs_label"] = "";
  o["name"] = name;
  o["next_state_after_reboot"] = "invalid";
  o["address"] = name;
  o["hostname"] = name;
  o["state"] = state.base;
  o["state_flags"] = state.flags;
  o["next_state_after_reboot_flags"] = ordered_json::array();
  o["operating_system"] = "";
  o["owner"] = nullptr;
  o["partitions"] = node.contains("partitions") && node["partitions"].is_array()
                        ? ordered_json(node["partitions"])
                        : ordered_json::array();
  o["port"] = 0;
  o["real_memory"] = mem;
  o["reason"] = Str(node, "reason");
  o["reason_changed_at"] = Int(node, "reason_time");
  const std::string by = Str(node, "reason_user");
  o["reason_set_by_user"] = by.empty() ? ordered_json() : ordered_json(by);
  o["slurmd_start_time"] = 0;
  o["sockets"] = 1;
  o["threads"] = 1;
  o["temporary_disk"] = 0;
  o["weight"] = Int(node, "weight");
  o["tres"] = slurm_json::TresText(cpus, mem, 0, gpus);
  o["slurmd_version"] = "";
  o["alloc_memory"] = mem_alloc;
  o["alloc_cpus"] = alloc;
  o["idle_cpus"] = std::max<std::int64_t>(0, cpus - alloc);
  o["tres_used"] = used;
  o["tres_weighted"] = static_cast<double>(alloc);
  return o;
}

}  // namespace

Result<nlohmann::ordered_json> SinfoJson(const nlohmann::json& nodes, const SlurmJsonContext&) {
  const nlohmann::json& list =
      nodes.is_object() && nodes.contains("nodes") ? nodes["nodes"] : nodes;
  if (!list.is_array()) return InvalidArgument("sinfo --json: the nodes are not a list");
  ordered_json out;
  out["meta"] = slurm_json::Meta("openapi/v0.0.38", "Slurm OpenAPI v0.0.38");
  out["errors"] = ordered_json::array();
  out["nodes"] = ordered_json::array();
  for (const nlohmann::json& node : list) {
    if (!node.is_object()) return InvalidArgument("sinfo --json: a node is not an object");
    out["nodes"].push_back(SinfoNode(node));
  }
  return out;
}

}  // namespace lockstep::cli
