// A node's GPU devices as physical GPUs: a whole GPU is one, the MIG slices of a GPU share its.
// Devices keep the physical order (config's GpuDevices), so the physical GPU of a whole one is
// the one after the GPU of the device before it.
#pragma once

#include <vector>

#include "engine/model.h"

namespace lockstep::engine {

// For each device of `node`, by device index, the index of its physical GPU (nvidia-smi's and
// NVML's numbering).
inline std::vector<int> PhysicalGpuOf(const Node& node) {
  std::vector<int> physical;
  physical.reserve(node.gpus.size());
  int last = -1;
  for (const GpuDevice& d : node.gpus) {
    last = d.parent < 0 ? last + 1 : d.parent;
    physical.push_back(last);
  }
  return physical;
}

// How many physical GPUs the node has: NVML's count, however many slices some are cut into.
inline int PhysicalGpuCount(const Node& node) {
  const std::vector<int> physical = PhysicalGpuOf(node);
  return physical.empty() ? 0 : physical.back() + 1;
}

}  // namespace lockstep::engine
