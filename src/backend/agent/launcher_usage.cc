// Launcher::Usage: what a task used so far (sstat), through task_usage.h.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "backend/agent/cgroup.h"
#include "backend/agent/launcher.h"
#include "backend/agent/task_usage.h"

namespace lockstep::agent {
namespace {

// The live processes of process group `pgid` (scans /proc).
std::vector<pid_t> GroupMembers(pid_t pgid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    auto stat = internal::ReadSmallFile(it->path().string() + "/stat");
    if (!stat.ok()) continue;
    const std::size_t paren = stat->rfind(')');
    if (paren == std::string::npos) continue;
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(stat->c_str() + paren + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') out.push_back(std::stoi(name));
  }
  return out;
}

// Every process of the cgroup at `dir` and of those below it.
std::vector<pid_t> CgroupMembers(const std::string& dir) {
  std::vector<pid_t> out;
  std::vector<std::string> dirs = {dir};
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec)) dirs.push_back(it->path().string());
  for (const std::string& d : dirs) {
    auto procs = internal::ReadSmallFile(d + "/cgroup.procs");
    if (!procs.ok()) continue;
    for (pid_t p : internal::ParsePids(*procs)) out.push_back(p);
  }
  return out;
}

}  // namespace

Result<TaskUsageSample> Launcher::Usage(pid_t pid) {
  std::string cgroup_path;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(pid);
    if (it == tasks_.end()) return NotFound("no running task with pid " + std::to_string(pid));
    cgroup_path = it->second.cgroup_path;
  }
  std::vector<pid_t> members = cgroup_path.empty() ? GroupMembers(pid) : CgroupMembers(cgroup_path);
  if (std::find(members.begin(), members.end(), pid) == members.end()) members.push_back(pid);
  return ReadTaskUsage(members, cgroup_path);
}

}  // namespace lockstep::agent
