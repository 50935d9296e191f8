#include "config/cluster_config.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>

#include "config/cluster_config_parser.h"

namespace lockstep::config {
namespace {

template <typename T, typename NameOf>
std::uint32_t FindByName(const std::vector<T>& table, std::string_view name, NameOf name_of) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (name_of(table[i]) == name) return static_cast<std::uint32_t>(i);
  }
  return engine::kNone;
}

std::uint32_t FindName(const std::vector<std::string>& table, std::string_view name) {
  return FindByName(table, name, [](const std::string& s) -> const std::string& { return s; });
}

template <typename T>
std::uint32_t FindNamed(const std::vector<T>& table, std::string_view name) {
  return FindByName(table, name, [](const T& t) -> const std::string& { return t.name; });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parsing

Result<ClusterConfig> ClusterConfigParser::Parse(std::string_view yaml_text) {
  try {
    YAML::Node doc = reader_.Load(yaml_text);
    if (reader_.failed()) return reader_.status();
    MapView top(reader_, doc, "");
    config_.backend = top.Enum<std::string>(
        "backend", {{"agent", "agent"}, {"kubernetes", "kubernetes"}}, "agent");
    if (!backend_override_.empty()) config_.backend = backend_override_;
    config_.store_mode = top.Enum<std::string>("store_mode",
                                               {{"auto", "auto"},
                                                {"wal", "wal"},
                                                {"exclusive", "exclusive"},
                                                {"truncate", "truncate"}},
                                               "auto");
    ReadNodes(top.Value("nodes"));
    if (!reader_.failed() && config_.base.nodes.empty() && config_.backend != "kubernetes") {
      reader_.Fail(top.MarkOf("nodes"), "nodes", "at least one node is required");
    }
    ReadTopology(top.Value("topology"));
    ReadPartitions(top.Value("partitions"));
    ReadQos(top.Value("qos"));
    ReadAccounts(top.Value("accounts"));
    ReadUsers(top.Value("users"));
    ReadScheduler(top.Value("scheduler"));
    ReadKubernetes(top.Value("kubernetes"));
    ReadHealth(top.Value("health"));
    ReadStorage(top.Value("storage"));
    ReadIdentity(top.Value("identity"));
    ReadLogin(top.Value("login"));
    ReadAdmission(top.Value("admission"));
    ReadJobHook(top.Value("prolog"), "prolog", config_.job_hooks.prolog);
    ReadJobHook(top.Value("epilog"), "epilog", config_.job_hooks.epilog);
    top.Finish();
  } catch (const YAML::Exception& e) {  // yaml-cpp throws; nothing of it may leave this call
    reader_.Fail(e.mark, "", "YAML error: " + e.msg);
  } catch (const std::exception& e) {
    reader_.Fail(YAML::Mark::null_mark(), "", std::string("error: ") + e.what());
  }
  if (reader_.failed()) return reader_.status();
  return std::move(config_);
}

Result<ClusterConfig> ParseClusterConfig(std::string_view yaml_text, std::string_view source_name,
                                         std::string_view backend) {
  ClusterConfigParser parser(source_name);
  parser.OverrideBackend(backend);
  return parser.Parse(yaml_text);
}

Result<ClusterConfig> LoadClusterConfig(const std::string& path, std::string_view backend) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return IoError("cannot read " + path + ": " + std::strerror(errno));
  return ParseClusterConfig(text.str(), path, backend);
}

// ---------------------------------------------------------------------------------------------
// Lookups

std::uint32_t ClusterConfig::NodeIndex(std::string_view name) const {
  std::lock_guard<std::mutex> lock(node_names_.mu);
  auto& index = node_names_.index;
  const std::string key(name);
  if (auto it = index.find(key); it != index.end()) {
    if (it->second < base.nodes.size() && base.nodes[it->second].name == name) return it->second;
  } else if (index.size() == base.nodes.size()) {
    // Every node is in the map and none disagreed so far: the name is not a node's, unless the
    // table was changed in place; the table has the last word.
    const std::uint32_t n = FindNamed(base.nodes, name);
    if (n == engine::kNone) return n;
  }
  index.clear();
  for (std::uint32_t i = 0; i < base.nodes.size(); ++i) index.emplace(base.nodes[i].name, i);
  auto it = index.find(key);
  return it == index.end() ? engine::kNone : it->second;
}
std::uint32_t ClusterConfig::PartitionIndex(std::string_view name) const {
  return FindNamed(base.partitions, name);
}
std::uint32_t ClusterConfig::QosIndex(std::string_view name) const {
  return FindNamed(base.qos, name);
}
std::uint32_t ClusterConfig::AccountIndex(std::string_view name) const {
  return FindNamed(base.accounts, name);
}
std::uint32_t ClusterConfig::SwitchIndex(std::string_view name) const {
  return FindNamed(base.switches, name);
}
std::uint32_t ClusterConfig::GpuTypeIndex(std::string_view name) const {
  return FindName(base.gpu_types, name);
}
std::uint32_t ClusterConfig::FeatureIndex(std::string_view name) const {
  return FindName(base.features, name);
}
std::uint32_t ClusterConfig::BlockIndex(std::string_view name) const {
  return FindName(base.blocks, name);
}
std::uint32_t ClusterConfig::UserIndex(std::string_view name) const {
  return FindName(users, name);
}

// ---------------------------------------------------------------------------------------------
// Associations

bool ClusterConfig::AssociationIndexCurrent() const {
  return index_.users_seen == users.size() && index_.accounts_seen == base.accounts.size() &&
         index_.associations_seen == base.associations.size();
}

void ClusterConfig::RebuildAssociationIndex() {
  index_ = AssociationIndex{};
  for (std::size_t i = 0; i < users.size(); ++i) {
    index_.user.emplace(users[i], static_cast<std::uint32_t>(i));
  }
  for (std::size_t i = 0; i < base.accounts.size(); ++i) {
    index_.account.emplace(base.accounts[i].name, static_cast<std::uint32_t>(i));
  }
  for (std::size_t i = 0; i < base.associations.size(); ++i) {
    const engine::Association& a = base.associations[i];
    index_.association.emplace(std::pair(a.user, a.account), static_cast<std::uint32_t>(i));
    index_.first_association.emplace(a.user, static_cast<std::uint32_t>(i));
  }
  index_.users_seen = users.size();
  index_.accounts_seen = base.accounts.size();
  index_.associations_seen = base.associations.size();
}

std::uint32_t ClusterConfig::InternUser(const std::string& user) {
  auto it = index_.user.find(user);
  if (it != index_.user.end()) {
    if (users[it->second] == user) return it->second;
    RebuildAssociationIndex();  // renamed in place: trust only the tables
    it = index_.user.find(user);
    if (it != index_.user.end()) return it->second;
  }
  users.push_back(user);
  index_.user.emplace(user, static_cast<std::uint32_t>(users.size() - 1));
  index_.users_seen = users.size();
  return static_cast<std::uint32_t>(users.size() - 1);
}

std::uint32_t ClusterConfig::InternAccount(const std::string& account) {
  auto it = index_.account.find(account);
  if (it != index_.account.end()) {
    if (base.accounts[it->second].name == account) return it->second;
    RebuildAssociationIndex();
    it = index_.account.find(account);
    if (it != index_.account.end()) return it->second;
  }
  if (base.accounts.empty()) {  // a config built by hand without its root
    base.accounts.push_back(MakeAccount("root", engine::kNone));
    index_.account.emplace("root", 0);
    if (account == "root") {
      index_.accounts_seen = base.accounts.size();
      return 0;
    }
  }
  base.accounts.push_back(MakeAccount(account, 0));
  index_.account.emplace(account, static_cast<std::uint32_t>(base.accounts.size() - 1));
  index_.accounts_seen = base.accounts.size();
  return static_cast<std::uint32_t>(base.accounts.size() - 1);
}

std::uint32_t ClusterConfig::AssociationFor(const std::string& user, const std::string& account) {
  if (!AssociationIndexCurrent()) RebuildAssociationIndex();
  const std::uint32_t uid = InternUser(user);
  std::string account_name = account;
  if (account_name.empty()) {
    auto first = index_.first_association.find(uid);
    if (first != index_.first_association.end() && base.associations[first->second].user == uid) {
      return first->second;
    }
    account_name = "default";
  }
  const std::uint32_t acct = InternAccount(account_name);
  auto it = index_.association.find({uid, acct});
  if (it != index_.association.end()) {
    const engine::Association& a = base.associations[it->second];
    if (a.user == uid && a.account == acct) return it->second;
  }
  for (std::size_t i = 0; i < base.associations.size(); ++i) {  // the index was stale
    const engine::Association& a = base.associations[i];
    if (a.user == uid && a.account == acct) {
      RebuildAssociationIndex();
      return static_cast<std::uint32_t>(i);
    }
  }
  const auto index = static_cast<std::uint32_t>(base.associations.size());
  base.associations.push_back(engine::Association{.user = uid, .account = acct, .shares = 1});
  index_.association[{uid, acct}] = index;
  index_.first_association.emplace(uid, index);
  index_.associations_seen = base.associations.size();
  return index;
}

// ---------------------------------------------------------------------------------------------
// Nodes found at run time

std::uint32_t ClusterConfig::AddNode(engine::Node node) {
  const auto index = static_cast<std::uint32_t>(base.nodes.size());
  base.nodes.push_back(std::move(node));
  for (std::size_t p = 0; p < base.partitions.size(); ++p)
    if (p < partition_takes_all.size() && partition_takes_all[p])
      base.partitions[p].nodes.push_back(index);  // indexes stay sorted: this one is the last
  return index;
}

std::uint32_t ClusterConfig::InternGpuType(const std::string& name) {
  std::uint32_t i = GpuTypeIndex(name);
  if (i != engine::kNone) return i;
  base.gpu_types.push_back(name);
  return static_cast<std::uint32_t>(base.gpu_types.size() - 1);
}

std::uint32_t ClusterConfig::InternFeature(const std::string& name) {
  if (name.empty()) return engine::kNone;
  std::uint32_t i = FeatureIndex(name);
  if (i != engine::kNone) return i;
  // A feature dropped by the controller (a backend's placement feature) leaves its slot empty.
  i = FeatureIndex("");
  if (i != engine::kNone) {
    base.features[i] = name;
    return i;
  }
  if (base.features.size() >= 64) return engine::kNone;  // Node::features is a 64-bit mask
  base.features.push_back(name);
  return static_cast<std::uint32_t>(base.features.size() - 1);
}

std::uint32_t ClusterConfig::InternSwitch(const std::string& name, std::uint32_t parent) {
  std::uint32_t i = SwitchIndex(name);
  if (i != engine::kNone) return i;
  base.switches.push_back({name, parent});
  return static_cast<std::uint32_t>(base.switches.size() - 1);
}

std::uint32_t ClusterConfig::InternBlock(const std::string& name) {
  std::uint32_t i = BlockIndex(name);
  if (i != engine::kNone) return i;
  base.blocks.push_back(name);
  return static_cast<std::uint32_t>(base.blocks.size() - 1);
}

// ---------------------------------------------------------------------------------------------
// HomogeneousCluster

ClusterConfig HomogeneousCluster(int nodes, int cpus_per_node, std::int64_t mem_mb_per_node,
                                 int gpus_per_node, std::string gpu_type, std::string prefix) {
  LOCKSTEP_CHECK(nodes > 0);
  LOCKSTEP_CHECK(gpus_per_node >= 0 && gpus_per_node <= engine::kMaxDevicesPerNode);
  ClusterConfig c;
  engine::Snapshot& s = c.base;
  std::vector<engine::GpuDevice> gpus;
  if (gpus_per_node > 0) {
    s.gpu_types.push_back(gpu_type.empty() ? "gpu" : std::move(gpu_type));
    for (int g = 0; g < gpus_per_node; ++g) {
      gpus.push_back({static_cast<std::uint16_t>(g), 0, -1, ""});
    }
  }
  engine::Partition batch;
  batch.name = "batch";
  s.nodes.reserve(static_cast<std::size_t>(nodes));
  for (int i = 0; i < nodes; ++i) {
    engine::Node n;
    n.name = prefix + std::to_string(i + 1);
    n.cpus = cpus_per_node;
    n.mem_mb = mem_mb_per_node;
    n.gpus = gpus;
    s.nodes.push_back(std::move(n));
    batch.nodes.push_back(static_cast<std::uint32_t>(i));
  }
  s.partitions.push_back(std::move(batch));
  c.partition_takes_all.push_back(true);
  s.qos.push_back(MakeQos("normal"));
  s.accounts.push_back(MakeAccount("root", engine::kNone));
  return c;
}

}  // namespace lockstep::config
