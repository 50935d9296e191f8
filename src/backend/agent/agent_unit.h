// The agent's record of one job step's tasks on one node (Agent::Unit), shared by agent.cc and
// agent_job_hooks.cc. Every field is guarded by Agent::mu_.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backend/agent/agent.h"
#include "backend/agent/input_feeder.h"

namespace lockstep::agent {

struct Agent::Unit {
  std::uint64_t job = 0;
  int run = 0;       // the job's restart count when launched
  std::string step;  // "batch" or "step"
  std::int32_t step_id = -1;
  std::string node;
  std::set<pid_t> alive;
  std::vector<pid_t> pids;
  std::vector<int> ranks;  // each task's rank, in the order of pids
  int exit_code = 0, signal = 0;
  bool oom = false;
  std::string core_dump;  // evidence of its main process's core (core_dump.h)
  bool keeping_core = false;  // the core is being kept (a thread of its own): the end waits
  std::string error;      // why a task could not start (the first such reason)
  std::string cwd;
  uid_t uid = 0;
  gid_t gid = 0;
  bool terminated = false;  // a terminate came while it was starting: it starts nothing more
  std::vector<int> pending_signals;  // signals sent while it was starting, for later tasks
  bool spooled = false;   // its script is in the spool, removed when the unit ends
  bool launching = true;  // Launch has not started every task yet
  // Not started at all (its node lacks a shared file system): lockstepd queues the job again.
  bool launch_failed = false;
  bool reported = false;  // its end went to the outbox
  // Output pipes still read (tasks of a streamed step); the unit ends when they are closed.
  std::vector<std::uint64_t> output_tasks;
  int open_outputs = 0;
  bool abandoned = false;
  std::chrono::steady_clock::time_point gone_at{};  // when its last process was reaped
  std::unique_ptr<InputFeeder> feeder;  // srun's input for its tasks, when forwarded
  bool mpi = false;  // its tasks are clients of the agent's PMIx server (agent_mpi.cc)
};

}  // namespace lockstep::agent
