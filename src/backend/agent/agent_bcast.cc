// sbcast on the agent (docs/api.md, "Broadcast"): a "bcast" command carries one piece of a file
// for this agent's nodes of a job. The piece is written once (the nodes share this host's file
// system) by `lockstep-agent bcast-write` run as the job's user, its bytes on a memfd as its
// stdin; each node's outcome goes back as a "bcast_done" event. It runs in a thread of its own,
// so a hung file system holds only this piece, up to the command's timeout.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "backend/agent/agent.h"
#include "backend/agent/bcast_write.h"
#include "backend/agent/run_as_user.h"
#include "common/base64.h"
#include "common/log.h"

namespace lockstep::agent {
namespace {

// The piece's bytes as a file the writer reads from its start.
Result<UniqueFd> PieceFile(const std::string& data) {
  UniqueFd fd(::memfd_create("lockstep-sbcast", MFD_CLOEXEC));
  if (fd.get() < 0) return IoError(std::string("memfd_create: ") + std::strerror(errno));
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(std::string("cannot hold the piece: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0)
    return IoError(std::string("lseek: ") + std::strerror(errno));
  return std::move(fd);
}

// Runs the writer as the command's user: "" when it wrote the piece, else why not.
std::string WritePieceAsUser(const nlohmann::json& c, const std::string& writer) {
  BroadcastPiece piece;
  piece.path = c.value("path", "");
  piece.offset = c.value("offset", std::uint64_t{0});
  piece.force = c.value("force", false);
  piece.last = c.value("last", false);
  piece.mode = static_cast<mode_t>(c.value("mode", 0700u) & 0777u);
  piece.atime = c.value("atime", std::int64_t{0});
  piece.mtime = c.value("mtime", std::int64_t{0});
  if (piece.path.empty() || piece.path[0] != '/') return "the destination must be an absolute path";
  Result<std::string> data = Base64Decode(c.value("data", ""));
  if (!data.ok()) return "the piece's data is not base64";
  if (data->size() > kMaxBroadcastPiece) return "the piece is too large";
  Result<UniqueFd> file = PieceFile(*data);
  if (!file.ok()) return file.status().message();
  UserCommand command;
  command.argv = {writer, "bcast-write"};
  for (std::string& a : BroadcastPieceArgs(piece)) command.argv.push_back(std::move(a));
  command.uid = c.value("uid", 0u);
  command.gid = c.value("gid", 0u);
  command.timeout = std::chrono::milliseconds(c.value("timeout_ms", 10000));
  command.stdin_fd = file->get();
  Result<std::string> out = RunAsUser(command);
  if (!out.ok()) return out.status().message();
  std::string said = *out;
  while (!said.empty() && said.back() == '\n') said.pop_back();
  if (said == "ok") return "";
  if (said.rfind("error: ", 0) == 0) return said.substr(7);
  return "the writer said: " + said.substr(0, 200);
}

}  // namespace

void Agent::Broadcast(const nlohmann::json& c) {
  // The agent's own program (options_.core_keeper: this executable unless a test set another)
  // has the writer's mode.
  const std::string error = WritePieceAsUser(c, options_.core_keeper);
  const std::uint64_t id = c.value("bcast_id", std::uint64_t{0});
  if (!error.empty())
    log::Warning("job {}: sbcast to {}: {}", c.value("job_id", std::uint64_t{0}),
                 c.value("path", ""), error);
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& node : c.value("nodes", nlohmann::json::array()))
    if (node.is_string())
      Report({{"type", "bcast_done"}, {"bcast_id", id}, {"node", node}, {"error", error}});
}

}  // namespace lockstep::agent
