// Test-only: whether a process of a job is alive, and stopped (SIGSTOP) or frozen (its cgroup
// v2 freezer), and whether a path is a mount point, read from /proc and the cgroup file system
// as an operator would.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <sstream>
#include <string>

namespace lockstep::testing {

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Its /proc/<pid>/stat state letter ('R', 'S', 'T', 'Z', ...); 0 when it is gone.
inline char ProcState(pid_t pid) {
  const std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? 0 : stat[paren + 2];
}

inline bool IsAlive(pid_t pid) {
  const char s = ProcState(pid);
  return s != 0 && s != 'Z' && s != 'X';
}

// Where the cgroup v2 hierarchy is mounted ("" when it is not).
inline std::string Cgroup2Mount() {
  std::ifstream mounts("/proc/self/mounts");
  std::string dev, dir, type, rest;
  while (mounts >> dev >> dir >> type && std::getline(mounts, rest))
    if (type == "cgroup2") return dir;
  return "";
}

// Stopped by a signal ('T'), or in a frozen cgroup v2.
inline bool IsStopped(pid_t pid) {
  if (ProcState(pid) == 'T') return true;
  std::istringstream lines(ReadAll("/proc/" + std::to_string(pid) + "/cgroup"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("0::", 0) != 0) continue;
    const std::string events = ReadAll(Cgroup2Mount() + line.substr(3) + "/cgroup.events");
    return events.find("frozen 1") != std::string::npos;
  }
  return false;
}

// Whether `path` is a mount point in this process's mount namespace (/proc/self/mountinfo's
// fifth field).
inline bool Mounted(const std::string& path) {
  std::istringstream lines(ReadAll("/proc/self/mountinfo"));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string f[5];
    for (std::string& x : f) fields >> x;
    if (f[4] == path) return true;
  }
  return false;
}

}  // namespace lockstep::testing
