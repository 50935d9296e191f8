// Fuzzes lockstep's cluster YAML reader (cluster.yaml, which lockstepd, the simulator and the
// golden tests read). Properties: nothing crashes or throws; every error names the file; a
// config that parses is one the engine can index: partitions, nodes and QoS refer only to
// entries that exist.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/cluster_config.h"
#include "engine/model.h"
#include "fuzz_check.h"

namespace {

void CheckIndexesHold(const lockstep::config::ClusterConfig& config) {
  const lockstep::engine::Snapshot& s = config.base;
  for (const lockstep::engine::Partition& p : s.partitions) {
    for (std::uint32_t n : p.nodes) FUZZ_CHECK(n < s.nodes.size());
  }
  for (const lockstep::engine::Node& n : s.nodes) {
    FUZZ_CHECK(n.leaf_switch == lockstep::engine::kNone || n.leaf_switch < s.switches.size());
    FUZZ_CHECK(n.block == lockstep::engine::kNone || n.block < s.blocks.size());
  }
  FUZZ_CHECK(s.partitions.empty() || config.default_partition < s.partitions.size());
  FUZZ_CHECK(s.qos.empty() || config.default_qos < s.qos.size());
  FUZZ_CHECK(config.partition_takes_all.size() == s.partitions.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  lockstep::Result<lockstep::config::ClusterConfig> config =
      lockstep::config::ParseClusterConfig(text, "cluster.yaml");
  if (!config.ok()) {
    FUZZ_CHECK(config.status().message().rfind("cluster.yaml", 0) == 0);
    return 0;
  }
  CheckIndexesHold(*config);
  return 0;
}
