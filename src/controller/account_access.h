// Which accounts a user's job may charge. With Slurm's AccountingStorageEnforce=associations
// (config::SubmitLimits::enforce_associations, the default) a job charges one of its user's
// associations, and a user with none may submit nothing, except on a cluster whose file names
// no account or user (`lockstep up`'s): there a user without an association of their own runs
// in the account "default", which lockstepd creates for them, and may name no other. Without
// enforcement any account may be named, and an unknown one is created (Slurm without
// accounting's checks). docs/security.md, "Limits on what a user may submit". Pure.
#pragma once

#include <string>

#include "common/status.h"
#include "config/cluster_config.h"

namespace lockstep::controller {

// Slurm's words (ESLURM_INVALID_ACCOUNT), which sbatch, srun and salloc print after their own.
inline constexpr char kInvalidAccount[] =
    "Invalid account or account/partition combination specified";

// Ok, or InvalidArgument(kInvalidAccount). `account` empty: the user's default account.
Status CheckAccountAccess(const config::ClusterConfig& cluster, const std::string& user,
                          const std::string& account);

// The account a job of `user` charges when it names none: the account of the user's first
// association (their DefaultAccount), else "default". A submission records it, as slurmctld
// does, so that squeue, scontrol, sacct and SLURM_JOB_ACCOUNT show it.
std::string DefaultAccountOf(const config::ClusterConfig& cluster, const std::string& user);

}  // namespace lockstep::controller
