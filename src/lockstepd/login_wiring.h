// lockstepd's identity and login environments (docs/login.md), composed: the identity source
// (identity/identity_source.h) and what follows a user's removal from it (their login pod,
// tokens and sessions at once; their jobs cancelled when the YAML says so), and on Kubernetes
// each user's login pod (backend/kubernetes/login) behind the API's login routes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/login/kube_logins.h"
#include "config/cluster_config.h"
#include "controller/controller.h"
#include "controller/login_endpoints.h"
#include "controller/tokens.h"
#include "identity/identity_source.h"

namespace lockstep::lockstepd {

// What the pods' commands are told about lockstepd's HTTPS listener.
struct LoginListener {
  std::string listen;    // lockstepd --listen HOST:PORT ("" : none)
  std::string tls_cert;  // lockstepd --tls-cert: the CA of a self-signed certificate
};

class LoginWiring : public controller::LoginEndpoints {
 public:
  // Reads the identity source (an error names the file and line).
  static Result<std::unique_ptr<LoginWiring>> Create(const config::ClusterConfig& cluster);
  ~LoginWiring() override;

  std::function<std::shared_ptr<const identity::UserDirectory>()> Directory() const;
  // A user's supplementary groups (job pods' supplementalGroups).
  std::function<std::vector<std::uint32_t>(const std::string& user)> GroupsOf() const;

  // Starts the login pods on Kubernetes (`client` not null) and the identity watch. The
  // controller and the client must outlive this.
  Status Start(controller::Controller& controller, kube::KubeClient* client,
               const std::string& ns, const LoginListener& listener);
  void SetStorage(std::vector<config::FileSystem> storage);

  // controller::LoginEndpoints
  nlohmann::json Describe() override;
  Result<nlohmann::json> Open(const Caller& caller, bool caller_is_operator,
                              const nlohmann::json& body) override;
  Result<nlohmann::json> Input(const Caller& caller, const std::string& session,
                               const nlohmann::json& body) override;
  void Output(const Caller& caller, const std::string& session, std::uint64_t offset,
              std::function<void(Result<nlohmann::json>)> done) override;
  Status Close(const Caller& caller, const std::string& session) override;

 private:
  LoginWiring(config::LoginConfig login, std::vector<config::FileSystem> storage,
              std::unique_ptr<identity::IdentitySource> identity)
      : login_(std::move(login)), storage_(std::move(storage)), identity_(std::move(identity)) {}
  void UsersChanged(const identity::DirectoryChange& change);
  // The user's default_account made their default account (sacctmgr's DefaultAccount), with
  // an association in it when they had none; logged when it is not an account.
  void ApplyDefaultAccount(const identity::UserRecord& user);

  const config::LoginConfig login_;
  std::vector<config::FileSystem> storage_;
  std::unique_ptr<identity::IdentitySource> identity_;
  controller::Controller* controller_ = nullptr;
  std::unique_ptr<controller::TokenRegistry> tokens_;
  std::unique_ptr<kube::KubeLogins> pods_;  // on Kubernetes
};

}  // namespace lockstep::lockstepd
