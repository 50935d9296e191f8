// What a user may submit: the accounts a job may charge, the size of what it carries and how
// many jobs lockstepd holds (docs/security.md, "Limits on what a user may submit"). Read from
// the `scheduler:` section of the cluster YAML (docs/configuration.md) and shown by
// `scontrol show config` under Slurm's names. A plain value; defaults documented here.
#pragma once

#include <cstdint>

#include "common/types.h"

namespace lockstep::config {

struct SubmitLimits {
  // scheduler.accounting_storage_enforce (Slurm's AccountingStorageEnforce): `associations`,
  // the default, refuses a job whose account is not one of its user's associations ("Invalid
  // account or account/partition combination specified"); `none` lets any account be named,
  // and an unknown one is created, as lockstep did before.
  bool enforce_associations = true;
  // Set by the parser, not a key: the file names no account (but root) and no user. Then a user
  // with no association of their own runs in the account "default", as on `lockstep up`'s
  // cluster, and may name no other.
  bool default_account_open = true;
  // scheduler.enforce_part_limits (Slurm's EnforcePartLimits): `no`, the default as in Slurm,
  // accepts a job whose time limit is above its partition's MaxTime and leaves it pending with
  // reason PartitionTimeLimit; `yes` (or `all`, `any`: a lockstep job has one partition, so
  // they agree) refuses it at submission.
  bool enforce_part_limits = false;
  // scheduler.max_name_length: bytes of a job's name (Slurm's fixed limit, 1024).
  std::uint64_t max_name_length = 1024;
  // scheduler.max_script_size (Slurm's SchedulerParameters=max_script_size): bytes of the batch
  // script, and of its arguments together.
  std::uint64_t max_script_size = 4u << 20;
  // scheduler.max_env_size: bytes of the environment a job carries, NAME=VALUE plus a NUL each;
  // 2 MiB is what Linux's execve takes by default (ARG_MAX), so a larger one could not start.
  std::uint64_t max_env_size = 2u << 20;
  // scheduler.max_job_count (Slurm's MaxJobCount): the jobs lockstepd holds in memory, finished
  // ones included until they are purged; a pending array's tasks not split off are one record.
  std::uint64_t max_job_count = 10000;
  // scheduler.max_submit_jobs: the jobs one user may have pending or running at once, array
  // tasks counted one by one (Slurm's MaxSubmitJobs, for every user); kUnlimited: no limit.
  std::int64_t max_submit_jobs = kUnlimited;
};

}  // namespace lockstep::config
