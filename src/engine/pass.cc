#include "engine/pass.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

#include "common/status.h"
#include "engine/priority.h"

namespace lockstep::engine {
namespace {

std::size_t Mix(std::size_t h, std::uint64_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

Allocation ToAllocation(const std::vector<Candidate>& chosen) {
  Allocation a;
  for (const Candidate& c : chosen)
    a.nodes.push_back({c.node, c.take.cpus, c.take.mem_mb, 0, c.take.total_gpus()});
  return a;
}

}  // namespace

std::size_t PreemptKeyHash::operator()(const PreemptKey& k) const {
  return Mix(ShapeKeyHash()(k.shape), k.qos);
}

std::size_t ShapeKeyHash::operator()(const ShapeKey& k) const {
  std::size_t h = k.partition;
  for (std::uint64_t v :
       {std::uint64_t(k.nodes), std::uint64_t(k.max_nodes), std::uint64_t(k.max_switches),
        std::uint64_t(k.need.cpus), std::uint64_t(k.need.mem_mb), std::uint64_t(k.need.gpus),
        std::uint64_t(k.need.gpu_type), std::uint64_t(k.need.exclusive),
        std::uint64_t(k.need.whole_memory), k.features,
        std::uint64_t(k.duration)})
    h = Mix(h, v);
  h = Mix(h, k.reservation);
  if (k.filter.filter != nullptr) {
    for (std::uint32_t n : k.filter.filter->required) h = Mix(h, n);
    h = Mix(h, 0xffffffffu);
    for (std::uint32_t n : k.filter.filter->excluded) h = Mix(h, n);
  }
  return h;
}

Pass::Pass(EngineState& st, const PolicyOptions& o, QueueState& queue, PlanDetail detail,
           bool queue_is_scratch)
    : s_(st.s),
      o_(o),
      queue_(queue),
      detail_(detail),
      queue_is_scratch_(queue_is_scratch),
      st_(st),
      shapes_(st.shapes),
      running_ends_(st.running_ends),
      planner_(st.planner),
      topology_(st.topology),
      limits_(st.limits),
      eligibility_(st.eligibility),
      pending_slot_(st.s.pending.size(), kNone),
      partition_free_(st.partition_free),
      node_partitions_(st.node_partitions),
      partition_blocked_(st.s.partitions.size(), false),
      user_exclusive_(st.exclusive_user_jobs > 0) {}

Time Pass::UserConflictUntil(std::uint32_t j, std::uint32_t n, Time start, Time end) const {
  const Job& job = s_.pending[j];
  const auto running = static_cast<std::uint32_t>(s_.running.size());
  Time until = kNoUserConflict;
  planner_.VisitHolds(n, [&](const Hold& h) {
    if (h.end <= start || h.start >= end) return;
    const Job* other = h.owner < running ? &s_.running[h.owner]
                       : h.owner - running < s_.pending.size() ? &s_.pending[h.owner - running]
                                                                : nullptr;
    if (other == nullptr || other->user == job.user) return;
    if (other->req.exclusive_user || job.req.exclusive_user) until = std::max(until, h.end);
  });
  return until;
}

Time Pass::EarliestFitForUser(std::uint32_t j, std::uint32_t n, Time from, Time bound) const {
  const JobShape& sh = shapes_[j];
  Time e = planner_.EarliestFit(n, sh.per_node, from, sh.duration, bound);
  // Each round starts after a conflicting hold's end: the holds are finitely many.
  while (user_exclusive_ && e < kInfiniteTime) {
    const Time end = sh.duration >= kUnlimited ? kInfiniteTime : e + sh.duration;
    const Time conflict = UserConflictUntil(j, n, e, end);
    if (conflict == kNoUserConflict) break;
    if (conflict >= kInfiniteTime) return kInfiniteTime;
    e = planner_.EarliestFit(n, sh.per_node, conflict, sh.duration, bound);
  }
  return e;
}

bool Pass::MayFitNow(std::uint32_t j) const {
  const EngineState::HotJob& h = st_.hot[j];
  if (h.partition >= partition_free_.size() || h.exclusive) return true;
  return partition_free_[h.partition].cpus >= std::int64_t{h.cpus_per_node} * h.nodes &&
         partition_free_[h.partition].gpus >= std::int64_t{h.gpus_per_node} * h.nodes;
}

ShapeKey Pass::KeyOf(std::uint32_t j) const {
  const JobShape& sh = shapes_[j];
  const Job& job = s_.pending[j];
  ShapeKey k;
  k.partition = job.partition;
  k.nodes = sh.nodes;
  k.max_nodes = sh.max_nodes;
  bool switch_wait_over =
      job.req.switches_wait > 0 && s_.now >= job.submit_time + job.req.switches_wait;
  k.max_switches = switch_wait_over ? 0 : job.req.max_switches;
  k.need = sh.per_node;
  k.features = sh.features;
  k.duration = sh.duration;
  k.filter = {sh.filter};
  k.reservation = sh.reservation;
  return k;
}

bool Pass::HasFeatures(std::uint32_t n, const JobShape& shape) const {
  return (s_.nodes[n].features & shape.features) == shape.features;
}

bool Pass::NodeMatches(std::uint32_t n, const JobShape& shape, Time t) const {
  return HasFeatures(n, shape) && (shape.filter == nullptr || !shape.filter->Excludes(n)) &&
         st_.WindowAllows(n, shape, t);
}

std::vector<Candidate> Pass::FeasibleAt(std::uint32_t j, Time t, bool every_candidate) const {
  std::vector<Candidate> out;
  const Job& job = s_.pending[j];
  if (job.partition >= s_.partitions.size()) return out;
  const JobShape& sh = shapes_[j];
  Time end = sh.duration >= kUnlimited ? kInfiniteTime : t + sh.duration;
  const bool now = t <= s_.now;
  auto consider = [&](std::uint32_t n) {
    const NodeWork& w = planner_.node(n);
    if (!w.usable || !NodeMatches(n, sh, t)) return;
    // From now on a node never has more than it has free now: a cheap first test.
    if (now && (w.free_now.cpus < sh.per_node.cpus || w.free_now.total_gpus() < sh.per_node.gpus))
      return;
    if (user_exclusive_ && UserConflictUntil(j, n, t, end) != kNoUserConflict) return;
    ResourceVec avail = planner_.MinAvailable(n, t, end);
    if (auto take = planner_.MapNeed(n, sh.per_node, avail)) out.push_back({n, *take, avail});
  };
  if (now) {
    // Only nodes that still have enough free now, and of those without reservations only as
    // many as placement may take: the index visits them in best-fit order.
    const int wanted = every_candidate || user_exclusive_ ? 0 : BestFitCandidatesWanted(j);
    int regular = 0;
    auto visit = [&](std::uint32_t n) {
      std::size_t before = out.size();
      consider(n);
      return out.size() > before && wanted > 0 && !free_index().irregular(n) &&
             ++regular >= wanted;
    };
    free_index().VisitBestFirst(job.partition, sh.per_node.gpus, sh.per_node.cpus, visit);
    return out;
  }
  for (std::uint32_t n : s_.partitions[job.partition].nodes)
    if (n < planner_.node_count()) consider(n);
  return out;
}

int Pass::BestFitCandidatesWanted(std::uint32_t j) const {
  const JobShape& sh = shapes_[j];
  // Exclusive jobs take whole nodes, whose best-fit order (by what is left) is not the
  // index's; -w needs its nodes among the candidates; a placement by switches needs them all;
  // and a preemption trial frees what the index does not know of.
  if (sh.per_node.exclusive || (sh.filter != nullptr && !sh.filter->required.empty()) ||
      o_.preempt != PreemptType::kOff)
    return 0;
  const bool by_topology = !topology_.empty() && sh.nodes > 1 &&
                           (o_.placement == PlacementPolicy::kTopologyFirst ||
                            KeyOf(j).max_switches > 0);
  return by_topology ? 0 : std::max(sh.nodes, sh.max_nodes);
}

int Pass::FeasibleCountNow(std::uint32_t j) {
  if (user_exclusive_) return -1;  // the memo is by need class, not by user
  const Job& job = s_.pending[j];
  if (job.partition >= s_.partitions.size()) return 0;
  const std::uint32_t c = st_.NeedClassOf(j);
  if (c >= window_ends_.size()) window_ends_.resize(st_.need_classes.size());
  WindowEnds& w = window_ends_[c];
  const JobShape& sh = shapes_[j];
  if (w.version != planner_.version()) {
    w.version = planner_.version();
    w.built = false;
    return -1;
  }
  if (!w.built) {
    w.built = true;
    w.until.clear();
    // The nodes FeasibleAt(j, now) would consider, and the same tests.
    free_index().VisitAtLeast(job.partition, sh.per_node.gpus, sh.per_node.cpus,
                              [&](std::uint32_t n) {
                                const NodeWork& node = planner_.node(n);
                                if (!node.usable || !NodeMatches(n, sh, s_.now)) return;
                                if (node.free_now.cpus < sh.per_node.cpus ||
                                    node.free_now.total_gpus() < sh.per_node.gpus)
                                  return;
                                Time until = planner_.FitsUntil(n, sh.per_node);
                                if (until != AvailabilityPlanner::kNoWindow)
                                  w.until.push_back(until);
                              });
    std::sort(w.until.begin(), w.until.end(), std::greater<>());
  }
  const Time end = sh.duration >= kUnlimited ? kInfiniteTime : s_.now + sh.duration;
  // The nodes whose window reaches `end`: a prefix of the descending list.
  return static_cast<int>(std::upper_bound(w.until.begin(), w.until.end(), end, std::greater<>()) -
                          w.until.begin());
}

std::optional<std::vector<Candidate>> Pass::Choose(std::uint32_t j,
                                                   std::vector<Candidate> feasible) const {
  const JobShape& sh = shapes_[j];
  PlacementRequest req;
  req.nodes = sh.nodes;
  req.max_nodes = sh.max_nodes;
  req.policy = o_.placement;
  req.max_switches = KeyOf(j).max_switches;
  if (sh.filter == nullptr || sh.filter->required.empty())
    return ChooseNodes(std::move(feasible), req, topology_, s_.nodes);
  // -w: every required node, then the best of the others for what is still wanted.
  std::vector<Candidate> chosen, others;
  for (Candidate& c : feasible) (sh.filter->Requires(c.node) ? chosen : others).push_back(c);
  if (chosen.size() < sh.filter->required.size()) return std::nullopt;
  const int have = static_cast<int>(chosen.size());
  req.nodes = std::max(0, req.nodes - have);
  req.max_nodes = std::max(0, req.max_nodes - have);
  auto rest = ChooseNodes(std::move(others), req, topology_, s_.nodes);
  if (!rest) return std::nullopt;
  chosen.insert(chosen.end(), rest->begin(), rest->end());
  return chosen;
}

// -w and -x against the partition: a required node outside it, lacking the job's features or
// too small, more required nodes than the job may have, or too few nodes left once the
// excluded are taken away: BadConstraints, as it will never run. A required node that is not
// up: ReqNodeNotAvail (Slurm's "ReqNodeNotAvail, UnavailableNodes:...").
PendingReason Pass::CheckNodeFilter(std::uint32_t j) const {
  const Job& job = s_.pending[j];
  const JobShape& sh = shapes_[j];
  const NodeFilter& f = *sh.filter;
  if (static_cast<int>(f.required.size()) > sh.max_nodes) return PendingReason::kBadConstraints;
  auto capable = [&](std::uint32_t n) {
    return n < planner_.node_count() && HasFeatures(n, sh) && !f.Excludes(n) &&
           planner_.MapNeed(n, sh.per_node, planner_.node(n).capacity).has_value();
  };
  const auto& part = s_.partitions[job.partition].nodes;
  bool required_down = false;
  for (std::uint32_t n : f.required) {
    if (std::find(part.begin(), part.end(), n) == part.end() || !capable(n))
      return PendingReason::kBadConstraints;
    required_down |= !planner_.node(n).usable;
  }
  int left = 0;
  for (std::uint32_t n : part) left += capable(n);
  if (left < sh.nodes) return PendingReason::kBadConstraints;
  return required_down ? PendingReason::kReqNodeNotAvail : PendingReason::kNone;
}

// Can the job ever run in its partition? PartitionConfig when no set of its nodes is big
// enough, BadConstraints when no node has its features, ReqNodeNotAvail when enough nodes
// exist but too few are up.
PendingReason Pass::StaticReason(std::uint32_t j) {
  // Known from an earlier pass of the Scheduler: shapes, limits and nodes are as they were then.
  std::uint8_t& known = st_.hot[j].static_reason;
  if (known != EngineState::kFitUnknown) return static_cast<PendingReason>(known);
  PendingReason reason = CheckStaticLimits(s_.pending[j], shapes_[j], s_);
  if (reason == PendingReason::kNone) reason = CheckFitsPartitionOnce(j);
  known = static_cast<std::uint8_t>(reason);
  return reason;
}

PendingReason Pass::CheckFitsPartitionOnce(std::uint32_t j) {
  // Only what a node must hold matters here, not for how long nor across how many switches.
  ShapeKey key = KeyOf(j);
  key.duration = 0;
  key.max_switches = 0;
  auto it = partition_fit_.find(key);
  if (it != partition_fit_.end()) return it->second;
  const Job& job = s_.pending[j];
  const JobShape& sh = shapes_[j];
  PendingReason reason = PendingReason::kNone;
  if (job.partition >= s_.partitions.size()) {
    reason = PendingReason::kPartitionConfig;
  } else {
    int with_features = 0, capable = 0, capable_up = 0;
    for (const NodeClass& c : st_.partition_classes[job.partition]) {
      if (!HasFeatures(c.representative, sh)) continue;
      with_features += c.count;
      if (!planner_.MapNeed(c.representative, sh.per_node,
                            planner_.node(c.representative).capacity))
        continue;
      capable += c.count;
      capable_up += c.usable;
    }
    if (with_features < sh.nodes && sh.features != 0)
      reason = PendingReason::kBadConstraints;
    else if (capable < sh.nodes)
      reason = PendingReason::kPartitionConfig;
    else if (capable_up < sh.nodes)
      reason = PendingReason::kReqNodeNotAvail;
    else if (sh.filter != nullptr)
      reason = CheckNodeFilter(j);
  }
  partition_fit_.emplace(key, reason);
  return reason;
}

// The limits were checked against what the job asked for; an exclusive job is charged the
// whole nodes placement gave it, which only placement knows (Slurm checks its accounting
// limits again after node selection for the same reason).
PendingReason Pass::ChargedLimitReason(std::uint32_t j, const std::vector<Candidate>& chosen) const {
  if (!limits_.any() || !shapes_[j].per_node.exclusive) return PendingReason::kNone;
  return limits_.Check(s_.pending[j], ChargedTres(chosen));
}

Tres Pass::ChargedTres(const std::vector<Candidate>& chosen) {
  Tres used;
  used.nodes = static_cast<std::int64_t>(chosen.size());
  for (const Candidate& c : chosen) {
    used.cpus += c.take.cpus;
    used.mem_mb += c.take.mem_mb;
    used.gpus += c.take.total_gpus();
  }
  return used;
}

void Pass::StartJob(std::uint32_t j, const std::vector<Candidate>& chosen, bool backfilled) {
  const Job& job = s_.pending[j];
  const JobShape& sh = shapes_[j];
  Time end = sh.duration >= kUnlimited ? kInfiniteTime : s_.now + sh.duration;
  infinite_hold_ |= end >= kInfiniteTime;
  Start st;
  st.job = job.id;
  st.backfilled = backfilled;
  st.allocation = ToAllocation(chosen);
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    st.allocation.nodes[i].gpus =
        planner_.StartNow(chosen[i].node, chosen[i].take, end, OwnerOfPending(j));
    free_index().Update(chosen[i].node);
  }
  for (const Candidate& c : chosen) {
    for (std::uint32_t p : node_partitions_.of(c.node)) {
      partition_free_[p].cpus -= c.take.cpus;
      partition_free_[p].gpus -= c.take.total_gpus();
    }
  }
  limits_.Add(job, ChargedTres(chosen));
  if (job.array_job_id != 0) ++array_started_[job.array_job_id];
  plan_.starts.push_back(std::move(st));
}

void Pass::Reserve(std::uint32_t j, Time start, const std::vector<Candidate>& chosen,
                   PendingReason reason) {
  const JobShape& sh = shapes_[j];
  Time end = sh.duration >= kUnlimited ? kInfiniteTime : start + sh.duration;
  for (const Candidate& c : chosen) {
    planner_.Reserve(c.node, c.take, start, end, OwnerOfPending(j));
    free_index().Update(c.node);
  }
  if (detail_ == PlanDetail::kStarts) return;  // held for the rest of the pass, not reported
  Pending p;
  p.job = s_.pending[j].id;
  p.reason = reason;
  p.expected_start = start;
  p.reserved = true;
  p.reservation = ToAllocation(chosen);
  const auto running_count = static_cast<std::uint32_t>(s_.running.size());
  std::vector<std::uint32_t> owners;
  for (const Candidate& c : chosen) planner_.RunningEndingBy(c.node, start, owners);
  for (std::uint32_t owner : owners)
    if (owner < running_count) p.blocked_by.push_back(s_.running[owner].id);
  std::sort(p.blocked_by.begin(), p.blocked_by.end());
  p.blocked_by.erase(std::unique(p.blocked_by.begin(), p.blocked_by.end()), p.blocked_by.end());
  pending_slot_[j] = static_cast<std::uint32_t>(plan_.pending.size());
  plan_.pending.push_back(std::move(p));
}

void Pass::MarkPreempted(std::uint32_t r, std::uint32_t for_job, PreemptMode mode, Seconds grace) {
  preempted_.insert(r);
  const Job& victim = s_.running[r];
  if (mode == PreemptMode::kRequeue && !victim.requeue) mode = PreemptMode::kCancel;
  plan_.preemptions.push_back({victim.id, s_.pending[for_job].id, mode, grace});
}

FoundStart Pass::EarliestStart(std::uint32_t j) const {
  const Job& job = s_.pending[j];
  if (job.partition >= s_.partitions.size()) return {};
  Time from = std::max(s_.now, job.begin_time);
  // A job of the same shape found its start no earlier than this in this pass, and the pass
  // only takes resources away: no need to look before it.
  if (user_exclusive_) return SearchEarliestStart(j, from);  // the memos are by shape
  ShapeKey key = KeyOf(j);
  if (auto it = earliest_found_.find(key); it != earliest_found_.end())
    from = std::max(from, it->second);
  StartMemo& memo = st_.start_memo;
  const bool unchanged_pass = planner_.changes_in_pass() == 0;
  if (unchanged_pass && memo.valid && memo.job == job.id && memo.key == key &&
      memo.base_version == planner_.base_version() && memo.from <= from &&
      from <= memo.found.start) {
    earliest_found_[key] = memo.found.start;
    return memo.found;
  }
  FoundStart found = SearchEarliestStart(j, from);
  if (found.stopped) return found;  // not remembered: another shape's search may go further
  earliest_found_[key] = found.start;
  if (unchanged_pass) memo = {true, job.id, key, planner_.base_version(), from, found};
  return found;
}

FoundStart Pass::SearchEarliestStart(std::uint32_t j, Time from) const {
  const JobShape& sh = shapes_[j];
  const auto& nodes = s_.partitions[s_.pending[j].partition].nodes;
  Time end = sh.duration >= kUnlimited ? kInfiniteTime : 0;
  // Each round: the time by which enough nodes could each start on their own, then whether a
  // placement exists at that moment among those nodes; if not, the next moment anything
  // changes. Every round moves `from` forward to a change of some node, and there are finitely
  // many, so the search ends: without a bound it finds the start whenever one exists.
  std::vector<std::pair<Time, std::uint32_t>> earliest;
  std::vector<Time> best;  // a max-heap of the sh.nodes earliest times found in this round
  for (int round = 0; from < kInfiniteTime; ++round) {
    if (o_.max_reservation_rounds > 0 && round >= o_.max_reservation_rounds)
      return {kInfiniteTime, {}, true};
    earliest.clear();
    // Only the nodes able to start by the `sh.nodes`-th earliest time matter below: once that
    // many are known, the latest of the best so far bounds every other node's search.
    best.clear();
    for (std::uint32_t n : nodes) {
      if (n >= planner_.node_count() || !planner_.node(n).usable || !HasFeatures(n, sh) ||
          (sh.filter != nullptr && sh.filter->Excludes(n)))
        continue;
      // A reservation's window in force on the node: others' jobs from its end, its own only
      // before it.
      const Time window_from = st_.WindowFrom(n, sh, from);
      if (window_from >= kInfiniteTime) continue;
      const Time bound =
          static_cast<int>(best.size()) < std::max(sh.nodes, 1) ? kInfiniteTime : best.front();
      Time e = EarliestFitForUser(j, n, window_from, bound);
      if (e >= kInfiniteTime || !st_.WindowAllows(n, sh, e)) continue;
      earliest.push_back({e, n});
      best.push_back(e);
      std::push_heap(best.begin(), best.end());
      if (static_cast<int>(best.size()) > sh.nodes) {
        std::pop_heap(best.begin(), best.end());
        best.pop_back();
      }
    }
    if (static_cast<int>(earliest.size()) < sh.nodes) break;
    const Time t = best.front();  // the sh.nodes-th earliest
    // Only a node able to start by t can be feasible at t. (In the partition's order, which
    // placement's best-fit order often keeps.)
    std::vector<Candidate> feasible;
    Time window_end = end == kInfiniteTime ? kInfiniteTime : t + sh.duration;
    for (const auto& [e, n] : earliest) {
      if (e > t) continue;
      if (user_exclusive_ && UserConflictUntil(j, n, t, window_end) != kNoUserConflict) continue;
      ResourceVec avail = planner_.MinAvailable(n, t, window_end);
      if (auto take = planner_.MapNeed(n, sh.per_node, avail))
        feasible.push_back({n, *take, avail});
    }
    if (auto chosen = Choose(j, std::move(feasible))) return {t, std::move(*chosen), false};
    Time next = kInfiniteTime;
    for (std::uint32_t n : nodes)
      if (n < planner_.node_count() && planner_.node(n).usable)
        next = std::min(next, planner_.NextChangeAfter(n, t));
    from = next;
  }
  return {};
}

void Pass::Pend(std::uint32_t j, PendingReason reason) {
  pending_slot_[j] = static_cast<std::uint32_t>(plan_.pending.size());
  plan_.pending.push_back({s_.pending[j].id, reason, 0, false, {}, {}});
}

// What preemption cannot free for a shape (with the job's QoS, which picks the victims) stays
// out of reach for the rest of the pass: later starts only take resources, and evictions only
// shrink the set of jobs left to evict.
bool Pass::TryPreempt(std::uint32_t j) {
  PreemptKey key{KeyOf(j), s_.pending[j].qos};
  if (!user_exclusive_ && preemption_failed_.count(key)) return false;
  if (TryPreemptFor(*this, j)) return true;
  preemption_failed_.insert(key);
  return false;
}

void Pass::HandleBlocked(std::uint32_t j) {
  const std::uint32_t partition = st_.hot[j].partition;
  PendingReason reason =
      partition_blocked_[partition] ? PendingReason::kPriority : PendingReason::kResources;
  partition_blocked_[partition] = true;
  any_blocked_ = true;
  if (o_.preempt != PreemptType::kOff && TryPreempt(j)) return;
  if (reservations_ < o_.reservation_depth) {
    ReserveDeferred();  // a deeper reservation is searched with the earlier ones in place
    if (detail_ == PlanDetail::kStarts && ReservationIsCertain(j)) {
      ++reservations_;
      deferred_ = j;
      return;
    }
    FoundStart found = EarliestStart(j);
    if (found.start < kInfiniteTime) {
      ++reservations_;
      Reserve(j, found.start, found.nodes, reason);
      return;
    }
    if (found.stopped) reason = PendingReason::kReservationSearchLimit;
  }
  // A replay needs no entry for a job that merely waits its turn.
  if (detail_ != PlanDetail::kFull &&
      (reason == PendingReason::kPriority || reason == PendingReason::kResources))
    return;
  Pend(j, reason);
}

bool Pass::ReservationIsCertain(std::uint32_t j) {
  // Without preemption, a search bound, -w/-x or a switch count, a job whose partition has
  // enough nodes up for it (StaticReason said so before HandleBlocked) fits once every hold
  // has ended, and SearchEarliestStart finds the start whenever one exists.
  if (o_.preempt != PreemptType::kOff || o_.max_reservation_rounds > 0 || user_exclusive_ ||
      shapes_[j].filter != nullptr || shapes_[j].reservation != kNone ||
      KeyOf(j).max_switches > 0 || infinite_hold_)
    return false;
  if (!running_ends_checked_) {
    running_ends_checked_ = true;
    infinite_hold_ = std::any_of(running_ends_.begin(), running_ends_.end(),
                                 [](Time end) { return end >= kInfiniteTime; });
  }
  return !infinite_hold_;
}

void Pass::ReserveDeferred() {
  if (deferred_ == kNone) return;
  const std::uint32_t j = std::exchange(deferred_, kNone);
  FoundStart found = EarliestStart(j);
  LOCKSTEP_CHECK(found.start < kInfiniteTime);  // ReservationIsCertain
  Reserve(j, found.start, found.nodes, PendingReason::kResources);
}

void Pass::EstimateStarts() {
  if (!o_.estimate_starts) return;
  std::unordered_map<ShapeKey, Time, ShapeKeyHash> memo;
  for (std::uint32_t j = 0; j < s_.pending.size(); ++j) {
    std::uint32_t slot = pending_slot_[j];
    if (slot == kNone) continue;
    Pending& p = plan_.pending[slot];
    if (p.reserved ||
        (p.reason != PendingReason::kResources && p.reason != PendingReason::kPriority))
      continue;
    ShapeKey key = KeyOf(j);
    auto it = memo.find(key);
    if (it == memo.end()) it = memo.emplace(key, EarliestStart(j).start).first;
    p.expected_start = it->second < kInfiniteTime ? std::max(it->second, s_.now) : 0;
  }
}

// Keys whose placement succeeds exactly when enough nodes are feasible (no range of node counts,
// no switch count): for them a failure with n nodes for d seconds also rules out every job of
// the same per-node need with more nodes or a longer limit, since a longer window leaves no more
// nodes feasible. Such failures are kept per need as a Pareto front of (nodes, duration).
bool Pass::DominanceApplies(std::uint32_t j) const {
  const EngineState::HotJob& h = st_.hot[j];
  return h.fixed_nodes && s_.now >= h.switches_free_at;
}

bool Pass::KnownNotToStartNow(std::uint32_t j) const {
  if (user_exclusive_) return false;  // what failed for one user may fit another's
  if (!DominanceApplies(j)) return cannot_start_now_.count(KeyOf(j)) > 0;
  std::uint32_t c = st_.NeedClassOf(j);
  if (c >= failed_front_.size()) return false;
  const EngineState::HotJob& h = st_.hot[j];
  for (const auto& [n, d] : failed_front_[c])
    if (n <= h.nodes && d <= h.duration) return true;
  return false;
}

void Pass::NoteCannotStartNow(std::uint32_t j) {
  if (user_exclusive_) return;
  if (!DominanceApplies(j)) {
    cannot_start_now_.insert(KeyOf(j));
    return;
  }
  std::uint32_t c = st_.NeedClassOf(j);
  if (c >= failed_front_.size()) failed_front_.resize(st_.need_classes.size());
  const std::int32_t nodes = shapes_[j].nodes;
  const Seconds duration = shapes_[j].duration;
  auto& front = failed_front_[c];
  std::erase_if(front, [&](const auto& f) { return f.first >= nodes && f.second >= duration; });
  front.push_back({nodes, duration});
  NoteFamilyFailure(j);
}

PendingReason Pass::CheckEligibility(std::uint32_t j) const {
  const Job& job = s_.pending[j];
  std::uint32_t array_started = 0;
  if (job.array_job_id != 0 && !array_started_.empty()) {
    auto it = array_started_.find(job.array_job_id);
    if (it != array_started_.end()) array_started = it->second;
  }
  return eligibility_.Check(job, s_.now, array_started);
}

std::vector<std::pair<JobId, PriorityBreakdown>> Pass::ComputeAllPriorities() const {
  std::vector<std::pair<JobId, PriorityBreakdown>> out;
  out.reserve(s_.pending.size());
  for (std::uint32_t j = 0; j < s_.pending.size(); ++j)
    out.emplace_back(s_.pending[j].id,
                     ComputePriority(s_.pending[j], shapes_[j], s_, *queue_.context, o_.weights));
  return out;
}

PendingReason Pass::ReasonToWait(std::uint32_t j) {
  const EngineState::HotJob& hot = st_.hot[j];
  PendingReason r =
      hot.plain ? (hot.begin_time > s_.now ? PendingReason::kBeginTime : PendingReason::kNone)
                : CheckEligibility(j);
  if (r == PendingReason::kNone) r = StaticReason(j);
  if (r == PendingReason::kNone && limits_.any())
    r = limits_.Check(s_.pending[j], TresOf(shapes_[j], shapes_[j].nodes));
  return r;
}

void Pass::Visit(std::uint32_t j) {
  // (A component is never plain: a plain job's visit reads only its HotJob here.)
  if (!st_.hot[j].plain && s_.pending[j].het_size > 0) {
    VisitHetGroup(j);
    return;
  }
  PendingReason r = ReasonToWait(j);
  if (r != PendingReason::kNone) {
    Pend(j, r);
    return;
  }
  auto wait_turn = [&] {
    if (detail_ == PlanDetail::kFull) Pend(j, PendingReason::kPriority);
  };
  if (o_.max_jobs_tested > 0 && tested_ >= o_.max_jobs_tested) {
    wait_turn();
    return;
  }
  ++tested_;
  // FIFO: once a job waits for resources, nothing behind it starts.
  if (o_.reservation_depth == 0 && any_blocked_) {
    wait_turn();
    return;
  }
  if (MayFitNow(j) && !KnownNotToStartNow(j)) {
    ReserveDeferred();  // what this job may take depends on it
    // Placement needs at least `nodes` candidates: count them first, from the memo.
    const int count = FeasibleCountNow(j);
    if (count < 0 || count >= shapes_[j].nodes) {
      if (auto chosen = Choose(j, FeasibleAt(j, s_.now))) {
        if (PendingReason over = ChargedLimitReason(j, *chosen); over != PendingReason::kNone) {
          Pend(j, over);
          return;
        }
        StartJob(j, *chosen, any_blocked_);
        return;
      }
    }
    NoteCannotStartNow(j);
  }
  HandleBlocked(j);
}

Plan Pass::Run() {
  if (detail_ == PlanDetail::kFull) {
    // plan() throws its queue away after the pass: the plan may take the priorities whole.
    if (queue_is_scratch_)
      plan_.priorities = std::move(queue_.priorities);
    else if (!queue_.priorities.empty() || !queue_.context)
      plan_.priorities = queue_.priorities;
    else
      plan_.priorities = ComputeAllPriorities();
  }
  // A full plan has a record for every pending job: one allocation instead of ~17 regrowths.
  if (detail_ == PlanDetail::kFull) plan_.pending.reserve(s_.pending.size());
  WalkQueue();
  plan_.jobs_tested = tested_;
  if (detail_ == PlanDetail::kFull) EstimateStarts();
  return std::move(plan_);
}

Plan plan(const Snapshot& snapshot, const PolicyOptions& options) {
  EngineState state(snapshot);
  QueueState queue = BuildQueue(snapshot, state.shapes, options);
  return Pass(state, options, queue, PlanDetail::kFull, /*queue_is_scratch=*/true).Run();
}

}  // namespace lockstep::engine
