// cgroup v2 confinement for the launcher's tasks: finding (or making) a place in the hierarchy
// where the agent may create cgroups, one cgroup per task below it with memory and CPU limits,
// killing everything in one, and removing it. docs/agent-processes.md explains the choices.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep::agent {

// A file descriptor, closed on destruction. Movable, not copyable.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.Release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) Reset(o.Release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// --- Parsing, pure (tested in cgroup_test.cc) ---

// The cgroup v2 path ("/a/b") in the text of /proc/<pid>/cgroup: its "0::" line.
std::optional<std::string> ParseUnifiedCgroupPath(std::string_view proc_pid_cgroup);

struct Cgroup2Mount {
  std::string mount_point;  // e.g. /sys/fs/cgroup
  std::string root;         // the cgroup shown at the mount point, e.g. "/" or "/docker/abc"
};
// One line of /proc/self/mountinfo, its fields unescaped (the kernel writes space, tab, newline
// and backslash as \ooo).
struct MountInfoEntry {
  std::string root;         // field 4: the mount's root within its file system
  std::string mount_point;  // field 5
  std::string fs_type;      // the first field after " - "
  std::string super_options;  // the last field: a v1 cgroup mount's controllers ("rw,memory")
};
// Every mount in the text of /proc/self/mountinfo, in order.
std::vector<MountInfoEntry> ParseMountInfo(std::string_view mountinfo);
// The cgroup2 mounts in the text of /proc/self/mountinfo, in order.
std::vector<Cgroup2Mount> ParseCgroup2Mounts(std::string_view mountinfo);

struct CgroupDir {
  std::string dir;          // the directory of the cgroup
  std::string mount_point;  // the mount it is under
};
// Where cgroup `path` (as /proc/self/cgroup shows it) is in one of `mounts`, if it is visible.
std::optional<CgroupDir> FindCgroupDir(const std::vector<Cgroup2Mount>& mounts,
                                       std::string_view path);

// cgroup v1 beside v2 (cgroup_v1.cc): a hybrid host, whose v2 tree has no memory or cpuset
// controller while a v1 hierarchy has. The path of this process's cgroup in the v1 hierarchy of
// `controller`, from the text of /proc/self/cgroup ("4:memory:/a/b" -> "/a/b").
std::optional<std::string> ParseV1CgroupPath(std::string_view proc_pid_cgroup,
                                             std::string_view controller);
// The v1 cgroup mounts of `controller` in `mounts`, as FindCgroupDir takes them.
std::vector<Cgroup2Mount> V1MountsOf(const std::vector<MountInfoEntry>& mounts,
                                     std::string_view controller);

// The value of `key` in a flat-keyed file ("populated 1\nfrozen 0\n", memory.events).
std::optional<std::int64_t> ParseKeyedValue(std::string_view text, std::string_view key);

// The words of cgroup.controllers or cgroup.subtree_control.
std::set<std::string> ParseControllers(std::string_view text);

// cpuset list syntax, sorted and merged: {3,0,1,2,7} -> "0-3,7".
std::string FormatCpuList(std::vector<int> cpus);

// A task cgroup name: '/'-separated components of [A-Za-z0-9_.-], none empty, "." or "..", none
// starting with "cgroup." or a controller prefix that cgroupfs reserves.
Status ValidateCgroupName(std::string_view name);

// --- The tree ---

struct CgroupLimits {
  std::int64_t memory_limit_mb = 0;  // 0: none
  std::vector<int> cpus;             // empty: the parent's
  std::int32_t cpu_limit = 0;        // CPUs' worth of time per period (the cpu controller); 0: none
};

// The cpu controller's period, and a quota of `cpus` CPUs in it (cpu.max, cpu.cfs_quota_us).
inline constexpr std::int64_t kCpuPeriodUs = 100000;

// A task's cgroup, created and ready for the child to join.
struct CgroupLeaf {
  std::string path;
  UniqueFd procs;  // cgroup.procs, open for writing (O_CLOEXEC): the child writes "0" to join
  // On a hybrid host: the cgroup.procs of the task's v1 memory and cpuset cgroups, joined alike.
  std::vector<UniqueFd> v1_procs;
  std::int64_t oom_kills_at_start = 0;
};

// The launcher's cgroup subtree: a root directory and the controllers enabled below it. Owned by
// the Launcher. CreateLeaf and RemoveLeaf must not run concurrently with each other (the Launcher
// holds its mutex); the other methods only read and signal, and may run from any thread.
class CgroupTree {
 public:
  struct Setup {
    std::unique_ptr<CgroupTree> tree;  // null: cgroups off
    std::string note;                  // where the cgroups go and with what, or why they are off
  };
  // root empty: autodetect (cgroups off when there is no usable place). Otherwise use root,
  // creating it, and fail when it is not a usable cgroup v2 directory.
  static Result<Setup> Open(const std::string& root);

  const std::string& root() const { return root_; }
  // Whether tasks get limits of `controller`, from the v2 tree or a v1 hierarchy.
  bool has(const std::string& controller) const {
    return controllers_.count(controller) > 0 || v1_roots_.count(controller) > 0;
  }
  // Sets the limits of `controller` in its v1 hierarchy, below `dir` (made and, for cpuset,
  // given its parent's CPUs and memory nodes by FindV1Roots).
  void UseV1(const std::string& controller, const std::string& dir) { v1_roots_[controller] = dir; }
  // The v1 directories below which tasks' cgroups of each controller go, for those of `wanted`
  // that a v1 hierarchy of this process has and this process may write; made when missing.
  static std::map<std::string, std::string> FindV1Roots(const std::set<std::string>& wanted);

  // Creates root/name (and its missing parents) with the limits the controllers allow. A
  // leftover empty cgroup of that name is replaced; one with processes is AlreadyExists.
  Result<CgroupLeaf> CreateLeaf(std::string_view name, const CgroupLimits& limits);
  // Removes root/name and then each parent that has become empty, up to the root.
  Status RemoveLeaf(std::string_view name);

  // Sends signo to every process of the cgroup at `path` (SIGKILL through cgroup.kill when the
  // kernel has it).
  Status SignalAll(const std::string& path, int signo) const;
  // Freezes (or thaws) the cgroup at `path` and everything below it (cgroup.freeze).
  Status Freeze(const std::string& path, bool frozen) const;
  // Whether any live process is in the cgroup at `path` (false once it is gone).
  bool Populated(const std::string& path) const;
  // memory.events oom_kill of the cgroup at `path`; 0 when unknown.
  std::int64_t OomKills(const std::string& path) const;

  // Used by Open and tests: a tree at an existing directory with the given controllers.
  CgroupTree(std::string root, std::set<std::string> controllers)
      : root_(std::move(root)), controllers_(std::move(controllers)) {}

 private:
  Status EnableBelow(const std::string& dir) const;
  // The task's v1 cgroups (cgroup_v1.cc), with its limits, joined through `leaf.v1_procs`.
  Status CreateV1Leaves(std::string_view name, const CgroupLimits& limits, CgroupLeaf& leaf);
  void RemoveV1Leaves(std::string_view name) const;
  // The task's cgroup of `controller` in its v1 hierarchy, from its v2 path; "" when none.
  std::string V1PathOf(const std::string& v2_path, const std::string& controller) const;

  const std::string root_;
  const std::set<std::string> controllers_;  // enabled in root_'s subtree_control
  std::map<std::string, std::string> v1_roots_;  // controller -> its v1 directory for tasks
};

namespace internal {
// File helpers shared by cgroup.cc and cgroup_setup.cc. Errors are errno values (0: success).
Result<std::string> ReadSmallFile(const std::string& path);
int WriteSmallFile(const std::string& path, std::string_view data);
int MakeDir(const std::string& path);  // EEXIST counts as success
std::string ErrnoText(int err);
std::vector<pid_t> ParsePids(std::string_view text);
// Removes root/name, then its parents below root, stopping at the first that is not empty.
// Returns the error of removing root/name itself (0: removed or already gone).
int Prune(const std::string& root, std::string_view name);
}  // namespace internal

}  // namespace lockstep::agent
