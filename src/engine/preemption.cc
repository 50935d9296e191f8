// Preemption: a pending job that cannot start may evict running jobs of a lower partition
// PriorityTier (preempt/partition_prio) or of a QoS its own QoS may preempt (preempt/qos).
// Victims are tried youngest first within the lowest tier; the set is then pruned to what is
// needed, and nothing is evicted unless the job then fits.
#include <algorithm>
#include <unordered_set>

#include "engine/pass.h"

namespace lockstep::engine {
namespace {

struct VictimRule {
  bool allowed = false;
  PreemptMode mode = PreemptMode::kOff;
  Seconds grace = 0;
};

VictimRule RuleFor(const Snapshot& s, PreemptType type, const Job& preemptor, const Job& victim) {
  VictimRule rule;
  if (victim.partition >= s.partitions.size() || preemptor.partition >= s.partitions.size())
    return rule;
  // A heterogeneous job's components run together: one is never taken away alone.
  if (victim.het_size > 0) return rule;
  const Partition& vp = s.partitions[victim.partition];
  if (type == PreemptType::kPartitionPriority) {
    if (vp.priority_tier >= s.partitions[preemptor.partition].priority_tier) return rule;
    rule = {vp.preempt_mode != PreemptMode::kOff, vp.preempt_mode, vp.grace_time};
  } else if (type == PreemptType::kQos) {
    if (preemptor.qos >= s.qos.size() || victim.qos >= s.qos.size()) return rule;
    const auto& list = s.qos[preemptor.qos].preempts;
    if (std::find(list.begin(), list.end(), victim.qos) == list.end()) return rule;
    const Qos& vq = s.qos[victim.qos];
    PreemptMode mode = vq.preempt_mode != PreemptMode::kOff ? vq.preempt_mode : vp.preempt_mode;
    rule = {mode != PreemptMode::kOff, mode, vq.grace_time};
  }
  return rule;
}

class PreemptionTrial {
 public:
  PreemptionTrial(Pass& pass, std::uint32_t j) : pass_(pass), j_(j) {}

  bool Run() {
    const Snapshot& s = pass_.snapshot();
    const Job& job = s.pending[j_];
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t r = 0; r < s.running.size(); ++r) {
      if (pass_.preempted(r)) continue;
      if (RuleFor(s, pass_.options().preempt, job, s.running[r]).allowed) candidates.push_back(r);
    }
    if (candidates.empty()) return false;
    // Lowest tier first, then the youngest (least work lost), then by id.
    std::sort(candidates.begin(), candidates.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Job& x = s.running[a];
      const Job& y = s.running[b];
      std::uint32_t tx = s.partitions[x.partition].priority_tier,
                    ty = s.partitions[y.partition].priority_tier;
      if (tx != ty) return tx < ty;
      if (x.start_time != y.start_time) return x.start_time > y.start_time;
      return x.id < y.id;
    });
    std::vector<std::uint32_t> chosen;
    std::optional<std::vector<Candidate>> placement;
    for (std::uint32_t r : candidates) {
      chosen.push_back(r);
      Evict(r);
      if ((placement = TryPlace())) break;
    }
    if (!placement) {
      for (std::uint32_t r : chosen) Restore(r);
      return false;
    }
    // Keep only the victims the job needs: give each back, newest choice first, if the job
    // still fits without it.
    for (std::size_t i = chosen.size(); i-- > 1;) {
      Restore(chosen[i - 1]);
      if (auto p = TryPlace()) {
        placement = std::move(p);
        chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i - 1));
      } else {
        Evict(chosen[i - 1]);
      }
    }
    placement = TryPlace();
    for (std::uint32_t r : chosen) {
      VictimRule rule = RuleFor(s, pass_.options().preempt, job, s.running[r]);
      pass_.MarkPreempted(r, j_, rule.mode, rule.grace);
    }
    pass_.Reserve(j_, StartTime(), *placement, PendingReason::kResources);
    return true;
  }

 private:
  // A victim is gone after its grace time, and never before the next second: until the
  // backend has stopped it, its devices are not free for anyone (AvailabilityPlanner's cached
  // free vector for "now" stays true).
  Seconds GraceOf(std::uint32_t r) const {
    const Snapshot& s = pass_.snapshot();
    return std::max<Seconds>(
        1, RuleFor(s, pass_.options().preempt, s.pending[j_], s.running[r]).grace);
  }
  Time StartTime() const {
    Seconds grace = 0;
    for (std::uint32_t r : evicted_) grace = std::max(grace, GraceOf(r));
    return pass_.planner().now() + grace;
  }
  void Evict(std::uint32_t r) {
    evicted_.insert(r);
    for (const NodeAllocation& a : pass_.snapshot().running[r].allocation.nodes)
      pass_.planner().SetRunningEnd(a.node, r, pass_.planner().now() + GraceOf(r));
  }
  void Restore(std::uint32_t r) {
    evicted_.erase(r);
    for (const NodeAllocation& a : pass_.snapshot().running[r].allocation.nodes)
      pass_.planner().SetRunningEnd(a.node, r, pass_.running_end(r));
  }
  std::optional<std::vector<Candidate>> TryPlace() const {
    return pass_.Choose(j_, pass_.FeasibleAt(j_, StartTime()));
  }

  Pass& pass_;
  std::uint32_t j_;
  std::unordered_set<std::uint32_t> evicted_;
};

}  // namespace

bool TryPreemptFor(Pass& pass, std::uint32_t j) {
  return PreemptionTrial(pass, j).Run();
}

}  // namespace lockstep::engine
