// Random clusters and queues for the invariant and differential tests and the benchmarks.
// Deterministic for a seed. Header-only; not used by the engine itself.
#pragma once

#include <random>

#include "engine/snapshot_builder.h"

namespace lockstep::engine {

struct RandomWorkloadOptions {
  int nodes = 16;
  int gpus_per_node = 8;
  int cpus_per_node = 64;
  std::int64_t mem_per_node_mb = 512 * 1024;
  int leaves = 0;    // leaf switches (0: no topology)
  int running = 20;  // running jobs placed first, where they fit
  int pending = 50;
  int max_job_nodes = 4;
  bool cpu_and_memory = true;  // jobs ask for CPUs and memory too
  Seconds max_limit = 8 * 3600;
};

inline Snapshot RandomSnapshot(std::uint64_t seed, const RandomWorkloadOptions& o) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  SnapshotBuilder b;
  b.Now(100000).Partition("batch");
  for (int l = 0; l < o.leaves; ++l)
    b.Switch("leaf" + std::to_string(l), o.leaves > 1 ? o.leaves : kNone);
  if (o.leaves > 1) b.Switch("spine");
  for (int n = 0; n < o.nodes; ++n)
    b.Nodes(1, o.cpus_per_node, o.mem_per_node_mb, o.gpus_per_node,
            o.leaves > 0 ? static_cast<std::uint32_t>(n * o.leaves / o.nodes) : kNone);
  b.User(0);
  const int gpu_choices[] = {1, 1, 2, 4, 8, 8};
  const Seconds limits[] = {600, 1800, 3600, 2 * 3600, 4 * 3600, o.max_limit};
  // Running jobs: one node each, packed where they fit.
  std::vector<int> free_gpus(o.nodes, o.gpus_per_node);
  for (int r = 0; r < o.running; ++r) {
    int g = gpu_choices[pick(0, 5)];
    std::uint32_t n = static_cast<std::uint32_t>(pick(0, o.nodes - 1));
    if (free_gpus[n] < g) continue;
    free_gpus[n] -= g;
    Seconds limit = limits[pick(0, 5)];
    b.Running(1000000 + r, {n}, g, limit, b.snapshot().now - pick(0, static_cast<int>(limit) - 1),
              g * 2);
  }
  for (int p = 0; p < o.pending; ++p) {
    int nodes = pick(0, 3) == 0 ? pick(1, o.max_job_nodes) : 1;
    int g = nodes > 1 ? 8 : gpu_choices[pick(0, 5)];
    g = std::min(g, o.gpus_per_node);
    Job& j = b.Pending(static_cast<JobId>(p + 1), nodes, g, limits[pick(0, 5)], p);
    if (o.cpu_and_memory) {
      j.req.cpus_per_task = 2 * std::max(1, g);
      j.req.mem_per_node_mb = static_cast<std::int64_t>(g) * 32 * 1024;
    }
  }
  return b.Build();
}

}  // namespace lockstep::engine
