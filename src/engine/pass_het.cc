// Heterogeneous jobs in a pass: components of different shapes (sbatch -n128 ... : -n1 ...) that
// start together or not at all, as Slurm's backfill scheduler places them ("no component is
// allocated until all can start").
//
// A group has its turn at the first of its components the walk reaches (they are all in the
// special queue, walked every pass). Each component is placed as a job of its own, in order, the
// later ones on what the earlier ones leave: a node may serve two components when it has room
// for both. When the group cannot start now it holds one reservation, at the earliest time at
// which every component fits together, and counts once against the reservation depth. Running
// components are never preemption victims (preemption.cc): one would leave its group behind.
#include <algorithm>

#include "engine/pass.h"

namespace lockstep::engine {

std::vector<std::uint32_t> Pass::HetGroupOf(std::uint32_t j) {
  if (het_index_.empty())
    for (std::uint32_t i = 0; i < s_.pending.size(); ++i)
      if (s_.pending[i].het_size > 0) het_index_.emplace(s_.pending[i].id, i);
  const Job& job = s_.pending[j];
  const JobId leader = job.id - job.het_offset;
  std::vector<std::uint32_t> members;
  for (std::uint32_t k = 0; k < job.het_size; ++k) {
    auto it = het_index_.find(leader + k);
    if (it == het_index_.end()) return {};
    members.push_back(it->second);
  }
  return members;
}

void Pass::PendGroup(const std::vector<std::uint32_t>& members, PendingReason reason) {
  for (std::uint32_t m : members) Pend(m, reason);
}

std::optional<std::vector<std::vector<Candidate>>> Pass::PlaceGroupAt(
    const std::vector<std::uint32_t>& members, Time t) const {
  std::vector<std::vector<Candidate>> placed;
  // What the earlier members take, by node (groups are small: a linear search is enough).
  std::vector<std::pair<std::uint32_t, ResourceVec>> taken;
  for (std::uint32_t m : members) {
    std::vector<Candidate> feasible = FeasibleAt(m, t, /*every_candidate=*/true);
    std::erase_if(feasible, [&](Candidate& c) {
      auto it = std::find_if(taken.begin(), taken.end(),
                             [&](const auto& e) { return e.first == c.node; });
      if (it == taken.end()) return false;
      c.available -= it->second;
      auto take = planner_.MapNeed(c.node, shapes_[m].per_node, c.available);
      if (!take) return true;
      c.take = *take;
      return false;
    });
    auto chosen = Choose(m, std::move(feasible));
    if (!chosen) return std::nullopt;
    for (const Candidate& c : *chosen) {
      auto it = std::find_if(taken.begin(), taken.end(),
                             [&](const auto& e) { return e.first == c.node; });
      if (it == taken.end())
        taken.push_back({c.node, c.take});
      else
        it->second += c.take;
    }
    placed.push_back(std::move(*chosen));
  }
  return placed;
}

std::optional<std::pair<Time, std::vector<std::vector<Candidate>>>> Pass::SearchGroupStart(
    const std::vector<std::uint32_t>& members) const {
  Time t = s_.now;
  for (std::uint32_t m : members) t = std::max(t, s_.pending[m].begin_time);
  // Each round: the latest of the members' own earliest starts (a lower bound for the group),
  // then whether they fit together then; if not, the next moment anything changes on a node of
  // theirs. `t` only moves forward over finitely many changes, so the search ends.
  for (int round = 0; t < kInfiniteTime; ++round) {
    if (o_.max_reservation_rounds > 0 && round >= o_.max_reservation_rounds) break;
    for (std::uint32_t m : members) {
      FoundStart own = SearchEarliestStart(m, t);
      if (own.start >= kInfiniteTime) return std::nullopt;
      t = std::max(t, own.start);
    }
    if (auto placed = PlaceGroupAt(members, t)) return std::make_pair(t, std::move(*placed));
    Time next = kInfiniteTime;
    for (std::uint32_t m : members)
      for (std::uint32_t n : s_.partitions[s_.pending[m].partition].nodes)
        if (n < planner_.node_count() && planner_.node(n).usable)
          next = std::min(next, planner_.NextChangeAfter(n, t));
    t = next;
  }
  return std::nullopt;
}

void Pass::VisitHetGroup(std::uint32_t j) {
  const Job& job = s_.pending[j];
  const JobId leader = job.id - job.het_offset;
  if (het_done_.count(leader)) return;  // its group had its turn in this pass
  const std::vector<std::uint32_t> members = HetGroupOf(j);
  if (members.empty()) {  // a component is not pending: the group cannot start as a whole
    Pend(j, PendingReason::kResources);
    return;
  }
  het_done_.insert(leader);
  for (std::uint32_t m : members) {
    if (PendingReason r = ReasonToWait(m); r != PendingReason::kNone) {
      PendGroup(members, r);
      return;
    }
  }
  // Limits count the group as a whole: each component is a job, and they start together.
  if (limits_.any()) {
    LimitTracker trial = limits_;
    for (std::uint32_t m : members) {
      const Tres tres = TresOf(shapes_[m], shapes_[m].nodes);
      if (PendingReason r = trial.Check(s_.pending[m], tres); r != PendingReason::kNone) {
        PendGroup(members, r);
        return;
      }
      trial.Add(s_.pending[m], tres);
    }
  }
  if ((o_.max_jobs_tested > 0 && tested_ >= o_.max_jobs_tested) ||
      (o_.reservation_depth == 0 && any_blocked_)) {
    if (detail_ == PlanDetail::kFull) PendGroup(members, PendingReason::kPriority);
    return;
  }
  ++tested_;
  const bool may_start_now = std::all_of(members.begin(), members.end(), [&](std::uint32_t m) {
    return MayFitNow(m) && !KnownNotToStartNow(m);
  });
  if (may_start_now) {
    ReserveDeferred();
    if (auto placed = PlaceGroupAt(members, s_.now)) {
      for (std::size_t i = 0; i < members.size(); ++i)
        StartJob(members[i], (*placed)[i], any_blocked_);
      return;
    }
  }
  PendingReason reason = partition_blocked_[st_.hot[j].partition] ? PendingReason::kPriority
                                                                   : PendingReason::kResources;
  for (std::uint32_t m : members) partition_blocked_[st_.hot[m].partition] = true;
  any_blocked_ = true;
  if (reservations_ < o_.reservation_depth) {
    ReserveDeferred();
    if (auto found = SearchGroupStart(members)) {
      ++reservations_;
      for (std::size_t i = 0; i < members.size(); ++i)
        Reserve(members[i], found->first, found->second[i], reason);
      return;
    }
  }
  if (detail_ != PlanDetail::kFull) return;
  PendGroup(members, reason);
}

}  // namespace lockstep::engine
