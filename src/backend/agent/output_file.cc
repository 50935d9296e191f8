#include "backend/agent/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lockstep::agent {

Result<std::string> ReadOwnOutput(const std::string& path, std::uint32_t uid,
                                  std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ELOOP) return PermissionDenied(path + " is a symbolic link; not read");
    return NotFound(path + ": " + std::strerror(errno));
  }
  struct stat st {};
  std::string text;
  Status status;
  if (::fstat(fd, &st) != 0) {
    status = IoError(path + ": " + std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    status = PermissionDenied(path + " is not a regular file; not read");
  } else if (st.st_uid != uid) {
    status = PermissionDenied(path + " is not a file of the job's user");
  } else {
    const off_t max = static_cast<off_t>(max_bytes);
    const off_t from = st.st_size > max ? st.st_size - max : 0;
    text.resize(static_cast<std::size_t>(st.st_size - from));
    ssize_t n = ::pread(fd, text.data(), text.size(), from);
    if (n < 0) status = IoError(path + ": " + std::strerror(errno));
    text.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (!status.ok()) return status;
  return text;
}

}  // namespace lockstep::agent
