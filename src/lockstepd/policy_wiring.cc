#include "lockstepd/policy_wiring.h"

#include "common/log.h"

namespace lockstep::lockstepd {
namespace {

namespace http = boost::beast::http;

std::vector<std::string> StoragePaths(const std::vector<config::FileSystem>& storage) {
  std::vector<std::string> paths;
  for (const config::FileSystem& fs : storage) paths.push_back(fs.MountPoint());
  return paths;
}

server::Response JsonAnswer(http::status status, const nlohmann::json& body) {
  server::Response res{status, 11};
  res.set(http::field::content_type, "application/json");
  res.body() = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return res;
}

}  // namespace

Result<std::unique_ptr<PolicyWiring>> PolicyWiring::Create(
    const config::ClusterConfig& cluster, const std::string& state_dir,
    std::function<std::shared_ptr<const identity::UserDirectory>()> directory) {
  const config::AdmissionConfig& a = cluster.admission;
  const bool kubernetes = cluster.backend == "kubernetes";
  if (a.policy_file.empty() && a.webhook.listen.empty() && !(kubernetes && a.kubernetes_defaults))
    return std::unique_ptr<PolicyWiring>();
  policy::GateOptions o;
  o.policy_file = a.policy_file;
  o.kubernetes_defaults = kubernetes && a.kubernetes_defaults;
  o.audit_log = a.audit_log.empty() ? state_dir + "/audit.log" : a.audit_log;
  o.audit_max_bytes = static_cast<std::uint64_t>(a.audit_max_mb) << 20;
  o.audit_keep = a.audit_keep;
  o.reload_period = std::chrono::seconds(a.reload_period);
  o.directory = std::move(directory);
  o.storage_paths = StoragePaths(cluster.storage);
  o.trusted_users = a.webhook.trusted_users;
  Result<std::unique_ptr<policy::PolicyGate>> gate = policy::PolicyGate::Open(std::move(o));
  if (!gate.ok()) return gate.status();
  kube::WebhookOptions w;
  if (cluster.default_partition < cluster.base.partitions.size())
    w.pods.default_queue = cluster.base.partitions[cluster.default_partition].name;
  log::Info("admission policy: {} rule(s){}, audit log {}", (*gate)->RuleCount(),
            a.policy_file.empty() ? "" : " from " + a.policy_file,
            a.audit_log.empty() ? state_dir + "/audit.log" : a.audit_log);
  return std::unique_ptr<PolicyWiring>(new PolicyWiring(a, std::move(*gate), std::move(w)));
}

controller::PolicyEndpoints PolicyWiring::Endpoints() {
  controller::PolicyEndpoints e;
  e.gate = gate_.get();
  e.test_pod = [this](const std::string& as, const nlohmann::json& pod, const std::string& caller) {
    return kube::TestPod(*gate_, as, pod, caller, webhook_options_);
  };
  return e;
}

Status PolicyWiring::Start() {
  gate_->Watch();
  if (config_.webhook.listen.empty()) return Status::Ok();
  server::WebhookListener::Options o;
  o.listen = config_.webhook.listen;
  o.tls_cert = config_.webhook.tls_cert;
  o.tls_key = config_.webhook.tls_key;
  auto serve = [this](const server::Request& req) -> server::Response {
    std::string_view target(req.target().data(), req.target().size());
    if (target.substr(0, target.find('?')) != "/validate")
      return server::JsonError(http::status::not_found, "the webhook answers POST /validate");
    nlohmann::json review = nlohmann::json::parse(req.body(), nullptr, false);
    Result<nlohmann::json> answer =
        review.is_discarded() ? Result<nlohmann::json>(InvalidArgument("the body is not JSON"))
                              : kube::ReviewAdmission(*gate_, review, webhook_options_);
    if (!answer.ok())
      return server::JsonError(http::status::bad_request, answer.status().message());
    return JsonAnswer(http::status::ok, *answer);
  };
  Result<std::unique_ptr<server::WebhookListener>> started =
      server::WebhookListener::Start(o, std::move(serve));
  if (!started.ok()) return started.status();
  webhook_ = std::move(*started);
  log::Info("admission webhook on https://{} (port {})", config_.webhook.listen, webhook_->port());
  return Status::Ok();
}

void PolicyWiring::SetStorage(const std::vector<config::FileSystem>& storage) {
  gate_->SetStorage(StoragePaths(storage));
}

}  // namespace lockstep::lockstepd
