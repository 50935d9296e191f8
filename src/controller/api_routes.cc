#include "controller/api_routes.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/slurm_routes.h"
#include "jobspec/job_spec.h"

namespace lockstep::controller {
namespace {

namespace http = boost::beast::http;
using Response = http::response<http::string_body>;

// A JSON body already serialized.
Response TextResponse(http::status status, std::string body) {
  Response res{status, 11};
  res.set(http::field::content_type, "application/json");
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

Response Reply(http::status status, const nlohmann::json& body) {
  return TextResponse(status, body.dump());
}

}  // namespace

ApiResponse JsonResponse(http::status status, const nlohmann::json& body) {
  return TextResponse(status,
                      body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

namespace {

Response Error(const Status& s) {
  http::status code = http::status::internal_server_error;
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      code = http::status::bad_request;
      break;
    case StatusCode::kNotFound:
      code = http::status::not_found;
      break;
    case StatusCode::kPermissionDenied:
      code = http::status::forbidden;
      break;
    case StatusCode::kFailedPrecondition:
      code = http::status::conflict;
      break;
    case StatusCode::kAlreadyExists:
      code = http::status::conflict;
      break;
    default:
      break;
  }
  return Reply(code, {{"error", s.message()}});
}

Response Ok(const nlohmann::json& body = {{"ok", true}}) {
  return Reply(http::status::ok, body);
}

// A large listing, serialized job by job.
Response OkText(std::string body) { return TextResponse(http::status::ok, std::move(body)); }

std::vector<std::string_view> Split(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

std::string Unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int v = 0;
      std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
      out += static_cast<char>(v);
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

// "a=1&b=x" -> {"a": "1", "b": "x"}; numbers stay strings except where the caller converts.
nlohmann::json Query(std::string_view q) {
  nlohmann::json out = nlohmann::json::object();
  std::size_t start = 0;
  while (start < q.size()) {
    std::size_t amp = q.find('&', start);
    if (amp == std::string_view::npos) amp = q.size();
    std::string_view kv = q.substr(start, amp - start);
    std::size_t eq = kv.find('=');
    if (eq != std::string_view::npos) out[Unescape(kv.substr(0, eq))] = Unescape(kv.substr(eq + 1));
    start = amp + 1;
  }
  return out;
}

bool ParseId(std::string_view s, JobId* id) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *id);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

Result<nlohmann::json> Body(const http::request<http::string_body>& req) {
  if (req.body().empty()) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(req.body(), nullptr, false);
  if (j.is_discarded()) return InvalidArgument("the request body is not valid JSON");
  if (!j.is_object()) return InvalidArgument("the request body must be a JSON object");
  return j;
}

// --- Checked parsing of what a request carries: errors name the parameter or field. ---

// The integer query parameter `name` (a string in `query`), or `fallback` when absent.
Result<std::int64_t> IntParam(const nlohmann::json& query, const char* name,
                              std::int64_t fallback) {
  if (!query.contains(name)) return fallback;
  const std::string& text = query[name].get_ref<const std::string&>();
  std::int64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc::result_out_of_range)
    return InvalidArgument(std::string(name) + ": out of range");
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || text.empty())
    return InvalidArgument(std::string(name) + ": not a number");
  return v;
}

// A long poll's wait: wait_ms, from 0 to 30000 (larger values wait 30 s).
Result<std::chrono::milliseconds> WaitParam(const nlohmann::json& query) {
  Result<std::int64_t> ms = IntParam(query, "wait_ms", 0);
  if (!ms.ok()) return ms.status();
  if (*ms < 0) return InvalidArgument("wait_ms: must not be negative");
  return std::chrono::milliseconds(std::min<std::int64_t>(*ms, 30000));
}

enum class FieldKind { kInteger, kString, kBool, kArrayOfStrings, kObjectOfStrings };

const char* Expected(FieldKind kind) {
  switch (kind) {
    case FieldKind::kInteger:
      return "a 32-bit integer";
    case FieldKind::kString:
      return "a string";
    case FieldKind::kBool:
      return "true or false";
    case FieldKind::kArrayOfStrings:
      return "an array of strings";
    case FieldKind::kObjectOfStrings:
      return "an object of strings";
  }
  return "another type";
}

bool AllStrings(const nlohmann::json& j) {
  return std::all_of(j.begin(), j.end(), [](const nlohmann::json& v) { return v.is_string(); });
}

bool Fits(const nlohmann::json& v, FieldKind kind) {
  switch (kind) {
    case FieldKind::kInteger:
      return v.is_number_integer() && v.get<std::int64_t>() >= INT32_MIN &&
             (v.is_number_unsigned() ? v.get<std::uint64_t>() <= INT32_MAX
                                     : v.get<std::int64_t>() <= INT32_MAX);
    case FieldKind::kString:
      return v.is_string();
    case FieldKind::kBool:
      return v.is_boolean();
    case FieldKind::kArrayOfStrings:
      return v.is_array() && AllStrings(v);
    case FieldKind::kObjectOfStrings:
      return v.is_object() && AllStrings(v);
  }
  return false;
}

// InvalidArgument "field X: expected Y" for the first present field of the wrong type.
Status ExpectFields(const nlohmann::json& body,
                    std::initializer_list<std::pair<const char*, FieldKind>> fields) {
  for (const auto& [name, kind] : fields)
    if (body.contains(name) && !Fits(body[name], kind))
      return InvalidArgument(std::string("field ") + name + ": expected " + Expected(kind));
  return Status::Ok();
}

// A step request's fields (docs/api.md), checked before the controller reads any of them.
Status ExpectStepFields(const nlohmann::json& body) {
  return ExpectFields(body, {{"argv", FieldKind::kArrayOfStrings},
                             {"ntasks", FieldKind::kInteger},
                             {"nodes", FieldKind::kInteger},
                             {"ntasks_per_node", FieldKind::kInteger},
                             {"gpus_per_task", FieldKind::kInteger},
                             {"env", FieldKind::kObjectOfStrings},
                             {"cwd", FieldKind::kString},
                             {"stdout", FieldKind::kString},
                             {"stderr", FieldKind::kString},
                             {"stream", FieldKind::kBool},
                             {"input", FieldKind::kString},
                             {"input_file", FieldKind::kString},
                             {"pty", FieldKind::kBool},
                             {"rows", FieldKind::kInteger},
                             {"cols", FieldKind::kInteger},
                             {"srun_host", FieldKind::kString},
                             {"srun_pid", FieldKind::kInteger}});
}

// The body's "signal" (0 when absent).
Result<int> SignalField(const nlohmann::json& body) {
  LOCKSTEP_RETURN_IF_ERROR(ExpectFields(body, {{"signal", FieldKind::kInteger}}));
  return body.value("signal", 0);
}

// The body's "target" of a signal: "steps", "batch" or "full" (the default).
Result<Controller::SignalTarget> SignalTargetField(const nlohmann::json& body) {
  LOCKSTEP_RETURN_IF_ERROR(ExpectFields(body, {{"target", FieldKind::kString}}));
  const std::string t = body.value("target", "full");
  if (t == "full") return Controller::SignalTarget::kFull;
  if (t == "steps") return Controller::SignalTarget::kSteps;
  if (t == "batch") return Controller::SignalTarget::kBatch;
  return InvalidArgument("target: '" + t + "' is not one of steps, batch, full");
}

// What a JSON type error inside a route means to the client, without nlohmann's text: the
// routes check the fields they know; this covers what the controller reads beyond them.
std::string DescribeTypeError(const nlohmann::json::type_error& e) {
  std::string_view what = e.what();
  constexpr std::string_view kMust = "type must be ";
  std::size_t at = what.find(kMust);
  if (e.id == 302 && at != std::string_view::npos)
    return "a field of the request has the wrong type: expected " +
           std::string(what.substr(at + kMust.size()));  // "number, but is string"
  return "a field of the request has the wrong type";
}

// A long poll's answer from a result (the step output's).
Response Answer(const Result<nlohmann::json>& j) {
  return j.ok() ? Ok(*j) : Error(j.status());
}

// POST .../requeue: `{"hold": true}` requeues and holds in one change (scontrol requeuehold),
// `"special_exit": true` with it for State=SpecialExit.
Status RequeueRoute(Controller& c, const Caller& caller, JobId id, const nlohmann::json& body) {
  LOCKSTEP_RETURN_IF_ERROR(
      ExpectFields(body, {{"hold", FieldKind::kBool}, {"special_exit", FieldKind::kBool}}));
  const bool hold = body.value("hold", false), special_exit = body.value("special_exit", false);
  if (special_exit && !hold) return InvalidArgument("requeue: special_exit needs \"hold\": true");
  return hold ? c.RequeueHold(caller, id, special_exit) : c.Requeue(caller, id);
}

// GET /api/v1/nodes/{name}: {"nodes": [that node]}, or 404.
Response OneNode(Controller& c, std::string_view name) {
  nlohmann::json all = c.ListNodes();
  for (nlohmann::json& n : all["nodes"])
    if (n.is_object() && n.value("name", "") == name)
      return Ok({{"nodes", nlohmann::json::array({std::move(n)})}});
  return Error(NotFound("no such node: " + std::string(name)));
}

// A route's response, or nothing when a long poll took `reply` to answer later.
using Routed = std::optional<Response>;

Routed Jobs(Controller& c, const Caller& caller, http::verb verb,
            const std::vector<std::string_view>& p, const nlohmann::json& query,
            const http::request<http::string_body>& req, Replier& reply) {
  if (p.size() == 3) {
    if (verb == http::verb::get) return OkText(c.ListJobsText(query));
    if (verb == http::verb::post) {
      Result<jobspec::JobSpec> spec = jobspec::JobSpecFromJson(req.body());
      if (!spec.ok()) return Error(spec.status());
      std::vector<std::string> warnings = c.SubmitWarnings(*spec);
      Result<JobId> id = c.Submit(caller, std::move(*spec));
      if (!id.ok()) return Error(id.status());
      nlohmann::json answer = {{"job_id", *id}};
      if (!warnings.empty()) answer["warnings"] = std::move(warnings);
      return Ok(std::move(answer));
    }
  }
  JobId id = 0;
  if (p.size() >= 4 && p[3].find('_') != std::string_view::npos) {  // "40_7": an array's task
    const std::size_t bar = p[3].find('_');
    JobId array = 0, task = 0;
    if (!ParseId(p[3].substr(0, bar), &array) || !ParseId(p[3].substr(bar + 1), &task))
      return Error(InvalidArgument("invalid job id specified"));
    Result<JobId> found = c.ArrayTaskJobId(array, task);
    if (!found.ok()) return Error(found.status());
    id = *found;
  } else if (p.size() < 4 || !ParseId(p[3], &id)) {
    return Error(InvalidArgument("invalid job id specified"));
  }
  Result<nlohmann::json> body = Body(req);
  if (!body.ok()) return Error(body.status());
  if (p.size() == 4) {
    if (verb == http::verb::get) {
      Result<nlohmann::json> j = c.ShowJob(id);
      return j.ok() ? Ok(*j) : Error(j.status());
    }
    if (verb == http::verb::patch) {  // an array's id: every task; "40_7": that one
      const bool one_task = p[3].find('_') != std::string_view::npos;
      Status s = one_task ? c.UpdateTask(caller, id, *body) : c.Update(caller, id, *body);
      return s.ok() ? Ok() : Error(s);
    }
  }
  if (p.size() == 5 && verb == http::verb::post) {
    Status s = InvalidArgument("unknown job action");
    Result<int> signal = SignalField(*body);
    if (Status bad = ExpectFields(*body, {{"array_rest", FieldKind::kBool}}); !bad.ok())
      return Error(bad);
    if (body->value("array_rest", false)) {  // an array's tasks not split off (docs/api.md)
      if (!signal.ok() || *signal != 0) return Error(InvalidArgument("array_rest: no signal"));
      Status rest = c.ArrayRestAction(caller, id, std::string(p[4]));
      return rest.ok() ? Ok() : Error(rest);
    }
    if (p[4] == "cancel") {
      Result<Controller::SignalTarget> target = SignalTargetField(*body);
      s = !signal.ok()   ? signal.status()
          : !target.ok() ? target.status()
                         : c.Cancel(caller, id, *signal, *target);
    }
    else if (p[4] == "hold") {  // {"user_hold": true}: scontrol uhold
      s = ExpectFields(*body, {{"user_hold", FieldKind::kBool}});
      if (s.ok()) s = c.Hold(caller, id, body->value("user_hold", false));
    }
    else if (p[4] == "release")
      s = c.Release(caller, id);
    else if (p[4] == "requeue")  // {"hold": true}: requeuehold, one atomic change (docs/api.md)
      s = RequeueRoute(c, caller, id, *body);
    else if (p[4] == "suspend")
      s = c.Suspend(caller, id);
    else if (p[4] == "notify") {  // {"message": "..."}: scontrol notify
      s = ExpectFields(*body, {{"message", FieldKind::kString}});
      if (s.ok() && !body->contains("message")) s = InvalidArgument("notify: no message");
      if (s.ok()) s = c.Notify(caller, id, (*body)["message"].get<std::string>());
    }
    else if (p[4] == "resume")
      s = c.Resume(caller, id);
    else if (p[4] == "bcast") {  // sbcast: one piece of a file for the job's nodes
      Result<nlohmann::json> j = c.Broadcast(caller, id, *body);
      return j.ok() ? Ok(*j) : Error(j.status());
    }
    else if (p[4] == "steps") {
      if (Status bad = ExpectStepFields(*body); !bad.ok()) return Error(bad);
      Result<nlohmann::json> j = c.CreateStep(caller, id, *body);
      return j.ok() ? Ok(*j) : Error(j.status());
    }
    return s.ok() ? Ok() : Error(s);
  }
  if (p.size() == 5 && verb == http::verb::get && p[4] == "logs") {  // lockstep logs
    Result<std::string> text = c.JobLogs(caller, id);
    if (!text.ok()) return Error(text.status());
    // Programs print anything: bytes that are not UTF-8 become U+FFFD rather than an error.
    return JsonResponse(http::status::ok, {{"job_id", id}, {"logs", *text}});
  }
  if (p.size() == 5 && verb == http::verb::get && p[4] == "usage") {  // sstat
    Result<nlohmann::json> j = c.Usage(caller, id);
    return j.ok() ? Ok(*j) : Error(j.status());
  }
  if (p.size() == 5 && verb == http::verb::get && p[4] == "why") {
    Result<nlohmann::json> j = c.Why(id);
    return j.ok() ? Ok(*j) : Error(j.status());
  }
  if (p.size() == 6 && verb == http::verb::get && p[4] == "steps") {
    JobId step = 0;
    if (!ParseId(p[5], &step)) return Error(InvalidArgument("invalid step id"));
    Result<nlohmann::json> j = c.ShowStep(id, static_cast<std::int32_t>(step));
    return j.ok() ? Ok(*j) : Error(j.status());
  }
  // Step output (srun follows it) and step signals (srun's Ctrl-C).
  if (p.size() == 7 && p[4] == "steps") {
    JobId step = 0;
    if (!ParseId(p[5], &step)) return Error(InvalidArgument("invalid step id"));
    if (verb == http::verb::get && p[6] == "output") {
      Result<std::chrono::milliseconds> wait = WaitParam(query);
      if (!wait.ok()) return Error(wait.status());
      Result<std::int64_t> offset = IntParam(query, "offset", 0);
      if (!offset.ok()) return Error(offset.status());
      if (*offset < 0) return Error(InvalidArgument("offset: must not be negative"));
      Result<std::int64_t> attach = IntParam(query, "attach", 0);  // sattach's reads
      if (!attach.ok()) return Error(attach.status());
      Result<std::int64_t> notice = IntParam(query, "notice", 0);  // scontrol notify's
      if (!notice.ok()) return Error(notice.status());
      if (*notice < 0) return Error(InvalidArgument("notice: must not be negative"));
      c.StepOutput(caller, id, static_cast<std::int32_t>(step),
                   static_cast<std::uint64_t>(*offset), *wait,
                   [reply = std::move(reply)](Result<nlohmann::json> j) { reply(Answer(j)); },
                   *attach != 0, static_cast<std::uint64_t>(*notice));
      return std::nullopt;
    }
    if (verb == http::verb::post && p[6] == "input") {  // srun's stdin (step_input.h)
      Result<std::chrono::milliseconds> wait = WaitParam(query);
      if (!wait.ok()) return Error(wait.status());
      c.StepInput(caller, id, static_cast<std::int32_t>(step), *body, *wait,
                  [reply = std::move(reply)](Result<nlohmann::json> j) { reply(Answer(j)); });
      return std::nullopt;
    }
    if (verb == http::verb::post && p[6] == "cancel") {
      Result<int> signal = SignalField(*body);
      if (!signal.ok()) return Error(signal.status());
      Status s = c.SignalStep(caller, id, static_cast<std::int32_t>(step), *signal);
      return s.ok() ? Ok() : Error(s);
    }
  }
  return Error(NotFound("no such endpoint"));
}

Routed Agent(Controller& c, AgentEndpoints* agents, const Caller& caller,
             const std::vector<std::string_view>& p, const nlohmann::json& query,
             const http::request<http::string_body>& req, Replier& reply) {
  if (!agents) return Error(NotFound("no such endpoint: this lockstepd has no agents"));
  // Agents run as root (or as the one user of a personal cluster): nobody else may pose as one.
  if (!c.IsOperator(caller.uid) && caller.uid != ::getuid())
    return Error(PermissionDenied("only lockstep agents may use /api/v1/agent"));
  Result<nlohmann::json> body = Body(req);
  if (!body.ok()) return Error(body.status());
  if (p.size() == 4 && p[3] == "register") {
    Status s = agents->Register(*body);
    return s.ok() ? Ok() : Error(s);
  }
  if (p.size() == 4 && p[3] == "commands") {
    Result<std::chrono::milliseconds> wait = WaitParam(query);
    if (!wait.ok()) return Error(wait.status());
    agents->Poll(query.value("agent", ""), *wait,
                 [reply = std::move(reply)](nlohmann::json commands) { reply(Ok(commands)); });
    return std::nullopt;
  }
  if (p.size() == 4 && p[3] == "events") {
    Status s = agents->Events(*body);
    return s.ok() ? Ok() : Error(s);
  }
  if (p.size() == 4 && p[3] == "output") {
    Status s = agents->Output(*body);
    return s.ok() ? Ok() : Error(s);
  }
  if (p.size() == 4 && p[3] == "input") {  // srun's stdin for a node's tasks (step_input.h)
    Result<std::chrono::milliseconds> wait = WaitParam(query);
    Result<std::int64_t> job = IntParam(query, "job_id", 0);
    Result<std::int64_t> step = IntParam(query, "step_id", 0);
    Result<std::int64_t> offset = IntParam(query, "offset", 0);
    Result<std::int64_t> winsize = IntParam(query, "winsize", 0);
    if (!wait.ok()) return Error(wait.status());
    for (const Result<std::int64_t>* f : {&job, &step, &offset, &winsize}) {
      if (!f->ok()) return Error(f->status());
      if (**f < 0)
        return Error(InvalidArgument(
            "input: job_id, step_id, offset and winsize must not be negative"));
    }
    if (*step > INT32_MAX) return Error(InvalidArgument("input: step_id is out of range"));
    c.AgentStepInput(static_cast<JobId>(*job), static_cast<std::int32_t>(*step),
                     query.value("node", ""), static_cast<std::uint64_t>(*offset),
                     static_cast<std::uint64_t>(*winsize), *wait,
                     [reply = std::move(reply)](Result<nlohmann::json> j) { reply(Answer(j)); });
    return std::nullopt;
  }
  if (p.size() == 4 && p[3] == "health") {
    Status s = agents->Health(*body);
    return s.ok() ? Ok() : Error(s);
  }
  return Error(NotFound("no such endpoint"));
}

// GET /api/v1/health?window=SECONDS; POST /api/v1/health/clear {"what": SERIAL|UUID|NODE}.
Routed HealthRoute(Controller& c, const Caller& caller, http::verb verb,
                   const std::vector<std::string_view>& p, const nlohmann::json& query,
                   const http::request<http::string_body>& req) {
  if (verb == http::verb::get && p.size() == 3) {
    Result<std::int64_t> window = IntParam(query, "window", 0);
    if (!window.ok()) return Error(window.status());
    if (*window < 0) return Error(InvalidArgument("window: must not be negative"));
    return Ok(c.Health(*window));
  }
  if (verb == http::verb::post && p.size() == 4 && p[3] == "clear") {
    Result<nlohmann::json> body = Body(req);
    if (!body.ok()) return Error(body.status());
    Status bad = ExpectFields(*body, {{"what", FieldKind::kString}});
    if (!bad.ok()) return Error(bad);
    Status s = c.ClearHealth(caller, body->value("what", ""));
    return s.ok() ? Ok() : Error(s);
  }
  return Error(NotFound("no such endpoint"));
}

Routed Route(Controller& c, AgentEndpoints* agents, const Caller& caller,
             const http::request<http::string_body>& req, Replier& reply) {
  std::string_view target(req.target().data(), req.target().size());
  std::size_t qmark = target.find('?');
  nlohmann::json query =
      qmark == std::string_view::npos ? nlohmann::json::object() : Query(target.substr(qmark + 1));
  std::vector<std::string_view> p = Split(target.substr(0, qmark));
  if (p.size() < 3 || p[0] != "api" || p[1] != "v1") return Error(NotFound("no such endpoint"));
  http::verb verb = req.method();
  try {
    if (std::optional<Response> slurm = SlurmCommandsRoute(c, caller, target.substr(0, qmark), req))
      return slurm;
    if (p[2] == "jobs") return Jobs(c, caller, verb, p, query, req, reply);
    if (p[2] == "agent") return Agent(c, agents, caller, p, query, req, reply);
    if (p[2] == "nodes" && verb == http::verb::get && p.size() == 3) return Ok(c.ListNodes());
    if (p[2] == "nodes" && verb == http::verb::get && p.size() == 4) return OneNode(c, p[3]);
    if (p[2] == "nodes" && verb == http::verb::post && p.size() == 5 && p[4] == "state") {
      Result<nlohmann::json> body = Body(req);
      if (!body.ok()) return Error(body.status());
      Status bad =
          ExpectFields(*body, {{"state", FieldKind::kString}, {"reason", FieldKind::kString}});
      if (!bad.ok()) return Error(bad);
      Status s = c.SetNodeState(caller, std::string(p[3]), body->value("state", ""),
                                body->value("reason", ""));
      return s.ok() ? Ok() : Error(s);
    }
    if (p[2] == "health") return HealthRoute(c, caller, verb, p, query, req);
    if (p[2] == "partitions" && verb == http::verb::get) return Ok(c.ListPartitions());
    if (p[2] == "partitions" && verb == http::verb::patch && p.size() == 4) {  // scontrol update
      Result<nlohmann::json> body = Body(req);
      if (!body.ok()) return Error(body.status());
      Status s = c.UpdatePartition(caller, std::string(p[3]), *body);
      return s.ok() ? Ok() : Error(s);
    }
    if (p[2] == "diag" && verb == http::verb::get) return Ok(c.Diagnostics());
    if (p[2] == "priorities" && verb == http::verb::get) return Ok(c.Priorities());
    if (p[2] == "accounting" && verb == http::verb::get) {
      nlohmann::json filter = query;
      for (const char* key : {"start", "end"}) {
        if (!filter.contains(key)) continue;
        Result<std::int64_t> t = IntParam(query, key, 0);
        if (!t.ok()) return Error(t.status());
        filter[key] = *t;
      }
      return OkText(c.AccountingText(filter));
    }
  } catch (const nlohmann::json::type_error& e) {
    // Never the exception's text: it names nlohmann's internals, not the request.
    return Error(InvalidArgument("bad request: " + DescribeTypeError(e)));
  } catch (const nlohmann::json::exception&) {
    return Error(InvalidArgument("bad request: a field of the request has a value out of range"));
  } catch (const std::invalid_argument&) {
    return Error(InvalidArgument("bad request: a field of the request is not a number"));
  } catch (const std::out_of_range&) {
    return Error(InvalidArgument("bad request: a number in the request is out of range"));
  } catch (const std::exception&) {
    return Error(Internal("internal error while handling the request"));
  }
  return Error(NotFound("no such endpoint"));
}

}  // namespace

ApiResponse ErrorResponse(const Status& status) { return Error(status); }

void HandleRequest(Controller& c, AgentEndpoints* agents, const Caller& caller,
                   const http::request<http::string_body>& req, Replier reply) {
  Routed response = Route(c, agents, caller, req, reply);
  if (response) reply(std::move(*response));
}

// --- Tokens (tokens.h): the caller's own, or anyone's for an operator. ---
Response HandleTokenRequest(Controller& c, TokenRegistry& tokens, const Caller& caller,
                            const http::request<http::string_body>& req, Time now,
                            const identity::UserDirectory* directory) {
  std::string_view target(req.target().data(), req.target().size());
  const std::vector<std::string_view> path = Split(target.substr(0, target.find('?')));
  const bool revoke = path.size() == 4 && path[3] == "revoke";
  if ((path.size() != 3 && !revoke) || req.method() != http::verb::post)
    return Error(NotFound("no such endpoint"));
  Result<nlohmann::json> body = Body(req);
  if (!body.ok()) return Error(body.status());
  if (revoke) {
    Result<nlohmann::json> revoked = RevokeTokens(c, tokens, caller, *body);
    return revoked.ok() ? Ok(*revoked) : Error(revoked.status());
  }
  if (!body->is_object() || (body->contains("user") && !(*body)["user"].is_string()) ||
      (body->contains("lifespan") && !(*body)["lifespan"].is_number_integer()))
    return Error(InvalidArgument("expected {\"user\": NAME, \"lifespan\": SECONDS}"));
  Result<Caller> who = TokenSubject(c, caller, body->value("user", ""), directory);
  if (!who.ok()) return Error(who.status());
  Seconds lifespan = body->value("lifespan", kDefaultTokenLifespan);
  Result<std::string> token = tokens.Issue(*who, lifespan, now);
  if (!token.ok()) return Error(token.status());
  return Ok(
      {{"token", *token}, {"user", who->user}, {"uid", who->uid}, {"expires", now + lifespan}});
}

}  // namespace lockstep::controller
