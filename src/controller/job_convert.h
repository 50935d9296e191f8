// From a user's JobSpec to the engine's Job, resolving names against the cluster: the
// partition, QoS, account, GPU type and features must exist, and the request must fit the
// partition's nodes at all (Slurm rejects such a job at submit, so does lockstep).
#pragma once

#include "common/status.h"
#include "controller/job_entry.h"
#include "engine/model.h"
#include "config/cluster_config.h"

namespace lockstep::controller {

// The window id of a job whose reservation no longer exists: no window has it, so the engine
// never starts the job (ids count up from 1).
inline constexpr std::uint32_t kDeletedReservation = 0xFFFFFFFEu;

// Checks a submission; the error is what sbatch prints ("Invalid partition name specified").
Status ValidateSpec(const jobspec::JobSpec& spec, config::ClusterConfig& cluster);
// ValidateSpec without the script (a stored spec has none): the names exist and the request
// fits the partition's nodes. scontrol update checks a changed spec with it.
Status ValidatePlacement(const jobspec::JobSpec& spec, config::ClusterConfig& cluster);

// The engine's view of a job entry. Dependencies name job ids already resolved.
engine::Job ToEngineJob(const JobEntry& e, config::ClusterConfig& cluster);

// How long the job waits for its --switches count: its own wait (`@time`) capped by
// scheduler.max_switch_wait, which is also the wait of a job that names none (as in Slurm);
// 0 when it has no count, or when the cluster never waits for one.
Seconds SwitchesWait(const jobspec::JobSpec& spec, const config::ClusterConfig& cluster);

}  // namespace lockstep::controller
