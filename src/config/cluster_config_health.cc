// The `health:` section of the cluster YAML (HealthConfig, docs/health.md).
#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>

#include "backend/health.h"
#include "config/cluster_config_parser.h"

namespace lockstep::config {
namespace {

const char* const kNodeStates[] = {"ANY", "IDLE", "ALLOC", "MIXED", "NONDRAINED_IDLE", "CYCLE"};

// A list of XIDs (numbers 1-999) under `key` of `m`.
std::set<std::int64_t> XidList(MapView& m, const std::string& key,
                               const std::set<std::int64_t>& def) {
  if (!m.Has(key)) {
    (void)m.Value(key);
    return def;
  }
  std::set<std::int64_t> out;
  for (const std::string& text : m.StringList(key)) {
    std::size_t used = 0;
    long long x = 0;
    try {
      x = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || x < 1 || x > 999) {
      m.Fail(key, "'" + text + "' is not an XID (1-999)");
      return def;
    }
    out.insert(x);
  }
  return out;
}

HealthThreshold ReadThreshold(YamlReader& reader, const YAML::Node& node, const std::string& path,
                              HealthThreshold def) {
  MapView t(reader, node, path);
  def.count = static_cast<std::int32_t>(t.Int("count", def.count, 1, 1'000'000));
  def.window = t.DurationSeconds("window", def.window);
  t.Finish();
  return def;
}

}  // namespace

void ClusterConfigParser::ReadHealth(const YAML::Node& map) {
  if (reader_.failed()) return;
  HealthConfig& h = config_.health;
  h.configured = map.IsDefined() && !map.IsNull();
  MapView m(reader_, map, "health");
  h.program = m.String("program", h.program);
  if (!h.program.empty() && h.program[0] != '/') m.Fail("program", "must be an absolute path");
  h.interval = m.DurationSeconds("interval", h.interval);
  if (h.interval < 1 || h.interval > 86400) m.Fail("interval", "must be from 1 s to 1 day");
  h.timeout = m.DurationSeconds("timeout", h.timeout);
  if (h.timeout < 1 || h.timeout > 86400) m.Fail("timeout", "must be from 1 s to 1 day");
  if (m.Has("node_states")) {
    std::vector<std::string> states;
    for (std::string s : m.StringList("node_states")) {
      // Slurm writes them as one comma-separated value: "IDLE,CYCLE".
      for (std::size_t at = 0; at <= s.size();) {
        std::size_t comma = s.find(',', at);
        std::string one = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        for (char& c : one) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (std::find(std::begin(kNodeStates), std::end(kNodeStates), one) ==
            std::end(kNodeStates))
          m.Fail("node_states", "'" + one + "' is not one of ANY|IDLE|ALLOC|MIXED|"
                                             "NONDRAINED_IDLE|CYCLE");
        states.push_back(one);
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
    }
    h.node_states = states;
  } else {
    (void)m.Value("node_states");
  }
  YAML::Node xid = m.Value("xid");
  {
    MapView x(reader_, xid, m.KeyPath("xid"));
    h.xid_application = XidList(x, "application", h.xid_application);
    h.xid_warning = XidList(x, "warning", h.xid_warning);
    h.xid_critical = XidList(x, "critical", h.xid_critical);
    x.Finish();
  }
  YAML::Node thresholds = m.Value("thresholds");
  if (thresholds.IsDefined() && !thresholds.IsNull()) {
    if (!thresholds.IsMap()) {
      m.Fail("thresholds", "expected a map of check: {count, window}");
    } else {
      for (const auto& kv : thresholds) {
        const std::string check = kv.first.as<std::string>();
        if (!backend::IsHealthCheck(check)) {
          m.Fail("thresholds", "unknown check '" + check + "'");
          break;
        }
        h.thresholds[check] =
            ReadThreshold(reader_, kv.second, m.KeyPath("thresholds") + "." + check, {});
      }
    }
  }
  h.bad_gpu = ReadThreshold(reader_, m.Value("bad_gpu"), m.KeyPath("bad_gpu"), h.bad_gpu);
  {
    MapView cores(reader_, m.Value("core_dumps"), m.KeyPath("core_dumps"));
    h.core_max_mb = cores.MemoryMb("max_size", h.core_max_mb);
    if (h.core_max_mb < 0) cores.Fail("max_size", "must not be negative");
    cores.Finish();
  }
  m.Finish();
}

}  // namespace lockstep::config
