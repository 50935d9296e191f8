#include "lockstepd/state_dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace lockstep::lockstepd {

namespace {

// The pid the holder wrote ("" when unreadable).
std::string HolderPid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

}  // namespace

Result<int> LockStateDir(const std::string& state_dir) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  if (ec) return IoError("state directory " + state_dir + ": " + ec.message());
  const std::string path = state_dir + "/lockstepd.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return IoError(path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string pid = HolderPid(fd);
    ::close(fd);
    if (err != EWOULDBLOCK) return IoError(path + ": flock: " + std::strerror(err));
    return FailedPrecondition(
        "another lockstepd" + (pid.empty() ? std::string() : " (pid " + pid + ")") +
        " serves the state directory " + state_dir +
        ": stop it first (lockstep down), or give this one another --state-dir");
  }
  const std::string mine = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, mine.data(), mine.size(), 0) < 0) {
    const int err = errno;
    ::close(fd);
    return IoError(path + ": " + std::strerror(err));
  }
  return fd;
}

}  // namespace lockstep::lockstepd
