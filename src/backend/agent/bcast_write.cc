#include "backend/agent/bcast_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

namespace lockstep::agent {
namespace {

Status Errno(int error) {
  return FailedPrecondition(std::strerror(error));
}

// The file to write the piece into. The first piece creates it (or, forced, truncates one that
// exists); later ones open what the first made. O_NONBLOCK: a FIFO at the name never blocks the
// open, and is refused below as not a regular file.
Result<int> OpenForPiece(const BroadcastPiece& piece) {
  int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  if (piece.offset == 0) flags |= O_CREAT | (piece.force ? O_TRUNC : O_EXCL);
  const int fd = ::open(piece.path.c_str(), flags, 0700);
  // ENXIO: a FIFO without a reader (or a device without its driver), refused at the open.
  if (fd < 0 && errno == ENXIO) return FailedPrecondition("Not a regular file");
  if (fd < 0) return Errno(errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return FailedPrecondition("Not a regular file");
  }
  return fd;
}

Status WriteAll(int fd, const std::string& data, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n =
        ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(errno);
    done += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

// The last piece: the source's permission bits (as slurmd's fchmod), and with -p its times.
Status Finish(int fd, const BroadcastPiece& piece) {
  if (::fchmod(fd, piece.mode & 0777) != 0) return Errno(errno);
  if (piece.mtime == 0) return Status::Ok();
  const timespec times[2] = {{static_cast<time_t>(piece.atime), 0},
                             {static_cast<time_t>(piece.mtime), 0}};
  if (::futimens(fd, times) != 0) return Errno(errno);
  return Status::Ok();
}

std::optional<std::uint64_t> ParseU64(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18)
    return std::nullopt;
  return std::stoull(s);
}

std::optional<std::int64_t> ParseI64(const std::string& s) {
  const bool negative = !s.empty() && s[0] == '-';
  std::optional<std::uint64_t> u = ParseU64(negative ? s.substr(1) : s);
  if (!u) return std::nullopt;
  const auto v = static_cast<std::int64_t>(*u);
  return negative ? -v : v;
}

}  // namespace

Status WriteBroadcastPiece(const BroadcastPiece& piece, const std::string& data) {
  if (piece.path.empty() || piece.path[0] != '/')
    return InvalidArgument("the destination must be an absolute path");
  Result<int> fd = OpenForPiece(piece);
  if (!fd.ok()) return fd.status();
  Status s = WriteAll(*fd, data, piece.offset);
  if (s.ok() && piece.last) s = Finish(*fd, piece);
  if (::close(*fd) != 0 && s.ok()) s = Errno(errno);
  return s;
}

std::vector<std::string> BroadcastPieceArgs(const BroadcastPiece& piece) {
  return {piece.path,
          std::to_string(piece.offset),
          piece.force ? "1" : "0",
          piece.last ? "1" : "0",
          std::to_string(piece.mode),
          std::to_string(piece.atime),
          std::to_string(piece.mtime)};
}

Result<BroadcastPiece> ParseBroadcastPieceArgs(const std::vector<std::string>& args) {
  if (args.size() != 7) return InvalidArgument("bcast-write needs 7 arguments");
  const std::optional<std::uint64_t> offset = ParseU64(args[1]), mode = ParseU64(args[4]);
  const std::optional<std::int64_t> atime = ParseI64(args[5]), mtime = ParseI64(args[6]);
  auto flag = [](const std::string& f) { return f == "0" || f == "1"; };
  if (!offset || !mode || *mode > 0777 || !atime || !mtime || !flag(args[2]) || !flag(args[3]))
    return InvalidArgument("bcast-write: bad arguments");
  BroadcastPiece p;
  p.path = args[0];
  p.offset = *offset;
  p.force = args[2] == "1";
  p.last = args[3] == "1";
  p.mode = static_cast<mode_t>(*mode);
  p.atime = *atime;
  p.mtime = *mtime;
  return p;
}

int BroadcastWriteMain(const std::vector<std::string>& args) {
  Result<BroadcastPiece> piece = ParseBroadcastPieceArgs(args);
  if (!piece.ok()) {
    std::fprintf(stderr,
                 "usage: lockstep-agent bcast-write PATH OFFSET FORCE LAST MODE ATIME MTIME\n");
    return 2;
  }
  std::string data;
  char buf[65536];
  while (data.size() <= kMaxBroadcastPiece) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::printf("error: cannot read the piece: %s\n", std::strerror(errno));
      return 0;
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
  }
  if (data.size() > kMaxBroadcastPiece) {
    std::printf("error: a piece larger than %zu bytes\n", kMaxBroadcastPiece);
    return 0;
  }
  Status s = WriteBroadcastPiece(*piece, data);
  if (s.ok())
    std::printf("ok\n");
  else
    std::printf("error: %s\n", s.message().c_str());
  return 0;
}

}  // namespace lockstep::agent
