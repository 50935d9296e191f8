// Slurm's --cpus-per-gpu as the request lockstep's engine places. The engine counts a node's
// CPUs as its tasks times CPUs per task; Slurm gives a node N CPUs for each GPU the job has
// there, or the tasks' CPUs when those are more (Slurm 22.05: `-n 12 --gpus-per-node=2
// --cpus-per-gpu=2` gets 12 CPUs, `-n 3 --gpus-per-node=2 --cpus-per-gpu=4` gets 8). Pure.
#pragma once

#include <cstdint>
#include <optional>

#include "jobspec/job_spec.h"

namespace lockstep::jobspec {

struct GpuBoundCpus {
  std::int32_t gpus_per_node = 0;  // as the engine counts them on each of `nodes` nodes
  std::int32_t cpus_per_node = 0;  // what each node gives the job
};

// The per-node GPUs and CPUs of a job with --cpus-per-gpu on `nodes` nodes with `ntasks` tasks
// (the controller's figures, after -w may have raised the node count). nullopt without
// --cpus-per-gpu, or without GPUs, where Slurm's --cpus-per-gpu has no effect either. Figures
// beyond int32 (which Validate refuses) are clamped.
std::optional<GpuBoundCpus> CpusForGpus(const JobSpec& spec, std::int32_t nodes,
                                        std::int32_t ntasks);

}  // namespace lockstep::jobspec
