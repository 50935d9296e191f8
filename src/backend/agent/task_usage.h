// What a task's processes used so far, for sstat: read from the task's cgroup v2 where it has
// one (cpu.stat usage_usec, which also counts processes that have ended; memory.current and
// memory.peak where the memory controller is on; io.stat), and from /proc for the rest (the
// processes' RSS, virtual size, major faults, peak RSS and I/O; without a cgroup their CPU time,
// the children they reaped included). Slurm's jobacct_gather/cgroup and /linux read the same.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::agent {

struct ProcessUsage {
  std::int64_t cpu_ticks = 0;     // utime + stime
  std::int64_t child_ticks = 0;   // cutime + cstime: children it has reaped
  std::int64_t major_faults = 0;  // majflt + cmajflt
  std::int64_t vm_bytes = 0;
  std::int64_t rss_pages = 0;
};

// --- Parsing, pure (task_usage_test.cc) ---
// /proc/<pid>/stat ("pid (comm) S ..."; comm may hold spaces and parentheses).
std::optional<ProcessUsage> ParseProcStat(std::string_view text);
// A "Key:   123 kB" line of /proc/<pid>/status, in bytes.
std::optional<std::int64_t> ParseStatusKb(std::string_view text, std::string_view key);
// A "key: 123" line of /proc/<pid>/io.
std::optional<std::int64_t> ParseColonValue(std::string_view text, std::string_view key);
// io.stat: the sums of rbytes= and wbytes= over its devices.
struct IoBytes {
  std::int64_t read = 0, write = 0;
};
IoBytes ParseIoStat(std::string_view text);

// --- Reading ---
struct TaskUsageSample {
  std::int64_t cpu_usec = 0;
  std::int64_t rss_bytes = 0, max_rss_bytes = 0;
  std::int64_t vm_bytes = 0;
  std::int64_t pages = 0;
  std::int64_t read_bytes = 0, write_bytes = 0;
  std::vector<pid_t> pids;
};
// `pids`: the task's live processes; `cgroup_dir`: its cgroup ("" without one).
TaskUsageSample ReadTaskUsage(const std::vector<pid_t>& pids, const std::string& cgroup_dir);

}  // namespace lockstep::agent
