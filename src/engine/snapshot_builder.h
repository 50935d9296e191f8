// Building Snapshots by hand, for tests, benchmarks and examples: a few lines per cluster.
// Header-only; not used by the engine itself.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/model.h"

namespace lockstep::engine {

class SnapshotBuilder {
 public:
  SnapshotBuilder() {
    s_.accounts.push_back({"root", kNone, 1, {}});
    s_.qos.emplace_back().name = "normal";
    s_.gpu_types.push_back("gpu");
  }

  SnapshotBuilder& Now(Time t) {
    s_.now = t;
    return *this;
  }
  // `count` nodes named prefix0..; in switch `leaf` (kNone: none); added to partition 0 when it
  // exists.
  SnapshotBuilder& Nodes(int count, int cpus, std::int64_t mem_mb, int gpus,
                         std::uint32_t leaf = kNone, std::uint32_t gpu_type = 0,
                         const std::string& prefix = "n") {
    for (int i = 0; i < count; ++i) {
      Node n;
      n.name = prefix + std::to_string(s_.nodes.size());
      n.cpus = cpus;
      n.mem_mb = mem_mb;
      for (int g = 0; g < gpus; ++g)
        n.gpus.push_back({static_cast<std::uint16_t>(g), gpu_type, -1, ""});
      n.leaf_switch = leaf;
      s_.nodes.push_back(std::move(n));
      for (auto& p : s_.partitions)
        if (p.name == default_partition_)
          p.nodes.push_back(static_cast<std::uint32_t>(s_.nodes.size() - 1));
    }
    return *this;
  }
  SnapshotBuilder& Switch(const std::string& name, std::uint32_t parent = kNone) {
    s_.switches.push_back({name, parent});
    return *this;
  }
  // A partition with every node added so far and every node added later.
  SnapshotBuilder& Partition(const std::string& name, std::uint32_t tier = 1,
                             PreemptMode mode = PreemptMode::kOff) {
    engine::Partition p;
    p.name = name;
    p.priority_tier = tier;
    p.preempt_mode = mode;
    for (std::uint32_t n = 0; n < s_.nodes.size(); ++n) p.nodes.push_back(n);
    if (s_.partitions.empty()) default_partition_ = name;
    s_.partitions.push_back(std::move(p));
    return *this;
  }
  SnapshotBuilder& User(std::uint32_t uid, std::uint32_t account = 0, std::uint32_t shares = 1,
                        double usage = 0) {
    s_.associations.push_back({uid, account, shares, usage});
    return *this;
  }
  // A pending job asking `nodes` x `gpus_per_node` GPUs for `limit` seconds.
  Job& Pending(JobId id, int nodes, int gpus_per_node, Seconds limit, Time submit = 0) {
    s_.pending.push_back(MakeJob(id, nodes, gpus_per_node, limit, submit));
    return s_.pending.back();
  }
  // A running job on the given nodes with `gpus_per_node` GPUs (the lowest free devices).
  Job& Running(JobId id, std::vector<std::uint32_t> nodes, int gpus_per_node, Seconds limit,
               Time start, int cpus_per_node = 1) {
    Job j = MakeJob(id, static_cast<int>(nodes.size()), gpus_per_node, limit, start);
    j.start_time = start;
    for (std::uint32_t n : nodes) {
      std::uint64_t taken = 0;
      for (int g = 0, got = 0; g < 64 && got < gpus_per_node; ++g) {
        if (used_[n] >> g & 1) continue;
        taken |= std::uint64_t{1} << g;
        ++got;
      }
      used_[n] |= taken;
      j.allocation.nodes.push_back({n, cpus_per_node, 0, taken, gpus_per_node});
    }
    s_.running.push_back(std::move(j));
    return s_.running.back();
  }

  Snapshot& snapshot() { return s_; }
  Snapshot Build() const { return s_; }

 private:
  Job MakeJob(JobId id, int nodes, int gpus_per_node, Seconds limit, Time submit) const {
    Job j;
    j.id = id;
    j.name = "job" + std::to_string(id);
    j.req.min_nodes = nodes;
    j.req.ntasks = nodes;
    j.req.gpus_per_node = gpus_per_node;
    j.req.time_limit = limit;
    j.submit_time = submit;
    return j;
  }

  Snapshot s_;
  std::string default_partition_;
  std::unordered_map<std::uint32_t, std::uint64_t> used_;
};

}  // namespace lockstep::engine
