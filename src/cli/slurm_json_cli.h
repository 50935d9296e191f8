// The CLI's side of Slurm's --json (src/cli/format/slurm_json.h): the context it needs from this
// machine (the time, group names) and printing the answer.
#pragma once

#include <nlohmann/json.hpp>

#include "cli/format/slurm_json.h"
#include "common/status.h"

namespace lockstep::cli {

// Now, and group names from the system's group database.
SlurmJsonContext CliSlurmJsonContext();

// Prints `doc` on stdout as Slurm does (JSON with two-space indentation, or with `yaml` its
// --yaml: format/slurm_yaml.h); an error goes out as "<command>: error: ..." with exit code 1.
int PrintSlurmJson(const char* command, const Result<nlohmann::ordered_json>& doc,
                   bool yaml = false);

// Prints a document that `write_document` writes piece by piece (WriteSqueueJson,
// WriteSacctJson) on stdout as it comes; an error as PrintSlurmJson's.
int StreamSlurmJson(const char* command,
                    const std::function<Status(const TextSink&)>& write_document);

}  // namespace lockstep::cli
