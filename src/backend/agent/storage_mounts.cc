#include "backend/agent/storage_mounts.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "backend/agent/cgroup.h"
#include "backend/agent/child_output.h"
#include "backend/agent/run_as_user.h"

namespace lockstep::agent {
namespace {

using Clock = std::chrono::steady_clock;

// Children that overstayed their deadline (a stat stuck on a dead server): killed, and reaped
// by a later call once the kernel lets them go, never waited for.
std::mutex abandoned_mu;
std::vector<pid_t> abandoned;

void ReapAbandoned() {
  std::lock_guard<std::mutex> lock(abandoned_mu);
  std::erase_if(abandoned, [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) != 0; });
}

// How a look in a child process ended: its exit code, or no answer in time.
struct ChildEnd {
  bool answered = false;
  int code = -1;  // -1: killed by a signal, or lost
};

// Runs `body` in a child process (its exit code: what `body` returns) and waits up to `timeout`,
// so that a mount that never answers holds the child only: then it is killed and left to the
// kernel, reaped by a later call. The child closes every descriptor first: one stuck there must
// not hold another's pipe.
ChildEnd RunInChild(const std::function<int()>& body, std::chrono::seconds timeout) {
  ReapAbandoned();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close_range(3, ~0U, 0);
    ::_exit(body());
  }
  if (pid < 0) return {true, -1};
  int status = 0;
  const ChildWait waited = WaitChildUntil(pid, Clock::now() + timeout, status);
  if (waited == ChildWait::kTimedOut) {
    ::kill(pid, SIGKILL);
    std::lock_guard<std::mutex> lock(abandoned_mu);
    abandoned.push_back(pid);
    return {false, -1};
  }
  if (waited == ChildWait::kLost || !WIFEXITED(status)) return {true, -1};
  return {true, WEXITSTATUS(status)};
}

enum class Look { kDirectory, kMissing, kNotDirectory, kError, kNoAnswer };

// stat(2) of `path` in a child process.
Look StatInChild(const std::string& path, std::chrono::seconds timeout) {
  const char* p = path.c_str();
  const ChildEnd end = RunInChild(
      [p] {
        struct stat st {};
        if (::stat(p, &st) != 0) return errno == ENOENT || errno == ENOTDIR ? 1 : 3;
        return S_ISDIR(st.st_mode) ? 0 : 2;
      },
      timeout);
  if (!end.answered) return Look::kNoAnswer;
  switch (end.code) {
    case 0: return Look::kDirectory;
    case 1: return Look::kMissing;
    case 2: return Look::kNotDirectory;
    default: return Look::kError;
  }
}

// Binds `source` at `target` in a child process (the source may sit on a mount that never
// answers). A read-only bind is made read-only before it is attached (open_tree, mount_setattr,
// move_mount): the copies that mount propagation makes of it (on the host, in job pods) are
// read-only too, where a remount after the bind would change this namespace's copy only.
Status BindInChild(const std::string& source, const std::string& target, bool read_only,
                   std::chrono::seconds timeout) {
  const char* from = source.c_str();
  const char* to = target.c_str();
  const ChildEnd end = RunInChild(
      [from, to, read_only] {
        const int tree = ::open_tree(AT_FDCWD, from, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (tree < 0) return errno;
        struct mount_attr attr {};
        attr.attr_set = MOUNT_ATTR_RDONLY;
        if (read_only && ::mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
          return errno;
        if (::move_mount(tree, "", AT_FDCWD, to, MOVE_MOUNT_F_EMPTY_PATH) != 0) return errno;
        return 0;
      },
      timeout);
  const std::string what = "bind " + source + " at " + target;
  if (!end.answered)
    return Status(StatusCode::kUnavailable,
                  what + ": did not answer within " + std::to_string(timeout.count()) + " s");
  if (end.code < 0) return IoError(what + ": the child process was lost");
  if (end.code != 0) return IoError(what + ": " + std::strerror(end.code));
  return Status::Ok();
}

// mount(8) and umount(8): util-linux's on a host, busybox's in scripts/image.sh's image (/bin).
std::string MountProgram(const char* name) {
  for (const std::string dir : {"/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"})
    if (::access((dir + name).c_str(), X_OK) == 0) return dir + name;
  return std::string("/usr/bin/") + name;  // its failure names it
}

// Runs `argv` as root with the file system's timeout; the error names what ran.
Status RunMountCommand(std::vector<std::string> argv, std::chrono::seconds timeout,
                       const std::string& what) {
  UserCommand c;
  c.uid = 0;
  c.gid = 0;
  c.timeout = timeout;
  c.argv = std::move(argv);
  Result<std::string> out = RunAsUser(c);
  if (!out.ok()) return Status(out.status().code(), what + ": " + out.status().message());
  return Status::Ok();
}

std::string ReadMountinfo() {
  std::ifstream in("/proc/self/mountinfo");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

StorageMount UnderHostRoot(StorageMount m, const std::string& root) {
  if (root.empty() || root == "/") return m;
  std::string base = root;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  m.path = base + m.path;
  if (m.kind == "bind") m.source = base + m.source;
  return m;
}

bool IsMountPoint(std::string_view mountinfo, const std::string& path) {
  for (const MountInfoEntry& m : ParseMountInfo(mountinfo))
    if (m.mount_point == path) return true;
  return false;
}

std::string CheckStorage(const StorageMount& m) {
  switch (StatInChild(m.path, m.timeout)) {
    case Look::kNoAnswer:
      return "did not answer within " + std::to_string(m.timeout.count()) + " s";
    case Look::kMissing: return m.kind == "host_path" ? "missing" : "not mounted";
    case Look::kNotDirectory: return "not a directory";
    case Look::kError: return "cannot be read";
    case Look::kDirectory: break;
  }
  if (m.kind != "host_path" && !IsMountPoint(ReadMountinfo(), m.path)) return "not mounted";
  return "";
}

Status MountStorage(const StorageMount& m) {
  if (m.kind == "host_path") return Status::Ok();
  if (::geteuid() != 0) return PermissionDenied("only a root agent mounts file systems");
  std::error_code ec;
  std::filesystem::create_directories(m.path, ec);
  if (ec) return IoError("cannot create " + m.path + ": " + ec.message());
  if (m.kind == "bind") return BindInChild(m.source, m.path, m.read_only, m.timeout);
  // NFS through mount(8) and its helper mount.nfs; `ro` here is the file system's own, which
  // every propagated copy shares.
  std::string options = m.options;
  if (m.read_only) options += options.empty() ? "ro" : ",ro";
  std::vector<std::string> argv = {MountProgram("mount"), "-t", "nfs"};
  if (!options.empty()) argv.insert(argv.end(), {"-o", options});
  argv.insert(argv.end(), {"--", m.source, m.path});
  return RunMountCommand(argv, m.timeout, "mount " + m.source);
}

Status UnmountStorage(const std::string& path, std::chrono::seconds timeout) {
  if (::geteuid() != 0) return PermissionDenied("only a root agent unmounts file systems");
  return RunMountCommand({MountProgram("umount"), "-l", "--", path}, timeout, "umount " + path);
}

}  // namespace lockstep::agent
