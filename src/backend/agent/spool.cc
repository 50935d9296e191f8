#include "backend/agent/spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

namespace lockstep::agent {
namespace {

// Node names come from the cluster's configuration; anything but [A-Za-z0-9._-] becomes '_' so
// that a name can never leave the spool.
std::string SafeName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out.empty() ? "_" : out;
}

Status Errno(const std::string& what, const std::string& path) {
  return IoError("spool: cannot " + what + " " + path + ": " + std::strerror(errno));
}

Status WriteAll(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("write", path);
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::Ok();
}

// Creates `path` 0700 with `text`, owned by uid:gid when the agent is root.
Status CreateScript(const std::string& path, std::string_view text, uid_t uid, gid_t gid) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
  if (fd < 0) return Errno("create", path);
  Status st = WriteAll(fd, text, path);
  if (st.ok() && ::fchmod(fd, 0700) != 0) st = Errno("chmod", path);
  if (st.ok() && ::geteuid() == 0 && ::fchown(fd, uid, gid) != 0) st = Errno("chown", path);
  if (::close(fd) != 0 && st.ok()) st = Errno("close", path);
  return st;
}

}  // namespace

Result<Spool> Spool::Open(std::string dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("spool: cannot create " + dir + ": " + ec.message());
  if (::chmod(dir.c_str(), 0711) != 0) return Errno("chmod", dir);
  return Spool(std::move(dir));
}

std::string Spool::RunDir(const SpoolRun& run) const {
  return dir_ + "/job" + std::to_string(run.job) + ".run" + std::to_string(run.run) + "." +
         SafeName(run.node);
}

Result<std::string> Spool::WriteScript(const SpoolRun& run, std::string_view text, uid_t uid,
                                       gid_t gid) const {
  const std::string dir = RunDir(run);
  RemoveRun(run);  // left by an agent that died while this very run was launching
  // The agent's own directory (0711: the user reaches the script by name but can put nothing
  // beside it), so removing it later never meets a link or a directory the user planted.
  if (::mkdir(dir.c_str(), 0711) != 0) return Errno("create", dir);
  if (::chmod(dir.c_str(), 0711) != 0) return Errno("chmod", dir);
  const std::string path = dir + "/script";
  Status st = CreateScript(path, text, uid, gid);
  if (!st.ok()) {
    RemoveRun(run);
    return st;
  }
  return path;
}

void Spool::RemoveRun(const SpoolRun& run) const {
  // Through a descriptor of the run's directory, never following a link, and not recursively:
  // the directory holds only files the agent made.
  const std::string dir = RunDir(run);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    ::unlink(dir.c_str());  // a file or link in its place (never followed); else nothing there
    return;
  }
  if (DIR* d = ::fdopendir(fd)) {
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    for (const std::string& name : names) ::unlinkat(::dirfd(d), name.c_str(), 0);
    ::closedir(d);  // closes fd
  } else {
    ::close(fd);
  }
  ::rmdir(dir.c_str());
}

}  // namespace lockstep::agent
