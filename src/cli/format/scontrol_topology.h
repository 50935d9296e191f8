// `scontrol show topology` from GET /api/v1/topology (docs/api.md): Slurm 22.05's topology/tree
// records (src/api/topo_info.c, slurm_print_topo_record), one switch a line, or for a cluster
// of blocks Slurm's topology/block records (from 23.11, which 22.05 lacks). Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace lockstep::cli {

// `name` empty: every record. Else the switch (block) of that name, or else every one that
// holds all of `name`'s nodes (a node name or a hostlist). NotFound with Slurm's words when the
// cluster has no topology ("No topology information available") or nothing matches ("Topology
// information contains no switch or node named X"); scontrol prints them as errors.
Result<std::string> FormatScontrolShowTopology(const nlohmann::json& topology,
                                               const std::string& name);

}  // namespace lockstep::cli
