// scontrol show topology: the cluster's switches (topology/tree) or blocks (topology/block) as
// Slurm's topology records, as GET /api/v1/topology answers them (docs/api.md).
#include <algorithm>
#include <vector>

#include "common/hostlist.h"
#include "controller/controller.h"

namespace lockstep::controller {
namespace {

// The switches as Slurm's topology/tree reports them (topology_tree.c): a leaf is level 0 and
// lists its nodes; an upper switch is one above its highest child and lists its children and
// every node below it. In the order they were defined.
class SwitchTree {
 public:
  explicit SwitchTree(const engine::Snapshot& s)
      : s_(s), children_(s.switches.size()), nodes_below_(s.switches.size()) {
    for (std::uint32_t i = 0; i < s.switches.size(); ++i)
      if (s.switches[i].parent != engine::kNone) children_[s.switches[i].parent].push_back(i);
    // Each node under its leaf and every switch above it; the walk is bounded, as Level's.
    for (std::uint32_t n = 0; n < s.nodes.size(); ++n)
      for (std::uint32_t at = s.nodes[n].leaf_switch, steps = 0;
           at != engine::kNone && steps <= s.switches.size(); at = s.switches[at].parent, ++steps)
        nodes_below_[at].push_back(s.nodes[n].name);
  }

  nlohmann::json Records() const {
    nlohmann::json out = nlohmann::json::array();
    for (std::uint32_t i = 0; i < s_.switches.size(); ++i) {
      std::vector<std::string> children;
      for (std::uint32_t c : children_[i]) children.push_back(s_.switches[c].name);
      out.push_back({{"name", s_.switches[i].name},
                     {"level", Level(i, 0)},
                     {"link_speed", 1},  // Slurm's default; lockstep has no link speeds
                     {"nodes", CompressHostlist(nodes_below_[i])},
                     {"switches", CompressHostlist(children)}});
    }
    return out;
  }

 private:
  // `depth` bounds the walk: the configuration admits no cycle, nor do node reports.
  int Level(std::uint32_t sw, std::size_t depth) const {
    int level = 0;
    if (depth > s_.switches.size()) return level;
    for (std::uint32_t c : children_[sw]) level = std::max(level, Level(c, depth + 1) + 1);
    return level;
  }

  const engine::Snapshot& s_;
  std::vector<std::vector<std::uint32_t>> children_;   // by switch, in definition order
  std::vector<std::vector<std::string>> nodes_below_;  // by switch, in the nodes' order
};

// Blocks as Slurm's topology/block reports them: name, index, nodes, and the block's size.
nlohmann::json BlockRecords(const engine::Snapshot& s) {
  nlohmann::json out = nlohmann::json::array();
  for (std::uint32_t b = 0; b < s.blocks.size(); ++b) {
    std::vector<std::string> nodes;
    for (const engine::Node& n : s.nodes)
      if (n.block == b) nodes.push_back(n.name);
    out.push_back({{"name", s.blocks[b]},
                   {"index", b},
                   {"nodes", CompressHostlist(nodes)},
                   {"block_size", nodes.size()}});
  }
  return out;
}

}  // namespace

nlohmann::json Controller::TopologyView() const {
  HeldLock lock(*this);
  const engine::Snapshot& s = cluster_.base;
  return {{"plugin", !s.blocks.empty()     ? "topology/block"
                     : !s.switches.empty() ? "topology/tree"
                                           : "topology/none"},
          {"switches", SwitchTree(s).Records()},
          {"blocks", BlockRecords(s)}};
}

}  // namespace lockstep::controller
