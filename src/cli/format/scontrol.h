// `scontrol show job|node|partition|hostnames` from the API's objects (docs/api.md), in Slurm's
// Key=Value layout (src/api/job_info.c, node_info.c, partition_info.c): one record a paragraph,
// its first line flush left and the rest indented three spaces. Best effort: keys lockstep has no
// data for are printed with Slurm's placeholders ("(null)", "N/A") or left out. Pure functions;
// thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::cli {

struct ScontrolOptions {
  bool one_liner = false;  // -o: each record on one line
  Time now = 0;            // the time RunTime is measured to
};

// `scontrol show job`: `jobs` is a JSON array of Job objects, {"jobs": [...]}, or one Job.
// No jobs: "No jobs in the system\n".
Result<std::string> FormatScontrolShowJob(const nlohmann::json& jobs,
                                          const ScontrolOptions& options);

// `scontrol show node`: an array of Node objects, {"nodes": [...]}, or one Node.
Result<std::string> FormatScontrolShowNode(const nlohmann::json& nodes,
                                           const ScontrolOptions& options);

// `scontrol show partition`: an array of Partition objects, {"partitions": [...]}, or one.
// `nodes` (may be null) gives TotalCPUs.
Result<std::string> FormatScontrolShowPartition(const nlohmann::json& partitions,
                                                const nlohmann::json& nodes,
                                                const ScontrolOptions& options);

// `scontrol show hostnames LIST`: one host name a line, in the order written; an empty list
// prints nothing. A malformed hostlist is an InvalidArgument.
Result<std::string> FormatScontrolShowHostnames(std::string_view hostlist);

}  // namespace lockstep::cli
