// lockstepd's admission policy (docs/policy.md), composed: the gate (policy/policy_gate.h) from
// the cluster YAML's `admission:` section, given to the controller (submissions and updates), to
// the API's policy routes and /metrics, and on Kubernetes the validating webhook's listener.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/kubernetes/admission/admission_review.h"
#include "config/cluster_config.h"
#include "controller/policy_routes.h"
#include "identity/user_directory.h"
#include "policy/policy_gate.h"
#include "server/webhook_listener.h"

namespace lockstep::lockstepd {

class PolicyWiring {
 public:
  // Null (and Ok) when the cluster has no policy at all: no file, no webhook, and not
  // Kubernetes with its default rules. An error names the policy file's line and rule.
  static Result<std::unique_ptr<PolicyWiring>> Create(
      const config::ClusterConfig& cluster, const std::string& state_dir,
      std::function<std::shared_ptr<const identity::UserDirectory>()> directory);

  policy::PolicyGate& gate() { return *gate_; }
  controller::PolicyEndpoints Endpoints();
  // Starts the webhook's listener when the YAML names one, and the policy file's watch.
  Status Start();
  void SetStorage(const std::vector<config::FileSystem>& storage);
  int webhook_port() const { return webhook_ ? webhook_->port() : 0; }

 private:
  PolicyWiring(config::AdmissionConfig config, std::unique_ptr<policy::PolicyGate> gate,
               kube::WebhookOptions webhook)
      : config_(std::move(config)), gate_(std::move(gate)), webhook_options_(std::move(webhook)) {}

  const config::AdmissionConfig config_;
  std::unique_ptr<policy::PolicyGate> gate_;
  const kube::WebhookOptions webhook_options_;
  std::unique_ptr<server::WebhookListener> webhook_;
};

}  // namespace lockstep::lockstepd
