#include "lockstepd/login_wiring.h"

#include <fstream>
#include <sstream>

#include "common/log.h"

namespace lockstep::lockstepd {
namespace {

using Json = nlohmann::json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr Caller kLockstepd{0, 0, "root"};  // revocations and cancellations of removed users

}  // namespace

Result<std::unique_ptr<LoginWiring>> LoginWiring::Create(const config::ClusterConfig& cluster) {
  auto identity = identity::IdentitySource::Open(cluster.identity);
  if (!identity.ok()) return identity.status();
  log::Info("identity: users from {}", (*identity)->Current()->Describe());
  return std::unique_ptr<LoginWiring>(
      new LoginWiring(cluster.login, cluster.storage, std::move(*identity)));
}

LoginWiring::~LoginWiring() {
  pods_.reset();
  identity_.reset();  // stops its watch before what it calls goes
}

std::function<std::shared_ptr<const identity::UserDirectory>()> LoginWiring::Directory() const {
  identity::IdentitySource* source = identity_.get();
  return [source] { return source->Current(); };
}

std::function<std::vector<std::uint32_t>(const std::string&)> LoginWiring::GroupsOf() const {
  identity::IdentitySource* source = identity_.get();
  return [source](const std::string& user) {
    std::optional<identity::UserRecord> u = source->Current()->UserByName(user);
    return u ? u->groups : std::vector<std::uint32_t>{};
  };
}

Status LoginWiring::Start(controller::Controller& controller, kube::KubeClient* client,
                          const std::string& ns, const LoginListener& listener) {
  controller_ = &controller;
  tokens_ = std::make_unique<controller::TokenRegistry>(
      controller.store(), [directory = Directory()](std::uint32_t uid) -> std::optional<std::string> {
        std::optional<identity::UserRecord> u = directory()->UserByUid(uid);
        if (!u) return std::nullopt;
        return u->name;
      });
  if (client) {
    kube::KubeLoginsOptions o;
    o.login = login_;
    o.ns = ns;
    o.storage = storage_;
    o.default_image = std::string("docker.io/lockstep/lockstepd:") + LOCKSTEP_VERSION;
    o.server = !login_.server.empty() ? login_.server
               : !listener.listen.empty() ? "https://" + listener.listen
                                          : "";
    const std::string ca = !login_.ca_cert.empty() ? login_.ca_cert : listener.tls_cert;
    if (!ca.empty()) {
      o.ca_pem = ReadFile(ca);
      if (o.ca_pem.empty()) return InvalidArgument("login: cannot read the CA certificate " + ca);
    }
    if (o.server.empty())
      log::Warning("login: lockstepd has no --listen and login.server is not set: the Slurm commands "
                "in login pods will not reach lockstepd");
    kube::LoginTokens tokens;
    tokens.issue = [this](const identity::UserRecord& u, Seconds lifespan)
        -> Result<std::pair<std::string, std::string>> {
      Result<std::string> t = tokens_->Issue(Caller{u.uid, u.gid, u.name}, lifespan, std::time(nullptr));
      if (!t.ok()) return t.status();
      return std::make_pair(*t, controller::TokenRegistry::IdOf(*t));
    };
    tokens.revoke = [this](const std::string& id) {
      controller::TokenRevocation what;
      what.id = id;
      (void)tokens_->Revoke(kLockstepd, true, what);
    };
    pods_ = std::make_unique<kube::KubeLogins>(client, Directory(), std::move(tokens), o);
    if (Status s = pods_->Start(); !s.ok()) return s;
  }
  // The identity source's default accounts, as sacctmgr's DefaultAccount (the host's users have
  // none: nothing to list).
  if (identity_->config().source != config::IdentityConfig::Source::kNss)
    for (const identity::UserRecord& u : identity_->Current()->Users()) ApplyDefaultAccount(u);
  identity_->Watch([this](const identity::DirectoryChange& change) { UsersChanged(change); });
  return Status::Ok();
}

void LoginWiring::ApplyDefaultAccount(const identity::UserRecord& user) {
  if (user.default_account.empty()) return;
  const Json tables = controller_->AccountsTables();
  for (const Json& u : tables.value("users", Json::array()))
    if (u.value("name", "") == user.name && u.value("default_account", "") == user.default_account)
      return;  // already
  bool exists = false, associated = false;
  for (const Json& a : tables.value("accounts", Json::array()))
    exists = exists || a.value("name", "") == user.default_account;
  for (const Json& a : tables.value("associations", Json::array()))
    associated = associated || (a.value("user", "") == user.name &&
                                a.value("account", "") == user.default_account);
  if (!exists) {
    log::Warning("identity: {}'s default_account {} is not an account (sacctmgr add account)",
                 user.name, user.default_account);
    return;
  }
  // As sacctmgr would: the association if missing, then the default.
  Result<Json> r = Result<Json>(Json::object());
  if (!associated)
    r = controller_->ChangeAccounts(kLockstepd, {{"action", "add"}, {"entity", "user"},
                                                 {"names", {user.name}},
                                                 {"set", {{"account", user.default_account}}}});
  if (r.ok())
    r = controller_->ChangeAccounts(kLockstepd, {{"action", "modify"}, {"entity", "user"},
                                                 {"names", {user.name}},
                                                 {"set", {{"defaultaccount", user.default_account}}}});
  if (r.ok())
    log::Info("identity: {}'s default account is {}", user.name, user.default_account);
  else
    log::Warning("identity: {}'s default account not set: {}", user.name, r.status().message());
}

void LoginWiring::UsersChanged(const identity::DirectoryChange& change) {
  for (const std::vector<identity::UserRecord>* list : {&change.changed, &change.added})
    for (const identity::UserRecord& u : *list) ApplyDefaultAccount(u);
  if (pods_)
    for (const identity::UserRecord& u : change.changed) pods_->UserChanged(u);
  for (const identity::UserRecord& u : change.removed) {
    if (pods_) pods_->RemoveUser(u.name);
    controller::TokenRevocation what;
    what.user = u.name;
    Result<std::size_t> n = tokens_->Revoke(kLockstepd, true, what);
    if (n.ok() && *n > 0) log::Info("identity: {} token(s) of {} revoked", *n, u.name);
    if (!identity_->config().cancel_jobs_of_removed) continue;
    Json jobs = controller_->ListJobs(Json{{"user", u.name}});
    for (const Json& j : jobs.value("jobs", Json::array())) {
      const JobId id = j.value("job_id", JobId{0});
      if (id == 0) continue;
      Status s = controller_->Cancel(kLockstepd, id, 0);
      log::Info("identity: job {} of removed user {} {}", id, u.name,
                s.ok() ? "cancelled" : "not cancelled: " + s.message());
    }
  }
}

void LoginWiring::SetStorage(std::vector<config::FileSystem> storage) {
  if (pods_) pods_->SetStorage(storage);
  storage_ = std::move(storage);
}

Json LoginWiring::Describe() {
  Json pools = Json::array();
  if (pods_)
    for (const config::LoginPool& p : login_.pools) pools.push_back(p.name);
  return {{"mode", pods_ ? "kubernetes" : "hosts"},
          {"hosts", login_.hosts},
          {"alias", login_.alias},
          {"pools", pools},
          {"ssh", pods_ && login_.ssh}};
}

Result<Json> LoginWiring::Open(const Caller& caller, bool caller_is_operator, const Json& body) {
  if (!pods_)
    return FailedPrecondition("login: this cluster runs on hosts: `lockstep login` opens a shell "
                              "on a login host");
  return pods_->Open(caller, caller_is_operator, body);
}

Result<Json> LoginWiring::Input(const Caller& caller, const std::string& session, const Json& body) {
  if (!pods_) return NotFound("login: no session " + session);
  return pods_->Input(caller, session, body);
}

void LoginWiring::Output(const Caller& caller, const std::string& session, std::uint64_t offset,
                         std::function<void(Result<Json>)> done) {
  if (!pods_) return done(NotFound("login: no session " + session));
  pods_->Output(caller, session, offset, std::move(done));
}

Status LoginWiring::Close(const Caller& caller, const std::string& session) {
  if (!pods_) return NotFound("login: no session " + session);
  return pods_->Close(caller, session);
}

}  // namespace lockstep::lockstepd
