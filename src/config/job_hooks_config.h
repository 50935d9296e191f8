// The cluster YAML's `prolog:` and `epilog:` (Slurm's Prolog and Epilog, docs/health.md): the
// programs lockstep-agent runs on each node of a job, as the agent's user (root on a real
// cluster), before the job's first task there and after the job ends. A plain value.
#pragma once

#include <string>

#include "common/types.h"

namespace lockstep::config {

struct JobHook {
  std::string program;  // absolute; empty: none
  // Slurm's PrologEpilogTimeout: a program still running after this is killed (its process
  // group) and counts as failed.
  Seconds timeout = 300;
  bool configured() const { return !program.empty(); }
};

struct JobHooksConfig {
  JobHook prolog;
  JobHook epilog;
};

}  // namespace lockstep::config
