#include "backend/kubernetes/objects/node_mapping.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <unordered_map>
#include <utility>

#include "backend/kubernetes/objects/json_util.h"
#include "backend/kubernetes/objects/quantity.h"

namespace lockstep::kube {
namespace {

using internal::Json;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> SplitDash(std::string_view s) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find('-', start);
    if (end == std::string_view::npos) end = s.size();
    if (end > start) words.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

Status NodeError(const std::string& node, const std::string& field, const std::string& what) {
  return InvalidArgument("node " + node + ": " + field + ": " + what);
}

// The state and reason from conditions, taints and spec.unschedulable.
std::pair<engine::NodeState, std::string> StateOf(const Json& node,
                                                  const NodeMappingOptions& options) {
  const Json* ready = nullptr;
  if (const Json* conditions = internal::Path(node, "status", "conditions");
      conditions && conditions->is_array()) {
    for (const Json& c : *conditions)
      if (internal::StringAt(c, "type") == "Ready") ready = &c;
  }
  if (!ready) return {engine::NodeState::kDown, "no Ready condition"};
  if (internal::StringAt(*ready, "status") != "True") {
    std::string reason = internal::StringAt(*ready, "reason");
    std::string message = internal::StringAt(*ready, "message");
    if (reason.empty()) reason = "NotReady";
    if (!message.empty()) reason += ": " + message;
    return {engine::NodeState::kDown, reason};
  }
  if (const Json* taints = internal::Path(node, "spec", "taints"); taints && taints->is_array()) {
    for (const Json& t : *taints) {
      if (internal::StringAt(t, "effect") != "NoExecute") continue;
      std::string key = internal::StringAt(t, "key");
      const auto& ignored = options.ignored_taints;
      if (std::find(ignored.begin(), ignored.end(), key) != ignored.end()) continue;
      return {engine::NodeState::kDown, key};
    }
  }
  if (const Json* u = internal::Path(node, "spec", "unschedulable"); u && u->is_boolean() && *u)
    return {engine::NodeState::kDrain, "cordoned"};
  return {engine::NodeState::kUp, ""};
}

std::vector<std::string> FeaturesOf(const Json& node, const NodeMappingOptions& options) {
  std::set<std::string> features;
  for (const std::string& key : options.feature_labels) {
    std::optional<std::string> v = internal::Label(node, key);
    if (v && !v->empty()) features.insert(*v);
  }
  const std::string& prefix = options.feature_label_prefix;
  if (const Json* labels = internal::Path(node, "metadata", "labels");
      !prefix.empty() && labels && labels->is_object()) {
    for (auto it = labels->begin(); it != labels->end(); ++it) {
      const std::string& key = it.key();
      if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) continue;
      if (it->is_string() && it->get<std::string>() == "false") continue;
      features.insert(key.substr(prefix.size()));
    }
  }
  return {features.begin(), features.end()};
}

// The allocatable GPU groups: whole GPUs (typed from the product label) and MIG profiles.
Result<std::vector<GpuGroup>> GpusOf(const Json& allocatable, const std::string& node,
                                     const std::string& product,
                                     const NodeMappingOptions& options) {
  std::vector<GpuGroup> groups;
  std::vector<GpuGroup> mig;
  if (!allocatable.is_object()) return groups;
  for (auto it = allocatable.begin(); it != allocatable.end(); ++it) {
    const std::string& key = it.key();
    bool whole = key == options.gpu_resource;
    bool is_mig =
        !options.mig_resource_prefix.empty() && key.size() > options.mig_resource_prefix.size() &&
        key.compare(0, options.mig_resource_prefix.size(), options.mig_resource_prefix) == 0;
    if (!whole && !is_mig) continue;
    Result<std::int64_t> count = QuantityFromJson(*it);
    if (!count.ok()) return NodeError(node, "status.allocatable." + key, count.status().message());
    if (*count > engine::kMaxDevicesPerNode) {
      return NodeError(node, "status.allocatable." + key,
                       std::to_string(*count) + " devices; a node can track at most " +
                           std::to_string(engine::kMaxDevicesPerNode));
    }
    if (*count == 0) continue;
    auto n = static_cast<std::int32_t>(*count);
    if (whole)
      groups.push_back({GpuTypeFromProduct(product, options), n, key});
    else
      mig.push_back({"mig-" + key.substr(options.mig_resource_prefix.size()), n, key});
  }
  std::sort(mig.begin(), mig.end(),
            [](const GpuGroup& a, const GpuGroup& b) { return a.type < b.type; });
  groups.insert(groups.end(), mig.begin(), mig.end());
  int total = 0;
  for (const GpuGroup& g : groups) total += g.count;
  if (total > engine::kMaxDevicesPerNode) {
    return NodeError(node, "status.allocatable",
                     std::to_string(total) + " GPU devices; a node can track at most " +
                         std::to_string(engine::kMaxDevicesPerNode));
  }
  if (static_cast<int>(groups.size()) > engine::kMaxGpuTypesPerNode) {
    return NodeError(node, "status.allocatable",
                     std::to_string(groups.size()) + " GPU types; a node can have at most " +
                         std::to_string(engine::kMaxGpuTypesPerNode));
  }
  return groups;
}

template <typename Table>
std::uint32_t Intern(Table& table, std::unordered_map<std::string, std::uint32_t>& index,
                     const std::string& name) {
  auto it = index.find(name);
  if (it != index.end()) return it->second;
  auto at = static_cast<std::uint32_t>(table.size());
  index.emplace(name, at);
  return at;
}

}  // namespace

std::string GpuTypeFromProduct(std::string_view product, const NodeMappingOptions& options) {
  if (auto it = options.gpu_type_by_product.find(std::string(product));
      it != options.gpu_type_by_product.end())
    return it->second;
  if (product.empty()) return "gpu";
  const std::string lower = Lower(product);
  if (std::size_t mig = lower.find("-mig-"); mig != std::string::npos) {
    std::string profile = lower.substr(mig + 5);
    if (!profile.empty()) return "mig-" + profile;
  }
  std::vector<std::string> words = SplitDash(lower);
  std::size_t i = 0;
  while (i < words.size() && (words[i] == "nvidia" || words[i] == "tesla" ||
                              words[i] == "geforce" || words[i] == "quadro"))
    ++i;
  if (i == words.size()) return "gpu";
  std::string type = words[i];
  if ((type == "rtx" || type == "gtx" || type == "titan") && i + 1 < words.size())
    type += words[i + 1];
  return type;
}

Result<KubeNode> NodeFromObject(const Json& node, const NodeMappingOptions& options) {
  KubeNode n;
  n.name = internal::StringAt(node, "metadata", "name");
  if (n.name.empty()) return InvalidArgument("node object without metadata.name");
  const Json* allocatable = internal::Path(node, "status", "allocatable");
  if (!allocatable || !allocatable->is_object())
    return NodeError(n.name, "status.allocatable", "missing");
  if (const Json* cpu = internal::Child(*allocatable, "cpu")) {
    Result<std::int64_t> milli = QuantityMilliFromJson(*cpu);
    if (!milli.ok()) return NodeError(n.name, "status.allocatable.cpu", milli.status().message());
    n.cpu_milli = *milli;
  }
  if (const Json* mem = internal::Child(*allocatable, "memory")) {
    Result<std::int64_t> bytes = QuantityFromJson(*mem);
    if (!bytes.ok())
      return NodeError(n.name, "status.allocatable.memory", bytes.status().message());
    n.memory_bytes = *bytes;
  }
  n.cpus = static_cast<std::int32_t>(std::min<std::int64_t>(n.cpu_milli / 1000, 0x7fffffff));
  n.mem_mb = BytesToMiBFloor(n.memory_bytes);
  n.gpu_product = internal::Label(node, options.gpu_product_label).value_or("");
  Result<std::vector<GpuGroup>> gpus = GpusOf(*allocatable, n.name, n.gpu_product, options);
  if (!gpus.ok()) return gpus.status();
  n.gpus = std::move(*gpus);
  n.features = FeaturesOf(node, options);
  for (const std::string& key : options.switch_labels) {
    std::optional<std::string> v = internal::Label(node, key);
    if (v && !v->empty()) n.switch_path.push_back(*v);
  }
  n.block = internal::Label(node, options.block_label).value_or("");
  if (std::optional<std::string> w = internal::Label(node, options.weight_label)) {
    std::int32_t weight = 0;
    auto [end, ec] = std::from_chars(w->data(), w->data() + w->size(), weight);
    if (ec != std::errc() || end != w->data() + w->size() || weight <= 0) {
      return NodeError(n.name, "metadata.labels[" + options.weight_label + "]",
                       "\"" + *w + "\" is not a positive integer");
    }
    n.weight = weight;
  }
  std::tie(n.state, n.reason) = StateOf(node, options);
  return n;
}

Result<engine::Snapshot> AddNodes(engine::Snapshot base, const std::vector<KubeNode>& nodes) {
  engine::Snapshot& s = base;
  std::unordered_map<std::string, std::uint32_t> gpu_types, features, switches, blocks, names;
  for (std::uint32_t i = 0; i < s.gpu_types.size(); ++i) gpu_types.emplace(s.gpu_types[i], i);
  for (std::uint32_t i = 0; i < s.features.size(); ++i) features.emplace(s.features[i], i);
  for (std::uint32_t i = 0; i < s.switches.size(); ++i) switches.emplace(s.switches[i].name, i);
  for (std::uint32_t i = 0; i < s.blocks.size(); ++i) blocks.emplace(s.blocks[i], i);
  for (std::uint32_t i = 0; i < s.nodes.size(); ++i) names.emplace(s.nodes[i].name, i);
  for (const KubeNode& k : nodes) {
    if (!names.emplace(k.name, static_cast<std::uint32_t>(s.nodes.size())).second)
      return InvalidArgument("node " + k.name + ": defined twice");
    engine::Node n;
    n.name = k.name;
    n.cpus = k.cpus;
    n.mem_mb = k.mem_mb;
    n.state = k.state;
    n.reason = k.reason;
    n.weight = k.weight;
    for (const GpuGroup& g : k.gpus) {
      std::uint32_t type = Intern(s.gpu_types, gpu_types, g.type);
      if (type == s.gpu_types.size()) s.gpu_types.push_back(g.type);
      for (int d = 0; d < g.count; ++d)
        n.gpus.push_back({static_cast<std::uint16_t>(n.gpus.size()), type, -1, ""});
    }
    LOCKSTEP_CHECK(n.gpus.size() <= static_cast<std::size_t>(engine::kMaxDevicesPerNode));
    for (const std::string& f : k.features) {
      std::uint32_t bit = Intern(s.features, features, f);
      if (bit == s.features.size()) {
        if (bit >= 64)
          return InvalidArgument("node " + k.name + ": feature \"" + f +
                                 "\": more than 64 distinct features");
        s.features.push_back(f);
      }
      n.features |= std::uint64_t{1} << bit;
    }
    std::string path;
    std::uint32_t parent = engine::kNone;
    for (const std::string& level : k.switch_path) {
      path += (path.empty() ? "" : "/") + level;
      std::uint32_t sw = Intern(s.switches, switches, path);
      if (sw == s.switches.size()) s.switches.push_back({path, parent});
      parent = sw;
    }
    n.leaf_switch = parent;
    if (!k.block.empty()) {
      n.block = Intern(s.blocks, blocks, k.block);
      if (n.block == s.blocks.size()) s.blocks.push_back(k.block);
    }
    s.nodes.push_back(std::move(n));
  }
  return base;
}

}  // namespace lockstep::kube
