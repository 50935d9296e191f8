// KubeLogins' sessions: a command in the user's login pod through its exec, relayed for the CLI.
#include <fmt/format.h>
#include <openssl/rand.h>

#include "backend/kubernetes/backend/exec_steps.h"
#include "backend/kubernetes/login/kube_login_internal.h"
#include "backend/kubernetes/objects/login_pod.h"
#include "common/base64.h"
#include "common/log.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

// The user's shell as a login shell, or a command line run by it; /bin/sh when the image has
// no such shell. $0 is the command line (ssh's: the words joined by spaces).
constexpr char kShellScript[] =
    "s=\"$SHELL\"; [ -x \"$s\" ] || s=/bin/sh; cd \"$HOME\" 2>/dev/null; "
    "if [ -n \"$0\" ] && [ \"$0\" != -l ]; then exec \"$s\" -c \"$0\"; else exec \"$s\" -l; fi";

std::string NewSessionId() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return "";
  std::string id;
  for (unsigned char b : bytes) id += fmt::format("{:02x}", b);
  return id;
}

std::string CommandLine(const Json& command) {
  std::string line;
  for (const Json& word : command) line += (line.empty() ? "" : " ") + word.get<std::string>();
  return line;
}

// Every field of a login request of the right type (docs/api.md, "Login"); the error names it.
Status CheckOpenBody(const Json& body) {
  if (!body.is_object()) return InvalidArgument("login: expected a JSON object");
  for (const auto& [key, value] : body.items()) {
    const bool text = key == "user" || key == "pool";
    const bool flag = key == "tty" || key == "stdin" || key == "ssh";
    const bool size = key == "rows" || key == "cols";
    if (!text && !flag && !size && key != "command")
      return InvalidArgument("login: unexpected '" + key + "'");
    if (text && !value.is_string()) return InvalidArgument("login: " + key + " must be a name");
    if (flag && !value.is_boolean()) return InvalidArgument("login: " + key + " must be true or false");
    if (size && (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > 10000))
      return InvalidArgument("login: " + key + " must be from 0 to 10000");
  }
  if (body.contains("command")) {
    const Json& c = body["command"];
    if (!c.is_array() || c.empty() || c.size() > 4096)
      return InvalidArgument("login: command must be a non-empty list of words");
    for (const Json& w : c)
      if (!w.is_string() || w.get<std::string>().find('\0') != std::string::npos)
        return InvalidArgument("login: command words must be strings without NUL");
  }
  if (body.value("ssh", false) && (body.contains("pool") || body.contains("command")))
    return InvalidArgument("login: ssh is for your own pod, with no command");
  return Status::Ok();
}

}  // namespace

Result<Json> KubeLogins::Open(const Caller& caller, bool caller_is_operator, const Json& body) {
  LOCKSTEP_RETURN_IF_ERROR(CheckOpenBody(body));
  const std::string name = body.value("user", caller.user);
  if (name != caller.user && !caller_is_operator)
    return PermissionDenied("login: " + caller.user + " may log in only as " + caller.user +
                            " (--user is for operators)");
  const config::LoginPool* pool = nullptr;
  if (body.contains("pool")) {
    const std::string wanted = body["pool"].get<std::string>();
    for (const config::LoginPool& p : options_.login.pools)
      if (p.name == wanted) pool = &p;
    if (!pool) return NotFound("login: no pool " + wanted + " (login.pools)");
  }
  const bool ssh = body.value("ssh", false);
  if (ssh && !options_.login.ssh)
    return FailedPrecondition("login: this cluster's login pods run no sshd (login.ssh in the "
                              "cluster YAML)");
  std::optional<identity::UserRecord> user = directory_()->UserByName(name);
  if (!user) {
    // A caller the source does not know is named by its uid.
    const std::string who = name == std::to_string(caller.uid) ? "uid " + name : name;
    return NotFound("login: " + who + " is not a user of this cluster (" +
                    directory_()->Describe() + ")");
  }
  if (name == caller.user && user->uid != caller.uid)
    return PermissionDenied("login: uid " + std::to_string(caller.uid) + " is not " + name + "'s");

  if (pool) LOCKSTEP_RETURN_IF_ERROR(CheckPoolMember(*pool, *user));

  const auto started = SteadyClock::now();
  const std::string key = pool ? std::string(kPoolKeyPrefix) + pool->name : name;
  std::shared_ptr<UserState> state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Unavailable("login: lockstepd is stopping");
    auto& s = users_[key];
    if (!s) s = std::make_shared<UserState>();
    state = s;
  }
  std::lock_guard<std::mutex> ensure(state->ensure_mu);
  bool created = false;
  Result<Json> pod = pool ? EnsurePoolPod(*pool, created) : EnsurePod(*user, created);
  if (!pod.ok()) return pod.status();
  const std::string pod_name = (*pod)["metadata"].value("name", "");
  std::vector<std::string> wrapper;
  if (pool) {
    LOCKSTEP_RETURN_IF_ERROR(StorePoolToken(*pool, *pod, *user));
    wrapper = {"lockstep", "login-as", std::to_string(user->uid), std::to_string(user->gid),
               GidList(user->groups), user->home, "--"};
  }
  if (ssh) {
    Result<Json> where = SshAddress(*user, *pod);
    if (!where.ok()) return where.status();
    (*where)["pod"] = pod_name;
    (*where)["node"] = (*pod)["spec"].value("nodeName", "");
    (*where)["created"] = created;
    return where;
  }
  Result<std::shared_ptr<Session>> session = StartSession(*user, pod_name, key, wrapper, body);
  if (!session.ok()) return session.status();
  // In use: not idle since anything (what a restarted lockstepd reads).
  if ((*pod)["metadata"].value("annotations", Json::object()).contains(kLoginIdleSinceAnnotation)) {
    Json busy = {{"metadata", {{"annotations", {{kLoginIdleSinceAnnotation, nullptr}}}}}};
    (void)client_->Patch(PodPath(options_.ns, pod_name), PatchType::kMerge, busy);
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - started);
  return Json{{"session", (*session)->id},
              {"pod", pod_name},
              {"node", (*pod)["spec"].value("nodeName", "")},
              {"created", created},
              {"started_ms", ms.count()}};
}

Result<Json> KubeLogins::SshAddress(const identity::UserRecord& user, const Json& pod) {
  Result<std::int32_t> port = EnsureService(user);
  if (!port.ok()) return port.status();
  Result<Json> node = client_->Get(NodePath(pod["spec"].value("nodeName", "")));
  if (!node.ok()) return node.status();
  Json where = {{"ssh", {{"host", NodeAddress(*node)}, {"port", *port}, {"user", user.name}}}};
  if (user.ssh_keys.empty())
    where["warning"] = user.name + " has no ssh_keys in the identity source: sshd will refuse every key";
  return where;
}

Result<std::shared_ptr<KubeLogins::Session>> KubeLogins::StartSession(
    const identity::UserRecord& user, const std::string& pod, const std::string& key,
    const std::vector<std::string>& wrapper, const Json& body) {
  auto s = std::make_shared<Session>();
  s->id = NewSessionId();
  if (s->id.empty()) return Internal("login: no random bytes for a session id");
  s->user = user.name;
  s->uid = user.uid;
  s->pod = pod;
  s->key = key;
  s->tty = body.value("tty", false);
  const bool reads = body.value("stdin", s->tty);
  s->framed = reads && !s->tty;
  std::vector<std::string> argv = wrapper;
  for (std::string word : {std::string("sh"), std::string("-c"), std::string(kShellScript),
                           body.contains("command") ? CommandLine(body["command"]) : "-l"})
    argv.push_back(std::move(word));
  if (s->framed) argv = FramedStdinArgv(argv);
  s->last_poll = SteadyClock::now();
  std::weak_ptr<Session> weak = s;
  auto stream = ExecStream::Open(
      client_->config(), ExecTarget(options_.ns, pod, kLoginContainer, argv, reads, s->tty),
      std::chrono::seconds(30), [weak](ExecChannel channel, std::string data) {
        std::shared_ptr<Session> s = weak.lock();
        if (!s || data.empty()) return;
        std::function<void()> answer;
        {
          std::unique_lock<std::mutex> lock(s->mu);
          // The command waits while the CLI is behind (it reads at its terminal's pace).
          s->drained.wait(lock, [&] { return s->held < kLoginOutputCapacity || s->closed; });
          if (s->closed) return;
          s->held += data.size();
          s->end += data.size();
          s->chunks.emplace_back(channel == ExecChannel::kStderr ? 2 : 1, std::move(data));
          answer = TakeAnswer(*s, false);
        }
        if (answer) answer();
      });
  if (!stream.ok())
    return Unavailable("login: cannot start a session in pod " + pod + ": " + stream.status().message());
  s->stream = std::move(*stream);
  if (s->tty && body.contains("rows") && body.contains("cols"))
    s->stream->Resize(body["rows"].get<int>(), body["cols"].get<int>());
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_[s->id] = s;
    users_[key]->open++;
  }
  s->reader = std::thread([this, s] { ReadSession(s); });
  log::Info("login: session {} of {} in {}{}", s->id.substr(0, 8), user.name, pod,
            body.contains("command") ? " (a command)" : "");
  return s;
}

std::function<void()> KubeLogins::TakeAnswer(Session& s, bool timed_out) {
  if (!s.waiter) return nullptr;
  const std::uint64_t from = s.waiter_offset;
  // What the CLI asked past is acknowledged: room for the command's next output.
  bool freed = false;
  while (!s.chunks.empty() && s.base + s.chunks.front().second.size() <= from) {
    s.base += s.chunks.front().second.size();
    s.held -= s.chunks.front().second.size();
    s.chunks.pop_front();
    freed = true;
  }
  if (freed) s.drained.notify_all();
  Json chunks = Json::array();
  std::uint64_t at = s.base, next = std::max(from, s.base);
  constexpr std::size_t kMaxAnswer = 256 << 10;
  std::size_t bytes = 0;
  for (const auto& [fd, data] : s.chunks) {
    const std::uint64_t chunk_end = at + data.size();
    if (chunk_end > next && bytes < kMaxAnswer) {
      const std::string part = data.substr(static_cast<std::size_t>(next - at));
      chunks.push_back({{"fd", fd}, {"data", Base64Encode(part)}});
      bytes += part.size();
      next = chunk_end;
    }
    at = chunk_end;
  }
  Json answer = {{"chunks", chunks}, {"next", next}};
  const bool all_read = next >= s.end;
  if (chunks.empty() && !(s.ended && all_read) && !timed_out && !s.closed) return nullptr;
  if (s.ended && all_read) {
    if (s.error.empty())
      answer["exit"] = s.exit_code;
    else
      answer["error"] = s.error;
    s.finished = true;
  } else if (s.closed && chunks.empty()) {
    answer["error"] = s.error.empty() ? "the session was closed" : s.error;
    s.finished = true;
  }
  auto done = std::move(s.waiter);
  s.waiter = nullptr;
  return [done = std::move(done), answer = std::move(answer)] { done(answer); };
}

void KubeLogins::ReadSession(std::shared_ptr<Session> s) {
  Result<int> code = s->stream->Run();
  std::function<void()> answer;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->ended = true;
    if (code.ok())
      s->exit_code = *code;
    else if (s->error.empty())
      s->error = s->closed ? "the session was closed" : "the session broke: " + code.status().message();
    answer = TakeAnswer(*s, false);
  }
  if (answer) answer();
  SessionEnded(*s);
}

void KubeLogins::SessionEnded(const Session& s) {
  bool idle = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = users_.find(s.key);
    if (it == users_.end()) return;
    if (--it->second->open == 0) {
      it->second->idle_since = options_.clock->Now();
      idle = true;
    }
    wake_.notify_all();
  }
  if (!idle) return;
  Json note = {{"metadata",
                {{"annotations",
                  {{kLoginIdleSinceAnnotation, std::to_string(options_.clock->Now())}}}}}};
  (void)client_->Patch(PodPath(options_.ns, s.pod), PatchType::kMerge, note);
}

std::shared_ptr<KubeLogins::Session> KubeLogins::FindSession(const Caller& caller,
                                                             const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  // Another user's session reads as unknown: ids reveal nothing.
  if (it == sessions_.end() || it->second->uid != caller.uid) return nullptr;
  return it->second;
}

Result<Json> KubeLogins::Input(const Caller& caller, const std::string& id, const Json& body) {
  std::shared_ptr<Session> s = FindSession(caller, id);
  if (!s) return NotFound("login: no session " + id);
  if (!body.is_object()) return InvalidArgument("login input: expected a JSON object");
  std::string data;
  if (body.contains("data")) {
    if (!body["data"].is_string()) return InvalidArgument("login input: data must be base64");
    Result<std::string> d = Base64Decode(body["data"].get<std::string>());
    if (!d.ok()) return InvalidArgument("login input: data: " + d.status().message());
    data = std::move(*d);
  }
  if (body.contains("offset") && !body["offset"].is_number_unsigned())
    return InvalidArgument("login input: offset must be a number from 0");
  if (body.contains("eof") && !body["eof"].is_boolean())
    return InvalidArgument("login input: eof must be true or false");
  const auto offset = body.value("offset", std::uint64_t{0});
  std::lock_guard<std::mutex> lock(s->mu);
  if (s->ended || s->closed) return Json{{"offset", s->input_next}, {"closed", true}};
  if (offset > s->input_next) return InvalidArgument("login input: offset past what was sent");
  const std::uint64_t skip = s->input_next - offset;  // a resend of bytes already taken
  if (skip < data.size()) {
    std::string fresh = data.substr(static_cast<std::size_t>(skip));
    s->input_next += fresh.size();
    s->stream->SendStdin(s->framed ? FrameStdinChunk(fresh) : fresh);
  }
  if (body.value("eof", false) && !s->input_eof) {
    s->input_eof = true;
    if (s->framed) s->stream->SendStdin(FrameStdinChunk(""));
  }
  if (s->tty && body.contains("rows") && body.contains("cols") && body["rows"].is_number_integer() &&
      body["cols"].is_number_integer())
    s->stream->Resize(body["rows"].get<int>(), body["cols"].get<int>());
  return Json{{"offset", s->input_next}, {"closed", false}};
}

void KubeLogins::Output(const Caller& caller, const std::string& id, std::uint64_t offset,
                        std::function<void(Result<Json>)> done) {
  std::shared_ptr<Session> s = FindSession(caller, id);
  if (!s) return done(NotFound("login: no session " + id));
  std::function<void()> answer;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->waiter) {  // a poll replaced by the next: the first answers empty
      auto old = std::move(s->waiter);
      s->waiter = nullptr;
      answer = [old = std::move(old), offset] { old(Json{{"chunks", Json::array()}, {"next", offset}}); };
    }
    s->last_poll = SteadyClock::now();
    s->waiter = std::move(done);
    s->waiter_offset = offset;
    s->waiter_deadline = s->last_poll + options_.poll_wait;
    std::function<void()> now = TakeAnswer(*s, false);
    if (now) {
      if (answer) answer();
      answer = std::move(now);
    }
  }
  wake_.notify_all();  // the housekeeping thread times the wait out, or forgets a finished one
  if (answer) answer();
}

Status KubeLogins::Close(const Caller& caller, const std::string& id) {
  std::shared_ptr<Session> s = FindSession(caller, id);
  if (!s) return NotFound("login: no session " + id);
  std::function<void()> answer;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->closed = true;
    s->stream->Close();
    s->drained.notify_all();
    answer = TakeAnswer(*s, true);
  }
  if (answer) answer();
  return Status::Ok();
}

void KubeLogins::Housekeeping() {
  const auto reap_every = std::chrono::seconds(
      std::clamp<Seconds>(options_.login.idle_timeout / 2, 1, 30));
  auto next_reap = SteadyClock::now() + reap_every;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    // Polls whose wait ran out, sessions nobody reads, finished sessions.
    auto next = std::min(next_reap, SteadyClock::now() + std::chrono::milliseconds(500));
    std::vector<std::function<void()>> answers;
    std::vector<std::shared_ptr<Session>> finished;
    const auto now = SteadyClock::now();
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      Session& s = *it->second;
      std::lock_guard<std::mutex> session_lock(s.mu);
      if (s.waiter && now >= s.waiter_deadline) {
        if (auto a = TakeAnswer(s, true)) answers.push_back(std::move(a));
      } else if (s.waiter) {
        next = std::min(next, s.waiter_deadline);
      }
      if (!s.waiter && !s.closed && now - s.last_poll > options_.abandoned_after) {
        s.closed = true;
        s.error = "nobody read the session";
        s.stream->Close();
        s.drained.notify_all();
      }
      if (s.finished || (s.ended && s.closed)) {
        finished.push_back(it->second);  // joined out of the lock (its reader takes mu_)
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();
    for (auto& a : answers) a();
    for (const std::shared_ptr<Session>& s : finished)
      if (s->reader.joinable()) s->reader.join();
    if (SteadyClock::now() >= next_reap) {
      ReapIdle();
      next_reap = SteadyClock::now() + reap_every;
    }
    lock.lock();
    wake_.wait_until(lock, next, [&] { return stopping_; });
  }
}

void KubeLogins::Stop() {
  std::vector<std::shared_ptr<Session>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !housekeeping_.joinable()) return;
    stopping_ = true;
    for (auto& [id, s] : sessions_) all.push_back(s);
  }
  wake_.notify_all();
  if (housekeeping_.joinable()) housekeeping_.join();
  for (const std::shared_ptr<Session>& s : all) {
    {
      std::lock_guard<std::mutex> lock(s->mu);
      s->closed = true;
      if (s->stream) s->stream->Close();
      s->drained.notify_all();
    }
    if (s->reader.joinable()) s->reader.join();
  }
}

}  // namespace lockstep::kube
