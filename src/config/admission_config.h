// The `admission:` section of the cluster YAML (docs/policy.md): where the admission policy's
// rules are, where its decisions are logged, and the validating webhook lockstepd serves to the
// Kubernetes API server. Plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/types.h"

namespace lockstep::config {

struct AdmissionWebhookConfig {
  // HOST:PORT of the HTTPS listener the API server calls (AdmissionReview v1); "": none.
  std::string listen;
  std::string tls_cert, tls_key;  // PEM files; the ValidatingWebhookConfiguration's caBundle signs the cert
  // Kubernetes users whose pods are not judged (lockstepd's own identity: the pods it makes
  // for jobs it already admitted). Default: deploy/kubernetes' service account.
  std::vector<std::string> trusted_users = {"system:serviceaccount:lockstep:lockstepd"};
  bool operator==(const AdmissionWebhookConfig&) const = default;
};

struct AdmissionConfig {
  // The rules (YAML, docs/policy.md), read again when the file changes; "": none (on Kubernetes
  // the default rules still apply). `lockstepd --policy FILE` replaces it.
  std::string policy_file;
  // The audit log: one JSON line per decision, 0600; "": STATE_DIR/audit.log. Rotated past
  // audit_max_mb into audit.log.1 ... audit.log.<audit_keep>.
  std::string audit_log;
  std::int64_t audit_max_mb = 64;
  std::int32_t audit_keep = 5;
  // On Kubernetes, the default rules (no privileged containers, no host namespaces, no hostPath
  // outside the declared storage, no running as another user) apply after the file's rules.
  bool kubernetes_defaults = true;
  Seconds reload_period = 2;
  AdmissionWebhookConfig webhook;
  bool operator==(const AdmissionConfig&) const = default;
};

}  // namespace lockstep::config
