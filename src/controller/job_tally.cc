#include "controller/job_tally.h"

#include <algorithm>
#include <bit>

#include "engine/model.h"

namespace lockstep::controller {

std::int64_t JobCounts::total() const {
  std::int64_t n = 0;
  for (std::int64_t c : by_state) n += c;
  return n;
}

void JobCounts::Add(const JobCounts& o) {
  for (std::size_t s = 0; s < kJobStateCount; ++s) by_state[s] += o.by_state[s];
  held += o.held;
  cpus_alloc += o.cpus_alloc;
  gpus_alloc += o.gpus_alloc;
  mem_alloc_mb += o.mem_alloc_mb;
  nodes_alloc += o.nodes_alloc;
}

bool JobTally::Refresh(const Lookup& lookup, std::size_t limit) {
  for (auto next = dirty_.begin(); next != dirty_.end() && limit > 0; --limit) {
    const JobId id = *next;
    next = dirty_.erase(next);
    Count(id, lookup.job(id), lookup);
  }
  return dirty_.empty();
}

void JobTally::Count(JobId id, const JobEntry* e, const Lookup& lookup) {
  if (!e) {
    if (auto old = shares_.find(id); old != shares_.end()) {
      Apply(old->second, -1);
      shares_.erase(old);
    }
    return;
  }
  Share share = ShareOf(*e, lookup);
  auto [it, added] = shares_.try_emplace(id);
  if (!added) Apply(it->second, -1);
  Apply(share, +1);
  it->second = std::move(share);
}

std::uint32_t JobTally::NodeIndex(const std::string& name, const Lookup& lookup) {
  if (auto it = node_index_.find(name); it != node_index_.end()) return it->second;
  const std::size_t count = lookup.node_count();
  if (node_index_.size() == count) return engine::kNone;
  for (auto n = static_cast<std::uint32_t>(node_index_.size()); n < count; ++n)
    node_index_.emplace(lookup.node_name(n), n);
  auto it = node_index_.find(name);
  return it == node_index_.end() ? engine::kNone : it->second;
}

JobTally::Share JobTally::ShareOf(const JobEntry& e, const Lookup& lookup) {
  Share s;
  s.group = GroupOfJob(e, lookup);
  s.state = e.state;
  s.held = e.state == JobState::kPending && (e.held_by_user || e.held_by_admin);
  if (!HoldsAllocation(e.state)) return s;
  for (const PlacedNode& p : e.placement) {
    const std::uint32_t n = NodeIndex(p.node, lookup);
    if (n == engine::kNone) continue;
    s.nodes.emplace_back(n, p.cpus, p.mem_mb, std::popcount(p.gpus));
  }
  return s;
}

void JobTally::Apply(const Share& share, int sign) {
  JobCounts& c = groups_[share.group].counts;
  c.by_state[static_cast<std::size_t>(share.state)] += sign;
  if (share.held) c.held += sign;
  const bool completing = share.state == JobState::kCompleting;
  for (const auto& [n, cpus, mem, gpus] : share.nodes) {
    if (n >= nodes_.size()) nodes_.resize(n + 1);
    NodeUse& u = nodes_[n];
    u.cpus += sign * cpus;
    u.mem_mb += sign * mem;
    u.gpus += sign * gpus;
    u.jobs += sign;
    if (completing) u.completing += sign;
    c.cpus_alloc += sign * cpus;
    c.mem_alloc_mb += sign * mem;
    c.gpus_alloc += sign * gpus;
    c.nodes_alloc += sign;
  }
}

std::uint32_t JobTally::GroupOfJob(const JobEntry& e, const Lookup& lookup) {
  auto group = [&] {
    return GroupOf(lookup.partition(e), e.user,
                   e.spec && !e.spec->account.empty() ? e.spec->account : "root");
  };
  if (!e.spec) return group();
  auto [it, added] = spec_groups_.try_emplace(SpecUser{e.spec.get(), e.uid});
  if (added) it->second = {e.spec, group()};
  return it->second.second;
}

std::uint32_t JobTally::GroupOf(const std::string& partition, const std::string& user,
                                const std::string& account) {
  auto [it, added] = group_index_.try_emplace({partition, user, account},
                                              static_cast<std::uint32_t>(groups_.size()));
  if (added) groups_.push_back({partition, user, account, {}});
  return it->second;
}

}  // namespace lockstep::controller
