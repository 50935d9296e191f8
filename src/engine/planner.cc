#include "engine/planner.h"

#include <algorithm>
#include <bit>

namespace lockstep::engine {
namespace {

// Slot of global GPU type `type` on a node, or -1.
int SlotOf(const NodeWork& w, std::uint32_t type) {
  for (int i = 0; i < kMaxGpuTypesPerNode; ++i)
    if (w.slot_devices[i] != 0 && w.slot_type[i] == type) return i;
  return -1;
}

NodeWork BuildNode(const Node& node) {
  NodeWork w;
  w.slot_type.fill(kNone);
  w.capacity.cpus = node.cpus;
  w.capacity.mem_mb = node.mem_mb;
  for (std::size_t d = 0; d < node.gpus.size() && d < kMaxDevicesPerNode; ++d) {
    int slot = SlotOf(w, node.gpus[d].type);
    if (slot < 0) {
      for (int i = 0; i < kMaxGpuTypesPerNode; ++i) {
        if (w.slot_devices[i] == 0) {
          slot = i;
          w.slot_type[i] = node.gpus[d].type;
          break;
        }
      }
    }
    if (slot < 0) continue;  // more types than tracked: the config reader rejects this
    w.slot_devices[slot] |= std::uint64_t{1} << d;
    w.capacity.gpus[slot]++;
  }
  w.free_now = w.capacity;
  w.free_devices = 0;
  for (auto m : w.slot_devices) w.free_devices |= m;
  w.usable = node.state == NodeState::kUp;
  return w;
}

// The node's share of a running allocation as a ResourceVec.
ResourceVec AmountOnNode(const NodeWork& w, const NodeAllocation& a) {
  ResourceVec r;
  r.cpus = a.cpus;
  r.mem_mb = a.mem_mb;
  if (a.gpus == 0) return r;
  for (int i = 0; i < kMaxGpuTypesPerNode; ++i)
    r.gpus[i] = static_cast<std::int16_t>(std::popcount(a.gpus & w.slot_devices[i]));
  return r;
}

// The earliest start >= from, among `steps`, of a window of `duration` whose least availability
// `fits`, or kInfiniteTime (also past `latest`). `jump`: a failed window moves past the step
// where it failed (every window starting before it contains it), else one step on.
template <typename Fits>
Time EarliestWindow(const std::pair<Time, ResourceVec>* steps, std::size_t count, Time from,
                    Seconds duration, Time latest, bool jump, Fits&& fits) {
  std::size_t i = 0;
  while (i + 1 < count && steps[i + 1].first <= from) ++i;  // the step in force at `from`
  while (i < count) {
    const Time start = std::max(steps[i].first, from);
    if (start > latest) return kInfiniteTime;
    const Time end = duration >= kUnlimited ? kInfiniteTime : start + duration;
    ResourceVec least = steps[i].second;
    std::size_t j = i;
    bool ok = fits(least);
    while (ok && j + 1 < count && steps[j + 1].first < end) {
      ++j;
      least = Min(least, steps[j].second);
      ok = fits(least);
    }
    if (ok) return start;
    i = jump ? j + 1 : i + 1;
  }
  return kInfiniteTime;
}

}  // namespace

AvailabilityPlanner::AvailabilityPlanner(const Snapshot& s, const std::vector<Time>& running_ends)
    : now_(s.now) {
  nodes_.reserve(s.nodes.size());
  for (const Node& n : s.nodes) nodes_.push_back(BuildNode(n));
  std::size_t holds = 0;
  for (const Job& j : s.running) holds += j.allocation.nodes.size();
  saved_.assign(nodes_.size(), false);
  pool_.reserve(holds + 64);
  next_.reserve(holds + 64);
  for (std::uint32_t j = 0; j < s.running.size(); ++j) {
    for (const NodeAllocation& a : s.running[j].allocation.nodes) {
      if (a.node >= nodes_.size()) continue;
      NodeWork& w = nodes_[a.node];
      ResourceVec amount = AmountOnNode(w, a);
      Link(&w.running_head, {s.running[j].start_time, running_ends[j], amount, j});
      w.free_now -= amount;
      w.free_devices &= ~a.gpus;
    }
  }
  // Windows still to come hold their nodes whole from their start (owner kNone: no job's).
  for (const Window& win : s.windows) {
    if (win.start <= now_ || win.end <= win.start) continue;
    for (std::uint32_t n : win.nodes)
      if (n < nodes_.size()) Link(&nodes_[n].future_head, {win.start, win.end, nodes_[n].capacity, kNone});
  }
}

namespace {

// --mem=0 on node n: its whole memory is the need there.
NodeNeed WithMemoryOf(const NodeNeed& need, std::int64_t node_mem_mb) {
  NodeNeed on_node = need;
  on_node.mem_mb = node_mem_mb;
  on_node.whole_memory = false;
  return on_node;
}

}  // namespace

std::optional<ResourceVec> AvailabilityPlanner::MapNeed(std::uint32_t n, const NodeNeed& need,
                                                        const ResourceVec& available) const {
  const NodeWork& w = nodes_[n];
  if (need.whole_memory) return MapNeed(n, WithMemoryOf(need, w.capacity.mem_mb), available);
  if (need.gpus == 0 && !need.exclusive) {  // the common CPU-only case
    if (available.cpus < need.cpus || available.mem_mb < need.mem_mb) return std::nullopt;
    ResourceVec take;
    take.cpus = need.cpus;
    take.mem_mb = need.mem_mb;
    return take;
  }
  if (need.exclusive) {
    if (!available.Covers(w.capacity)) return std::nullopt;
    if (need.cpus > w.capacity.cpus || need.mem_mb > w.capacity.mem_mb) return std::nullopt;
    if (need.gpus > 0) {
      int have =
          need.gpu_type == kNone
              ? w.capacity.total_gpus()
              : (SlotOf(w, need.gpu_type) < 0 ? 0 : w.capacity.gpus[SlotOf(w, need.gpu_type)]);
      if (have < need.gpus) return std::nullopt;
    }
    return w.capacity;
  }
  ResourceVec take;
  take.cpus = need.cpus;
  take.mem_mb = need.mem_mb;
  if (need.gpus > 0) {
    if (need.gpu_type != kNone) {
      int slot = SlotOf(w, need.gpu_type);
      if (slot < 0) return std::nullopt;
      take.gpus[slot] = static_cast<std::int16_t>(need.gpus);
    } else {
      int left = need.gpus;
      for (int i = 0; i < kMaxGpuTypesPerNode && left > 0; ++i) {
        int t = std::min<int>(left, std::max<int>(0, available.gpus[i]));
        take.gpus[i] = static_cast<std::int16_t>(t);
        left -= t;
      }
      if (left > 0) return std::nullopt;
    }
  }
  if (!available.Covers(take)) return std::nullopt;
  return take;
}

void AvailabilityPlanner::Link(std::int32_t* head, const Hold& h) {
  // A pass appends, so that Rollback can cut its holds off the end of the pool.
  if (!in_pass_ && !free_slots_.empty()) {
    std::int32_t slot = free_slots_.back();
    free_slots_.pop_back();
    pool_[slot] = h;
    next_[slot] = *head;
    *head = slot;
    return;
  }
  pool_.push_back(h);
  next_.push_back(*head);
  *head = static_cast<std::int32_t>(pool_.size() - 1);
}

ResourceVec AvailabilityPlanner::AvailableAt(const NodeWork& w, Time t) const {
  ResourceVec a = w.capacity;
  ForEach(w.running_head, [&](const Hold& h) {
    if (h.end > t) a -= h.amount;
  });
  ForEach(w.future_head, [&](const Hold& h) {
    if (h.start <= t && t < h.end) a -= h.amount;
  });
  return a;
}

ResourceVec AvailabilityPlanner::MinAvailable(std::uint32_t n, Time start, Time end) const {
  const NodeWork& w = nodes_[n];
  if (w.future_head < 0 && start <= now_) return w.free_now;
  // Without reservations a node only gains as time passes: its least is at `start`.
  if (!w.steps_valid && AtMostOneRunningHold(w)) return AvailableFrom(w, start);
  // The cached step function: the step in force at `start`, then every step before `end`.
  const auto [steps, count] = StepsOf(w);
  std::size_t i = static_cast<std::size_t>(
      std::upper_bound(steps, steps + count, start,
                       [](Time t, const std::pair<Time, ResourceVec>& s) { return t < s.first; }) -
      steps);
  i = i == 0 ? 0 : i - 1;
  ResourceVec least = steps[i].second;
  for (++i; i < count && steps[i].first < end; ++i) least = Min(least, steps[i].second);
  return least;
}

std::optional<ResourceVec> AvailabilityPlanner::FitAt(std::uint32_t n, const NodeNeed& need,
                                                      Time start, Seconds duration) const {
  Time end = duration >= kUnlimited ? kInfiniteTime : start + duration;
  return MapNeed(n, need, MinAvailable(n, start, end));
}

std::pair<const std::pair<Time, ResourceVec>*, std::size_t> AvailabilityPlanner::StepsOf(
    const NodeWork& w) const {
  if (!w.steps_valid) {
    // The node's free resources from now on as a step function: one sort of its holds' changes,
    // appended to the pool (a stale copy stays behind until the pass ends).
    std::vector<std::pair<Time, ResourceVec>>& changes = scratch_changes_;
    changes.clear();
    ForEach(w.running_head, [&](const Hold& h) {
      if (h.end > now_) changes.push_back({h.end, h.amount});
    });
    ForEach(w.future_head, [&](const Hold& h) {
      if (h.start > now_) {
        ResourceVec minus;
        minus -= h.amount;
        changes.push_back({h.start, minus});
      }
      if (h.end > now_) changes.push_back({h.end, h.amount});
    });
    std::sort(changes.begin(), changes.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    w.steps_begin = static_cast<std::uint32_t>(steps_pool_.size());
    steps_pool_.push_back({now_, AvailableAt(w, now_)});
    for (const auto& [t, delta] : changes) {
      if (t != steps_pool_.back().first) steps_pool_.push_back({t, steps_pool_.back().second});
      steps_pool_.back().second += delta;
    }
    w.steps_end = static_cast<std::uint32_t>(steps_pool_.size());
    w.steps_valid = true;
  }
  return {steps_pool_.data() + w.steps_begin, w.steps_end - w.steps_begin};
}

Time AvailabilityPlanner::EarliestFit(std::uint32_t n, const NodeNeed& need, Time from,
                                      Seconds duration, Time latest) const {
  const NodeWork& w = nodes_[n];
  if (need.whole_memory)
    return EarliestFit(n, WithMemoryOf(need, w.capacity.mem_mb), from, duration, latest);
  const auto [steps, count] = StepsOf(w);
  if (need.gpus == 0 && !need.exclusive) {  // MapNeed's CPU-only test, written out
    return EarliestWindow(steps, count, from, duration, latest, /*jump=*/true,
                          [&](const ResourceVec& least) {
                            return least.cpus >= need.cpus && least.mem_mb >= need.mem_mb;
                          });
  }
  // With more than one GPU type slot an untyped request may fit each moment but not the
  // window's minimum, so a failed window advances one step rather than past the failing one.
  int slots = 0;
  for (auto m : w.slot_devices) slots += m != 0;
  const bool jump = slots <= 1 || need.gpu_type != kNone;
  return EarliestWindow(steps, count, from, duration, latest, jump, [&](const ResourceVec& least) {
    return MapNeed(n, need, least).has_value();
  });
}

Time AvailabilityPlanner::FitsUntil(std::uint32_t n, const NodeNeed& need) const {
  const NodeWork& w = nodes_[n];
  // Without reservations a node only gains from now on: what it has free now is its least.
  if (w.future_head < 0) return MapNeed(n, need, w.free_now) ? kInfiniteTime : kNoWindow;
  const auto [steps, count] = StepsOf(w);
  ResourceVec least = steps[0].second;  // the step at now_
  if (!MapNeed(n, need, least)) return kNoWindow;
  for (std::size_t i = 1; i < count; ++i) {
    least = Min(least, steps[i].second);
    if (!MapNeed(n, need, least)) return steps[i].first;
  }
  return kInfiniteTime;
}

Time AvailabilityPlanner::NextChangeAfter(std::uint32_t n, Time t) const {
  const NodeWork& w = nodes_[n];
  Time next = kInfiniteTime;
  ForEach(w.running_head, [&](const Hold& h) {
    if (h.end > t) next = std::min(next, h.end);
  });
  ForEach(w.future_head, [&](const Hold& h) {
    if (h.start > t) next = std::min(next, h.start);
    if (h.end > t) next = std::min(next, h.end);
  });
  return next;
}

std::uint64_t AvailabilityPlanner::StartNow(std::uint32_t n, const ResourceVec& amount, Time end,
                                            std::uint32_t owner) {
  Touch(n);
  NodeWork& w = nodes_[n];
  std::uint64_t taken = 0;
  for (int i = 0; i < kMaxGpuTypesPerNode; ++i) {
    std::uint64_t pool = w.free_devices & w.slot_devices[i];
    for (int k = 0; k < amount.gpus[i] && pool != 0; ++k) {
      std::uint64_t lowest = pool & (~pool + 1);
      taken |= lowest;
      pool &= ~lowest;
    }
  }
  w.free_devices &= ~taken;
  w.free_now -= amount;
  Link(&w.running_head, {now_, end, amount, owner});
  w.steps_valid = false;
  ++version_;
  return taken;
}

void AvailabilityPlanner::Reserve(std::uint32_t n, const ResourceVec& amount, Time start, Time end,
                                  std::uint32_t owner) {
  Touch(n);
  Link(&nodes_[n].future_head, {start, end, amount, owner});
  nodes_[n].steps_valid = false;
  ++version_;
}

void AvailabilityPlanner::SetRunningEnd(std::uint32_t n, std::uint32_t owner, Time end) {
  Touch(n);
  for (std::int32_t i = nodes_[n].running_head; i >= 0; i = next_[i]) {
    if (pool_[i].owner != owner) continue;
    if (in_pass_) saved_ends_.push_back({i, pool_[i].end});
    pool_[i].end = end;
  }
  nodes_[n].steps_valid = false;
  ++version_;
}

void AvailabilityPlanner::RunningEndingBy(std::uint32_t n, Time by,
                                          std::vector<std::uint32_t>& owners) const {
  ForEach(nodes_[n].running_head, [&](const Hold& h) {
    if (h.end > now_ && h.end <= by) owners.push_back(h.owner);
  });
}

ResourceVec AvailabilityPlanner::AmountOf(std::uint32_t n, const NodeAllocation& a) const {
  return AmountOnNode(nodes_[n], a);
}

void AvailabilityPlanner::AddRunning(std::uint32_t n, const NodeAllocation& a, Time end,
                                     std::uint32_t owner) {
  NodeWork& w = nodes_[n];
  ResourceVec amount = AmountOnNode(w, a);
  Link(&w.running_head, {now_, end, amount, owner});
  w.free_now -= amount;
  w.free_devices &= ~a.gpus;
  ++base_version_;
  w.steps_valid = false;
  ++version_;
}

void AvailabilityPlanner::RemoveRunning(std::uint32_t n, const NodeAllocation& a,
                                        std::uint32_t owner) {
  NodeWork& w = nodes_[n];
  for (std::int32_t* link = &w.running_head; *link >= 0; link = &next_[*link]) {
    std::int32_t i = *link;
    if (pool_[i].owner != owner) continue;
    w.free_now += pool_[i].amount;
    *link = next_[i];
    free_slots_.push_back(i);
    break;
  }
  w.free_devices |= a.gpus;
  ++base_version_;
  w.steps_valid = false;
  ++version_;
}

void AvailabilityPlanner::RelabelRunning(std::uint32_t n, std::uint32_t from, std::uint32_t to) {
  ForEachMutable(nodes_[n].running_head, [&](Hold& h) {
    if (h.owner == from) h.owner = to;
  });
}

void AvailabilityPlanner::Touch(std::uint32_t n) {
  if (!in_pass_) {
    ++base_version_;
    return;
  }
  ++changes_in_pass_;
  if (saved_[n]) return;
  saved_[n] = true;
  saved_nodes_.push_back({n, nodes_[n]});
}

void AvailabilityPlanner::BeginPass() {
  // Stale step functions pile up in the pool across passes: start it afresh now and then.
  if (steps_pool_.size() > 8 * nodes_.size() + 4096) {
    for (NodeWork& w : nodes_) w.steps_valid = false;
    steps_pool_.clear();
  }
  in_pass_ = true;
  changes_in_pass_ = 0;
  pass_pool_size_ = pool_.size();
  ++version_;
}

std::vector<std::uint32_t> AvailabilityPlanner::Rollback() {
  for (auto it = saved_ends_.rbegin(); it != saved_ends_.rend(); ++it)
    pool_[it->first].end = it->second;
  std::vector<std::uint32_t> touched;
  touched.reserve(saved_nodes_.size());
  for (auto& [n, w] : saved_nodes_) {
    nodes_[n] = w;
    saved_[n] = false;
    touched.push_back(n);
  }
  pool_.resize(pass_pool_size_);
  next_.resize(pass_pool_size_);
  saved_nodes_.clear();
  saved_ends_.clear();
  in_pass_ = false;
  changes_in_pass_ = 0;
  ++version_;
  return touched;
}

}  // namespace lockstep::engine
