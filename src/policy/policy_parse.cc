// The policy file (policy.h, docs/policy.md), read with the cluster YAML's strict reader: every
// error names the file, the line, the rule's index and name, and the key.
#include <set>

#include "config/yaml_reader.h"
#include "policy/policy.h"

namespace lockstep::policy {
namespace {

using config::MapView;
using config::YamlReader;

std::optional<Kind> KindOf(std::string_view s) {
  if (s == "job") return Kind::kJob;
  if (s == "pod") return Kind::kPod;
  if (s == "podgroup") return Kind::kPodGroup;
  return std::nullopt;
}

Match ReadMatch(YamlReader& reader, const YAML::Node& node, const std::string& path) {
  Match m;
  MapView v(reader, node, path);
  m.users = v.StringList("users");
  m.groups = v.StringList("groups");
  m.accounts = v.StringList("accounts");
  m.partitions = v.StringList("partitions");
  m.namespaces = v.StringList("namespaces");
  for (const std::string& k : v.StringList("kinds")) {
    std::optional<Kind> kind = KindOf(k);
    if (!kind) {
      v.Fail("kinds", "'" + k + "' is not one of job|pod|podgroup");
      break;
    }
    m.kinds.push_back(*kind);
  }
  v.Finish();
  return m;
}

Limits ReadLimits(YamlReader& reader, const YAML::Node& node, const std::string& path) {
  Limits l;
  MapView v(reader, node, path);
  constexpr std::int64_t kMax = std::int64_t{1} << 40;
  auto count = [&](const char* key, std::optional<std::int64_t>& out) {
    if (v.Has(key)) out = v.Int(key, 0, 0, kMax);
  };
  count("gpus_per_job", l.gpus_per_job);
  count("nodes_per_job", l.nodes_per_job);
  count("cpus_per_job", l.cpus_per_job);
  if (v.Has("memory_per_job")) l.memory_per_job_mb = v.MemoryMb("memory_per_job", 0);
  if (v.Has("time")) l.time = v.Duration("time", 0);
  v.Finish();
  return l;
}

std::map<std::string, std::string> ReadStringMap(MapView& v, const char* key) {
  std::map<std::string, std::string> out;
  YAML::Node node = v.Value(key);
  if (!node.IsDefined() || node.IsNull()) return out;
  if (!node.IsMap()) {
    v.Fail(key, "must be a map of key: value pattern");
    return out;
  }
  for (const auto& kv : node) {
    if (!kv.second.IsScalar()) {
      v.Fail(key, "'" + kv.first.as<std::string>() + "' must have a plain value");
      break;
    }
    out[kv.first.as<std::string>()] = kv.second.as<std::string>();
  }
  return out;
}

Require ReadRequire(YamlReader& reader, const YAML::Node& node, const std::string& path) {
  Require r;
  MapView v(reader, node, path);
  r.partitions = v.StringList("partitions");
  r.qos = v.StringList("qos");
  r.images = v.StringList("images");
  r.labels = ReadStringMap(v, "labels");
  r.annotations = ReadStringMap(v, "annotations");
  v.Finish();
  return r;
}

Forbid ReadForbid(YamlReader& reader, const YAML::Node& node, const std::string& path) {
  Forbid f;
  MapView v(reader, node, path);
  f.privileged = v.Bool("privileged", false);
  f.host_network = v.Bool("host_network", false);
  f.host_pid = v.Bool("host_pid", false);
  f.host_ipc = v.Bool("host_ipc", false);
  if (v.Has("host_namespaces") && v.Bool("host_namespaces", false))
    f.host_network = f.host_pid = f.host_ipc = true;
  f.host_path = v.Bool("host_path", false);
  f.capabilities = v.Bool("capabilities", false);
  f.privilege_escalation = v.Bool("privilege_escalation", false);
  f.run_as_other_user = v.Bool("run_as_other_user", false);
  f.labels = v.StringList("labels");
  f.annotations = v.StringList("annotations");
  v.Finish();
  return f;
}

bool SaysSomething(const Rule& r) {
  const Limits& l = r.limits;
  const Require& q = r.require;
  const Forbid& f = r.forbid;
  return r.action == Action::kAllow || l.gpus_per_job || l.nodes_per_job || l.cpus_per_job ||
         l.memory_per_job_mb || l.time || !q.partitions.empty() || !q.qos.empty() ||
         !q.images.empty() || !q.labels.empty() || !q.annotations.empty() || f.privileged ||
         f.host_network || f.host_pid || f.host_ipc || f.host_path || f.capabilities ||
         f.privilege_escalation || f.run_as_other_user || !f.labels.empty() ||
         !f.annotations.empty();
}

Rule ReadRule(YamlReader& reader, const YAML::Node& node, const std::string& at,
              std::set<std::string>& names) {
  Rule r;
  if (!node.IsMap()) {
    reader.Fail(node.Mark(), at, "a rule must be a map (name, match, limits, require, forbid)");
    return r;
  }
  // Every error names the rule: "rules[1] (gpu-cap).limits".
  std::string path = at;
  if (YAML::Node n = node["name"]; n.IsScalar() && !n.Scalar().empty())
    path += " (" + n.Scalar() + ")";
  MapView v(reader, node, path);
  r.name = v.RequiredString("name");
  if (!r.name.empty() && !names.insert(r.name).second)
    v.Fail("name", "'" + r.name + "' names an earlier rule too");
  r.action = v.Enum<Action>("action",
                            {{"enforce", Action::kEnforce},
                             {"audit", Action::kAudit},
                             {"allow", Action::kAllow}},
                            Action::kEnforce);
  r.message = v.String("message", "");
  r.match = ReadMatch(reader, v.Value("match"), path + ".match");
  r.limits = ReadLimits(reader, v.Value("limits"), path + ".limits");
  r.require = ReadRequire(reader, v.Value("require"), path + ".require");
  r.forbid = ReadForbid(reader, v.Value("forbid"), path + ".forbid");
  if (!reader.failed() && !SaysSomething(r))
    v.Fail("name", "rule '" + r.name + "' limits, requires and forbids nothing");
  v.Finish();
  return r;
}

}  // namespace

Result<Policy> ParsePolicy(std::string_view yaml_text, std::string_view source_name) {
  YamlReader reader(source_name);
  Policy p;
  p.source = std::string(source_name);
  try {
    YAML::Node doc = reader.Load(yaml_text);
    if (reader.failed()) return reader.status();
    MapView top(reader, doc, "");
    std::set<std::string> names;
    reader.ForEach(top.Value("rules"), "rules", [&](const YAML::Node& n, const std::string& at) {
      p.rules.push_back(ReadRule(reader, n, at, names));
    });
    top.Finish();
  } catch (const YAML::Exception& e) {
    reader.Fail(e.mark, "", "YAML error: " + e.msg);
  } catch (const std::exception& e) {
    reader.Fail(YAML::Mark::null_mark(), "", std::string("error: ") + e.what());
  }
  if (reader.failed()) return reader.status();
  return p;
}

std::vector<Rule> KubernetesDefaultRules() {
  std::vector<Rule> rules;
  auto add = [&](std::string name, std::string message, auto&& set) {
    Rule r;
    r.name = std::move(name);
    r.message = std::move(message);
    r.match.kinds = {Kind::kPod};
    set(r.forbid);
    rules.push_back(std::move(r));
  };
  add("default-no-privileged", "privileged containers and privilege escalation are not allowed",
      [](Forbid& f) { f.privileged = f.privilege_escalation = true; });
  add("default-no-host-namespaces", "the host's network, PID and IPC namespaces are not allowed",
      [](Forbid& f) { f.host_network = f.host_pid = f.host_ipc = true; });
  add("default-no-host-path", "hostPath volumes are allowed only under the declared storage",
      [](Forbid& f) { f.host_path = true; });
  add("default-no-other-user", "pods may not run as another user",
      [](Forbid& f) { f.run_as_other_user = true; });
  return rules;
}

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kJob: return "job";
    case Kind::kPod: return "pod";
    case Kind::kPodGroup: return "podgroup";
  }
  return "?";
}

}  // namespace lockstep::policy
