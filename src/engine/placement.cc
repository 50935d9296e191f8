#include "engine/placement.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace lockstep::engine {
namespace {

int LeftoverGpus(const Candidate& c) {
  return c.available.total_gpus() - c.take.total_gpus();
}

// BetterFit's order as a flat key, so that sorting compares integers in place instead of
// reaching into the nodes and summing GPU slots at every comparison.
struct FitKey {
  std::int32_t weight, gpus_left, cpus_left;
  std::uint32_t node, index;
  bool operator<(const FitKey& o) const {
    return std::tie(weight, gpus_left, cpus_left, node) <
           std::tie(o.weight, o.gpus_left, o.cpus_left, o.node);
  }
};

// Sorts the best `want` candidates first, in BetterFit's order, and drops the rest.
void BestFirst(std::vector<Candidate>& cs, std::size_t want, const std::vector<Node>& nodes) {
  std::vector<FitKey> keys;
  keys.reserve(cs.size());
  for (std::uint32_t i = 0; i < cs.size(); ++i)
    keys.push_back({nodes[cs[i].node].weight, LeftoverGpus(cs[i]),
                    cs[i].available.cpus - cs[i].take.cpus, cs[i].node, i});
  want = std::min(want, keys.size());
  const auto cut = keys.begin() + static_cast<std::ptrdiff_t>(want);
  // Candidates often come in best-fit order already (the free-node index visits them so, and
  // alike nodes come in node order): then the first `want` are the best.
  if (std::is_sorted(keys.begin(), keys.end())) {
    cs.resize(want);
    return;
  }
  // Keys are unique (the node breaks ties): select, then sort the selected, which is what
  // partial_sort gives at a fraction of its heap's cost when `want` is a large share.
  if (cut != keys.end()) std::nth_element(keys.begin(), cut, keys.end());
  std::sort(keys.begin(), cut);
  std::vector<Candidate> best;
  best.reserve(want);
  for (std::size_t k = 0; k < want; ++k) best.push_back(cs[keys[k].index]);
  cs = std::move(best);
}

void SortByFit(std::vector<Candidate>& cs, const std::vector<Node>& nodes) {
  BestFirst(cs, cs.size(), nodes);
}

// Takes nodes from leaf groups in the order given, best fit within each, until `need`.
std::vector<Candidate> TakeFromLeaves(const std::vector<std::uint32_t>& leaves,
                                      std::map<std::uint32_t, std::vector<Candidate>>& by_leaf,
                                      int need, const std::vector<Node>& nodes, int* leaves_used) {
  std::vector<Candidate> chosen;
  *leaves_used = 0;
  for (std::uint32_t leaf : leaves) {
    if (static_cast<int>(chosen.size()) >= need) break;
    auto& group = by_leaf[leaf];
    SortByFit(group, nodes);
    ++*leaves_used;
    for (const Candidate& c : group) {
      if (static_cast<int>(chosen.size()) >= need) break;
      chosen.push_back(c);
    }
  }
  return chosen;
}

std::optional<std::vector<Candidate>> ChooseByTopology(std::vector<Candidate> candidates,
                                                       const PlacementRequest& req,
                                                       const Topology& topo,
                                                       const std::vector<Node>& nodes) {
  std::map<std::uint32_t, std::vector<Candidate>> by_leaf;  // kNone: nodes outside the topology
  for (const Candidate& c : candidates) by_leaf[topo.LeafOf(c.node)].push_back(c);

  // 1. One leaf group suffices: the one with the fewest candidates that still fits (best fit).
  std::uint32_t best_leaf = kNone;
  std::size_t best_size = 0;
  for (auto& [leaf, group] : by_leaf) {
    if (leaf == kNone || static_cast<int>(group.size()) < req.nodes) continue;
    if (best_leaf == kNone || group.size() < best_size) best_leaf = leaf, best_size = group.size();
  }
  if (best_leaf != kNone) {
    int used = 0;
    return TakeFromLeaves({best_leaf}, by_leaf, req.nodes, nodes, &used);
  }

  // 2. The smallest switch subtree that has enough; else everything. Within it, the leaves
  // with the most candidates first, so the job spans as few leaves as possible.
  std::map<std::uint32_t, int> subtree_count;
  for (auto& [leaf, group] : by_leaf) {
    if (leaf == kNone) continue;
    for (std::uint32_t sw : topo.AncestorsOf(leaf))
      subtree_count[sw] += static_cast<int>(group.size());
  }
  std::uint32_t domain = kNone;
  int domain_size = 0;
  for (auto& [sw, count] : subtree_count) {
    if (count < req.nodes) continue;
    if (domain == kNone || count < domain_size) domain = sw, domain_size = count;
  }
  std::vector<std::uint32_t> leaves;
  for (auto& [leaf, group] : by_leaf) {
    if (domain == kNone) {
      leaves.push_back(leaf);
      continue;
    }
    if (leaf == kNone) continue;
    const auto& up = topo.AncestorsOf(leaf);
    if (std::find(up.begin(), up.end(), domain) != up.end()) leaves.push_back(leaf);
  }
  std::stable_sort(leaves.begin(), leaves.end(), [&](std::uint32_t a, std::uint32_t b) {
    return by_leaf[a].size() > by_leaf[b].size();
  });
  int used = 0;
  std::vector<Candidate> chosen = TakeFromLeaves(leaves, by_leaf, req.nodes, nodes, &used);
  if (static_cast<int>(chosen.size()) < req.nodes) return std::nullopt;
  if (req.max_switches > 0 && used > req.max_switches) return std::nullopt;
  return chosen;
}

}  // namespace

Topology::Topology(const Snapshot& s) : leaf_of_node_(s.nodes.size(), kNone) {
  // Group ids: switches keep their index; blocks follow them.
  const std::uint32_t nsw = static_cast<std::uint32_t>(s.switches.size());
  ancestors_.resize(nsw + s.blocks.size());
  for (std::uint32_t sw = 0; sw < nsw; ++sw) {
    std::uint32_t p = s.switches[sw].parent;
    for (std::size_t guard = 0; p != kNone && p < nsw && guard < nsw; ++guard) {
      ancestors_[sw].push_back(p);
      p = s.switches[p].parent;
    }
  }
  for (std::uint32_t n = 0; n < s.nodes.size(); ++n) {
    const Node& node = s.nodes[n];
    if (node.leaf_switch != kNone && node.leaf_switch < nsw) {
      leaf_of_node_[n] = node.leaf_switch;
    } else if (node.block != kNone && node.block < s.blocks.size()) {
      leaf_of_node_[n] = nsw + node.block;
    }
    if (leaf_of_node_[n] != kNone) leaf_count_ = std::max(leaf_count_, leaf_of_node_[n] + 1);
  }
}

bool BetterFit(const Candidate& a, const Candidate& b, const std::vector<Node>& nodes) {
  int wa = nodes[a.node].weight, wb = nodes[b.node].weight;
  if (wa != wb) return wa < wb;
  int ga = LeftoverGpus(a), gb = LeftoverGpus(b);
  if (ga != gb) return ga < gb;
  int ca = a.available.cpus - a.take.cpus, cb = b.available.cpus - b.take.cpus;
  if (ca != cb) return ca < cb;
  return a.node < b.node;
}

std::optional<std::vector<Candidate>> ChooseNodes(std::vector<Candidate> candidates,
                                                  const PlacementRequest& req,
                                                  const Topology& topology,
                                                  const std::vector<Node>& nodes) {
  if (static_cast<int>(candidates.size()) < req.nodes) return std::nullopt;
  bool by_topology = !topology.empty() && req.nodes > 1 &&
                     (req.policy == PlacementPolicy::kTopologyFirst || req.max_switches > 0);
  if (by_topology) return ChooseByTopology(std::move(candidates), req, topology, nodes);
  int want = std::min<int>(static_cast<int>(candidates.size()), std::max(req.nodes, req.max_nodes));
  BestFirst(candidates, static_cast<std::size_t>(want), nodes);
  return candidates;
}

}  // namespace lockstep::engine
