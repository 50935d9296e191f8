// sbcast and srun --bcast (docs/api.md, "Broadcast"): one piece of a file for every node of a
// running job, or of one of its steps, written there as the job's user by the backend. Only the
// job's owner (or an operator) may, and only while it runs. lockstepd holds one piece at a time
// per request and never the file: sbcast sends the pieces in order, each once every node took
// the one before.
#include <algorithm>
#include <cstdint>
#include <iterator>

#include "common/base64.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"

namespace lockstep::controller {
namespace {

// What one request may carry, and the largest file: docs/api.md and docs/commands.md say so.
constexpr std::size_t kMaxPieceBytes = 2u << 20;
constexpr std::uint64_t kMaxFileBytes = 1ull << 30;
constexpr std::int64_t kMaxTimeoutSeconds = 600;
constexpr std::size_t kMaxPathBytes = 4096;

Status Bad(const std::string& what) {
  return InvalidArgument("bcast: " + what);
}

Result<std::int64_t> IntOf(const nlohmann::json& body, const char* key, std::int64_t absent,
                           std::int64_t lo, std::int64_t hi) {
  if (!body.contains(key)) return absent;
  const nlohmann::json& v = body[key];
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) ||
      v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
    return Bad(std::string("'") + key + "' must be an integer from " + std::to_string(lo) + " to " +
               std::to_string(hi));
  return v.get<std::int64_t>();
}

Result<bool> BoolOf(const nlohmann::json& body, const char* key) {
  if (!body.contains(key)) return false;
  if (!body[key].is_boolean()) return Bad(std::string("'") + key + "' must be true or false");
  return body[key].get<bool>();
}

// The request decoded and checked whole, before anything is sent.
struct BroadcastRequest {
  backend::BroadcastOrder order;  // without the job's run, nodes and user
  std::int64_t step = -1;         // -1: every node of the job
};

Result<BroadcastRequest> DecodeBroadcast(const nlohmann::json& body) {
  static const char* const kKnown[] = {"path", "offset", "data",  "last",    "force",
                                       "mode", "atime",  "mtime", "step_id", "timeout_s"};
  if (!body.is_object()) return Bad("the body must be an object");
  for (const auto& [key, value] : body.items())
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown))
      return Bad("unknown field '" + key + "'");
  BroadcastRequest r;
  backend::BroadcastOrder& o = r.order;
  if (!body.contains("path") || !body["path"].is_string()) return Bad("'path' must be a string");
  o.path = body["path"].get<std::string>();
  if (o.path.empty() || o.path.front() != '/') return Bad("'path' must be absolute");
  if (o.path.back() == '/') return Bad("Target filename cannot be a directory.");
  if (o.path.size() > kMaxPathBytes || o.path.find('\0') != std::string::npos)
    return Bad("'path' must be at most 4096 bytes, without NUL");
  if (!body.contains("data") || !body["data"].is_string()) return Bad("'data' must be a string");
  Result<std::string> data = Base64Decode(body["data"].get_ref<const std::string&>());
  if (!data.ok()) return Bad("'data': " + data.status().message());
  if (data->size() > kMaxPieceBytes)
    return Bad("a piece holds at most " + std::to_string(kMaxPieceBytes) + " bytes");
  o.data = std::move(*data);
  Result<std::int64_t> offset = IntOf(body, "offset", 0, 0, kMaxFileBytes);
  Result<std::int64_t> mode = IntOf(body, "mode", 0700, 0, 0777);
  Result<std::int64_t> atime = IntOf(body, "atime", 0, 0, INT64_MAX);
  Result<std::int64_t> mtime = IntOf(body, "mtime", 0, 0, INT64_MAX);
  Result<std::int64_t> step = IntOf(body, "step_id", -1, 0, INT32_MAX);
  Result<std::int64_t> timeout = IntOf(body, "timeout_s", 10, 1, kMaxTimeoutSeconds);
  for (const Result<std::int64_t>* f : {&offset, &mode, &atime, &mtime, &step, &timeout})
    if (!f->ok()) return f->status();
  if (static_cast<std::uint64_t>(*offset) + o.data.size() > kMaxFileBytes)
    return Bad("a file of more than " + std::to_string(kMaxFileBytes) + " bytes (1 GiB)");
  Result<bool> last = BoolOf(body, "last");
  Result<bool> force = BoolOf(body, "force");
  if (!last.ok()) return last.status();
  if (!force.ok()) return force.status();
  o.offset = static_cast<std::uint64_t>(*offset);
  o.mode = static_cast<std::uint32_t>(*mode);
  o.atime = *atime, o.mtime = *mtime;
  o.last = *last, o.force = *force;
  o.timeout = std::chrono::seconds(*timeout);
  r.step = *step;
  return r;
}

}  // namespace

Result<nlohmann::json> Controller::Broadcast(const Caller& caller, JobId id,
                                             const nlohmann::json& body) {
  Result<BroadcastRequest> req = DecodeBroadcast(body);
  if (!req.ok()) return req.status();
  backend::BroadcastOrder& order = req->order;
  {
    HeldLock lock(*this);
    Result<JobEntry*> found = FindLocked(id);
    if (!found.ok()) return found.status();
    const JobEntry& job = **found;
    LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, job));
    if (job.state != JobState::kRunning)
      return FailedPrecondition("sbcast: job " + job.DisplayId() + " is not running");
    order.run = {job.id, job.restart_count};
    order.uid = job.uid, order.gid = job.gid;
    order.user = job.user;
    if (req->step < 0) {
      for (const PlacedNode& n : job.placement) order.nodes.push_back(n.node);
    } else {
      auto step = steps_.find({id, static_cast<std::int32_t>(req->step)});
      if (step == steps_.end() || step->second->state != "RUNNING")
        return NotFound("sbcast: no running step " + job.DisplayId() + "." +
                        std::to_string(req->step));
      order.nodes = step->second->nodes;
    }
  }
  // Without the lock: the backend waits for its nodes.
  Result<std::vector<backend::BroadcastResult>> results = BackendBroadcast(order);
  if (!results.ok()) return results.status();
  nlohmann::json nodes = nlohmann::json::array();
  for (const backend::BroadcastResult& r : *results)
    nodes.push_back({{"node", r.node}, {"error", r.error}});
  return nlohmann::json{{"job_id", id}, {"nodes", std::move(nodes)}};
}

}  // namespace lockstep::controller
