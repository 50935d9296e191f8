#include "backend/agent/storage_mounts.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

enum class Look { kDirectory, kMissing, kNotDirectory, kError, kNoAnswer };

// stat(2) of `path` in a child process, so that a mount that never answers holds the child
// only. The child closes every descriptor first: one stuck there must not hold another's pipe.
Look StatInChild(const std::string& path, std::chrono::seconds timeout) {
  ReapAbandoned();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close_range(3, ~0U, 0);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) ::_exit(errno == ENOENT || errno == ENOTDIR ? 1 : 3);
    ::_exit(S_ISDIR(st.st_mode) ? 0 : 2);
  }
  if (pid < 0) return Look::kError;
  int status = 0;
  const ChildWait waited = WaitChildUntil(pid, Clock::now() + timeout, status);
  if (waited == ChildWait::kTimedOut) {
    ::kill(pid, SIGKILL);
    std::lock_guard<std::mutex> lock(abandoned_mu);
    abandoned.push_back(pid);
    return Look::kNoAnswer;
  }
  if (waited == ChildWait::kLost || !WIFEXITED(status)) return Look::kError;
  switch (WEXITSTATUS(status)) {
    case 0: return Look::kDirectory;
    case 1: return Look::kMissing;
    case 2: return Look::kNotDirectory;
    default: return Look::kError;
  }
}

std::string ReadMountinfo() {
  std::ifstream in("/proc/self/mountinfo");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

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
  UserCommand mount;
  mount.uid = 0;
  mount.gid = 0;
  mount.timeout = m.timeout;
  std::string options = m.kind == "bind" ? "bind" : m.options;
  if (m.read_only) options += options.empty() ? "ro" : ",ro";
  mount.argv = {"/usr/bin/mount"};
  if (m.kind == "nfs") mount.argv.insert(mount.argv.end(), {"-t", "nfs"});
  if (!options.empty()) mount.argv.insert(mount.argv.end(), {"-o", options});
  mount.argv.insert(mount.argv.end(), {"--", m.source, m.path});
  Result<std::string> out = RunAsUser(mount);
  if (!out.ok()) return Status(out.status().code(), "mount " + m.source + ": " + out.status().message());
  return Status::Ok();
}

Status UnmountStorage(const std::string& path, std::chrono::seconds timeout) {
  if (::geteuid() != 0) return PermissionDenied("only a root agent unmounts file systems");
  UserCommand umount;
  umount.argv = {"/usr/bin/umount", "--lazy", "--", path};
  umount.timeout = timeout;
  Result<std::string> out = RunAsUser(umount);
  return out.ok() ? Status::Ok() : out.status();
}

}  // namespace lockstep::agent
