// KubeLogins' shared pools (docs/login.md, "Shared pools"): a team's login pod, which members of
// the pool's groups log in to, each session as its user (`lockstep login-as`), each user's token
// in a directory of theirs in the pod.
#include <fmt/format.h>

#include <algorithm>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/login/kube_login_internal.h"
#include "backend/kubernetes/objects/login_pod.h"
#include "common/log.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;

std::string SecretPath(const std::string& ns, const std::string& name) {
  return "/api/v1/namespaces/" + ns + "/secrets/" + name;
}

}  // namespace

Status KubeLogins::CheckPoolMember(const config::LoginPool& pool, const identity::UserRecord& user) {
  std::vector<std::uint32_t> mine = user.groups;
  mine.push_back(user.gid);
  for (const identity::GroupRecord& g : directory_()->Groups())
    if (std::find(pool.groups.begin(), pool.groups.end(), g.name) != pool.groups.end() &&
        std::find(mine.begin(), mine.end(), g.gid) != mine.end())
      return Status::Ok();
  std::string names;
  for (const std::string& g : pool.groups) names += (names.empty() ? "" : ", ") + g;
  return PermissionDenied("login: " + user.name + " is not in a group of pool " + pool.name + " (" +
                          names + ")");
}

Status KubeLogins::EnsurePoolSecret(const config::LoginPool& pool) {
  const std::string name = LoginPoolPodName(pool.name);
  Json data = {{"passwd", UserDatabase(false)}, {"group", UserDatabase(true)}};
  if (!options_.ca_pem.empty()) data["ca.crt"] = options_.ca_pem;
  Json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"type", "Opaque"},
                 {"metadata",
                  {{"name", name},
                   {"namespace", options_.ns},
                   {"labels",
                    {{"app.kubernetes.io/managed-by", "lockstep"},
                     {"app.kubernetes.io/component", "login"},
                     {kLoginPoolLabel, pool.name}}}}},
                 {"stringData", data}};
  Result<Json> r = client_->Create("/api/v1/namespaces/" + options_.ns + "/secrets", secret);
  if (!r.ok() && IsAlreadyExists(r.status()))
    r = client_->Patch(SecretPath(options_.ns, name), PatchType::kMerge, Json{{"stringData", data}});
  return r.ok() ? Status::Ok() : r.status();
}

Result<Json> KubeLogins::EnsurePoolPod(const config::LoginPool& pool, bool& created) {
  created = false;
  const std::string name = LoginPoolPodName(pool.name);
  Result<std::optional<Json>> reuse = Reusable(name, [](const Json&) { return true; });
  if (!reuse.ok()) return reuse.status();
  if (Status s = EnsurePoolSecret(pool); !s.ok()) return s;
  if (*reuse) return PodRunning(**reuse) ? std::move(**reuse) : WaitRunning(name);
  Result<std::string> node = PickNode();
  if (!node.ok()) return node.status();
  LoginPoolPodSpec spec;
  spec.ns = options_.ns;
  spec.pool = pool.name;
  spec.image = options_.login.image.empty() ? options_.default_image : options_.login.image;
  spec.cpu_millis = pool.cpu_millis > 0 ? pool.cpu_millis : options_.login.cpu_millis;
  spec.memory_mb = pool.memory_mb > 0 ? pool.memory_mb : options_.login.memory_mb;
  spec.node = *node;
  spec.host_network = options_.login.host_network;
  {
    std::lock_guard<std::mutex> lock(mu_);
    identity::UserRecord nobody;
    bool unused = false;
    spec.mounts = LoginMounts(options_.login, options_.storage, nobody, unused);
  }
  spec.server = options_.server;
  spec.has_ca = !options_.ca_pem.empty();
  Result<Json> body = BuildLoginPoolPod(spec);
  if (!body.ok()) return body.status();
  ForgetPoolTokens(pool.name);  // a new pod holds none yet
  Result<Json> made = client_->Create(PodsPath(options_.ns), *body);
  if (!made.ok() && !IsAlreadyExists(made.status())) return made.status();
  created = made.ok();
  log::Info("login: pool pod {} on {}", name, *node);
  return WaitRunning(name);
}

Status KubeLogins::StorePoolToken(const config::LoginPool& pool, const Json& pod,
                                  const identity::UserRecord& user) {
  const std::string pod_uid = pod["metadata"].value("uid", "");
  const Time now = options_.clock->Now();
  std::string old_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pool_tokens_.find({pool.name, user.name});
    if (it != pool_tokens_.end() && it->second.pod_uid == pod_uid &&
        it->second.expires >= now + options_.token_lifespan / 2)
      return Status::Ok();
    if (it != pool_tokens_.end()) old_id = it->second.id;
  }
  auto issued = tokens_.issue(user, options_.token_lifespan);
  if (!issued.ok()) return issued.status();
  // The token goes on the exec's stdin, never on a command line others in the pod could read.
  const std::vector<std::string> argv = {"lockstep", "login-as", "--store-token",
                                         std::to_string(user.uid), std::to_string(user.gid),
                                         GidList(user.groups)};
  std::string errors;
  auto stream = ExecStream::Open(
      client_->config(),
      ExecTarget(options_.ns, pod["metadata"].value("name", ""), kLoginContainer, argv, true, false),
      std::chrono::seconds(30), [&errors](ExecChannel channel, std::string data) {
        if (channel == ExecChannel::kStderr) errors += data;
      });
  if (!stream.ok()) return Unavailable("login: cannot reach pool pod: " + stream.status().message());
  (*stream)->SendStdin(issued->first + "\n");
  Result<int> code = (*stream)->Run();
  if (!code.ok() || *code != 0) {
    tokens_.revoke(issued->second);
    return Unavailable("login: cannot give " + user.name + " a token in pool " + pool.name + ": " +
                       (code.ok() ? errors : code.status().message()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  pool_tokens_[{pool.name, user.name}] = {pod_uid, now + options_.token_lifespan, issued->second};
  if (!old_id.empty()) tokens_.revoke(old_id);
  return Status::Ok();
}

void KubeLogins::ForgetPoolTokens(const std::string& pool) {
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = pool_tokens_.begin(); it != pool_tokens_.end();) {
      if (it->first.first == pool) {
        ids.push_back(it->second.id);
        it = pool_tokens_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const std::string& id : ids) tokens_.revoke(id);
}

}  // namespace lockstep::kube
