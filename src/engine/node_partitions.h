// Which partitions each node belongs to, flattened into one array (a node may be in several):
// built once per pass and shared by the pass and its free-node index.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/model.h"

namespace lockstep::engine {

class NodePartitions {
 public:
  explicit NodePartitions(const Snapshot& s) : offset_(s.nodes.size() + 1, 0) {
    for (const Partition& part : s.partitions)
      for (std::uint32_t n : part.nodes)
        if (n < s.nodes.size()) ++offset_[n + 1];
    for (std::size_t n = 0; n < s.nodes.size(); ++n) offset_[n + 1] += offset_[n];
    partitions_.resize(offset_.back());
    std::vector<std::uint32_t> fill(offset_.begin(), offset_.end() - 1);
    for (std::uint32_t p = 0; p < s.partitions.size(); ++p)
      for (std::uint32_t n : s.partitions[p].nodes)
        if (n < s.nodes.size()) partitions_[fill[n]++] = p;
  }

  // The partitions of node n, in partition order.
  std::span<const std::uint32_t> of(std::uint32_t n) const {
    return {partitions_.data() + offset_[n], offset_[n + 1] - offset_[n]};
  }

 private:
  std::vector<std::uint32_t> offset_;  // node n's partitions: [offset_[n], offset_[n + 1])
  std::vector<std::uint32_t> partitions_;
};

}  // namespace lockstep::engine
