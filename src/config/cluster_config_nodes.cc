// The `nodes:` and `topology:` sections of the cluster config.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>
#include <set>

#include "config/cluster_config_parser.h"

namespace lockstep::config {
namespace {

constexpr int kMaxFeatures = 64;  // Node::features is a 64-bit mask
constexpr int kMaxMigSlices = 7;  // MIG: at most seven GPU instances per physical GPU

// The GPU compute slices of a MIG profile ("3g.40gb" -> 3), or nullopt when the profile is not
// of the form <n>g.<memory>.
std::optional<int> MigComputeSlices(std::string_view profile) {
  std::size_t g = profile.find("g.");
  if (g == 0 || g == std::string_view::npos) return std::nullopt;
  int n = 0;
  for (char c : profile.substr(0, g)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
    if (n > 100) return std::nullopt;
  }
  return n;
}

}  // namespace

std::uint32_t ClusterConfigParser::Intern(std::vector<std::string>& table, std::string_view name) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i] == name) return static_cast<std::uint32_t>(i);
  }
  table.emplace_back(name);
  return static_cast<std::uint32_t>(table.size() - 1);
}

bool ClusterConfigParser::CheckName(MapView& m, std::string_view key, std::string_view name) {
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-' || c == '+';
    if (!ok) {
      m.Fail(key,
             "'" + std::string(name) + "' is not a valid name (letters, digits and . _ - + only)");
      return false;
    }
  }
  return true;
}

std::vector<std::uint32_t> ClusterConfigParser::NodeIndexes(MapView& m, std::string_view key,
                                                            const std::vector<std::string>& names) {
  std::vector<std::uint32_t> out;
  out.reserve(names.size());
  for (const std::string& n : names) {
    auto it = node_index_.find(n);
    if (it == node_index_.end()) {
      m.Fail(key, "unknown node '" + n + "'");
      return {};
    }
    out.push_back(it->second);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// nodes

void ClusterConfigParser::ReadNodes(const YAML::Node& list) {
  reader_.ForEach(list, "nodes", [&](const YAML::Node& item, const std::string& path) {
    MapView m(reader_, item, path);
    ReadNodeGroup(m);
    m.Finish();
  });
}

void ClusterConfigParser::ReadNodeGroup(MapView& m) {
  engine::Snapshot& s = config_.base;
  std::vector<std::string> names = m.Hostlist("names");
  if (names.empty() && !reader_.failed()) reader_.Fail(m.mark(), m.KeyPath("names"), "required");
  const int cpus = static_cast<int>(m.Int("cpus", 1, 1, INT32_MAX));
  const std::int64_t mem_mb = m.MemoryMb("memory", 1);
  const int gpus = static_cast<int>(m.Int("gpus", 0, 0, engine::kMaxDevicesPerNode));
  const bool has_type = m.Has("gpu_type");
  const std::string gpu_type = m.String("gpu_type", "gpu");
  if (has_type) CheckName(m, "gpu_type", gpu_type);
  if (has_type && gpus == 0 && !reader_.failed()) m.Fail("gpu_type", "given without gpus");
  const std::vector<std::string> features = m.StringList("features");
  const int weight = static_cast<int>(m.Int("weight", 1, 0, INT32_MAX));
  using engine::NodeState;
  const NodeState state = m.Enum<NodeState>(
      "state", {{"up", NodeState::kUp}, {"drain", NodeState::kDrain}, {"down", NodeState::kDown}},
      NodeState::kUp);
  const std::string reason = m.String("reason", "");

  const std::vector<std::vector<std::string>> mig = ReadMig(m, gpus);
  if (reader_.failed()) return;
  const std::vector<engine::GpuDevice> devices = GpuDevices(m, gpus, gpu_type, mig);
  if (reader_.failed()) return;

  std::uint64_t mask = 0;
  for (const std::string& f : features) {
    if (!CheckName(m, "features", f)) return;
    std::uint32_t bit = Intern(s.features, f);
    if (bit >= kMaxFeatures) {
      m.Fail("features", "more than " + std::to_string(kMaxFeatures) +
                             " distinct features in the cluster ('" + f + "')");
      return;
    }
    mask |= std::uint64_t{1} << bit;
  }

  for (const std::string& name : names) {
    if (node_index_.count(name) != 0) {
      m.Fail("names", "node '" + name + "' is defined twice");
      return;
    }
    node_index_.emplace(name, static_cast<std::uint32_t>(s.nodes.size()));
    engine::Node n;
    n.name = name;
    n.cpus = cpus;
    n.mem_mb = mem_mb;
    n.gpus = devices;
    n.features = mask;
    n.state = state;
    n.reason = reason;
    n.weight = weight;
    s.nodes.push_back(std::move(n));
  }
}

std::vector<std::vector<std::string>> ClusterConfigParser::ReadMig(MapView& m, int gpus) {
  std::vector<std::vector<std::string>> mig(static_cast<std::size_t>(gpus));
  reader_.ForEach(
      m.Value("mig"), m.KeyPath("mig"), [&](const YAML::Node& item, const std::string& path) {
        MapView g(reader_, item, path);
        if (!g.Has("gpu")) reader_.Fail(g.mark(), g.KeyPath("gpu"), "required");
        const int index = static_cast<int>(g.Int("gpu", 0, 0, std::max(gpus - 1, 0)));
        if (gpus == 0 && !reader_.failed()) g.Fail("gpu", "the node has no gpus to partition");
        std::vector<std::string> slices = g.StringList("slices");
        if (slices.empty() && !reader_.failed())
          g.Fail("slices", "at least one MIG slice is required");
        if (static_cast<int>(slices.size()) > kMaxMigSlices) {
          g.Fail("slices", "a GPU has at most " + std::to_string(kMaxMigSlices) + " MIG slices");
        }
        int compute = 0;
        bool all_known = true;
        for (const std::string& profile : slices) {
          if (!CheckName(g, "slices", profile)) break;
          std::optional<int> c = MigComputeSlices(profile);
          all_known = all_known && c.has_value();
          compute += c.value_or(0);
        }
        if (all_known && compute > kMaxMigSlices) {
          g.Fail("slices", "the slices need " + std::to_string(compute) +
                               " compute slices; a GPU has " + std::to_string(kMaxMigSlices));
        }
        g.Finish();
        if (reader_.failed()) return;
        if (!mig[index].empty()) {
          g.Fail("gpu", "GPU " + std::to_string(index) + " is partitioned twice");
          return;
        }
        mig[index] = std::move(slices);
      });
  return mig;
}

std::vector<engine::GpuDevice> ClusterConfigParser::GpuDevices(
    MapView& m, int gpus, const std::string& gpu_type,
    const std::vector<std::vector<std::string>>& mig) {
  engine::Snapshot& s = config_.base;
  // One device per whole GPU, or per MIG slice in place of its GPU; index = position.
  std::vector<engine::GpuDevice> devices;
  for (int g = 0; g < gpus; ++g) {
    if (mig[g].empty()) {
      devices.push_back(
          {static_cast<std::uint16_t>(devices.size()), Intern(s.gpu_types, gpu_type), -1, ""});
      continue;
    }
    for (const std::string& profile : mig[g]) {
      devices.push_back({static_cast<std::uint16_t>(devices.size()),
                         Intern(s.gpu_types, gpu_type + "_" + profile),
                         static_cast<std::int16_t>(g), ""});
    }
  }
  if (static_cast<int>(devices.size()) > engine::kMaxDevicesPerNode) {
    m.Fail("mig", std::to_string(devices.size()) + " GPU devices on one node; at most " +
                      std::to_string(engine::kMaxDevicesPerNode) + " are supported");
    return {};
  }
  std::set<std::uint32_t> types;
  for (const engine::GpuDevice& d : devices) types.insert(d.type);
  if (static_cast<int>(types.size()) > engine::kMaxGpuTypesPerNode) {
    m.Fail("mig", std::to_string(types.size()) + " distinct GPU types on one node; at most " +
                      std::to_string(engine::kMaxGpuTypesPerNode) + " are supported");
    return {};
  }
  return devices;
}

// ---------------------------------------------------------------------------------------------
// topology

void ClusterConfigParser::ReadTopology(const YAML::Node& map) {
  if (reader_.failed()) return;
  MapView m(reader_, map, "topology");
  ReadSwitches(m.Value("switches"));
  ReadBlocks(m.Value("blocks"));
  m.Finish();
}

void ClusterConfigParser::ReadSwitches(const YAML::Node& list) {
  engine::Snapshot& s = config_.base;
  struct Def {
    std::vector<std::string> children;
    YAML::Mark children_mark;
    std::string children_path;
  };
  std::vector<Def> defs;
  std::unordered_map<std::string, std::uint32_t> index;
  reader_.ForEach(list, "topology.switches", [&](const YAML::Node& item, const std::string& path) {
    MapView m(reader_, item, path);
    std::string name = m.RequiredString("name");
    CheckName(m, "name", name);
    std::vector<std::string> nodes = m.Hostlist("nodes");
    Def d{m.Hostlist("switches"), m.MarkOf("switches"), m.KeyPath("switches")};
    m.Finish();
    if (reader_.failed()) return;
    if (nodes.empty() == d.children.empty()) {
      m.Fail("nodes", nodes.empty() ? "a switch needs nodes (a leaf) or switches (inner)"
                                    : "a switch has nodes (a leaf) or switches (inner), not both");
      return;
    }
    const auto self = static_cast<std::uint32_t>(s.switches.size());
    if (!index.emplace(name, self).second) {
      m.Fail("name", "switch '" + name + "' is defined twice");
      return;
    }
    for (std::uint32_t n : NodeIndexes(m, "nodes", nodes)) {
      engine::Node& node = s.nodes[n];
      if (node.leaf_switch != engine::kNone) {
        m.Fail("nodes", "node '" + node.name + "' is already under switch '" +
                            s.switches[node.leaf_switch].name + "'");
        return;
      }
      node.leaf_switch = self;
    }
    s.switches.push_back({name, engine::kNone});
    defs.push_back(std::move(d));
  });
  if (reader_.failed()) return;

  // Children may name switches defined later in the list: link them once all are known.
  for (std::size_t i = 0; i < defs.size(); ++i) {
    for (const std::string& child : defs[i].children) {
      auto it = index.find(child);
      if (it == index.end()) {
        reader_.Fail(defs[i].children_mark, defs[i].children_path,
                     "unknown switch '" + child + "'");
        return;
      }
      engine::Switch& c = s.switches[it->second];
      if (it->second == i) {
        reader_.Fail(defs[i].children_mark, defs[i].children_path,
                     "switch '" + child + "' cannot contain itself");
        return;
      }
      if (c.parent != engine::kNone) {
        reader_.Fail(
            defs[i].children_mark, defs[i].children_path,
            "switch '" + child + "' is already under switch '" + s.switches[c.parent].name + "'");
        return;
      }
      c.parent = static_cast<std::uint32_t>(i);
    }
  }
  // Each switch has at most one parent, so a walk up that is longer than the table is a cycle.
  for (std::size_t i = 0; i < s.switches.size(); ++i) {
    std::uint32_t at = static_cast<std::uint32_t>(i);
    std::size_t steps = 0;
    while (at != engine::kNone && steps <= s.switches.size()) at = s.switches[at].parent, ++steps;
    if (at == engine::kNone) continue;
    // `at` is on the cycle: start from its first switch in the file and spell it out in the
    // direction of containment; the error is at the switch that closes the cycle.
    for (std::uint32_t c = s.switches[at].parent, first = at; c != first;
         c = s.switches[c].parent) {
      at = std::min(at, c);
    }
    std::string cycle = s.switches[at].name;
    for (std::uint32_t c = s.switches[at].parent; c != at; c = s.switches[c].parent) {
      cycle = s.switches[c].name + " -> " + cycle;
    }
    cycle = s.switches[at].name + " -> " + cycle;
    const std::uint32_t parent = s.switches[at].parent;
    reader_.Fail(defs[parent].children_mark, defs[parent].children_path,
                 "switches form a cycle: " + cycle);
    return;
  }
}

void ClusterConfigParser::ReadBlocks(const YAML::Node& list) {
  engine::Snapshot& s = config_.base;
  reader_.ForEach(list, "topology.blocks", [&](const YAML::Node& item, const std::string& path) {
    MapView m(reader_, item, path);
    std::string name = m.RequiredString("name");
    CheckName(m, "name", name);
    std::vector<std::string> nodes = m.Hostlist("nodes");
    m.Finish();
    if (reader_.failed()) return;
    if (nodes.empty()) {
      reader_.Fail(m.mark(), m.KeyPath("nodes"), "required");
      return;
    }
    if (std::find(s.blocks.begin(), s.blocks.end(), name) != s.blocks.end()) {
      m.Fail("name", "block '" + name + "' is defined twice");
      return;
    }
    const auto self = static_cast<std::uint32_t>(s.blocks.size());
    for (std::uint32_t n : NodeIndexes(m, "nodes", nodes)) {
      engine::Node& node = s.nodes[n];
      if (node.block != engine::kNone) {
        m.Fail("nodes",
               "node '" + node.name + "' is already in block '" + s.blocks[node.block] + "'");
        return;
      }
      node.block = self;
    }
    s.blocks.push_back(name);
  });
}

}  // namespace lockstep::config
