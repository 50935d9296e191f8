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
#include <thread>

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
  const auto deadline = Clock::now() + timeout;
  int status = 0;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return Look::kError;
    if (Clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      std::lock_guard<std::mutex> lock(abandoned_mu);
      abandoned.push_back(pid);
      return Look::kNoAnswer;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!WIFEXITED(status)) return Look::kError;
  switch (WEXITSTATUS(status)) {
    case 0: return Look::kDirectory;
    case 1: return Look::kMissing;
    case 2: return Look::kNotDirectory;
    default: return Look::kError;
  }
}

// The kernel's escapes in mountinfo: space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const std::string_view oct = s.substr(i + 1, 3);
      if (oct.size() == 3 && oct.find_first_not_of("01234567") == std::string_view::npos) {
        out += static_cast<char>(std::stoi(std::string(oct), nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string ReadMountinfo() {
  std::ifstream in("/proc/self/mountinfo");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

bool IsMountPoint(std::string_view mountinfo, const std::string& path) {
  while (!mountinfo.empty()) {
    const std::size_t eol = mountinfo.find('\n');
    std::string_view line = mountinfo.substr(0, eol);
    mountinfo.remove_prefix(eol == std::string_view::npos ? mountinfo.size() : eol + 1);
    // "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw": field 5.
    std::size_t at = 0;
    for (int field = 0; field < 4 && at != std::string_view::npos; ++field) {
      at = line.find(' ', at);
      if (at != std::string_view::npos) ++at;
    }
    if (at == std::string_view::npos) continue;
    const std::size_t end = line.find(' ', at);
    if (Unescape(line.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at)) == path)
      return true;
  }
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
