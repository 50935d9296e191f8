// What an agent leaves behind when it is killed (SIGKILL, a crash): the tasks it started keep
// running in their own sessions, untracked, since nothing reaps or signals them any more. The
// agent therefore records every task it starts, in its spool, and removes the record when it
// has reaped the task; at start it ends what its previous incarnation recorded and left running.
// lockstepd learns of it from the registration (the jobs are not among the running ones) and
// requeues or ends their jobs as for a failed node.
//
// A record is one file, <spool>/tasks/<pid>, holding "<pid> <start time> <cgroup path>": the
// start time (field 22 of /proc/<pid>/stat) tells the task from a later process that got its pid.
// Thread-safe: each call touches only its own record's file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::agent {

class TaskRecords {
 public:
  // `spool_dir`/tasks is created when missing.
  static Result<TaskRecords> Open(const std::string& spool_dir);

  // Records a task that has just started: its pid (the leader of its session and process group)
  // and its cgroup (empty: none).
  Status Add(pid_t pid, const std::string& cgroup_path) const;
  // Forgets a task that has been reaped.
  void Remove(pid_t pid) const;

  // Ends every recorded task that is still running (SIGKILL to its process group, and to every
  // process of its cgroup), removes the records, and returns one line per task it ended, for the
  // log. Call before this agent starts tasks of its own.
  std::vector<std::string> EndLeftovers() const;

  // The start time of a running process (field 22 of /proc/<pid>/stat, in clock ticks since
  // boot); 0 when there is no such process.
  static std::uint64_t StartTimeOf(pid_t pid);

 private:
  explicit TaskRecords(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace lockstep::agent
