// CgroupTree::Open: finding the place in the cgroup v2 hierarchy where the launcher's task cgroups
// go, and enabling the controllers there. The rules that shape it:
//  - a cgroup hands controllers to its children (cgroup.subtree_control) only if it has no
//    processes of its own, except the root of the hierarchy ("no internal processes");
//  - a process may move into any cgroup its user may write the cgroup.procs of (root: all).
// So the agent tries, in order: below its own cgroup (a systemd unit with Delegate=yes, or a
// container of which it is the only process: it then moves itself into a leaf "lockstep-agent"
// first); below the top of the hierarchy (root only: lockstep.slice, as a systemd host allows);
// and otherwise below its own cgroup without controllers, which still tracks and kills every
// process of a task but sets no limits.
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>

#include "backend/agent/cgroup.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

namespace lockstep::agent {

using internal::ErrnoText;
using internal::MakeDir;
using internal::ReadSmallFile;
using internal::WriteSmallFile;

namespace {

constexpr const char* kAgentLeaf = "lockstep-agent";

std::set<std::string> Offered(const std::string& dir) {
  static const std::set<std::string> kWanted = {"cpu", "cpuset", "memory", "pids"};
  auto text = ReadSmallFile(dir + "/cgroup.controllers");
  std::set<std::string> out;
  if (!text.ok()) return out;
  for (const std::string& c : ParseControllers(*text)) {
    if (kWanted.count(c)) out.insert(c);
  }
  return out;
}

std::string Parent(const std::string& dir) {
  const std::size_t slash = dir.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : dir.substr(0, slash);
}

std::string Names(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& c : s) out += (out.empty() ? "" : " ") + c;
  return out.empty() ? "none" : out;
}

// What EnableIn achieved.
struct Enabled {
  std::set<std::string> controllers;
  std::string why_not;   // when a controller could not be enabled
  std::string moved_to;  // the leaf this process moved into, if it did
};

// Enables the offered controllers in dir's subtree_control, one by one. When dir holds processes
// and the only one is this process (and may_move_self), moves it into dir/lockstep-agent first.
Enabled EnableIn(const std::string& dir, bool may_move_self) {
  Enabled out;
  const std::set<std::string> offered = Offered(dir);
  auto current = ReadSmallFile(dir + "/cgroup.subtree_control");
  const std::set<std::string> on =
      current.ok() ? ParseControllers(*current) : std::set<std::string>{};
  bool moved = false;
  for (const std::string& c : offered) {
    if (on.count(c)) {
      out.controllers.insert(c);
      continue;
    }
    int err = WriteSmallFile(dir + "/cgroup.subtree_control", "+" + c);
    if (err == EBUSY && may_move_self && !moved) {
      auto procs = ReadSmallFile(dir + "/cgroup.procs");
      const std::vector<pid_t> pids =
          procs.ok() ? internal::ParsePids(*procs) : std::vector<pid_t>{};
      if (pids == std::vector<pid_t>{getpid()}) {
        const std::string leaf = dir + "/" + kAgentLeaf;
        err = MakeDir(leaf);
        if (err == 0) err = WriteSmallFile(leaf + "/cgroup.procs", std::to_string(getpid()));
        if (err == 0) {
          moved = true;
          out.moved_to = leaf;
          err = WriteSmallFile(dir + "/cgroup.subtree_control", "+" + c);
        }
      } else {
        out.why_not = dir +
                      " holds other processes than the agent, and a cgroup with processes "
                      "hands no controllers down";
        return out;
      }
    }
    if (err == 0) {
      out.controllers.insert(c);
    } else if (out.why_not.empty()) {
      out.why_not = "cannot enable " + c + " in " + dir + ": " + ErrnoText(err);
    }
  }
  if (offered.count("memory") == 0 && out.why_not.empty()) {
    out.why_not = "the memory controller is not available in " + dir;
  }
  return out;
}

// The tree at `root` (created when missing). `why` says why there are no limits (when there are
// none) or notes how the place was found.
Result<CgroupTree::Setup> Use(const std::string& root, const std::string& why) {
  if (int err = MakeDir(root)) {
    return IoError("cannot create cgroup " + root + ": " + ErrnoText(err));
  }
  Enabled below = EnableIn(root, /*may_move_self=*/true);
  // What the v2 tree lacks, a v1 hierarchy of a hybrid host may give (cgroup_v1.cc).
  std::set<std::string> missing;
  for (const char* c : {"memory", "cpu", "cpuset"})
    if (!below.controllers.count(c)) missing.insert(c);
  const std::map<std::string, std::string> v1 = CgroupTree::FindV1Roots(missing);
  CgroupTree::Setup setup;
  setup.note = "cgroups: task cgroups below " + root + ", controllers: " + Names(below.controllers);
  for (const auto& [controller, dir] : v1) setup.note += ", " + controller + " (v1) below " + dir;
  if (below.controllers.count("memory") == 0 && v1.count("memory") == 0) {
    setup.note += " (processes are tracked and killed, but no memory or CPU limits: " +
                  (why.empty() ? below.why_not : why) + ")";
  } else if (!why.empty() && v1.empty()) {
    setup.note += " (" + why + ")";
  }
  setup.tree = std::make_unique<CgroupTree>(root, below.controllers);
  for (const auto& [controller, dir] : v1) setup.tree->UseV1(controller, dir);
  return setup;
}

CgroupTree::Setup Off(const std::string& why) {
  return {nullptr, "cgroups off: " + why};
}

Result<CgroupTree::Setup> Autodetect() {
  auto self = ReadSmallFile("/proc/self/cgroup");
  const auto own = self.ok() ? ParseUnifiedCgroupPath(*self) : std::nullopt;
  if (!own) return Off("no cgroup v2 hierarchy (no 0:: line in /proc/self/cgroup)");
  auto mountinfo = ReadSmallFile("/proc/self/mountinfo");
  const auto found =
      mountinfo.ok() ? FindCgroupDir(ParseCgroup2Mounts(*mountinfo), *own) : std::nullopt;
  if (!found) return Off("no cgroup2 mount shows this process's cgroup " + *own);
  std::string dir = found->dir;
  const std::string& top = found->mount_point;
  // An earlier Launcher of this process may have moved it into a leaf: start from its parent.
  if (dir != top && dir.substr(dir.rfind('/') + 1) == kAgentLeaf) dir = Parent(dir);
  if (access((dir + "/cgroup.subtree_control").c_str(), W_OK) != 0) {
    return Off("cannot write to " + dir + " (" + ErrnoText(errno) +
               "); give the agent a delegated cgroup or a writable cgroup2 mount");
  }
  // 1. Below our own cgroup.
  Enabled own_enabled = EnableIn(dir, /*may_move_self=*/true);
  const std::string own_root = dir + (dir == top ? "/lockstep.slice" : "/lockstep");
  if (own_enabled.controllers.count("memory")) {
    return Use(own_root,
               own_enabled.moved_to.empty()
                   ? ""
                   : "moved the agent into " + own_enabled.moved_to +
                         ", as its cgroup may not hold processes and hand controllers down");
  }
  // 2. Below the top of the hierarchy, which may hold processes and still hand controllers down.
  if (dir != top && geteuid() == 0 && Offered(top).count("memory")) {
    Enabled top_enabled = EnableIn(top, /*may_move_self=*/false);
    if (top_enabled.controllers.count("memory")) {
      return Use(top + "/lockstep.slice",
                 "not below the agent's own cgroup: " + own_enabled.why_not);
    }
  }
  // 3. Tracking only.
  auto setup = Use(own_root, own_enabled.why_not);
  if (!setup.ok()) return Off(setup.status().message());
  return setup;
}

Result<CgroupTree::Setup> Explicit(const std::string& root) {
  if (root.size() < 2 || root.front() != '/' || root.back() == '/') {
    return InvalidArgument("cgroup root '" + root + "' is not an absolute directory path");
  }
  const std::string parent = Parent(root);
  struct statfs fs {};
  if (statfs(parent.c_str(), &fs) != 0) {
    return FailedPrecondition("cgroup root " + root + ": cannot inspect " + parent + ": " +
                              ErrnoText(errno));
  }
  if (fs.f_type != CGROUP2_SUPER_MAGIC) {
    return FailedPrecondition("cgroup root " + root + " is not in a cgroup v2 hierarchy");
  }
  Enabled in_parent = EnableIn(parent, /*may_move_self=*/true);
  if (in_parent.controllers.count("memory") == 0) return Use(root, in_parent.why_not);
  return Use(root, in_parent.moved_to.empty() ? "" : "moved the agent into " + in_parent.moved_to);
}

}  // namespace

Result<CgroupTree::Setup> CgroupTree::Open(const std::string& root) {
  return root.empty() ? Autodetect() : Explicit(root);
}

}  // namespace lockstep::agent
