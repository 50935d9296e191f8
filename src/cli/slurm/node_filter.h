// sinfo's filters on the API's Partition and Node objects (docs/api.md): -p partitions, -n
// nodes, -t states, -r responding, -d dead. Pure; thread-safe.
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace lockstep::cli {

struct NodeFilter {
  std::set<std::string> partitions;  // -p
  std::set<std::string> nodes;       // -n, expanded
  std::set<std::string> states;      // -t, lower case as given ("idle", "alloc", "drain", ...)
  bool responding_only = false;      // -r
  bool dead_only = false;            // -d
};

// Checks and adds sinfo -t's comma-separated states. Unknown: "Invalid node state specified: x".
Status AddNodeStates(NodeFilter& filter, const std::string& states);

// Whether a node's API state ("mixed", "drained*", ...) is one sinfo -t names ("mix", "drain").
bool NodeStateMatches(const std::string& node_state, const std::string& wanted);

// {"partitions": [...], "nodes": [...]} narrowed by the filter: partitions by name, nodes by
// name, state and partition (a node stays when it is in one of the partitions kept).
nlohmann::json FilterSinfo(const nlohmann::json& partitions, const nlohmann::json& nodes,
                           const NodeFilter& filter);

}  // namespace lockstep::cli
