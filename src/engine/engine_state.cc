#include "engine/engine_state.h"

#include <algorithm>
#include <limits>

namespace lockstep::engine {
namespace {

std::vector<JobShape> PendingShapes(const Snapshot& s) {
  std::vector<JobShape> shapes;
  shapes.reserve(s.pending.size());
  for (const Job& j : s.pending) shapes.push_back(ShapeIn(j, s));
  return shapes;
}

std::vector<Time> RunningEnds(const Snapshot& s) {
  std::vector<Time> ends(s.running.size());
  for (std::size_t r = 0; r < s.running.size(); ++r) ends[r] = AssumedEnd(s.running[r], s);
  return ends;
}

}  // namespace

Time AssumedEnd(const Job& running, const Snapshot& s) {
  Seconds d = ShapeIn(running, s).duration;
  Time end = d >= kUnlimited ? kInfiniteTime : running.start_time + d;
  return std::max(end, s.now + 1);
}

EngineState::EngineState(const Snapshot& snapshot)
    : s(snapshot),
      shapes(PendingShapes(snapshot)),
      running_ends(RunningEnds(snapshot)),
      planner(snapshot, running_ends),
      topology(snapshot),
      node_partitions(snapshot),
      free_index(snapshot, planner, node_partitions),
      eligibility(snapshot),
      limits(snapshot) {
  for (std::uint32_t w = 0; w < snapshot.windows.size(); ++w) {
    const Window& win = snapshot.windows[w];
    if (win.end <= snapshot.now) continue;
    if (win.flex) flex_windows.push_back(win.id);
    if (win.start > snapshot.now) {  // to come: held in the planner until it starts
      next_window_change = std::min(next_window_change, win.start);
      continue;
    }
    next_window_change = std::min(next_window_change, win.end);
    if (node_window.empty()) node_window.assign(snapshot.nodes.size(), kNone);
    for (std::uint32_t n : win.nodes)
      if (n < node_window.size()) node_window[n] = w;
  }
  std::sort(flex_windows.begin(), flex_windows.end());
  hot.reserve(snapshot.pending.size());
  for (std::uint32_t j = 0; j < snapshot.pending.size(); ++j) {
    hot.push_back(HotOf(snapshot.pending[j], shapes[j]));
    exclusive_user_jobs += snapshot.pending[j].req.exclusive_user;
  }
  for (const Job& r : snapshot.running) exclusive_user_jobs += r.req.exclusive_user;
  RecountPartitions();
}

EngineState::HotJob EngineState::HotOf(const Job& j, const JobShape& shape) {
  // A job of a reservation is walked in every pass (its nodes are not its family's), and so is a
  // heterogeneous job's component (its turn is its group's).
  bool plain = !j.held_by_user && !j.held_by_admin && j.dependencies.empty() &&
               (j.array_job_id == 0 || j.array_max_running == 0) && j.reservation == kNone &&
               j.het_size == 0 && !j.req.exclusive_user;
  Time switches_free_at = std::numeric_limits<Time>::min();
  if (j.req.max_switches != 0)
    switches_free_at =
        j.req.switches_wait > 0 ? j.submit_time + j.req.switches_wait : kInfiniteTime;
  HotJob h;
  h.begin_time = j.begin_time;
  h.switches_free_at = switches_free_at;
  h.duration = shape.duration;
  h.partition = j.partition;
  h.nodes = shape.nodes;
  h.cpus_per_node = shape.per_node.cpus;
  h.gpus_per_node = shape.per_node.gpus;
  h.plain = plain;
  h.exclusive = shape.per_node.exclusive;
  h.fixed_nodes = shape.max_nodes == shape.nodes;
  return h;
}

std::uint32_t EngineState::NeedClassOf(std::uint32_t j) {
  std::uint32_t& known = hot[j].need_class;
  if (known != kClassUnknown) return known;
  ShapeKey key;
  key.partition = s.pending[j].partition;
  key.need = shapes[j].per_node;
  key.features = shapes[j].features;
  key.filter = {shapes[j].filter};
  key.reservation = shapes[j].reservation;
  auto [it, added] = need_classes.try_emplace(key, static_cast<std::uint32_t>(need_classes.size()));
  known = it->second;
  if (added) {
    ShapeKey family_key = key;
    family_key.need = {0, 0, 0, key.need.gpu_type, key.need.exclusive};
    auto f = families.try_emplace(family_key, static_cast<std::uint32_t>(families.size())).first;
    if (f->second == family_info.size()) family_info.push_back({key.partition, key.need.exclusive});
    need_class_info.push_back({f->second, key.partition, key.need});
  }
  return known;
}

bool EngineState::IsSpecial(std::uint32_t j, Time now) const {
  const HotJob& h = hot[j];
  return !h.plain || h.begin_time > now || !h.fixed_nodes || h.switches_free_at > now ||
         h.partition >= s.partitions.size();
}

void EngineState::RecountPartitions() {
  for (HotJob& h : hot) h.static_reason = kFitUnknown;
  partition_free.assign(s.partitions.size(), {});
  partition_classes.assign(s.partitions.size(), {});
  for (std::uint32_t p = 0; p < s.partitions.size(); ++p) {
    std::vector<NodeClass>& classes = partition_classes[p];
    for (std::uint32_t n : s.partitions[p].nodes) {
      if (n >= planner.node_count()) continue;
      const NodeWork& w = planner.node(n);
      if (w.usable) {
        partition_free[p].cpus += w.free_now.cpus;
        partition_free[p].gpus += w.free_now.total_gpus();
      }
      auto same = [&](const NodeClass& c) {
        const NodeWork& r = planner.node(c.representative);
        return r.capacity == w.capacity && r.slot_type == w.slot_type &&
               s.nodes[c.representative].features == s.nodes[n].features;
      };
      auto it = std::find_if(classes.begin(), classes.end(), same);  // classes are few
      if (it == classes.end()) it = classes.insert(classes.end(), {n, 0, 0});
      ++it->count;
      it->usable += w.usable ? 1 : 0;
    }
  }
}

}  // namespace lockstep::engine
