#include "cli/bcast_client.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/format/field_format.h"
#include "common/base64.h"
#include "common/utf8.h"

namespace lockstep::cli {
namespace {

class OpenFile {
 public:
  explicit OpenFile(int fd) : fd_(fd) {}
  ~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads up to `want` bytes (fewer only at the end of the file).
Result<std::string> ReadPiece(int fd, std::size_t want, const std::string& source) {
  std::string piece(want, '\0');
  std::size_t got = 0;
  while (got < want) {
    const ssize_t n = ::read(fd, piece.data() + got, want - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("Can't read `" + source + "`: " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  piece.resize(got);
  return piece;
}

// Prints each node's failure of a piece; true when every node wrote it.
bool PrintNodeFailures(const nlohmann::json& answer, const std::string& command) {
  bool all = true;
  for (const auto& n : answer.value("nodes", nlohmann::json::array())) {
    const std::string error = n.value("error", "");
    if (error.empty()) continue;
    all = false;
    std::fprintf(stderr, "%s: error: REQUEST_FILE_BCAST(%s): %s\n", command.c_str(),
                 EscapeControl(n.value("node", "")).c_str(), EscapeControl(error).c_str());
  }
  return all;
}

}  // namespace

Status SendFileToJob(client::ApiClient& api, const BroadcastFileRequest& r,
                     const std::string& command) {
  if (FirstNonUtf8Byte(r.dest))
    return InvalidArgument("the destination " + DescribeNonUtf8(r.dest) + " is not UTF-8");
  OpenFile file(::open(r.source.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) return NotFound("Can't open `" + r.source + "`: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(file.get(), &st) != 0)
    return IoError("Can't stat `" + r.source + "`: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgument("`" + r.source + "` is not a regular file");
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  if (size > kMaxBroadcastFile)
    return InvalidArgument("`" + r.source + "` is " + std::to_string(size) +
                           " bytes: lockstep copies files of at most 1 GiB (" +
                           std::to_string(kMaxBroadcastFile) + " bytes)");
  const std::size_t piece_size = std::clamp(r.piece, kMinBroadcastPiece, kMaxBroadcastPiece);
  const std::string where = "/api/v1/jobs/" + std::to_string(r.job) + "/bcast";
  std::uint64_t offset = 0;
  do {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(piece_size, size - offset));
    Result<std::string> data = ReadPiece(file.get(), want, r.source);
    if (!data.ok()) return data.status();
    if (data->size() != want)
      return FailedPrecondition("`" + r.source + "` became shorter while it was copied");
    nlohmann::json body = {{"path", r.dest},
                           {"offset", offset},
                           {"data", Base64Encode(*data)},
                           {"last", offset + want == size},
                           {"force", r.force},
                           {"mode", st.st_mode & 0777}};
    if (r.preserve) {
      body["atime"] = static_cast<std::int64_t>(st.st_atime);
      body["mtime"] = static_cast<std::int64_t>(st.st_mtime);
    }
    if (r.step >= 0) body["step_id"] = r.step;
    if (r.timeout_s > 0) body["timeout_s"] = r.timeout_s;
    Result<nlohmann::json> answer = api.Post(where, body);
    if (!answer.ok()) return answer.status();
    if (!PrintNodeFailures(*answer, command)) return FailedPrecondition(kNodesFailed);
    offset += want;
  } while (offset < size);
  return Status::Ok();
}

}  // namespace lockstep::cli
