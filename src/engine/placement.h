// Choosing nodes among those that can take a job: best fit to fight fragmentation, and the
// fewest leaf switches (topology/tree) or blocks (topology/block) for jobs of several nodes.
// Pure functions over the candidates a caller found feasible for one moment and duration.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/model.h"
#include "engine/resources.h"

namespace lockstep::engine {

// A node that can take the job over the window, with what it would take and what it has.
struct Candidate {
  std::uint32_t node = 0;
  ResourceVec take;
  ResourceVec available;
};

// The topology as placement needs it: every node's leaf group (a leaf switch or a block) and
// every group's ancestors. Built once per pass.
class Topology {
 public:
  explicit Topology(const Snapshot& s);

  bool empty() const { return leaf_count_ == 0; }
  // Leaf group of node n, or kNone.
  std::uint32_t LeafOf(std::uint32_t n) const { return leaf_of_node_[n]; }
  // Switches above leaf `g` (nearest first); empty for blocks.
  const std::vector<std::uint32_t>& AncestorsOf(std::uint32_t g) const { return ancestors_[g]; }
  std::uint32_t leaf_count() const { return leaf_count_; }
  std::uint32_t group_count() const { return static_cast<std::uint32_t>(ancestors_.size()); }

 private:
  std::vector<std::uint32_t> leaf_of_node_;
  std::vector<std::vector<std::uint32_t>> ancestors_;  // per group id (switches, then blocks)
  std::uint32_t leaf_count_ = 0;
};

struct PlacementRequest {
  std::int32_t nodes = 1;      // at least
  std::int32_t max_nodes = 1;  // at most, when more are free (best fit only)
  PlacementPolicy policy = PlacementPolicy::kBestFit;
  std::int32_t max_switches = 0;  // 0: any number of leaf groups
};

// Picks the nodes, or nullopt when the candidates cannot satisfy the request (too few, or
// only across more leaf groups than max_switches allows). `weights` are the nodes' Weights.
std::optional<std::vector<Candidate>> ChooseNodes(std::vector<Candidate> candidates,
                                                  const PlacementRequest& request,
                                                  const Topology& topology,
                                                  const std::vector<Node>& nodes);

// True when `a` is a better fit than `b`: lower node weight, then less left over (GPUs, then
// CPUs), then the lower node index.
bool BetterFit(const Candidate& a, const Candidate& b, const std::vector<Node>& nodes);

}  // namespace lockstep::engine
