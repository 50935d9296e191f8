// The fast pass against a slow, obviously correct reference on random workloads, and the plan
// invariants on every plan. The reference recomputes every node's usage from the full list of
// occupants at every candidate moment: no cached free vectors, no shape memo, no per-node
// earliest-start search.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <tuple>

#include "engine/model.h"
#include "engine/plan_checker.h"
#include "engine/random_workload.h"

namespace lockstep::engine {
namespace {

struct Occupant {
  std::uint32_t node;
  Time start, end;
  int cpus, gpus;
  std::int64_t mem;
};

struct RefChoice {
  std::uint32_t node;
  int left_gpus, left_cpus;
};

class ReferencePlanner {
 public:
  ReferencePlanner(const Snapshot& s, int depth) : s_(s), depth_(depth) {
    for (const Job& j : s.running) {
      Time end = std::max(j.start_time + j.req.time_limit, s.now + 1);
      for (const NodeAllocation& a : j.allocation.nodes)
        occ_.push_back({a.node, kMinTime, end, a.cpus, std::popcount(a.gpus), a.mem_mb});
    }
  }

  // job id -> (start time, sorted nodes); start == now means started.
  std::map<JobId, std::pair<Time, std::vector<std::uint32_t>>> Run() {
    std::vector<const Job*> order;
    for (const Job& j : s_.pending) order.push_back(&j);
    std::sort(order.begin(), order.end(), [](const Job* a, const Job* b) {
      return a->submit_time != b->submit_time ? a->submit_time < b->submit_time : a->id < b->id;
    });
    std::map<JobId, std::pair<Time, std::vector<std::uint32_t>>> out;
    int reservations = 0;
    bool blocked = false;
    for (const Job* j : order) {
      if (depth_ == 0 && blocked) break;  // FIFO: nothing passes a waiting job
      if (auto nodes = PlaceAt(*j, s_.now)) {
        Add(*j, s_.now, *nodes);
        out[j->id] = {s_.now, *nodes};
        continue;
      }
      blocked = true;
      if (reservations >= depth_) continue;
      for (Time t : CandidateTimes()) {
        if (auto nodes = PlaceAt(*j, t)) {
          Add(*j, t, *nodes);
          out[j->id] = {t, *nodes};
          ++reservations;
          break;
        }
      }
    }
    return out;
  }

 private:
  static constexpr Time kMinTime = -(Time{1} << 60);

  std::vector<Time> CandidateTimes() const {
    std::vector<Time> ts = {s_.now};
    for (const Occupant& o : occ_) {
      if (o.start > s_.now) ts.push_back(o.start);
      if (o.end > s_.now) ts.push_back(o.end);
    }
    std::sort(ts.begin(), ts.end());
    ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
    return ts;
  }

  // The least free on node n at any moment of [t, end): checked at t and every occupant start.
  std::tuple<int, int, std::int64_t> LeastFree(std::uint32_t n, Time t, Time end) const {
    std::vector<Time> probes = {t};
    for (const Occupant& o : occ_)
      if (o.node == n && o.start > t && o.start < end) probes.push_back(o.start);
    int cpus = 1 << 30, gpus = 1 << 30;
    std::int64_t mem = std::int64_t{1} << 60;
    for (Time p : probes) {
      int c = s_.nodes[n].cpus, g = static_cast<int>(s_.nodes[n].gpus.size());
      std::int64_t m = s_.nodes[n].mem_mb;
      for (const Occupant& o : occ_)
        if (o.node == n && o.start <= p && p < o.end) c -= o.cpus, g -= o.gpus, m -= o.mem;
      cpus = std::min(cpus, c), gpus = std::min(gpus, g), mem = std::min(mem, m);
    }
    return {cpus, gpus, mem};
  }

  std::optional<std::vector<std::uint32_t>> PlaceAt(const Job& j, Time t) const {
    int need_cpus = j.req.cpus_per_task * std::max(1, j.req.ntasks / j.req.min_nodes);
    std::vector<RefChoice> fit;
    for (std::uint32_t n = 0; n < s_.nodes.size(); ++n) {
      auto [c, g, m] = LeastFree(n, t, t + j.req.time_limit);
      if (c >= need_cpus && g >= j.req.gpus_per_node && m >= j.req.mem_per_node_mb)
        fit.push_back({n, g - j.req.gpus_per_node, c - need_cpus});
    }
    if (static_cast<int>(fit.size()) < j.req.min_nodes) return std::nullopt;
    std::sort(fit.begin(), fit.end(), [](const RefChoice& a, const RefChoice& b) {
      return std::tie(a.left_gpus, a.left_cpus, a.node) <
             std::tie(b.left_gpus, b.left_cpus, b.node);
    });
    std::vector<std::uint32_t> nodes;
    for (int i = 0; i < j.req.min_nodes; ++i) nodes.push_back(fit[i].node);
    std::sort(nodes.begin(), nodes.end());
    return nodes;
  }

  void Add(const Job& j, Time t, const std::vector<std::uint32_t>& nodes) {
    int cpus = j.req.cpus_per_task * std::max(1, j.req.ntasks / j.req.min_nodes);
    for (std::uint32_t n : nodes)
      occ_.push_back(
          {n, t, t + j.req.time_limit, cpus, j.req.gpus_per_node, j.req.mem_per_node_mb});
  }

  const Snapshot& s_;
  int depth_;
  std::vector<Occupant> occ_;
};

std::vector<std::uint32_t> NodesOf(const Allocation& a) {
  std::vector<std::uint32_t> n;
  for (const NodeAllocation& x : a.nodes) n.push_back(x.node);
  std::sort(n.begin(), n.end());
  return n;
}

void CompareWithReference(std::uint64_t seed, int depth, const RandomWorkloadOptions& w) {
  Snapshot s = RandomSnapshot(seed, w);
  PolicyOptions o;
  o.reservation_depth = depth;
  o.placement = PlacementPolicy::kBestFit;
  o.estimate_starts = false;
  Plan fast = plan(s, o);
  Status inv = CheckPlan(s, o, fast);
  ASSERT_TRUE(inv.ok()) << "seed " << seed << ": " << inv.ToString();

  auto ref = ReferencePlanner(s, depth).Run();
  std::map<JobId, std::pair<Time, std::vector<std::uint32_t>>> got;
  for (const Start& st : fast.starts) got[st.job] = {s.now, NodesOf(st.allocation)};
  for (const Pending& p : fast.pending)
    if (p.reserved) got[p.job] = {p.expected_start, NodesOf(p.reservation)};
  ASSERT_EQ(got.size(), ref.size()) << "seed " << seed << " depth " << depth;
  for (auto& [id, want] : ref) {
    ASSERT_TRUE(got.count(id)) << "seed " << seed << ": job " << id
                               << " placed only by the reference";
    EXPECT_EQ(got[id].first, want.first) << "seed " << seed << " job " << id << " start";
    EXPECT_EQ(got[id].second, want.second) << "seed " << seed << " job " << id << " nodes";
  }
}

TEST(Differential, FifoMatchesTheReference) {
  RandomWorkloadOptions w;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) CompareWithReference(seed, 0, w);
}

TEST(Differential, EasyMatchesTheReference) {
  RandomWorkloadOptions w;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) CompareWithReference(seed, 1, w);
}

TEST(Differential, ConservativeMatchesTheReference) {
  RandomWorkloadOptions w;
  w.pending = 30;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) CompareWithReference(seed, 1000, w);
}

TEST(Invariants, HoldOnRandomWorkloadsWithTopologyAndEveryPolicy) {
  RandomWorkloadOptions w;
  w.nodes = 24;
  w.leaves = 3;
  w.max_job_nodes = 8;
  w.pending = 80;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Snapshot s = RandomSnapshot(seed, w);
    for (int depth : {0, 1, 5, 1000}) {
      PolicyOptions o;
      o.reservation_depth = depth;
      Plan p = plan(s, o);
      Status st = CheckPlan(s, o, p);
      ASSERT_TRUE(st.ok()) << "seed " << seed << " depth " << depth << ": " << st.ToString();
      EXPECT_EQ(p.starts.size() + p.pending.size(), s.pending.size());
    }
  }
}

}  // namespace
}  // namespace lockstep::engine
