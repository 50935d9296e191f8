#include "backend/agent/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lockstep::agent {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Ok when st is a regular file of uid.
Status CheckOwnRegularFile(const std::string& path, const struct stat& st, std::uint32_t uid) {
  if (!S_ISREG(st.st_mode)) {
    return PermissionDenied(path + " is " + KindOf(st.st_mode) +
                            ", not a regular file: only a job's own output file can be read");
  }
  if (st.st_uid != uid) return PermissionDenied(path + " is not a file of the job's user");
  return Status::Ok();
}

Result<std::string> ReadTail(int fd, const std::string& path, const struct stat& st) {
  const off_t from = st.st_size > kMaxOutputBytes ? st.st_size - kMaxOutputBytes : 0;
  std::string text(static_cast<std::size_t>(st.st_size - from), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), from);
  if (n < 0) return IoError(path + ": " + std::strerror(errno));
  text.resize(static_cast<std::size_t>(n));
  return text;
}

}  // namespace

Result<std::string> ReadOwnOutput(const std::string& path, std::uint32_t uid) {
  // Look before opening: a device is never opened (opening one may act, as a tape's rewinds).
  struct stat before {};
  if (::lstat(path.c_str(), &before) != 0) return NotFound(path + ": " + std::strerror(errno));
  LOCKSTEP_RETURN_IF_ERROR(CheckOwnRegularFile(path, before, uid));
  // O_NONBLOCK: if a FIFO is swapped in after the look, opening and reading it do not wait for a
  // writer; O_NOFOLLOW: nor is a symbolic link followed.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) return PermissionDenied(path + " is a symbolic link; refusing it");
    return NotFound(path + ": " + std::strerror(errno));
  }
  struct stat st {};
  Result<std::string> text = Internal("unreached");
  if (::fstat(fd, &st) != 0) {
    text = IoError(path + ": " + std::strerror(errno));
  } else if (Status own = CheckOwnRegularFile(path, st, uid); !own.ok()) {
    text = own;
  } else if (st.st_dev != before.st_dev || st.st_ino != before.st_ino) {
    text = PermissionDenied(path + " changed while it was opened; try again");
  } else {
    text = ReadTail(fd, path, st);
  }
  ::close(fd);
  return text;
}

}  // namespace lockstep::agent
