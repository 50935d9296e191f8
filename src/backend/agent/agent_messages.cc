#include "backend/agent/agent_messages.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "common/base64.h"

namespace lockstep::agent {
namespace {

using Json = nlohmann::json;

// Each getter: the field of `obj` as the type wanted, or an error naming `where`.`key`.
Result<std::string> GetString(const Json& obj, const char* key, const std::string& where,
                              std::optional<std::string> absent = std::nullopt) {
  if (!obj.contains(key)) {
    if (absent) return *absent;
    return InvalidArgument(where + ": '" + key + "' is missing");
  }
  if (!obj[key].is_string()) return InvalidArgument(where + ": '" + key + "' must be a string");
  return obj[key].get<std::string>();
}

Result<std::int64_t> GetInt(const Json& obj, const char* key, const std::string& where,
                            std::int64_t lo, std::int64_t hi, std::optional<std::int64_t> absent) {
  if (!obj.contains(key)) {
    if (absent) return *absent;
    return InvalidArgument(where + ": '" + key + "' is missing");
  }
  const Json& v = obj[key];
  if (!v.is_number_integer()) return InvalidArgument(where + ": '" + key + "' must be an integer");
  const bool too_big =
      v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi);
  const std::int64_t x = too_big ? hi : v.get<std::int64_t>();
  if (too_big || x < lo || x > hi)
    return InvalidArgument(where + ": '" + key + "' must be from " + std::to_string(lo) + " to " +
                           std::to_string(hi));
  return x;
}

constexpr std::int64_t kMaxJob = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kMaxBroadcastId = std::numeric_limits<std::int64_t>::max();


Result<backend::RunId> GetRun(const Json& obj, const std::string& where) {
  LOCKSTEP_ASSIGN_OR_RETURN(job, GetInt(obj, "job_id", where, 1, kMaxJob, std::nullopt));
  LOCKSTEP_ASSIGN_OR_RETURN(run, GetInt(obj, "run", where, 0, kMaxInt, 0));
  return backend::RunId{static_cast<JobId>(job), static_cast<std::int32_t>(run)};
}

}  // namespace

namespace {

constexpr std::size_t kMaxHealthReports = 1000;
constexpr std::size_t kMaxFindings = 256;
constexpr std::size_t kMaxHealthText = 256;

Result<backend::HealthFinding> DecodeFinding(const Json& f, const std::string& where) {
  if (!f.is_object()) return InvalidArgument(where + " must be an object");
  backend::HealthFinding out;
  LOCKSTEP_ASSIGN_OR_RETURN(check, GetString(f, "check", where));
  if (!backend::IsHealthCheck(check))
    return InvalidArgument(where + ": unknown check '" + check + "'");
  out.check = std::move(check);
  LOCKSTEP_ASSIGN_OR_RETURN(gpu, GetInt(f, "gpu", where, -1, 63, -1));
  out.gpu = static_cast<std::int32_t>(gpu);
  LOCKSTEP_ASSIGN_OR_RETURN(value, GetInt(f, "value", where, 0, kMaxJob, 0));
  out.value = value;
  LOCKSTEP_ASSIGN_OR_RETURN(detail, GetString(f, "detail", where, ""));
  if (detail.size() > kMaxHealthText) detail.resize(kMaxHealthText);
  out.detail = std::move(detail);
  return out;
}

Result<backend::NodeHealthReport> DecodeHealthReport(const Json& r, const std::string& where) {
  if (!r.is_object()) return InvalidArgument(where + " must be an object");
  backend::NodeHealthReport out;
  LOCKSTEP_ASSIGN_OR_RETURN(node, GetString(r, "node", where));
  out.node = std::move(node);
  if (r.contains("full_round")) {
    if (!r["full_round"].is_boolean())
      return InvalidArgument(where + ": 'full_round' must be a boolean");
    out.full_round = r["full_round"].get<bool>();
  }
  const Json checks = r.value("checks", Json::array());
  if (!checks.is_array() || checks.size() > std::size(backend::kHealthChecks))
    return InvalidArgument(where + ": 'checks' must be an array of check names");
  for (const Json& c : checks) {
    if (!c.is_string() || !backend::IsHealthCheck(c.get<std::string>()))
      return InvalidArgument(where + ": 'checks' has " + c.dump() + ", which is not a check");
    out.checks.push_back(c.get<std::string>());
  }
  const Json gpus = r.value("gpus", Json::array());
  const Json findings = r.value("findings", Json::array());
  if (!gpus.is_array() || gpus.size() > 64)
    return InvalidArgument(where + ": 'gpus' must be an array of at most 64");
  if (!findings.is_array() || findings.size() > kMaxFindings)
    return InvalidArgument(where + ": 'findings' must be an array of at most " +
                           std::to_string(kMaxFindings));
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string w = where + ".gpus[" + std::to_string(i) + "]";
    if (!gpus[i].is_object()) return InvalidArgument(w + " must be an object");
    LOCKSTEP_ASSIGN_OR_RETURN(index, GetInt(gpus[i], "index", w, 0, 63, std::nullopt));
    LOCKSTEP_ASSIGN_OR_RETURN(uuid, GetString(gpus[i], "uuid", w, ""));
    LOCKSTEP_ASSIGN_OR_RETURN(serial, GetString(gpus[i], "serial", w, ""));
    if (uuid.size() > kMaxHealthText || serial.size() > kMaxHealthText)
      return InvalidArgument(w + ": uuid and serial are at most 256 bytes");
    out.gpus.push_back({static_cast<std::int32_t>(index), std::move(uuid), std::move(serial)});
  }
  for (std::size_t i = 0; i < findings.size(); ++i) {
    LOCKSTEP_ASSIGN_OR_RETURN(
        f, DecodeFinding(findings[i], where + ".findings[" + std::to_string(i) + "]"));
    out.findings.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Result<HealthReports> DecodeHealth(const Json& body) {
  if (!body.is_object()) return InvalidArgument("health: the body must be an object");
  HealthReports out;
  LOCKSTEP_ASSIGN_OR_RETURN(agent, GetString(body, "agent", "health"));
  out.agent = std::move(agent);
  if (!body.contains("reports") || !body["reports"].is_array() ||
      body["reports"].size() > kMaxHealthReports)
    return InvalidArgument("health: 'reports' must be an array of at most " +
                           std::to_string(kMaxHealthReports));
  for (std::size_t i = 0; i < body["reports"].size(); ++i) {
    LOCKSTEP_ASSIGN_OR_RETURN(
        r, DecodeHealthReport(body["reports"][i], "health: reports[" + std::to_string(i) + "]"));
    out.reports.push_back(std::move(r));
  }
  return out;
}

namespace {

// A node's "gpus" in a registration: those with a UUID are NVML's (virtual GPUs have none).
Result<std::vector<backend::GpuSeen>> DecodeGpusSeen(const Json& gpus, const std::string& where) {
  std::vector<backend::GpuSeen> out;
  if (!gpus.is_array() || gpus.size() > 64)
    return InvalidArgument(where + ": 'gpus' must be an array of at most 64");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string w = where + ".gpus[" + std::to_string(i) + "]";
    if (!gpus[i].is_object()) return InvalidArgument(w + " must be an object");
    LOCKSTEP_ASSIGN_OR_RETURN(index, GetInt(gpus[i], "index", w, 0, 63, std::nullopt));
    LOCKSTEP_ASSIGN_OR_RETURN(uuid, GetString(gpus[i], "uuid", w, ""));
    backend::GpuSeen g{static_cast<std::int32_t>(index), std::move(uuid), {}};
    const Json mig = gpus[i].value("mig", Json::array());
    if (!mig.is_array() || mig.size() > 64)
      return InvalidArgument(w + ": 'mig' must be an array of at most 64");
    for (std::size_t k = 0; k < mig.size(); ++k) {
      const std::string wm = w + ".mig[" + std::to_string(k) + "]";
      if (!mig[k].is_object()) return InvalidArgument(wm + " must be an object");
      LOCKSTEP_ASSIGN_OR_RETURN(mig_uuid, GetString(mig[k], "uuid", wm));
      LOCKSTEP_ASSIGN_OR_RETURN(profile, GetString(mig[k], "profile", wm));
      if (mig_uuid.size() > kMaxHealthText || profile.size() > kMaxHealthText)
        return InvalidArgument(wm + ": uuid and profile are at most 256 bytes");
      g.mig.push_back({std::move(mig_uuid), std::move(profile)});
    }
    if (g.uuid.size() > kMaxHealthText) return InvalidArgument(w + ": uuid is at most 256 bytes");
    if (!g.uuid.empty()) out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

Result<Registration> DecodeRegistration(const Json& body) {
  if (!body.is_object()) return InvalidArgument("register: the body must be an object");
  Registration r;
  LOCKSTEP_ASSIGN_OR_RETURN(agent, GetString(body, "agent", "register"));
  if (agent.empty()) return InvalidArgument("register: 'agent' must not be empty");
  r.agent = std::move(agent);
  LOCKSTEP_ASSIGN_OR_RETURN(address, GetString(body, "address", "register", "127.0.0.1"));
  r.address = std::move(address);
  if (!body.contains("nodes") || !body["nodes"].is_array() || body["nodes"].empty())
    return InvalidArgument("register: 'nodes' must be a non-empty array");
  for (std::size_t i = 0; i < body["nodes"].size(); ++i) {
    const Json& n = body["nodes"][i];
    const std::string where = "register: nodes[" + std::to_string(i) + "]";
    if (!n.is_object()) return InvalidArgument(where + " must be an object");
    LOCKSTEP_ASSIGN_OR_RETURN(name, GetString(n, "name", where));
    if (n.contains("enforces")) {
      const Json& e = n["enforces"];
      if (!e.is_object() || !e.value("memory", Json(true)).is_boolean() ||
          !e.value("cpus", Json(true)).is_boolean())
        return InvalidArgument(where + ": 'enforces' must be {\"memory\": bool, \"cpus\": bool}");
      r.limits[name] = {e.value("memory", true), e.value("cpus", true)};
    }
    if (n.contains("gpus")) {
      LOCKSTEP_ASSIGN_OR_RETURN(seen, DecodeGpusSeen(n["gpus"], where));
      if (!seen.empty()) r.gpus_seen[name] = std::move(seen);
    }
    r.nodes.push_back(std::move(name));
  }
  if (body.contains("launches")) {
    if (!body["launches"].is_boolean())
      return InvalidArgument("register: 'launches' must be a boolean");
    r.launches = body["launches"].get<bool>();
  }
  if (body.contains("running")) {
    if (!body["running"].is_array()) return InvalidArgument("register: 'running' must be an array");
    for (std::size_t i = 0; i < body["running"].size(); ++i) {
      const Json& u = body["running"][i];
      const std::string where = "register: running[" + std::to_string(i) + "]";
      if (!u.is_object()) return InvalidArgument(where + " must be an object");
      RunningUnit unit;
      LOCKSTEP_ASSIGN_OR_RETURN(run, GetRun(u, where));
      unit.run = run;
      LOCKSTEP_ASSIGN_OR_RETURN(step, GetString(u, "step", where, "batch"));
      LOCKSTEP_ASSIGN_OR_RETURN(step_id, GetInt(u, "step_id", where, -1, kMaxInt, -1));
      unit.step_id = step == "batch" ? -1 : static_cast<std::int32_t>(step_id);
      LOCKSTEP_ASSIGN_OR_RETURN(node, GetString(u, "node", where, ""));
      unit.node = std::move(node);
      r.running.push_back(std::move(unit));
    }
  }
  return r;
}

namespace {

// A "usage" event: one task's sample, every number range-checked.
Result<backend::TaskUsage> DecodeUsage(const Json& ev, const std::string& where) {
  backend::TaskUsage u;
  LOCKSTEP_ASSIGN_OR_RETURN(run, GetRun(ev, where));
  u.run = run;
  LOCKSTEP_ASSIGN_OR_RETURN(step, GetString(ev, "step", where, "batch"));
  LOCKSTEP_ASSIGN_OR_RETURN(step_id, GetInt(ev, "step_id", where, -1, kMaxInt, -1));
  u.step = step == "batch" ? -1 : static_cast<std::int32_t>(step_id);
  LOCKSTEP_ASSIGN_OR_RETURN(node, GetString(ev, "node", where, std::nullopt));
  u.node = node.substr(0, 256);
  LOCKSTEP_ASSIGN_OR_RETURN(rank, GetInt(ev, "rank", where, 0, kMaxInt, 0));
  u.rank = static_cast<std::int32_t>(rank);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max() / 4;
  std::int64_t* numbers[] = {&u.sampled,   &u.cpu_usec,      &u.rss_bytes,  &u.max_rss_bytes,
                             &u.vm_bytes,  &u.pages,         &u.read_bytes, &u.write_bytes};
  const char* keys[] = {"time",     "cpu_usec", "rss_bytes",  "max_rss_bytes",
                        "vm_bytes", "pages",    "read_bytes", "write_bytes"};
  for (std::size_t i = 0; i < std::size(keys); ++i) {
    LOCKSTEP_ASSIGN_OR_RETURN(v, GetInt(ev, keys[i], where, 0, kMax, 0));
    *numbers[i] = v;
  }
  u.max_vm_bytes = u.vm_bytes;
  if (ev.contains("pids")) {
    if (!ev["pids"].is_array() || ev["pids"].size() > 4096)
      return InvalidArgument(where + ": 'pids' must be an array of at most 4096 pids");
    for (const Json& p : ev["pids"]) {
      if (!p.is_number_integer() || p.get<std::int64_t>() <= 0 || p.get<std::int64_t>() > kMaxInt)
        return InvalidArgument(where + ": 'pids' must hold process ids");
      u.pids.push_back(p.get<std::int64_t>());
    }
  }
  return u;
}

}  // namespace

Result<std::vector<AgentEvent>> DecodeEvents(const Json& body) {
  if (!body.is_object() || !body.contains("events") || !body["events"].is_array())
    return InvalidArgument("events: needs 'events' (array)");
  std::vector<AgentEvent> out;
  for (std::size_t i = 0; i < body["events"].size(); ++i) {
    const Json& ev = body["events"][i];
    const std::string where = "events[" + std::to_string(i) + "]";
    if (!ev.is_object()) return InvalidArgument(where + " must be an object");
    LOCKSTEP_ASSIGN_OR_RETURN(type, GetString(ev, "type", where));
    if (type == "usage") {
      LOCKSTEP_ASSIGN_OR_RETURN(usage, DecodeUsage(ev, where));
      AgentEvent e;
      e.run = usage.run;
      e.usage = std::move(usage);
      out.push_back(std::move(e));
      continue;
    }
    if (type == "gather") {
      LOCKSTEP_ASSIGN_OR_RETURN(part, DecodeGatherPart(ev, where));
      AgentEvent e;
      e.run = {part.job, 0};
      e.gather = std::move(part);
      out.push_back(std::move(e));
      continue;
    }
    if (type == "bcast_done") {
      AgentEvent e;
      LOCKSTEP_ASSIGN_OR_RETURN(id, GetInt(ev, "bcast_id", where, 1, kMaxBroadcastId, std::nullopt));
      LOCKSTEP_ASSIGN_OR_RETURN(node, GetString(ev, "node", where));
      LOCKSTEP_ASSIGN_OR_RETURN(error, GetString(ev, "error", where, ""));
      e.bcast_id = static_cast<std::uint64_t>(id);
      e.node = std::move(node);
      e.exit.error = error.substr(0, 1000);
      out.push_back(std::move(e));
      continue;
    }
    if (type != "exited" && type != "hook_failed") continue;  // for newer lockstepds
    AgentEvent e;
    LOCKSTEP_ASSIGN_OR_RETURN(run, GetRun(ev, where));
    e.run = run;
    if (type == "hook_failed") {
      LOCKSTEP_ASSIGN_OR_RETURN(hook, GetString(ev, "hook", where));
      if (hook != "prolog" && hook != "epilog")
        return InvalidArgument(where + ": 'hook' must be prolog or epilog");
      LOCKSTEP_ASSIGN_OR_RETURN(node, GetString(ev, "node", where));
      LOCKSTEP_ASSIGN_OR_RETURN(program, GetString(ev, "program", where, ""));
      LOCKSTEP_ASSIGN_OR_RETURN(detail, GetString(ev, "detail", where, ""));
      e.hook = hook, e.node = node;
      e.hook_program = program.substr(0, 1024);
      e.hook_detail = detail.substr(0, 512);
      out.push_back(std::move(e));
      continue;
    }
    LOCKSTEP_ASSIGN_OR_RETURN(step, GetString(ev, "step", where, "batch"));
    e.batch = step == "batch";
    LOCKSTEP_ASSIGN_OR_RETURN(step_id, GetInt(ev, "step_id", where, -1, kMaxInt, -1));
    e.step_id = static_cast<std::int32_t>(step_id);
    LOCKSTEP_ASSIGN_OR_RETURN(node, GetString(ev, "node", where, ""));
    e.node = std::move(node);
    LOCKSTEP_ASSIGN_OR_RETURN(code, GetInt(ev, "exit_code", where, -kMaxInt, kMaxInt, 0));
    LOCKSTEP_ASSIGN_OR_RETURN(sig, GetInt(ev, "signal", where, 0, 255, 0));
    e.exit.exit_code = static_cast<int>(code);
    e.exit.signal = static_cast<int>(sig);
    if (ev.contains("oom") && !ev["oom"].is_boolean())
      return InvalidArgument(where + ": 'oom' must be true or false");
    e.exit.oom = ev.value("oom", false);
    LOCKSTEP_ASSIGN_OR_RETURN(core, GetString(ev, "core_dump", where, ""));
    e.exit.core_dump = core.substr(0, 1024);
    LOCKSTEP_ASSIGN_OR_RETURN(error, GetString(ev, "error", where, ""));
    e.exit.error = error.substr(0, 1000);  // a launcher's message; bounded in the job record
    if (ev.contains("launch_failed") && !ev["launch_failed"].is_boolean())
      return InvalidArgument(where + ": 'launch_failed' must be true or false");
    e.launch_failed = e.batch && ev.value("launch_failed", false);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<backend::OutputChunk>> DecodeOutput(const Json& body) {
  if (!body.is_object() || !body.contains("chunks") || !body["chunks"].is_array())
    return InvalidArgument("output: needs 'chunks' (array)");
  std::vector<backend::OutputChunk> out;
  for (std::size_t i = 0; i < body["chunks"].size(); ++i) {
    const Json& c = body["chunks"][i];
    const std::string where = "output: chunks[" + std::to_string(i) + "]";
    if (!c.is_object()) return InvalidArgument(where + " must be an object");
    backend::OutputChunk chunk;
    LOCKSTEP_ASSIGN_OR_RETURN(job, GetInt(c, "job_id", where, 1, kMaxJob, std::nullopt));
    LOCKSTEP_ASSIGN_OR_RETURN(step, GetInt(c, "step_id", where, 0, kMaxInt, std::nullopt));
    LOCKSTEP_ASSIGN_OR_RETURN(rank, GetInt(c, "rank", where, 0, kMaxInt, 0));
    LOCKSTEP_ASSIGN_OR_RETURN(stream, GetString(c, "stream", where, "stdout"));
    LOCKSTEP_ASSIGN_OR_RETURN(data, GetString(c, "data", where, ""));
    Result<std::string> bytes = Base64Decode(data);
    if (!bytes.ok()) return InvalidArgument(where + ": 'data' is not base64");
    chunk.job = static_cast<JobId>(job);
    chunk.step = static_cast<std::int32_t>(step);
    chunk.rank = static_cast<std::int32_t>(rank);
    chunk.is_stderr = stream == "stderr";
    chunk.data = std::move(*bytes);
    out.push_back(std::move(chunk));
  }
  return out;
}

Json LaunchCommand(const backend::LaunchOrder& order) {
  // The agent writes the script to its spool and puts that path in place of @SCRIPT@.
  Json task = {{"argv", Json::array({"@SCRIPT@"})},
               {"env", order.env},
               {"stdout", order.stdout_path},
               {"stderr", order.stderr_path},
               {"append", order.append_output}};
  for (const std::string& a : order.script_args) task["argv"].push_back(a);
  const backend::PlacedNode& first = order.nodes.front();
  return {{"type", "launch"},      {"job_id", order.job},   {"step", "batch"},
          {"uid", order.uid},      {"run", order.run},      {"gid", order.gid},
          {"user", order.user},    {"cwd", order.work_dir},    {"script", order.script},
          {"tasks", {task}},       {"memory_limit_mb", first.mem_mb}, {"cpus", first.cpus}};
}

Json StepLaunchCommand(const backend::StepLaunch& step,
                       const std::vector<backend::StepTask>& tasks) {
  Json list = Json::array();
  for (const backend::StepTask& t : tasks) {
    Json task = {{"argv", t.argv}, {"env", t.env}, {"rank", t.rank}};
    if (!step.stream_output) {
      task["stdout"] = t.stdout_path;
      task["stderr"] = t.stderr_path;
      task["append"] = true;
    }
    if (t.stdin_forwarded) task["stdin"] = "forward";
    if (!t.stdin_path.empty()) task["stdin_path"] = t.stdin_path;
    list.push_back(std::move(task));
  }
  return {{"type", "launch"},        {"job_id", step.job},   {"run", step.run},
          {"step", "step"},          {"step_id", step.step}, {"uid", step.uid},
          {"gid", step.gid},         {"user", step.user},    {"cwd", step.cwd},
          {"tasks", std::move(list)}, {"memory_limit_mb", 0}, {"cpus", 0},
          {"stream_output", step.stream_output},
          {"pty", step.pty},         {"rows", step.rows},    {"cols", step.cols},
          {"mpi", step.mpi}};
}

Json BroadcastCommand(std::uint64_t id, const backend::BroadcastOrder& order,
                      const std::vector<std::string>& nodes) {
  return {{"type", "bcast"},
          {"bcast_id", id},
          {"job_id", order.run.job},
          {"run", order.run.run},
          {"nodes", nodes},
          {"uid", order.uid},
          {"gid", order.gid},
          {"path", order.path},
          {"offset", order.offset},
          {"data", Base64Encode(order.data)},
          {"last", order.last},
          {"force", order.force},
          {"mode", order.mode},
          {"atime", order.atime},
          {"mtime", order.mtime},
          {"timeout_ms", order.timeout.count()}};
}

}  // namespace lockstep::agent
