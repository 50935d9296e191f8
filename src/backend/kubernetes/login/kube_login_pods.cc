// KubeLogins' pods and Secrets: made, reused, adopted after a restart, reaped when idle.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/login/kube_login_internal.h"
#include "backend/kubernetes/objects/login_pod.h"
#include "common/base64.h"
#include "common/log.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;

constexpr char kLoginSelector[] = "app.kubernetes.io/managed-by=lockstep,app.kubernetes.io/component=login";
constexpr char kTokenIdAnnotation[] = "lockstep.dev/token-id";

std::string SecretPath(const std::string& ns, const std::string& name) {
  return "/api/v1/namespaces/" + ns + "/secrets/" + name;
}

std::string ServicePath(const std::string& ns, const std::string& name) {
  return "/api/v1/namespaces/" + ns + "/services/" + name;
}

// A new host key for a user's sshd: ECDSA P-256 in PEM (PKCS#8), which sshd reads.
Result<std::string> NewSshHostKey() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (key == nullptr) return Internal("login: cannot make an SSH host key");
  BIO* bio = BIO_new(BIO_s_mem());
  std::string pem;
  if (bio != nullptr && PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    pem.assign(data, static_cast<std::size_t>(n));
  }
  BIO_free(bio);
  EVP_PKEY_free(key);
  if (pem.empty()) return Internal("login: cannot write an SSH host key");
  return pem;
}

// The Secret already holds these users, groups and keys (its data is base64).
bool SecretHolds(const Json& secret, const LoginSecretData& want) {
  const Json data = secret.value("data", Json::object());
  auto holds = [&](const char* key, const std::string& text) {
    Result<std::string> have = Base64Decode(data.value(key, ""));
    return have.ok() && *have == text;
  };
  return holds("passwd", want.passwd) && holds("group", want.group) &&
         holds("authorized_keys", want.authorized_keys) &&
         (want.ca_pem.empty() || holds("ca.crt", want.ca_pem));
}

std::string AuthorizedKeys(const identity::UserRecord& user) {
  std::string keys;
  for (const std::string& k : user.ssh_keys) keys += k + "\n";
  return keys;
}

// The pod's container is waiting for a reason it will not get over by itself.
std::string StuckReason(const Json& pod) {
  static const std::set<std::string> kStuck = {"ErrImagePull",      "ImagePullBackOff",
                                               "ErrImageNeverPull", "InvalidImageName",
                                               "CreateContainerConfigError", "CrashLoopBackOff",
                                               "CreateContainerError", "RunContainerError"};
  for (const Json& c : pod["status"].value("containerStatuses", Json::array())) {
    const Json waiting = c.value("state", Json::object()).value("waiting", Json::object());
    const std::string reason = waiting.value("reason", "");
    if (kStuck.count(reason)) return reason + ": " + waiting.value("message", "");
  }
  return "";
}


bool NodeReady(const Json& node) {
  if (node["spec"].value("unschedulable", false)) return false;
  for (const Json& c : node["status"].value("conditions", Json::array()))
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  return false;
}

std::string Selector(const std::map<std::string, std::string>& labels) {
  std::string s;
  for (const auto& [k, v] : labels) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

}  // namespace

bool PodRunning(const Json& pod) {
  if (pod["status"].value("phase", "") != "Running") return false;
  for (const Json& c : pod["status"].value("containerStatuses", Json::array()))
    if (c.value("ready", false)) return true;
  return false;
}

std::string NodeAddress(const Json& node) {
  std::string internal;
  for (const Json& a : node["status"].value("addresses", Json::array())) {
    if (a.value("type", "") == "ExternalIP") return a.value("address", "");
    if (a.value("type", "") == "InternalIP" && internal.empty()) internal = a.value("address", "");
  }
  return internal.empty() ? node["metadata"].value("name", "") : internal;
}

std::vector<HostMount> LoginMounts(const config::LoginConfig& login,
                                   const std::vector<config::FileSystem>& storage,
                                   const identity::UserRecord& user, bool& home_mounted) {
  std::vector<HostMount> out;
  for (const config::FileSystem& fs : storage) {
    if (!login.storage_all && std::find(login.storage.begin(), login.storage.end(), fs.name) == login.storage.end())
      continue;
    const std::string path = fs.kind == config::FileSystem::Kind::kHostPath ? fs.source : fs.MountPoint();
    if (std::none_of(out.begin(), out.end(), [&](const HostMount& m) { return m.path == path; }))
      out.push_back({path, "", fs.read_only});
  }
  home_mounted = false;
  for (const HostMount& m : out) {
    const bool within = user.home == m.path || user.home.rfind(m.path + "/", 0) == 0;
    home_mounted = home_mounted || (login.home && within);
  }
  return out;
}


KubeLogins::KubeLogins(KubeClient* client, Directory directory, LoginTokens tokens,
                       KubeLoginsOptions options)
    : client_(client),
      directory_(std::move(directory)),
      tokens_(std::move(tokens)),
      options_(std::move(options)) {}

KubeLogins::~KubeLogins() { Stop(); }

Status KubeLogins::Start() {
  ListOptions lo;
  lo.label_selector = kLoginSelector;
  Result<Json> pods = client_->List(PodsPath(options_.ns), lo);
  if (!pods.ok()) return pods.status();
  const Time now = options_.clock->Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Json& p : (*pods)["items"]) {
      const std::string user = StateKeyOf(p);
      if (user.empty()) continue;
      auto& state = users_[user];
      if (!state) state = std::make_shared<UserState>();
      const std::string since = p["metadata"].value("annotations", Json::object()).value(kLoginIdleSinceAnnotation, "");
      state->idle_since = since.empty() ? now : std::strtoll(since.c_str(), nullptr, 10);
    }
  }
  housekeeping_ = std::thread([this] { Housekeeping(); });
  return Status::Ok();
}

std::string KubeLogins::UserDatabase(bool groups) const {
  std::shared_ptr<const identity::UserDirectory> dir = directory_();
  std::string text;
  if (groups) {
    for (const identity::GroupRecord& g : dir->Groups())
      if (identity::IsPlainUserName(g.name)) text += identity::GroupLine(g) + "\n";
  } else {
    for (const identity::UserRecord& u : dir->Users())
      if (identity::IsPlainUserName(u.name)) text += identity::PasswdLine(u) + "\n";
  }
  return text;
}

Status KubeLogins::EnsureSecret(const identity::UserRecord& user) {
  const std::string name = LoginPodName(user.name);
  const Time now = options_.clock->Now();
  Result<Json> old = client_->Get(SecretPath(options_.ns, name));
  if (!old.ok() && !IsNotFound(old.status())) return old.status();
  const Json notes = old.ok() ? (*old)["metadata"].value("annotations", Json::object()) : Json::object();
  const Time expires = std::strtoll(notes.value(kLoginTokenExpiresAnnotation, "0").c_str(), nullptr, 10);
  const std::string old_id = notes.value(kTokenIdAnnotation, "");
  const bool renew = !old.ok() || expires < now + options_.token_lifespan / 2;
  const bool needs_host_key =
      options_.login.ssh && (!old.ok() || !(*old).value("data", Json::object()).contains("ssh_host_key"));
  LoginSecretData data;
  data.passwd = UserDatabase(false);
  data.group = UserDatabase(true);
  data.authorized_keys = AuthorizedKeys(user);
  data.ca_pem = options_.ca_pem;
  if (needs_host_key) {
    Result<std::string> key = NewSshHostKey();
    if (!key.ok()) return key.status();
    data.ssh_host_key = std::move(*key);
  }
  std::string issued_id;
  if (renew) {
    auto issued = tokens_.issue(user, options_.token_lifespan);
    if (!issued.ok()) return issued.status();
    data.token = issued->first;
    data.token_expires = now + options_.token_lifespan;
    issued_id = issued->second;
  }
  if (!renew && !needs_host_key && SecretHolds(*old, data)) return Status::Ok();  // a warm login
  Json secret = BuildLoginSecret(options_.ns, user.name, data);
  if (renew) {
    secret["metadata"]["annotations"][kTokenIdAnnotation] = issued_id;
  } else {  // the token stays as it is
    secret["stringData"].erase("token");
    secret["metadata"]["annotations"].erase(kLoginTokenExpiresAnnotation);
  }
  Result<Json> r = !old.ok() ? client_->Create("/api/v1/namespaces/" + options_.ns + "/secrets", secret)
                             : client_->Patch(SecretPath(options_.ns, name), PatchType::kMerge, secret);
  if (!r.ok()) return r.status();
  if (renew && !old_id.empty()) tokens_.revoke(old_id);
  return Status::Ok();
}

Result<std::int32_t> KubeLogins::EnsureService(const identity::UserRecord& user) {
  const std::string path = ServicePath(options_.ns, LoginPodName(user.name));
  Result<Json> svc = client_->Get(path);
  if (!svc.ok() && IsNotFound(svc.status()))
    svc = client_->Create("/api/v1/namespaces/" + options_.ns + "/services",
                          BuildLoginService(options_.ns, user.name));
  if (!svc.ok() && IsAlreadyExists(svc.status())) svc = client_->Get(path);
  if (!svc.ok()) return svc.status();
  for (const Json& port : (*svc)["spec"].value("ports", Json::array()))
    if (port.value("nodePort", 0) > 0) return port["nodePort"].get<std::int32_t>();
  return Internal("login: the Service of " + user.name + " has no node port");
}

Result<std::string> KubeLogins::PickNode() {
  ListOptions nodes_query;
  nodes_query.label_selector = Selector(options_.login.node_selector);
  Result<Json> nodes = client_->List(NodesPath(), nodes_query);
  if (!nodes.ok()) return nodes.status();
  ListOptions pods_query;
  pods_query.label_selector = kLoginSelector;
  Result<Json> pods = client_->List(PodsPath(options_.ns), pods_query);
  if (!pods.ok()) return pods.status();
  std::map<std::string, int> logins;
  for (const Json& p : (*pods)["items"]) ++logins[p["spec"].value("nodeName", "")];
  std::string best;
  for (const Json& n : (*nodes)["items"]) {
    const std::string name = n["metadata"].value("name", "");
    if (NodeReady(n) && (best.empty() || logins[name] < logins[best])) best = name;
  }
  if (best.empty())
    return Unavailable("login: no Ready node" +
                       (nodes_query.label_selector.empty() ? std::string()
                                                           : " with " + nodes_query.label_selector) +
                       " for login pods");
  return best;
}

Result<Json> KubeLogins::WaitRunning(const std::string& pod) {
  const auto deadline = std::chrono::steady_clock::now() + options_.start_timeout;
  for (;;) {
    Result<Json> p = client_->Get(PodPath(options_.ns, pod));
    if (!p.ok()) return p.status();
    if (PodRunning(*p)) return p;
    const std::string phase = (*p)["status"].value("phase", "");
    if (phase == "Failed" || phase == "Succeeded") {
      const std::string reason = (*p)["status"].value("reason", "");
      const std::string message = (*p)["status"].value("message", "");
      return Unavailable("login: pod " + pod + " ended (" + phase +
                         (reason.empty() ? "" : ": " + reason) +
                         (message.empty() ? "" : ": " + message) + ")");
    }
    if (std::string stuck = StuckReason(*p); !stuck.empty())
      return Unavailable("login: pod " + pod + " cannot start: " + stuck);
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_) return Unavailable("login: lockstepd is stopping");
    if (std::chrono::steady_clock::now() >= deadline)
      return Unavailable(fmt::format("login: pod {} did not start within {} s", pod,
                                     options_.start_timeout.count() / 1000));
    wake_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

Result<std::optional<Json>> KubeLogins::Reusable(const std::string& name,
                                                 const std::function<bool(const Json&)>& ours) {
  using Answer = Result<std::optional<Json>>;
  Result<Json> pod = client_->Get(PodPath(options_.ns, name));
  if (!pod.ok()) return IsNotFound(pod.status()) ? Answer(std::nullopt) : Answer(pod.status());
  const std::string phase = (*pod)["status"].value("phase", "");
  const bool going = (*pod)["metadata"].contains("deletionTimestamp");
  if (!going && ours(*pod) && phase != "Failed" && phase != "Succeeded") return Answer(std::move(*pod));
  // Ended, going, or not what it should be: gone before a new one.
  DeleteOptions del;
  del.grace_period_seconds = 0;
  (void)client_->Delete(PodPath(options_.ns, name), del);
  const auto deadline = std::chrono::steady_clock::now() + options_.start_timeout;
  while (client_->Get(PodPath(options_.ns, name)).ok()) {
    std::unique_lock<std::mutex> lock(mu_);
    if (stopping_ || std::chrono::steady_clock::now() >= deadline)
      return Unavailable("login: the old pod " + name + " is still being deleted");
    wake_.wait_for(lock, std::chrono::milliseconds(100));
  }
  return Answer(std::nullopt);
}

Result<Json> KubeLogins::EnsurePod(const identity::UserRecord& user, bool& created) {
  created = false;
  const std::string name = LoginPodName(user.name);
  // A pod made for a former user of the name (another uid) is not theirs.
  Result<std::optional<Json>> reuse = Reusable(name, [&](const Json& pod) {
    return pod["metadata"].value("annotations", Json::object()).value(kLoginUidAnnotation, "") ==
           std::to_string(user.uid);
  });
  if (!reuse.ok()) return reuse.status();
  if (Status s = EnsureSecret(user); !s.ok()) return s;
  if (*reuse) return PodRunning(**reuse) ? std::move(**reuse) : WaitRunning(name);
  Result<std::string> node = PickNode();
  if (!node.ok()) return node.status();
  LoginPodSpec spec;
  spec.ns = options_.ns;
  spec.user = user.name;
  spec.uid = user.uid;
  spec.gid = user.gid;
  spec.groups = user.groups;
  spec.home = user.home;
  spec.shell = user.shell;
  spec.image = options_.login.image.empty() ? options_.default_image : options_.login.image;
  spec.cpu_millis = options_.login.cpu_millis;
  spec.memory_mb = options_.login.memory_mb;
  spec.node = *node;
  spec.host_network = options_.login.host_network;
  {
    std::lock_guard<std::mutex> lock(mu_);
    spec.mounts = LoginMounts(options_.login, options_.storage, user, spec.home_mounted);
  }
  spec.server = options_.server;
  spec.has_ca = !options_.ca_pem.empty();
  if (options_.login.ssh) {
    // Made first: a host-network pod's sshd listens on the node port the apiserver gave it.
    Result<std::int32_t> node_port = EnsureService(user);
    if (!node_port.ok()) return node_port.status();
    spec.ssh_port = options_.login.host_network ? *node_port : kLoginSshPort;
  }
  Result<Json> body = BuildLoginPod(spec);
  if (!body.ok()) return body.status();
  Result<Json> made = client_->Create(PodsPath(options_.ns), *body);
  if (!made.ok() && !IsAlreadyExists(made.status())) return made.status();
  created = made.ok();
  log::Info("login: pod {} for {} on {}", name, user.name, *node);
  return WaitRunning(name);
}

void KubeLogins::DeletePodAndSecret(const std::string& key, const std::string& why) {
  const std::string name = PodNameOf(key);
  if (IsPoolKey(key)) ForgetPoolTokens(key.substr(kPoolKeyPrefix.size()));
  DeleteOptions del;
  del.grace_period_seconds = 5;
  Result<Json> pod = client_->Delete(PodPath(options_.ns, name), del);
  if (!pod.ok() && !IsNotFound(pod.status()))
    log::Warning("login: cannot delete pod {}: {}", name, pod.status().message());
  (void)client_->Delete(ServicePath(options_.ns, name));
  Result<Json> secret = client_->Get(SecretPath(options_.ns, name));
  if (secret.ok()) {
    const std::string id =
        (*secret)["metadata"].value("annotations", Json::object()).value(kTokenIdAnnotation, "");
    (void)client_->Delete(SecretPath(options_.ns, name));
    if (!id.empty()) tokens_.revoke(id);
  }
  if (pod.ok()) log::Info("login: pod {} deleted ({})", name, why);
}

std::string KubeLogins::StateKeyOf(const Json& pod) {
  const Json labels = pod["metadata"].value("labels", Json::object());
  const std::string pool = labels.value(kLoginPoolLabel, "");
  return pool.empty() ? labels.value(kLoginUserLabel, "") : std::string(kPoolKeyPrefix) + pool;
}

std::string KubeLogins::PodNameOf(const std::string& key) {
  return IsPoolKey(key) ? LoginPoolPodName(key.substr(kPoolKeyPrefix.size())) : LoginPodName(key);
}

void KubeLogins::ReapIdle() {
  ListOptions lo;
  lo.label_selector = kLoginSelector;
  Result<Json> pods = client_->List(PodsPath(options_.ns), lo);
  if (!pods.ok()) return;
  const Time now = options_.clock->Now();
  for (const Json& p : (*pods)["items"]) {
    const std::string user = StateKeyOf(p);
    if (user.empty() || p["metadata"].contains("deletionTimestamp")) continue;
    std::shared_ptr<UserState> state;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& s = users_[user];
      if (!s) {
        s = std::make_shared<UserState>();
        s->idle_since = now;  // made by another lockstepd, or before the last restart
      }
      state = s;
    }
    std::unique_lock<std::mutex> ensure(state->ensure_mu, std::try_to_lock);
    if (!ensure.owns_lock()) continue;  // a login is making or using it right now
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (state->open > 0 || now - state->idle_since < options_.login.idle_timeout) continue;
    }
    DeletePodAndSecret(user, fmt::format("idle for {} s", now - state->idle_since));
  }
}

void KubeLogins::RemoveUser(const std::string& user) {
  std::vector<std::shared_ptr<Session>> doomed;
  std::shared_ptr<UserState> state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, s] : sessions_)
      if (s->user == user) doomed.push_back(s);
    // Their tokens in pools are revoked with all theirs: forgotten here.
    for (auto it = pool_tokens_.begin(); it != pool_tokens_.end();)
      it = it->first.second == user ? pool_tokens_.erase(it) : std::next(it);
    auto& st = users_[user];
    if (!st) st = std::make_shared<UserState>();
    state = st;
  }
  for (const std::shared_ptr<Session>& s : doomed) {
    std::lock_guard<std::mutex> lock(s->mu);
    s->closed = true;
    s->error = user + " is no longer a user of this cluster";
    if (s->stream) s->stream->Close();
    s->drained.notify_all();
  }
  std::lock_guard<std::mutex> ensure(state->ensure_mu);
  DeletePodAndSecret(user, "the user was removed");
}

void KubeLogins::UserChanged(const identity::UserRecord& user) {
  std::shared_ptr<UserState> state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = users_.find(user.name);
    if (it == users_.end()) return;  // no pod of theirs known here
    state = it->second;
  }
  std::lock_guard<std::mutex> ensure(state->ensure_mu);
  if (!client_->Get(SecretPath(options_.ns, LoginPodName(user.name))).ok()) return;
  if (Status s = EnsureSecret(user); !s.ok())
    log::Warning("login: the Secret of {} was not updated: {}", user.name, s.message());
}

void KubeLogins::SetStorage(std::vector<config::FileSystem> storage) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.storage = std::move(storage);
}

void KubeLogins::ReapForTest() { ReapIdle(); }

}  // namespace lockstep::kube
