// Counted resources of one node, as the planner tracks them over time. GPUs are counted per
// type slot of the node (a node has at most kMaxGpuTypesPerNode distinct types); which device
// a job gets is chosen only when it starts, because devices of one type are interchangeable.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "engine/model.h"

namespace lockstep::engine {

struct ResourceVec {
  std::int32_t cpus = 0;
  std::int64_t mem_mb = 0;
  std::array<std::int16_t, kMaxGpuTypesPerNode> gpus{};  // per type slot of the node

  int total_gpus() const {
    int n = 0;
    for (auto g : gpus) n += g;
    return n;
  }
  ResourceVec& operator+=(const ResourceVec& o) {
    cpus += o.cpus;
    mem_mb += o.mem_mb;
    for (int i = 0; i < kMaxGpuTypesPerNode; ++i)
      gpus[i] = static_cast<std::int16_t>(gpus[i] + o.gpus[i]);
    return *this;
  }
  ResourceVec& operator-=(const ResourceVec& o) {
    cpus -= o.cpus;
    mem_mb -= o.mem_mb;
    for (int i = 0; i < kMaxGpuTypesPerNode; ++i)
      gpus[i] = static_cast<std::int16_t>(gpus[i] - o.gpus[i]);
    return *this;
  }
  // True when every component of `need` is available here.
  bool Covers(const ResourceVec& need) const {
    if (cpus < need.cpus || mem_mb < need.mem_mb) return false;
    for (int i = 0; i < kMaxGpuTypesPerNode; ++i)
      if (gpus[i] < need.gpus[i]) return false;
    return true;
  }
  bool operator==(const ResourceVec&) const = default;
};

inline ResourceVec Min(const ResourceVec& a, const ResourceVec& b) {
  ResourceVec r;
  r.cpus = std::min(a.cpus, b.cpus);
  r.mem_mb = std::min(a.mem_mb, b.mem_mb);
  for (int i = 0; i < kMaxGpuTypesPerNode; ++i) r.gpus[i] = std::min(a.gpus[i], b.gpus[i]);
  return r;
}

// What a job needs on each of its nodes, before GPU types are mapped onto a node's slots.
struct NodeNeed {
  std::int32_t cpus = 0;
  std::int64_t mem_mb = 0;
  std::int32_t gpus = 0;
  std::uint32_t gpu_type = kNone;  // kNone: any type
  bool exclusive = false;          // the whole node
  bool whole_memory = false;       // --mem=0: all of the node's memory (mem_mb is then 0)
  bool operator==(const NodeNeed&) const = default;
};

}  // namespace lockstep::engine
