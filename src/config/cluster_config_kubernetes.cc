// The `kubernetes:` section of the cluster YAML (KubernetesSettings, docs/configuration.md).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "config/cluster_config_parser.h"

namespace lockstep::config {
namespace {

// A rate in requests per second: a number (fractions allowed; the reader's Int would refuse
// "0.5"); `fallback` when absent.
double Rate(MapView& m, const std::string& key, double fallback) {
  if (!m.Has(key)) return fallback;
  const std::string text = m.String(key, "");
  try {
    std::size_t used = 0;
    const double rate = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return rate;
  } catch (const std::exception&) {
    m.Fail(key, "'" + text + "' is not a number");
    return fallback;
  }
}

}  // namespace

void ClusterConfigParser::ReadKubernetes(const YAML::Node& map) {
  if (reader_.failed()) return;
  KubernetesSettings& k = config_.kubernetes;
  MapView m(reader_, map, "kubernetes");
  k.kubeconfig = m.String("kubeconfig", k.kubeconfig);
  k.context = m.String("context", k.context);
  k.ns = m.String("namespace", k.ns);
  if (k.ns.empty()) m.Fail("namespace", "must not be empty");
  k.image = m.String("image", k.image);
  if (k.image.empty()) m.Fail("image", "must not be empty");
  using Pods = KubernetesSettings::Pods;
  k.pods =
      m.Enum<Pods>("pods", {{"per-node", Pods::kPerNode}, {"per-task", Pods::kPerTask}}, k.pods);
  if (m.Has("switch_labels"))
    k.switch_labels = m.StringList("switch_labels");  // [] : no switch tree (blocks only)
  else
    (void)m.Value("switch_labels");  // absent or null: the defaults
  k.block_label = m.String("block_label", k.block_label);
  k.node_selector = m.String("node_selector", k.node_selector);
  k.ignored_taints = m.StringList("ignored_taints");
  if (m.Has("health_conditions")) {
    k.health_conditions = m.StringList("health_conditions");  // [] : none
    for (const std::string& c : k.health_conditions) {
      const std::size_t eq = c.find('=');
      const std::string status = eq == std::string::npos ? "True" : c.substr(eq + 1);
      if (c.empty() || eq == 0 || (status != "True" && status != "False" && status != "Unknown"))
        m.Fail("health_conditions",
               "'" + c + "' is not a condition: TYPE or TYPE=True|False|Unknown");
    }
  } else {
    (void)m.Value("health_conditions");
  }
  k.master_port = static_cast<std::int32_t>(m.Int("master_port", k.master_port, 0, 65535));
  k.qps = Rate(m, "qps", k.qps);
  k.bind_qps = Rate(m, "bind_qps", k.bind_qps);
  k.burst = static_cast<std::int32_t>(m.Int("burst", k.burst, 1, 1'000'000));
  k.leader_elect = m.Bool("leader_elect", k.leader_elect);
  k.lease_name = m.String("lease_name", k.lease_name);
  if (k.lease_name.empty()) m.Fail("lease_name", "must not be empty");
  // Seconds ("3600"), or a Slurm time ("1-00:00:00", "30:00"), or UNLIMITED: kept forever.
  k.finished_pod_ttl = m.DurationSeconds("finished_pod_ttl", k.finished_pod_ttl);
  m.Finish();
}

}  // namespace lockstep::config
