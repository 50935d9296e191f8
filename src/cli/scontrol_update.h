// scontrol update JobId=... and PartitionName=..., the job verbs over lists of jobs (hold,
// release, uhold, requeue), and notify (scontrol_update.cc). Each prints Slurm 22.05's words and
// returns its exit code.
#pragma once

#include <string>
#include <vector>

#include "client/api_client.h"

namespace lockstep::cli {

// `words`: the KEY=VALUE words after "update", JobId=ID[,ID...] among them. Every value is
// read before any request; then each job in turn, a refusal printed as Slurm's "<why> for job
// <id>" while the others are still changed; 1 when any failed.
int UpdateJobs(client::ApiClient& api, const std::vector<std::string>& words);

// `words`: PartitionName=P and State=, MaxTime=, Default= (operators only).
int UpdatePartition(client::ApiClient& api, const std::vector<std::string>& words);

// hold, release, uhold or requeue of each job the words name ("1 2 3", "1,2", or both), each
// refusal on a line of its own; hold, release and uhold end a failed list with Slurm's
// "slurm_suspend error: <why>" line.
int JobActions(client::ApiClient& api, const std::string& action,
               const std::vector<std::string>& words);

// scontrol notify JOBID MESSAGE...: the words of the message joined by blanks.
int Notify(client::ApiClient& api, const std::vector<std::string>& words);

}  // namespace lockstep::cli
