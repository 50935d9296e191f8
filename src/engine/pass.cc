#include "engine/pass.h"

#include <algorithm>
#include <numeric>

#include "engine/priority.h"

namespace lockstep::engine {
namespace {

std::size_t Mix(std::size_t h, std::uint64_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

// Where a running job is assumed to end: its time limit, and never in the past (a job over its
// limit is about to be killed).
std::vector<Time> RunningEnds(const Snapshot& s) {
  std::vector<Time> ends(s.running.size());
  for (std::size_t r = 0; r < s.running.size(); ++r) {
    const Job& j = s.running[r];
    Seconds d = ShapeIn(j, s).duration;
    Time end = d >= kUnlimited ? kInfiniteTime : j.start_time + d;
    ends[r] = std::max(end, s.now + 1);
  }
  return ends;
}

std::vector<JobShape> PendingShapes(const Snapshot& s) {
  std::vector<JobShape> shapes;
  shapes.reserve(s.pending.size());
  for (const Job& j : s.pending) shapes.push_back(ShapeIn(j, s));
  return shapes;
}

Allocation ToAllocation(const std::vector<Candidate>& chosen) {
  Allocation a;
  for (const Candidate& c : chosen)
    a.nodes.push_back({c.node, c.take.cpus, c.take.mem_mb, 0, c.take.total_gpus()});
  return a;
}

}  // namespace

std::size_t ShapeKeyHash::operator()(const ShapeKey& k) const {
  std::size_t h = k.partition;
  for (std::uint64_t v :
       {std::uint64_t(k.nodes), std::uint64_t(k.max_nodes), std::uint64_t(k.max_switches),
        std::uint64_t(k.need.cpus), std::uint64_t(k.need.mem_mb), std::uint64_t(k.need.gpus),
        std::uint64_t(k.need.gpu_type), std::uint64_t(k.need.exclusive), k.features,
        std::uint64_t(k.duration)})
    h = Mix(h, v);
  return h;
}

Pass::Pass(const Snapshot& s, const PolicyOptions& o)
    : s_(s),
      o_(o),
      shapes_(PendingShapes(s)),
      running_ends_(RunningEnds(s)),
      planner_(s, running_ends_),
      topology_(s),
      limits_(s),
      eligibility_(s),
      pending_slot_(s.pending.size(), kNone),
      partition_free_(s.partitions.size()),
      node_partitions_(s),
      partition_blocked_(s.partitions.size(), false),
      partition_classes_(s.partitions.size()) {
  for (std::uint32_t p = 0; p < s.partitions.size(); ++p) {
    for (std::uint32_t n : s.partitions[p].nodes) {
      if (n >= s.nodes.size()) continue;
      const NodeWork& w = planner_.node(n);
      if (!w.usable) continue;
      partition_free_[p].cpus += w.free_now.cpus;
      partition_free_[p].gpus += w.free_now.total_gpus();
    }
  }
}

// Nodes alike in capacity, GPU types and features answer "could this job ever fit" alike.
void Pass::BuildNodeClasses() {
  classes_built_ = true;
  for (std::uint32_t p = 0; p < s_.partitions.size(); ++p) {
    std::vector<NodeClass>& classes = partition_classes_[p];
    for (std::uint32_t n : s_.partitions[p].nodes) {
      if (n >= planner_.node_count()) continue;
      const NodeWork& w = planner_.node(n);
      auto same = [&](const NodeClass& c) {
        const NodeWork& r = planner_.node(c.representative);
        return r.capacity == w.capacity && r.slot_type == w.slot_type &&
               s_.nodes[c.representative].features == s_.nodes[n].features;
      };
      auto it = std::find_if(classes.begin(), classes.end(), same);  // classes are few
      if (it == classes.end()) it = classes.insert(classes.end(), {n, 0, 0});
      ++it->count;
      it->usable += w.usable ? 1 : 0;
    }
  }
}

bool Pass::MayFitNow(std::uint32_t j) const {
  const JobShape& sh = shapes_[j];
  std::uint32_t p = s_.pending[j].partition;
  if (p >= partition_free_.size() || sh.per_node.exclusive) return true;
  return partition_free_[p].cpus >= std::int64_t{sh.per_node.cpus} * sh.nodes &&
         partition_free_[p].gpus >= std::int64_t{sh.per_node.gpus} * sh.nodes;
}

std::vector<std::uint32_t> Pass::QueueOrder() {
  PriorityContext ctx = MakePriorityContext(s_, o_.weights);
  std::vector<std::uint32_t> prio(s_.pending.size());
  plan_.priorities.reserve(s_.pending.size());
  for (std::uint32_t j = 0; j < s_.pending.size(); ++j) {
    PriorityBreakdown b = ComputePriority(s_.pending[j], shapes_[j], s_, ctx, o_.weights);
    prio[j] = b.total;
    plan_.priorities.emplace_back(s_.pending[j].id, b);
  }
  // Sort compact keys, not indexes into the (large) Jobs: Slurm's order is partition
  // PriorityTier, priority, submit time, job id.
  struct OrderKey {
    std::uint32_t tier, priority;
    Time submit;
    JobId id;
    std::uint32_t index;
  };
  std::vector<OrderKey> keys(s_.pending.size());
  for (std::uint32_t j = 0; j < s_.pending.size(); ++j) {
    const Job& job = s_.pending[j];
    std::uint32_t tier =
        job.partition < s_.partitions.size() ? s_.partitions[job.partition].priority_tier : 0u;
    keys[j] = {tier, prio[j], job.submit_time, job.id, j};
  }
  std::sort(keys.begin(), keys.end(), [](const OrderKey& a, const OrderKey& b) {
    if (a.tier != b.tier) return a.tier > b.tier;
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.id < b.id;
  });
  std::vector<std::uint32_t> order(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) order[i] = keys[i].index;
  return order;
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
  return k;
}

bool Pass::NodeMatches(std::uint32_t n, const JobShape& shape) const {
  return (s_.nodes[n].features & shape.features) == shape.features;
}

std::vector<Candidate> Pass::FeasibleAt(std::uint32_t j, Time t) const {
  std::vector<Candidate> out;
  const Job& job = s_.pending[j];
  if (job.partition >= s_.partitions.size()) return out;
  const JobShape& sh = shapes_[j];
  Time end = sh.duration >= kUnlimited ? kInfiniteTime : t + sh.duration;
  const bool now = t <= s_.now;
  auto consider = [&](std::uint32_t n) {
    const NodeWork& w = planner_.node(n);
    if (!w.usable || !NodeMatches(n, sh)) return;
    // From now on a node never has more than it has free now: a cheap first test.
    if (now && (w.free_now.cpus < sh.per_node.cpus || w.free_now.total_gpus() < sh.per_node.gpus))
      return;
    ResourceVec avail = planner_.MinAvailable(n, t, end);
    if (auto take = planner_.MapNeed(n, sh.per_node, avail)) out.push_back({n, *take, avail});
  };
  if (now) {
    // Only nodes that still have enough free now; for one node, only the best-fit bucket.
    bool single = sh.nodes == 1 && sh.max_nodes == 1 && !sh.per_node.exclusive;
    auto visit = [&](std::uint32_t n) {
      std::size_t before = out.size();
      consider(n);
      return out.size() > before;
    };
    if (single)
      free_index().VisitBestFirst(job.partition, sh.per_node.gpus, sh.per_node.cpus, visit);
    else
      free_index().VisitAtLeast(job.partition, sh.per_node.gpus, sh.per_node.cpus, visit);
    return out;
  }
  for (std::uint32_t n : s_.partitions[job.partition].nodes)
    if (n < planner_.node_count()) consider(n);
  return out;
}

std::optional<std::vector<Candidate>> Pass::Choose(std::uint32_t j,
                                                   std::vector<Candidate> feasible) const {
  const JobShape& sh = shapes_[j];
  PlacementRequest req;
  req.nodes = sh.nodes;
  req.max_nodes = sh.max_nodes;
  req.policy = o_.placement;
  req.max_switches = KeyOf(j).max_switches;
  return ChooseNodes(std::move(feasible), req, topology_, s_.nodes);
}

// Can the job ever run in its partition? PartitionConfig when no set of its nodes is big
// enough, BadConstraints when no node has its features, ReqNodeNotAvail when enough nodes
// exist but too few are up.
PendingReason Pass::CheckFitsPartition(std::uint32_t j) {
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
    if (!classes_built_) BuildNodeClasses();
    int with_features = 0, capable = 0, capable_up = 0;
    for (const NodeClass& c : partition_classes_[job.partition]) {
      if (!NodeMatches(c.representative, sh)) continue;
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
  }
  partition_fit_.emplace(key, reason);
  return reason;
}

void Pass::StartJob(std::uint32_t j, const std::vector<Candidate>& chosen, bool backfilled) {
  const Job& job = s_.pending[j];
  const JobShape& sh = shapes_[j];
  Time end = sh.duration >= kUnlimited ? kInfiniteTime : s_.now + sh.duration;
  Start st;
  st.job = job.id;
  st.backfilled = backfilled;
  st.allocation = ToAllocation(chosen);
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    st.allocation.nodes[i].gpus =
        planner_.StartNow(chosen[i].node, chosen[i].take, end, OwnerOfPending(j));
    if (free_index_) free_index_->Update(chosen[i].node);
  }
  Tres used;
  used.nodes = static_cast<std::int64_t>(chosen.size());
  for (const Candidate& c : chosen) {
    for (std::uint32_t p : node_partitions_.of(c.node)) {
      partition_free_[p].cpus -= c.take.cpus;
      partition_free_[p].gpus -= c.take.total_gpus();
    }
    used.cpus += c.take.cpus;
    used.mem_mb += c.take.mem_mb;
    used.gpus += c.take.total_gpus();
  }
  limits_.Add(job, used);
  if (job.array_job_id != 0) eligibility_.NoteArrayTaskStarted(job.array_job_id);
  plan_.starts.push_back(std::move(st));
}

void Pass::Reserve(std::uint32_t j, Time start, const std::vector<Candidate>& chosen,
                   PendingReason reason) {
  const JobShape& sh = shapes_[j];
  Time end = sh.duration >= kUnlimited ? kInfiniteTime : start + sh.duration;
  Pending p;
  p.job = s_.pending[j].id;
  p.reason = reason;
  p.expected_start = start;
  p.reserved = true;
  p.reservation = ToAllocation(chosen);
  const auto running_count = static_cast<std::uint32_t>(s_.running.size());
  for (const Candidate& c : chosen) {
    planner_.Reserve(c.node, c.take, start, end, OwnerOfPending(j));
    if (free_index_) free_index_->Update(c.node);
    for (std::uint32_t owner : planner_.RunningEndingBy(c.node, start))
      if (owner < running_count) p.blocked_by.push_back(s_.running[owner].id);
  }
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

std::pair<Time, std::vector<Candidate>> Pass::EarliestStart(std::uint32_t j) const {
  const Job& job = s_.pending[j];
  const JobShape& sh = shapes_[j];
  if (job.partition >= s_.partitions.size()) return {kInfiniteTime, {}};
  const auto& nodes = s_.partitions[job.partition].nodes;
  Time from = std::max(s_.now, job.begin_time);
  // A job of the same shape found its start no earlier than this in this pass, and the pass
  // only takes resources away: no need to look before it.
  ShapeKey key = KeyOf(j);
  if (auto it = earliest_found_.find(key); it != earliest_found_.end())
    from = std::max(from, it->second);
  Time end = sh.duration >= kUnlimited ? kInfiniteTime : 0;
  // Each round: the time by which enough nodes could each start on their own, then whether a
  // placement exists at that moment among those nodes; if not, the next moment anything changes.
  std::vector<std::pair<Time, std::uint32_t>> earliest;
  for (int round = 0; round < 256 && from < kInfiniteTime; ++round) {
    earliest.clear();
    for (std::uint32_t n : nodes) {
      if (n >= planner_.node_count() || !planner_.node(n).usable || !NodeMatches(n, sh)) continue;
      Time e = planner_.EarliestFit(n, sh.per_node, from, sh.duration);
      if (e < kInfiniteTime) earliest.push_back({e, n});
    }
    if (static_cast<int>(earliest.size()) < sh.nodes) break;
    std::nth_element(earliest.begin(), earliest.begin() + (sh.nodes - 1), earliest.end());
    Time t = earliest[sh.nodes - 1].first;
    // Only a node able to start by t can be feasible at t.
    std::vector<Candidate> feasible;
    Time window_end = end == kInfiniteTime ? kInfiniteTime : t + sh.duration;
    for (const auto& [e, n] : earliest) {
      if (e > t) continue;
      ResourceVec avail = planner_.MinAvailable(n, t, window_end);
      if (auto take = planner_.MapNeed(n, sh.per_node, avail))
        feasible.push_back({n, *take, avail});
    }
    if (auto chosen = Choose(j, std::move(feasible))) {
      earliest_found_[key] = t;
      return {t, std::move(*chosen)};
    }
    Time next = kInfiniteTime;
    for (std::uint32_t n : nodes)
      if (n < planner_.node_count() && planner_.node(n).usable)
        next = std::min(next, planner_.NextChangeAfter(n, t));
    from = next;
  }
  earliest_found_[key] = kInfiniteTime;
  return {kInfiniteTime, {}};
}

void Pass::HandleBlocked(std::uint32_t j) {
  const Job& job = s_.pending[j];
  PendingReason reason =
      partition_blocked_[job.partition] ? PendingReason::kPriority : PendingReason::kResources;
  partition_blocked_[job.partition] = true;
  any_blocked_ = true;
  if (o_.preempt != PreemptType::kOff && TryPreemptFor(*this, j)) return;
  if (reservations_ < o_.reservation_depth) {
    auto [start, chosen] = EarliestStart(j);
    if (start < kInfiniteTime) {
      ++reservations_;
      Reserve(j, start, chosen, reason);
      return;
    }
  }
  pending_slot_[j] = static_cast<std::uint32_t>(plan_.pending.size());
  plan_.pending.push_back({job.id, reason, 0, false, {}, {}});
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
    if (it == memo.end()) it = memo.emplace(key, EarliestStart(j).first).first;
    p.expected_start = it->second < kInfiniteTime ? std::max(it->second, s_.now) : 0;
  }
}

Plan Pass::Run() {
  std::vector<std::uint32_t> order = QueueOrder();
  std::int64_t tested = 0;
  for (std::uint32_t j : order) {
    const Job& job = s_.pending[j];
    auto pend = [&](PendingReason r) {
      pending_slot_[j] = static_cast<std::uint32_t>(plan_.pending.size());
      plan_.pending.push_back({job.id, r, 0, false, {}, {}});
    };
    PendingReason r = eligibility_.Check(job, s_.now);
    if (r == PendingReason::kNone) r = CheckStaticLimits(job, shapes_[j], s_);
    if (r == PendingReason::kNone) r = CheckFitsPartition(j);
    if (r == PendingReason::kNone) r = limits_.Check(job, TresOf(shapes_[j], shapes_[j].nodes));
    if (r != PendingReason::kNone) {
      pend(r);
      continue;
    }
    if (o_.max_jobs_tested > 0 && tested >= o_.max_jobs_tested) {
      pend(PendingReason::kPriority);
      continue;
    }
    ++tested;
    // FIFO: once a job waits for resources, nothing behind it starts.
    if (o_.reservation_depth == 0 && any_blocked_) {
      pend(PendingReason::kPriority);
      continue;
    }
    ShapeKey key = KeyOf(j);
    if (!cannot_start_now_.count(key) && MayFitNow(j)) {
      if (auto chosen = Choose(j, FeasibleAt(j, s_.now))) {
        StartJob(j, *chosen, any_blocked_);
        continue;
      }
      cannot_start_now_.insert(key);
    }
    HandleBlocked(j);
  }
  plan_.jobs_tested = tested;
  EstimateStarts();
  return std::move(plan_);
}

Plan plan(const Snapshot& snapshot, const PolicyOptions& options) {
  return Pass(snapshot, options).Run();
}

}  // namespace lockstep::engine
