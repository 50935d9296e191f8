// CgroupTree: one cgroup per task below the launcher's root.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "backend/agent/cgroup.h"

namespace lockstep::agent {

using internal::ErrnoText;
using internal::MakeDir;
using internal::ReadSmallFile;
using internal::WriteSmallFile;

// Removes root/name, then its parents below root, stopping at the first that is not empty.
// Returns the error of removing root/name itself (0: removed or already gone).
int internal::Prune(const std::string& root, std::string_view name) {
  int first_error = 0;
  bool first = true;
  while (!name.empty()) {
    const std::string dir = root + "/" + std::string(name);
    if (rmdir(dir.c_str()) != 0 && errno != ENOENT) {
      if (first) first_error = errno;
      break;
    }
    first = false;
    const std::size_t slash = name.rfind('/');
    name = slash == std::string_view::npos ? std::string_view() : name.substr(0, slash);
  }
  return first_error;
}

using internal::Prune;

Status CgroupTree::EnableBelow(const std::string& dir) const {
  if (controllers_.empty()) return Status::Ok();
  auto current = ReadSmallFile(dir + "/cgroup.subtree_control");
  const std::set<std::string> on =
      current.ok() ? ParseControllers(*current) : std::set<std::string>{};
  for (const std::string& c : controllers_) {
    if (on.count(c)) continue;
    if (int err = WriteSmallFile(dir + "/cgroup.subtree_control", "+" + c)) {
      return IoError("cannot enable the " + c + " controller in " + dir + ": " + ErrnoText(err));
    }
  }
  return Status::Ok();
}

Result<CgroupLeaf> CgroupTree::CreateLeaf(std::string_view name, const CgroupLimits& limits) {
  LOCKSTEP_RETURN_IF_ERROR(ValidateCgroupName(name));
  // Parents first: plain directories that hand the controllers down to the leaf.
  std::string dir = root_;
  for (std::size_t at = name.find('/'); at != std::string_view::npos; at = name.find('/', at + 1)) {
    dir = root_ + "/" + std::string(name.substr(0, at));
    if (int err = MakeDir(dir)) {
      Prune(root_, name.substr(0, at));
      return IoError("cannot create cgroup " + dir + ": " + ErrnoText(err));
    }
    if (Status s = EnableBelow(dir); !s.ok()) {
      Prune(root_, name.substr(0, at));
      return s;
    }
  }
  const std::string leaf = root_ + "/" + std::string(name);
  if (mkdir(leaf.c_str(), 0755) != 0) {
    const int err = errno;
    if (err != EEXIST) {
      Prune(root_, name);
      return IoError("cannot create cgroup " + leaf + ": " + ErrnoText(err));
    }
    // A leftover of an earlier run (an agent that crashed): replace it when it is empty, so that
    // its limits and event counts start afresh.
    if (Populated(leaf)) {
      return Status(StatusCode::kAlreadyExists, "cgroup " + leaf + " exists and has processes");
    }
    if (rmdir(leaf.c_str()) != 0 || mkdir(leaf.c_str(), 0755) != 0) {
      return Status(StatusCode::kAlreadyExists,
                    "cgroup " + leaf + " exists and cannot be replaced: " + ErrnoText(errno));
    }
  }
  auto fail = [&](Status s) {
    Prune(root_, name);
    return s;
  };
  if (controllers_.count("memory") && limits.memory_limit_mb > 0) {
    const std::int64_t bytes = limits.memory_limit_mb * 1024 * 1024;
    if (int err = WriteSmallFile(leaf + "/memory.max", std::to_string(bytes))) {
      return fail(IoError("cannot set memory.max of " + leaf + ": " + ErrnoText(err)));
    }
    // Without swap accounting (or swap) the file is missing, and nothing can swap anyway.
    if (int err = WriteSmallFile(leaf + "/memory.swap.max", "0"); err && err != ENOENT) {
      return fail(IoError("cannot set memory.swap.max of " + leaf + ": " + ErrnoText(err)));
    }
  }
  if (controllers_.count("cpu") && limits.cpu_limit > 0) {
    const std::string max = std::to_string(limits.cpu_limit * kCpuPeriodUs) + " " +
                            std::to_string(kCpuPeriodUs);
    if (int err = WriteSmallFile(leaf + "/cpu.max", max)) {
      return fail(IoError("cannot set cpu.max of " + leaf + ": " + ErrnoText(err)));
    }
  }
  if (controllers_.count("cpuset") && !limits.cpus.empty()) {
    const std::string list = FormatCpuList(limits.cpus);
    if (int err = WriteSmallFile(leaf + "/cpuset.cpus", list)) {
      return fail(
          Status(err == EINVAL ? StatusCode::kInvalidArgument : StatusCode::kIoError,
                 "cannot set cpuset.cpus of " + leaf + " to " + list + ": " + ErrnoText(err)));
    }
  }
  UniqueFd procs(open((leaf + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (procs.get() < 0) {
    return fail(IoError("cannot open " + leaf + "/cgroup.procs: " + ErrnoText(errno)));
  }
  CgroupLeaf out;
  out.path = leaf;
  out.procs = std::move(procs);
  if (Status s = CreateV1Leaves(name, limits, out); !s.ok()) return fail(s);
  out.oom_kills_at_start = OomKills(leaf);
  return out;
}

Status CgroupTree::RemoveLeaf(std::string_view name) {
  RemoveV1Leaves(name);
  if (int err = Prune(root_, name)) {
    return IoError("cannot remove cgroup " + root_ + "/" + std::string(name) + ": " +
                   ErrnoText(err));
  }
  return Status::Ok();
}

Status CgroupTree::SignalAll(const std::string& path, int signo) const {
  if (signo == SIGKILL) {
    const int err = WriteSmallFile(path + "/cgroup.kill", "1");
    if (err == 0) return Status::Ok();
    if (err != ENOENT && err != EACCES) {  // ENOENT: a kernel before 5.14, or the cgroup is gone
      return IoError("cannot kill cgroup " + path + ": " + ErrnoText(err));
    }
  }
  // Every process of the cgroup and of the cgroups below it (a task running as the launcher's
  // own user may create some).
  std::vector<std::string> dirs = {path};
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(path, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) dirs.push_back(it->path().string());
  }
  int first_error = 0;
  for (const std::string& dir : dirs) {
    auto procs = ReadSmallFile(dir + "/cgroup.procs");
    if (!procs.ok()) continue;  // removed meanwhile
    for (pid_t pid : internal::ParsePids(*procs)) {
      if (kill(pid, signo) != 0 && errno != ESRCH && first_error == 0) first_error = errno;
    }
  }
  if (first_error != 0) {
    return IoError("cannot signal every process of cgroup " + path + ": " + ErrnoText(first_error));
  }
  return Status::Ok();
}

Status CgroupTree::Freeze(const std::string& path, bool frozen) const {
  if (int err = WriteSmallFile(path + "/cgroup.freeze", frozen ? "1" : "0"))
    return IoError("cannot " + std::string(frozen ? "freeze" : "thaw") + " cgroup " + path + ": " +
                   ErrnoText(err));
  return Status::Ok();
}

bool CgroupTree::Populated(const std::string& path) const {
  auto events = ReadSmallFile(path + "/cgroup.events");
  if (!events.ok()) return false;
  return ParseKeyedValue(*events, "populated").value_or(0) != 0;
}

std::int64_t CgroupTree::OomKills(const std::string& path) const {
  // v1: memory.oom_control's oom_kill (kernels from 4.13).
  if (const std::string v1 = V1PathOf(path, "memory"); !v1.empty()) {
    auto control = ReadSmallFile(v1 + "/memory.oom_control");
    return control.ok() ? ParseKeyedValue(*control, "oom_kill").value_or(0) : 0;
  }
  auto events = ReadSmallFile(path + "/memory.events");
  if (!events.ok()) return 0;
  return ParseKeyedValue(*events, "oom_kill").value_or(0);
}

}  // namespace lockstep::agent
