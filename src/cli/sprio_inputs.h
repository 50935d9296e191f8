// What sprio needs beside the API's priorities, as Slurm's sprio gets it from slurmctld: the
// PriorityWeight* settings (its default columns, -w and -n depend on them) and which pending
// jobs are held (Slurm's sprio leaves those out: their priority is 0 and not a place in line).
#pragma once

#include <set>
#include <string>

#include "cli/format/sprio.h"
#include "client/api_client.h"
#include "common/status.h"

namespace lockstep::cli {

// What sprio reads of the cluster's configuration (GET /api/v1/config, scontrol show config's
// keys): the PriorityWeight* settings and the ClusterName (%c).
struct SprioConfig {
  SprioWeights weights;
  std::string cluster;
};
Result<SprioConfig> FetchSprioConfig(client::ApiClient& api);

// The pending jobs held by a user or an operator (reason JobHeldUser or JobHeldAdmin).
Result<std::set<unsigned long long>> FetchHeldJobs(client::ApiClient& api);

}  // namespace lockstep::cli
