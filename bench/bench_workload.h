// A large, realistic GPU cluster and queue for the engine benchmarks (bench/engine_bench.cc and
// bench/engine_memory.cc). Deterministic for a seed. Header-only; used by the benchmarks only.
//
// Cluster: N nodes x 8 GPUs, 64 CPUs, 1 TiB each; leaf switches of 32 nodes, 16 leaves under a
// spine, every spine under one core switch (topology/tree). One partition with every node.
//
// Running jobs keep ~91% of the GPUs busy: most nodes full, some with 1, 2, 4 or 8 GPUs free;
// single-node jobs of 1-8 GPUs and gangs of 2-16 whole nodes inside one leaf; time limits from
// a set of common values, started anywhere within their limit, so remaining times vary.
//
// Pending jobs: mostly single-node (1, 2, 4, 8 GPUs), ~15% gangs of 2-64 nodes x 8 GPUs; CPUs and
// memory in proportion to the GPUs; limits from 30 min to 2 days; 200 users in 20 accounts;
// submitted over the last 7 days; ~1% held. Names look like real ones (longer than the small
// string buffer, so they cost a heap block each, as real names do).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/model.h"

namespace lockstep::bench {

struct BenchWorkload {
  int nodes = 10000;
  int pending = 100000;
  int gpus_per_node = 8;
  int cpus_per_node = 64;
  std::int64_t mem_per_node_mb = 1024 * 1024;  // 1 TiB
  int nodes_per_leaf = 32;
  int leaves_per_spine = 16;
  int users = 200;
  int accounts = 20;
  std::uint64_t seed = 42;
};

inline constexpr Time kBenchNow = 1'700'000'000;

namespace detail {

// Picks an index with the given weights.
template <std::size_t N>
std::size_t Weighted(std::mt19937_64& rng, const int (&weights)[N]) {
  int total = 0;
  for (int w : weights) total += w;
  int r = std::uniform_int_distribution<int>(0, total - 1)(rng);
  for (std::size_t i = 0; i < N; ++i) {
    if (r < weights[i]) return i;
    r -= weights[i];
  }
  return N - 1;
}

}  // namespace detail

// Common time limits (30 min .. 2 days) and how often users ask for each.
inline constexpr Seconds kLimits[] = {1800,     3600,      2 * 3600,  4 * 3600,
                                      8 * 3600, 12 * 3600, 24 * 3600, 48 * 3600};
inline constexpr int kLimitWeights[] = {10, 18, 14, 16, 12, 8, 14, 8};

inline engine::Snapshot MakeBenchSnapshot(const BenchWorkload& w) {
  using namespace engine;
  std::mt19937_64 rng(w.seed);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  Snapshot s;
  s.now = kBenchNow;
  s.gpu_types = {"h100"};

  // Topology: leaves 0..L-1 (what nodes name), then spines, then the core.
  const int leaves = (w.nodes + w.nodes_per_leaf - 1) / w.nodes_per_leaf;
  const int spines = (leaves + w.leaves_per_spine - 1) / w.leaves_per_spine;
  const auto first_spine = static_cast<std::uint32_t>(leaves);
  const auto core = static_cast<std::uint32_t>(leaves + spines);
  for (int l = 0; l < leaves; ++l)
    s.switches.push_back({"leaf" + std::to_string(l),
                          first_spine + static_cast<std::uint32_t>(l / w.leaves_per_spine)});
  for (int sp = 0; sp < spines; ++sp) s.switches.push_back({"spine" + std::to_string(sp), core});
  s.switches.push_back({"core", kNone});

  Partition part;
  part.name = "gpu";
  part.max_time = 7 * 24 * 3600;
  part.default_time = 3600;
  s.nodes.reserve(w.nodes);
  for (int n = 0; n < w.nodes; ++n) {
    Node node;
    node.name = "gpu-node-" + std::to_string(100000 + n);
    node.cpus = w.cpus_per_node;
    node.mem_mb = w.mem_per_node_mb;
    for (int g = 0; g < w.gpus_per_node; ++g)
      node.gpus.push_back({static_cast<std::uint16_t>(g), 0, -1, ""});
    node.leaf_switch = static_cast<std::uint32_t>(n / w.nodes_per_leaf);
    s.nodes.push_back(std::move(node));
    part.nodes.push_back(static_cast<std::uint32_t>(n));
  }
  s.partitions.push_back(std::move(part));
  Qos normal;
  normal.name = "normal";
  s.qos.push_back(std::move(normal));

  s.accounts.push_back({"root", kNone, 1, {}});
  for (int a = 0; a < w.accounts; ++a)
    s.accounts.push_back(
        {"acct" + std::to_string(a), 0, static_cast<std::uint32_t>(1 + a % 4), {}});
  for (int u = 0; u < w.users; ++u) {
    // Usage so that fair-share has something to rank when its weight is set.
    s.associations.push_back({static_cast<std::uint32_t>(10000 + u),
                              static_cast<std::uint32_t>(1 + u % w.accounts), 1,
                              static_cast<double>(uniform(0, 1'000'000'000))});
  }

  const int cpus_per_gpu = w.cpus_per_node / w.gpus_per_node;
  const std::int64_t mem_per_gpu = w.mem_per_node_mb / w.gpus_per_node;
  JobId next_running_id = 50'000'000;
  auto running_job = [&](int gpus_per_node, std::vector<std::uint32_t> nodes,
                         std::vector<std::uint64_t> masks) {
    Job j;
    j.id = next_running_id++;
    std::uint32_t assoc = static_cast<std::uint32_t>(uniform(0, w.users - 1));
    j.assoc = assoc;
    j.user = s.associations[assoc].user;
    j.name = "train-" + std::to_string(j.id);
    j.req.min_nodes = static_cast<std::int32_t>(nodes.size());
    j.req.ntasks = j.req.min_nodes;
    j.req.cpus_per_task = gpus_per_node * cpus_per_gpu;
    j.req.gpus_per_node = gpus_per_node;
    j.req.mem_per_node_mb = gpus_per_node * mem_per_gpu;
    j.req.time_limit = kLimits[detail::Weighted(rng, kLimitWeights)];
    j.start_time = s.now - uniform(1, j.req.time_limit - 60);
    j.submit_time = j.start_time - uniform(0, 6 * 3600);
    for (std::size_t i = 0; i < nodes.size(); ++i)
      j.allocation.nodes.push_back({nodes[i], gpus_per_node * cpus_per_gpu,
                                    gpus_per_node * mem_per_gpu, masks[i], gpus_per_node});
    s.running.push_back(std::move(j));
  };

  // Free GPUs per node: 0 (70%), 1 (15%), 2 (8%), 4 (4%), 8 (3%): ~9% of GPUs free.
  const int free_choices[] = {0, 1, 2, 4, 8};
  const int free_weights[] = {70, 15, 8, 4, 3};
  std::vector<int> busy(w.nodes);
  for (int n = 0; n < w.nodes; ++n)
    busy[n] = std::max(0, w.gpus_per_node - free_choices[detail::Weighted(rng, free_weights)]);
  const std::uint64_t full_mask =
      w.gpus_per_node >= 64 ? ~0ull : (std::uint64_t{1} << w.gpus_per_node) - 1;
  for (int n = 0; n < w.nodes;) {
    // A gang of whole nodes over a run of full nodes in one leaf (about a third of full nodes).
    if (busy[n] == w.gpus_per_node && uniform(0, 2) == 0) {
      int want = static_cast<int>(std::min<std::int64_t>(16, std::int64_t{2} << uniform(0, 3)));
      int leaf_end = std::min(w.nodes, (n / w.nodes_per_leaf + 1) * w.nodes_per_leaf);
      std::vector<std::uint32_t> gang;
      for (int m = n;
           m < leaf_end && static_cast<int>(gang.size()) < want && busy[m] == w.gpus_per_node; ++m)
        gang.push_back(static_cast<std::uint32_t>(m));
      if (gang.size() >= 2) {
        running_job(w.gpus_per_node, gang, std::vector<std::uint64_t>(gang.size(), full_mask));
        n += static_cast<int>(gang.size());
        continue;
      }
    }
    // Single-node jobs of 1, 2, 4 or 8 GPUs filling the busy GPUs from device 0 up.
    int left = busy[n], device = 0;
    while (left > 0) {
      const int sizes[] = {1, 2, 4, 8};
      const int size_weights[] = {30, 25, 25, 20};
      int g = std::min(left, sizes[detail::Weighted(rng, size_weights)]);
      std::uint64_t mask = ((std::uint64_t{1} << g) - 1) << device;
      running_job(g, {static_cast<std::uint32_t>(n)}, {mask});
      device += g;
      left -= g;
    }
    ++n;
  }

  // Pending jobs, in submit order (ids follow submit times).
  std::vector<Time> submits(w.pending);
  for (auto& t : submits) t = s.now - uniform(1, 7 * 24 * 3600);
  std::sort(submits.begin(), submits.end());
  const int gpu_choices[] = {1, 2, 4, 8, -1};  // -1: several whole nodes
  const int gpu_weights[] = {35, 20, 15, 15, 15};
  const int gang_nodes[] = {2, 4, 8, 16, 32, 64};
  const int gang_weights[] = {35, 25, 18, 12, 6, 4};
  const char* kinds[] = {"train", "eval", "sweep", "finetune", "preprocess"};
  s.pending.reserve(w.pending);
  for (int p = 0; p < w.pending; ++p) {
    Job j;
    j.id = static_cast<JobId>(1'000'000 + p);
    std::uint32_t assoc = static_cast<std::uint32_t>(uniform(0, w.users - 1));
    j.assoc = assoc;
    j.user = s.associations[assoc].user;
    j.name =
        std::string(kinds[uniform(0, 4)]) + "-" + std::to_string(j.user) + "-" + std::to_string(p);
    int g = gpu_choices[detail::Weighted(rng, gpu_weights)];
    int nodes = 1;
    if (g < 0) {
      nodes = std::min(w.nodes, gang_nodes[detail::Weighted(rng, gang_weights)]);
      g = w.gpus_per_node;
    }
    j.req.min_nodes = nodes;
    j.req.ntasks = nodes;
    j.req.gpus_per_node = g;
    j.req.cpus_per_task = g * static_cast<int>(uniform(cpus_per_gpu / 2, cpus_per_gpu));
    j.req.mem_per_node_mb = g * mem_per_gpu / (uniform(0, 1) == 0 ? 1 : 2);
    j.req.time_limit = kLimits[detail::Weighted(rng, kLimitWeights)];
    j.submit_time = submits[p];
    j.held_by_user = uniform(0, 99) == 0;
    s.pending.push_back(std::move(j));
  }
  return s;
}

}  // namespace lockstep::bench
