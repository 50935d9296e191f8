// The `storage:` section of the cluster YAML (storage_config.h, docs/storage.md).
#include <set>
#include <string>

#include "config/cluster_config_parser.h"

namespace lockstep::config {
namespace {

// An absolute path in its plain form: no empty, "." or ".." component, no trailing slash, no
// control character, no ':' or ',' (they separate --container-mounts fields and mount options).
bool PlainAbsolutePath(const std::string& p) {
  if (p.size() < 2 || p[0] != '/' || p.back() == '/') return false;
  for (char c : p)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == ':' || c == ',') return false;
  for (std::size_t at = 1; at <= p.size();) {
    const std::size_t slash = p.find('/', at);
    const std::string part = p.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string::npos) break;
    at = slash + 1;
  }
  return true;
}

// "server:/export": a host (name or address, IPv6 in brackets) and an absolute export path.
bool NfsSource(const std::string& s) {
  const std::size_t colon = s[0] == '[' ? s.find("]:") + 1 : s.find(':');
  if (colon == 0 || colon == std::string::npos || colon + 1 >= s.size()) return false;
  for (std::size_t i = 0; i < colon; ++i)
    if (static_cast<unsigned char>(s[i]) <= 0x20 || s[i] == '/' || s[i] == ',') return false;
  const std::string path = s.substr(colon + 1);
  return path == "/" || PlainAbsolutePath(path);
}

}  // namespace

const char* FileSystemKindName(FileSystem::Kind kind) {
  switch (kind) {
    case FileSystem::Kind::kNfs: return "nfs";
    case FileSystem::Kind::kBind: return "bind";
    case FileSystem::Kind::kHostPath: return "host_path";
  }
  return "?";
}

std::vector<std::size_t> ClusterConfig::StorageOfNode(std::uint32_t node) const {
  std::vector<std::size_t> out;
  if (node >= base.nodes.size()) return out;
  const std::string& name = base.nodes[node].name;
  for (std::size_t i = 0; i < storage.size(); ++i) {
    const FileSystem& fs = storage[i];
    bool gets = fs.partitions.empty() && fs.nodes.empty();
    for (const std::string& n : fs.nodes) gets = gets || n == name;
    for (const std::string& p : fs.partitions) {
      const std::uint32_t part = PartitionIndex(p);
      if (part == engine::kNone) continue;
      for (std::uint32_t member : base.partitions[part].nodes) gets = gets || member == node;
    }
    if (gets) out.push_back(i);
  }
  return out;
}

std::vector<std::vector<std::string>> ClusterConfig::StorageNodes() const {
  std::vector<std::vector<std::string>> nodes(storage.size());
  for (std::uint32_t n = 0; n < base.nodes.size(); ++n)
    for (std::size_t fs : StorageOfNode(n)) nodes[fs].push_back(base.nodes[n].name);
  return nodes;
}

void ClusterConfigParser::ReadStorage(const YAML::Node& list) {
  if (reader_.failed() || !list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) {
    reader_.Fail(list.Mark(), "storage", "must be a list of file systems");
    return;
  }
  std::set<std::string> names, mount_points;
  for (std::size_t i = 0; i < list.size() && !reader_.failed(); ++i) {
    MapView m(reader_, list[i], "storage[" + std::to_string(i) + "]");
    FileSystem fs;
    fs.name = m.RequiredString("name");
    if (!fs.name.empty() && CheckName(m, "name", fs.name) && !names.insert(fs.name).second)
      m.Fail("name", "file system '" + fs.name + "' is declared twice");
    int sources = 0;
    for (const auto& [key, kind] : {std::pair{"nfs", FileSystem::Kind::kNfs},
                                    std::pair{"bind", FileSystem::Kind::kBind},
                                    std::pair{"host_path", FileSystem::Kind::kHostPath}}) {
      if (!m.Has(key)) {
        (void)m.Value(key);
        continue;
      }
      ++sources;
      fs.kind = kind;
      fs.source = m.String(key, "");
      const bool ok = kind == FileSystem::Kind::kNfs ? NfsSource(fs.source)
                                                     : PlainAbsolutePath(fs.source);
      if (!ok)
        m.Fail(key, kind == FileSystem::Kind::kNfs
                        ? "'" + fs.source + "' is not server:/export"
                        : "'" + fs.source + "' is not a plain absolute path");
    }
    if (sources != 1) m.Fail("name", "give exactly one of nfs, bind or host_path");
    fs.category = m.String("category", "");
    if (fs.kind == FileSystem::Kind::kHostPath) {
      if (!fs.category.empty()) m.Fail("category", "a host_path is seen at its own path");
    } else if (!PlainAbsolutePath(fs.category)) {
      m.Fail("category", "must be the absolute path of the parent directory, e.g. /mnt/datasets");
    }
    fs.options = m.String("options", "");
    if (!fs.options.empty() && fs.kind != FileSystem::Kind::kNfs)
      m.Fail("options", "mount options are for nfs only");
    for (char c : fs.options)
      if (static_cast<unsigned char>(c) <= 0x20) m.Fail("options", "must not hold blanks");
    fs.read_only = m.Bool("read_only", false);
    fs.partitions = m.StringList("partitions");
    for (const std::string& p : fs.partitions)
      if (config_.PartitionIndex(p) == engine::kNone)
        m.Fail("partitions", "unknown partition '" + p + "'");
    fs.nodes = m.Hostlist("nodes");
    // On Kubernetes the Nodes come while lockstepd runs: names cannot be checked here.
    if (config_.backend != "kubernetes") (void)NodeIndexes(m, "nodes", fs.nodes);
    fs.timeout = m.DurationSeconds("timeout", fs.timeout);
    if (fs.timeout < 1 || fs.timeout > 3600) m.Fail("timeout", "must be from 1 s to 1 hour");
    if (!reader_.failed() && !mount_points.insert(fs.MountPoint()).second)
      m.Fail("name", "another file system is mounted at " + fs.MountPoint());
    m.Finish();
    config_.storage.push_back(std::move(fs));
  }
}

}  // namespace lockstep::config
