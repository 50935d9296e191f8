// The `identity:` and `login:` sections of the cluster YAML (login_config.h, docs/login.md).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>

#include "config/cluster_config_parser.h"

namespace lockstep::config {
namespace {

// A Kubernetes label key or value as a node selector names it: no space, no control character,
// at most 317 bytes (a 253-byte prefix, '/', a 63-byte name).
bool PlainLabel(const std::string& s, bool key) {
  if (s.size() > 317 || (key && s.empty())) return false;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

// "2", "0.5" or "500m" in thousandths of a CPU, rounded up; -1 when it is none of those.
std::int64_t CpuMillis(const std::string& s) {
  if (s.empty() || s.size() > 12) return -1;
  if (s.back() == 'm') {
    const std::string digits = s.substr(0, s.size() - 1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoll(digits);
  }
  if (s.find_first_not_of("0123456789.") != std::string::npos || s.front() == '.' ||
      std::count(s.begin(), s.end(), '.') > 1)
    return -1;
  const double v = std::stod(s);
  return static_cast<std::int64_t>(std::ceil(v * 1000 - 1e-9));
}

// A pool's name: a DNS label short enough for "lockstep-login-pool-<name>".
bool PoolName(const std::string& s) {
  if (s.empty() || s.size() > 40 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

void ReadLoginPools(MapView& login, LoginConfig& l) {
  YamlReader& r = login.reader();
  std::set<std::string> names;
  r.ForEach(login.Value("pools"), login.KeyPath("pools"), [&](const YAML::Node& item, const std::string& path) {
    MapView m(r, item, path);
    LoginPool p;
    p.name = m.RequiredString("name");
    if (!r.failed() && !PoolName(p.name))
      m.Fail("name", "'" + p.name + "' is not a pool name (a-z, 0-9 and -, at most 40)");
    if (!r.failed() && !names.insert(p.name).second) m.Fail("name", "pool " + p.name + " again");
    p.groups = m.StringList("groups");
    if (!r.failed() && p.groups.empty()) m.Fail("groups", "name the groups whose members may log in");
    if (std::optional<std::string> cpus = m.String("cpus")) {
      p.cpu_millis = CpuMillis(*cpus);
      if (p.cpu_millis < 1 || p.cpu_millis > 1'024'000)
        m.Fail("cpus", "'" + *cpus + "' is not a CPU count from 0.001 to 1024 (2, 0.5 or 500m)");
    }
    p.memory_mb = m.MemoryMb("memory", 0);
    if (m.Has("memory") && p.memory_mb < 64) m.Fail("memory", "must be at least 64M");
    m.Finish();
    l.pools.push_back(std::move(p));
  });
}

}  // namespace

void ClusterConfigParser::ReadIdentity(const YAML::Node& map) {
  if (reader_.failed()) return;
  IdentityConfig& id = config_.identity;
  MapView m(reader_, map, "identity");
  id.users_file = m.String("users_file", "");
  id.passwd_file = m.String("passwd_file", "");
  id.group_file = m.String("group_file", "");
  for (const char* key : {"users_file", "passwd_file", "group_file"}) {
    const std::string& v = std::string(key) == "users_file"    ? id.users_file
                           : std::string(key) == "passwd_file" ? id.passwd_file
                                                               : id.group_file;
    if (!v.empty() && !IsAbsolute(v)) m.Fail(key, "must be an absolute path");
  }
  if (!id.users_file.empty() && (!id.passwd_file.empty() || !id.group_file.empty()))
    m.Fail("users_file", "name either users_file or passwd_file and group_file, not both");
  else if (id.passwd_file.empty() != id.group_file.empty())
    m.Fail(id.passwd_file.empty() ? "group_file" : "passwd_file",
           "passwd_file and group_file go together");
  id.source = !id.users_file.empty()    ? IdentityConfig::Source::kYaml
              : !id.passwd_file.empty() ? IdentityConfig::Source::kFiles
                                        : IdentityConfig::Source::kNss;
  id.cancel_jobs_of_removed =
      m.Enum<bool>("removed_users_jobs", {{"keep", false}, {"cancel", true}}, false);
  id.reload_period = m.DurationSeconds("reload_period", id.reload_period);
  if (id.reload_period < 1 || id.reload_period > 3600)
    m.Fail("reload_period", "must be from 1 to 3600 seconds");
  m.Finish();
}

void ClusterConfigParser::ReadLogin(const YAML::Node& map) {
  if (reader_.failed()) return;
  LoginConfig& l = config_.login;
  MapView m(reader_, map, "login");
  l.image = m.String("image", "");
  if (std::optional<std::string> cpus = m.String("cpus")) {
    l.cpu_millis = CpuMillis(*cpus);
    if (l.cpu_millis < 1 || l.cpu_millis > 1'024'000)
      m.Fail("cpus", "'" + *cpus + "' is not a CPU count from 0.001 to 1024 (2, 0.5 or 500m)");
  }
  l.memory_mb = m.MemoryMb("memory", l.memory_mb);
  if (l.memory_mb < 64) m.Fail("memory", "must be at least 64M");
  if (YAML::Node sel = m.Value("node_selector"); sel.IsDefined() && !sel.IsNull()) {
    if (!sel.IsMap()) {
      m.Fail("node_selector", "must be a map of label: value");
    } else {
      for (const auto& kv : sel) {
        const std::string k = kv.first.as<std::string>(), v = kv.second.as<std::string>("");
        if (!kv.second.IsScalar() || !PlainLabel(k, true) || !PlainLabel(v, false)) {
          m.Fail("node_selector", "'" + k + "' is not a label key with a plain value");
          break;
        }
        l.node_selector[k] = v;
      }
    }
  }
  l.idle_timeout = m.DurationSeconds("idle_timeout", l.idle_timeout);
  if (l.idle_timeout < 1) m.Fail("idle_timeout", "must be at least one second");
  l.storage_all = !m.Has("storage");
  l.storage = m.StringList("storage");
  {
    std::set<std::string> declared;
    for (const FileSystem& fs : config_.storage) declared.insert(fs.name);
    for (const std::string& name : l.storage)
      if (!declared.count(name)) {
        m.Fail("storage", "'" + name + "' is not a declared file system (storage:)");
        break;
      }
  }
  l.home = m.Bool("home", l.home);
  l.server = m.String("server", "");
  if (!l.server.empty() && l.server.rfind("https://", 0) != 0)
    m.Fail("server", "must be an https:// URL (lockstepd's --listen)");
  l.ca_cert = m.String("ca_cert", "");
  if (!l.ca_cert.empty() && !IsAbsolute(l.ca_cert)) m.Fail("ca_cert", "must be an absolute path");
  l.host_network = m.Bool("host_network", l.host_network);
  l.ssh = m.Bool("ssh", l.ssh);
  l.hosts = m.Hostlist("hosts");
  l.alias = m.String("alias", "");
  ReadLoginPools(m, l);
  for (char c : l.alias)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      m.Fail("alias", "must be a plain command name (letters, digits, - _ .)");
      break;
    }
  m.Finish();
}

}  // namespace lockstep::config
