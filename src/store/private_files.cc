#include "store/private_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace lockstep::store {
namespace {

Status ModeError(const std::string& path, std::string_view what) {
  const int err = errno;
  std::string message = fmt::format("store: cannot {} '{}': {}", what, path, std::strerror(err));
  if (err == EPERM || err == EACCES) return PermissionDenied(std::move(message));
  return IoError(std::move(message));
}

// Opens path without following a link; with `create`, makes it 0600 when missing. -1 with errno
// ENOENT when it is missing and not to be created.
int OpenNoFollow(const std::string& path, bool create) {
  const int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (create ? O_CREAT : 0);
  return ::open(path.c_str(), flags, kFileMode);
}

// Sets a regular file to 0600; a missing file is fine unless `create`.
Status MakeFilePrivate(const std::string& path, bool create) {
  const int fd = OpenNoFollow(path, create);
  if (fd < 0) {
    if (errno == ENOENT && !create) return Status::Ok();
    if (errno == ELOOP) {
      return PermissionDenied(fmt::format("store: '{}' is a symbolic link; refusing it", path));
    }
    return ModeError(path, "open");
  }
  struct stat st {};
  Status status = Status::Ok();
  if (::fstat(fd, &st) != 0) {
    status = ModeError(path, "stat");
  } else if (!S_ISREG(st.st_mode)) {
    status = PermissionDenied(fmt::format("store: '{}' is not a regular file", path));
  } else if ((st.st_mode & 07777) != kFileMode && ::fchmod(fd, kFileMode) != 0) {
    status = ModeError(path, "make private (chmod 0600)");
  }
  ::close(fd);
  return status;
}

Status MakeDirectoryPrivate(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return ModeError(dir, "stat");
  if (!S_ISDIR(st.st_mode)) {
    return PermissionDenied(fmt::format("store: '{}' is not a directory", dir));
  }
  const mode_t mode = st.st_mode & 07777;
  if ((mode & kDirectoryDenyBits) == 0) return Status::Ok();
  if (::chmod(dir.c_str(), mode & ~kDirectoryDenyBits) != 0) {
    return ModeError(dir, "make private (chmod go-rw)");
  }
  return Status::Ok();
}

}  // namespace

Status MakeStoreFilesPrivate(const std::string& db_path) {
  std::filesystem::path dir = std::filesystem::path(db_path).parent_path();
  LOCKSTEP_RETURN_IF_ERROR(MakeDirectoryPrivate(dir.empty() ? "." : dir.string()));
  LOCKSTEP_RETURN_IF_ERROR(MakeFilePrivate(db_path, /*create=*/true));
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    LOCKSTEP_RETURN_IF_ERROR(MakeFilePrivate(db_path + suffix, /*create=*/false));
  }
  return Status::Ok();
}

}  // namespace lockstep::store
