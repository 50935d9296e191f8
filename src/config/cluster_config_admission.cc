// The `admission:` section of the cluster YAML (admission_config.h, docs/policy.md).
#include <string>

#include "config/cluster_config_parser.h"

namespace lockstep::config {

void ClusterConfigParser::ReadAdmission(const YAML::Node& map) {
  if (reader_.failed()) return;
  AdmissionConfig& a = config_.admission;
  MapView m(reader_, map, "admission");
  a.policy_file = m.String("policy_file", "");
  a.audit_log = m.String("audit_log", "");
  for (const char* key : {"policy_file", "audit_log"}) {
    const std::string& v = std::string(key) == "policy_file" ? a.policy_file : a.audit_log;
    if (!v.empty() && !IsAbsolute(v)) m.Fail(key, "must be an absolute path");
  }
  a.audit_max_mb = m.Int("audit_max_mb", a.audit_max_mb, 1, 1 << 20);
  a.audit_keep = static_cast<std::int32_t>(m.Int("audit_keep", a.audit_keep, 1, 100));
  a.kubernetes_defaults = m.Bool("kubernetes_defaults", a.kubernetes_defaults);
  a.reload_period = m.DurationSeconds("reload_period", a.reload_period);
  if (a.reload_period < 1 || a.reload_period > 3600)
    m.Fail("reload_period", "must be from 1 to 3600 seconds");
  if (YAML::Node w = m.Value("webhook"); w.IsDefined() && !w.IsNull()) {
    MapView h(reader_, w, "admission.webhook");
    AdmissionWebhookConfig& wh = a.webhook;
    wh.listen = h.RequiredString("listen");
    wh.tls_cert = h.RequiredString("tls_cert");
    wh.tls_key = h.RequiredString("tls_key");
    for (const char* key : {"tls_cert", "tls_key"}) {
      const std::string& v = std::string(key) == "tls_cert" ? wh.tls_cert : wh.tls_key;
      if (!v.empty() && !IsAbsolute(v)) h.Fail(key, "must be an absolute path");
    }
    if (!wh.listen.empty() && wh.listen.find(':') == std::string::npos)
      h.Fail("listen", "'" + wh.listen + "' is not HOST:PORT");
    if (h.Has("trusted_users")) wh.trusted_users = h.StringList("trusted_users");
    h.Finish();
  }
  m.Finish();
}

}  // namespace lockstep::config
