// cgroup v1 beside the v2 tree. On a hybrid host (systemd's hybrid layout, or a container runtime
// that gives the v1 hierarchies) the v2 tree has no memory or cpuset controller, and without this
// a task's --mem and CPU binding would silently not hold. There the v1 memory and cpuset
// hierarchies get a cgroup per task beside its v2 one, with the task's limits: the child joins
// them all before it runs anything, the v2 cgroup still tracks, kills and freezes the task, and
// the OOM killer's count comes from memory.oom_control. A v1 cgroup has no "no internal
// processes" rule, so the tasks' cgroups go below this process's own v1 cgroups.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "backend/agent/cgroup.h"

namespace lockstep::agent {

using internal::ErrnoText;
using internal::MakeDir;
using internal::ReadSmallFile;
using internal::WriteSmallFile;

namespace {

constexpr const char* kV1Dir = "lockstep";

bool HasWord(std::string_view list, std::string_view word, char sep) {
  while (!list.empty()) {
    const std::size_t at = list.find(sep);
    if (list.substr(0, at) == word) return true;
    if (at == std::string_view::npos) break;
    list.remove_prefix(at + 1);
  }
  return false;
}

std::string TrimmedFile(const std::string& path) {
  Result<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return "";
  std::string s = *text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// A new v1 cpuset starts with no CPUs and no memory nodes (unless cgroup.clone_children): it
// takes its parent's before anyone may join it.
int InheritCpuset(const std::string& dir, const std::string& parent) {
  for (const char* file : {"cpuset.mems", "cpuset.cpus"})
    if (int err = WriteSmallFile(dir + "/" + file, TrimmedFile(parent + "/" + file))) return err;
  return 0;
}

std::string ParentOf(const std::string& dir) { return dir.substr(0, dir.rfind('/')); }

// Makes root/name, parents first as in the v2 tree; a leftover empty leaf of a crashed agent is
// made afresh, so that no limit of an earlier task stays. In a cpuset hierarchy every level gets
// its parent's memory nodes and CPUs (the leaf: the task's, when it has some). The leaf's path.
Result<std::string> MakeV1Leaf(const std::string& root, std::string_view name, bool cpuset,
                               const CgroupLimits& limits) {
  std::string dir;
  for (std::size_t from = 0;;) {
    const std::size_t at = name.find('/', from);
    const bool leaf = at == std::string_view::npos;
    dir = root + "/" + std::string(name.substr(0, at));
    int err = MakeDir(dir);
    if (err == 0 && leaf && (rmdir(dir.c_str()) != 0 || MakeDir(dir))) err = errno;
    if (err) return IoError("cannot create cgroup " + dir + ": " + ErrnoText(err));
    if (cpuset) {
      const std::string cpus = leaf && !limits.cpus.empty()
                                   ? FormatCpuList(limits.cpus)
                                   : TrimmedFile(ParentOf(dir) + "/cpuset.cpus");
      err = WriteSmallFile(dir + "/cpuset.mems", TrimmedFile(ParentOf(dir) + "/cpuset.mems"));
      if (err == 0) err = WriteSmallFile(dir + "/cpuset.cpus", cpus);
      if (err)
        return Status(err == EINVAL ? StatusCode::kInvalidArgument : StatusCode::kIoError,
                      "cannot set the CPUs of cgroup " + dir + ": " + ErrnoText(err));
    }
    if (leaf) return dir;
    from = at + 1;
  }
}

// The task's limits of `controllers` in its v1 leaf `dir`.
Status SetV1Limits(const std::string& dir, const std::set<std::string>& controllers,
                   const CgroupLimits& limits) {
  if (controllers.count("cpu") && limits.cpu_limit > 0) {
    int err = WriteSmallFile(dir + "/cpu.cfs_period_us", std::to_string(kCpuPeriodUs));
    if (err == 0)
      err = WriteSmallFile(dir + "/cpu.cfs_quota_us", std::to_string(limits.cpu_limit * kCpuPeriodUs));
    if (err) return IoError("cannot set the CPU quota of cgroup " + dir + ": " + ErrnoText(err));
  }
  if (controllers.count("memory") && limits.memory_limit_mb > 0) {
    const std::string bytes = std::to_string(limits.memory_limit_mb * 1024 * 1024);
    int err = WriteSmallFile(dir + "/memory.limit_in_bytes", bytes);
    // With swap accounting, no more memory and swap than memory: no swapping past the limit.
    if (err == 0) {
      const int swap = WriteSmallFile(dir + "/memory.memsw.limit_in_bytes", bytes);
      err = swap == ENOENT ? 0 : swap;
    }
    if (err) return IoError("cannot set the memory limit of cgroup " + dir + ": " + ErrnoText(err));
  }
  return Status::Ok();
}

}  // namespace

std::optional<std::string> ParseV1CgroupPath(std::string_view text, std::string_view controller) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    // "hierarchy-ID:controller-list:cgroup-path"; the v2 line has an empty list.
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    if (HasWord(line.substr(first + 1, second - first - 1), controller, ','))
      return std::string(line.substr(second + 1));
  }
  return std::nullopt;
}

std::vector<Cgroup2Mount> V1MountsOf(const std::vector<MountInfoEntry>& mounts,
                                     std::string_view controller) {
  std::vector<Cgroup2Mount> out;
  for (const MountInfoEntry& m : mounts)
    if (m.fs_type == "cgroup" && HasWord(m.super_options, controller, ','))
      out.push_back({m.mount_point, m.root});
  return out;
}

std::map<std::string, std::string> CgroupTree::FindV1Roots(const std::set<std::string>& wanted) {
  std::map<std::string, std::string> roots;
  Result<std::string> self = ReadSmallFile("/proc/self/cgroup");
  Result<std::string> mountinfo = ReadSmallFile("/proc/self/mountinfo");
  if (!self.ok() || !mountinfo.ok()) return roots;
  const std::vector<MountInfoEntry> mounts = ParseMountInfo(*mountinfo);
  for (const std::string& controller : wanted) {
    const std::optional<std::string> path = ParseV1CgroupPath(*self, controller);
    if (!path) continue;
    const std::optional<CgroupDir> own = FindCgroupDir(V1MountsOf(mounts, controller), *path);
    if (!own) continue;
    const std::string dir = own->dir + "/" + kV1Dir;
    if (MakeDir(dir) != 0) continue;  // not ours to write (an unprivileged agent, say)
    if (controller == "cpuset" && InheritCpuset(dir, own->dir) != 0) continue;
    roots[controller] = dir;
  }
  return roots;
}

std::string CgroupTree::V1PathOf(const std::string& v2_path, const std::string& controller) const {
  auto root = v1_roots_.find(controller);
  if (root == v1_roots_.end() || v2_path.size() <= root_.size() + 1) return "";
  return root->second + v2_path.substr(root_.size());  // the same name below each root
}

Status CgroupTree::CreateV1Leaves(std::string_view name, const CgroupLimits& limits,
                                  CgroupLeaf& leaf) {
  // Controllers mounted together (cpu,cpuacct; sometimes cpuset,cpu) share one hierarchy and so
  // one directory: each such root gets one leaf, with every controller's limits.
  std::map<std::string, std::set<std::string>> by_root;
  for (const auto& [controller, root] : v1_roots_)
    if (!controllers_.count(controller)) by_root[root].insert(controller);
  for (const auto& [root, controllers] : by_root) {
    Result<std::string> dir = MakeV1Leaf(root, name, controllers.count("cpuset") > 0, limits);
    Status st = dir.ok() ? SetV1Limits(*dir, controllers, limits) : dir.status();
    UniqueFd procs;
    if (st.ok()) {
      procs.Reset(open((*dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
      if (procs.get() < 0) st = IoError("cannot open " + *dir + "/cgroup.procs: " + ErrnoText(errno));
    }
    if (!st.ok()) {
      RemoveV1Leaves(name);
      return st;
    }
    leaf.v1_procs.push_back(std::move(procs));
  }
  return Status::Ok();
}

void CgroupTree::RemoveV1Leaves(std::string_view name) const {
  std::set<std::string> roots;
  for (const auto& [controller, root] : v1_roots_)
    if (!controllers_.count(controller)) roots.insert(root);
  for (const std::string& root : roots) internal::Prune(root, name);
}

}  // namespace lockstep::agent
