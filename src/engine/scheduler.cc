#include "engine/scheduler.h"

#include <algorithm>

namespace lockstep::engine {

Scheduler::Scheduler(Snapshot cluster, PolicyOptions options)
    : s_(std::make_unique<Snapshot>(std::move(cluster))), o_(options) {
  queue_.keep_summaries = true;
  for (std::uint32_t j = 0; j < s_->pending.size(); ++j) {
    slots_[s_->pending[j].id] = {List::kPending, j};
    CountAwaited(s_->pending[j], +1);
  }
  for (std::uint32_t r = 0; r < s_->running.size(); ++r)
    slots_[s_->running[r].id] = {List::kRunning, r};
  for (std::uint32_t f = 0; f < s_->finished.size(); ++f) {
    slots_[s_->finished[f].id] = {List::kFinished, f};
    finished_time_.push_back(s_->now);
    finished_at_.push_back({s_->now, s_->finished[f].id});
  }
  Rebuild();
}

Scheduler::~Scheduler() = default;
Scheduler::Scheduler(Scheduler&&) noexcept = default;
Scheduler& Scheduler::operator=(Scheduler&&) noexcept = default;

void Scheduler::Rebuild() {
  st_ = std::make_unique<EngineState>(*s_);
  deadlines_ = {};
  for (std::uint32_t r = 0; r < s_->running.size(); ++r)
    deadlines_.push({st_->running_ends[r], s_->running[r].id});
  priority_totals_.assign(s_->pending.size(), 0);
  queue_.order.Clear();
  queue_.special.Clear();
  arrivals_.clear();
  priorities_stale_ = true;
}

// ---------------------------------------------------------------------------------------------
// Jobs

const Job* Scheduler::Find(JobId id) const {
  auto it = slots_.find(id);
  if (it == slots_.end()) return nullptr;
  if (it->second.list == List::kPending) return &s_->pending[it->second.index];
  if (it->second.list == List::kRunning) return &s_->running[it->second.index];
  return nullptr;
}

void Scheduler::SetPending(Job job) {
  Unplace(job.id);
  job.start_time = 0;
  job.allocation = {};
  AddPending(std::move(job));
}

void Scheduler::SetRunning(Job job) {
  Unplace(job.id);
  AddRunning(std::move(job));
}

void Scheduler::SetFinished(JobId id, Outcome outcome, Time since) {
  Unplace(id);
  AddFinished({id, outcome, since});
}

void Scheduler::Remove(JobId id) {
  Unplace(id);
}

bool Scheduler::StartJob(JobId id, const Allocation& allocation) {
  auto it = slots_.find(id);
  if (it == slots_.end() || it->second.list != List::kPending) return false;
  Job job;
  RemovePendingAt(it->second.index, &job);
  job.start_time = s_->now;
  job.allocation = allocation;
  AddRunning(std::move(job));
  return true;
}

bool Scheduler::Requeue(JobId id) {
  auto it = slots_.find(id);
  if (it == slots_.end() || it->second.list != List::kRunning) return false;
  Job job;
  RemoveRunningAt(it->second.index, &job);
  job.start_time = 0;
  job.allocation = {};
  AddPending(std::move(job));
  return true;
}

void Scheduler::Unplace(JobId id) {
  auto it = slots_.find(id);
  if (it == slots_.end()) return;
  switch (it->second.list) {
    case List::kPending:
      RemovePendingAt(it->second.index);
      break;
    case List::kRunning:
      RemoveRunningAt(it->second.index);
      break;
    case List::kFinished:
      RemoveFinishedAt(it->second.index);
      break;
  }
}

QueueEntry Scheduler::EntryOf(std::uint32_t j) const {
  return QueueEntryOf(s_->pending[j], priority_totals_[j], j, *s_);
}

QueueBlocks& Scheduler::QueueOf(std::uint32_t j) {
  return st_->hot[j].special ? queue_.special : queue_.order;
}

void Scheduler::AddPending(Job job) {
  const auto j = static_cast<std::uint32_t>(s_->pending.size());
  slots_[job.id] = {List::kPending, j};
  s_->pending.push_back(std::move(job));
  st_->shapes.push_back(ShapeIn(s_->pending[j], *s_));
  st_->hot.push_back(EngineState::HotOf(s_->pending[j], st_->shapes[j]));
  st_->hot[j].special = st_->IsSpecial(j, s_->now);
  const Job& added = s_->pending[j];
  st_->exclusive_user_jobs += added.req.exclusive_user;
  CountAwaited(added, +1);
  if (!added.dependencies.empty() && !st_->eligibility.tracks_dependencies())
    st_->eligibility.TrackDependencies(*s_);  // the first job with dependencies: every job
  else
    st_->eligibility.AddPending(added);
  // While priorities are stale the queue is rebuilt at the next Plan anyway.
  priority_totals_.push_back(
      priorities_stale_
          ? 0
          : ComputePriority(s_->pending[j], st_->shapes[j], *s_, ctx_, o_.weights).total);
  if (priorities_stale_) return;
  arrivals_.push_back(EntryOf(j));
}

void Scheduler::MergeArrivals() {
  if (arrivals_.empty()) return;
  // Stable: an arrival goes after the entries already queued that compare equal to it, as an
  // insertion at upper_bound would put it.
  std::stable_sort(arrivals_.begin(), arrivals_.end(), QueueBefore);
  std::vector<QueueEntry> ordinary, special;
  for (const QueueEntry& e : arrivals_)
    (st_->hot[e.index].special ? special : ordinary).push_back(e);
  queue_.order.Merge(ordinary);
  queue_.special.Merge(special);
  arrivals_.clear();
}

void Scheduler::RemovePendingAt(std::uint32_t j, Job* taken) {
  const auto last = static_cast<std::uint32_t>(s_->pending.size() - 1);
  if (!priorities_stale_) {
    MergeArrivals();
    QueueOf(j).Erase(EntryOf(j));
    if (j != last)
      if (QueueEntry* e = QueueOf(last).Find(EntryOf(last))) e->index = j;
  }
  slots_.erase(s_->pending[j].id);
  st_->exclusive_user_jobs -= s_->pending[j].req.exclusive_user;
  st_->eligibility.RemovePending(s_->pending[j]);
  CountAwaited(s_->pending[j], -1);
  if (taken != nullptr) *taken = std::move(s_->pending[j]);
  if (j != last) {
    s_->pending[j] = std::move(s_->pending[last]);
    st_->shapes[j] = st_->shapes[last];
    st_->hot[j] = st_->hot[last];
    priority_totals_[j] = priority_totals_[last];
    slots_[s_->pending[j].id] = {List::kPending, j};
  }
  s_->pending.pop_back();
  st_->shapes.pop_back();
  st_->hot.pop_back();
  priority_totals_.pop_back();
}

void Scheduler::ChangeRunningHolds(std::uint32_t r, int sign) {
  const Job& job = s_->running[r];
  for (const NodeAllocation& a : job.allocation.nodes) {
    if (a.node >= st_->planner.node_count()) continue;
    ResourceVec amount = st_->planner.AmountOf(a.node, a);
    if (sign > 0)
      st_->planner.AddRunning(a.node, a, st_->running_ends[r], r);
    else
      st_->planner.RemoveRunning(a.node, a, r);
    if (st_->planner.node(a.node).usable) {
      for (std::uint32_t p : st_->node_partitions.of(a.node)) {
        st_->partition_free[p].cpus -= sign * amount.cpus;
        st_->partition_free[p].gpus -= sign * amount.total_gpus();
      }
    }
    st_->free_index.Update(a.node);
  }
}

void Scheduler::AddRunning(Job job) {
  const auto r = static_cast<std::uint32_t>(s_->running.size());
  slots_[job.id] = {List::kRunning, r};
  s_->running.push_back(std::move(job));
  st_->running_ends.push_back(AssumedEnd(s_->running[r], *s_));
  deadlines_.push({st_->running_ends[r], s_->running[r].id});
  ChangeRunningHolds(r, +1);
  st_->exclusive_user_jobs += s_->running[r].req.exclusive_user;
  st_->eligibility.AddRunning(s_->running[r]);
  st_->limits.AddRunning(s_->running[r]);
}

void Scheduler::RemoveRunningAt(std::uint32_t r, Job* taken) {
  ChangeRunningHolds(r, -1);
  st_->exclusive_user_jobs -= s_->running[r].req.exclusive_user;
  st_->eligibility.RemoveRunning(s_->running[r]);
  st_->limits.RemoveRunning(s_->running[r]);
  const auto last = static_cast<std::uint32_t>(s_->running.size() - 1);
  slots_.erase(s_->running[r].id);
  if (taken != nullptr) *taken = std::move(s_->running[r]);
  if (r != last) {
    for (const NodeAllocation& a : s_->running[last].allocation.nodes)
      if (a.node < st_->planner.node_count()) st_->planner.RelabelRunning(a.node, last, r);
    s_->running[r] = std::move(s_->running[last]);
    st_->running_ends[r] = st_->running_ends[last];
    slots_[s_->running[r].id] = {List::kRunning, r};
  }
  s_->running.pop_back();
  st_->running_ends.pop_back();
}

void Scheduler::AddFinished(FinishedJob f) {
  slots_[f.id] = {List::kFinished, static_cast<std::uint32_t>(s_->finished.size())};
  s_->finished.push_back(f);
  st_->eligibility.AddFinished(f);
  finished_time_.push_back(s_->now);
  finished_at_.push_back({s_->now, f.id});
}

void Scheduler::RemoveFinishedAt(std::uint32_t f) {
  const auto last = static_cast<std::uint32_t>(s_->finished.size() - 1);
  slots_.erase(s_->finished[f].id);
  st_->eligibility.RemoveFinished(s_->finished[f].id);
  if (f != last) {
    s_->finished[f] = s_->finished[last];
    finished_time_[f] = finished_time_[last];
    slots_[s_->finished[f].id] = {List::kFinished, f};
  }
  s_->finished.pop_back();
  finished_time_.pop_back();
}

// ---------------------------------------------------------------------------------------------
// The cluster

void Scheduler::SetNodeState(std::uint32_t node, NodeState state, std::string reason) {
  if (node >= s_->nodes.size()) return;
  s_->nodes[node].state = state;
  s_->nodes[node].reason = std::move(reason);
  st_->planner.SetUsable(node, state == NodeState::kUp);
  st_->free_index.Update(node);
  st_->RecountPartitions();
  queue_.order.ForgetSummaries();  // they say which jobs have no static reason
}

void Scheduler::SetNode(std::uint32_t node, Node n) {
  if (node >= s_->nodes.size()) return;
  s_->nodes[node] = std::move(n);
  Rebuild();
}

void Scheduler::SetCluster(const Snapshot& cluster) {
  s_->nodes = cluster.nodes;
  s_->switches = cluster.switches;
  s_->blocks = cluster.blocks;
  s_->gpu_types = cluster.gpu_types;
  s_->features = cluster.features;
  s_->partitions = cluster.partitions;
  Rebuild();
}

void Scheduler::SetWindows(std::vector<Window> windows) {
  s_->windows = std::move(windows);
  Rebuild();
}

void Scheduler::SetUsage(std::uint32_t association, double usage) {
  if (association >= s_->associations.size()) return;
  s_->associations[association].usage = usage;
  if (o_.weights.fairshare > 0) priorities_stale_ = true;
}

void Scheduler::SetLimits(std::vector<Partition> partitions, std::vector<Qos> qos,
                          std::vector<Account> accounts, std::vector<Association> associations) {
  s_->partitions = std::move(partitions);
  s_->qos = std::move(qos);
  s_->accounts = std::move(accounts);
  s_->associations = std::move(associations);
  Rebuild();
}

void Scheduler::SetQueueBlockCapacityForTest(std::size_t capacity) {
  queue_.order = QueueBlocks(capacity);
  queue_.special = QueueBlocks(capacity);
  arrivals_.clear();
  priorities_stale_ = true;
}

void Scheduler::SetPolicy(PolicyOptions options) {
  o_ = options;
  st_->start_memo.valid = false;  // placement and search bounds may have changed
  priorities_stale_ = true;
}

// ---------------------------------------------------------------------------------------------
// Planning

void Scheduler::RefreshPriorities() {
  Time at = PriorityTime(s_->now, o_.priority_calc_period);
  if (!priorities_stale_ && (o_.weights.age == 0 || at == ctx_.now)) return;
  ctx_ = MakePriorityContext(*s_, o_.weights, at);
  arrivals_.clear();
  std::vector<QueueEntry> order;
  order.reserve(s_->pending.size());
  for (std::uint32_t j = 0; j < s_->pending.size(); ++j) {
    priority_totals_[j] =
        ComputePriority(s_->pending[j], st_->shapes[j], *s_, ctx_, o_.weights).total;
    order.push_back(EntryOf(j));
  }
  std::sort(order.begin(), order.end(), QueueBefore);
  // Every job is filed again as of now: a begin time the clock has passed is special no more.
  std::vector<QueueEntry> special;
  std::erase_if(order, [&](const QueueEntry& e) {
    EngineState::HotJob& h = st_->hot[e.index];
    h.special = st_->IsSpecial(e.index, s_->now);
    if (h.special) special.push_back(e);
    return h.special;
  });
  queue_.order.Assign(order);
  queue_.special.Assign(special);
  priorities_stale_ = false;
}

void Scheduler::SetRunningEnd(std::uint32_t r, Time end) {
  st_->running_ends[r] = end;
  for (const NodeAllocation& a : s_->running[r].allocation.nodes)
    if (a.node < st_->planner.node_count()) st_->planner.SetRunningEnd(a.node, r, end);
  deadlines_.push({end, s_->running[r].id});
}

// A running job past its limit is assumed to end in the next second (AssumedEnd): move the
// ends the clock has passed. Entries of jobs that ended or moved since are dropped.
void Scheduler::MoveOverdueEnds() {
  std::vector<std::uint32_t> overdue;
  while (!deadlines_.empty() && deadlines_.top().end <= s_->now) {
    Deadline d = deadlines_.top();
    deadlines_.pop();
    auto it = slots_.find(d.id);
    if (it == slots_.end() || it->second.list != List::kRunning) continue;
    if (st_->running_ends[it->second.index] != d.end) continue;
    overdue.push_back(it->second.index);
  }
  for (std::uint32_t r : overdue) SetRunningEnd(r, s_->now + 1);
}

void Scheduler::CountAwaited(const Job& pending, int sign) {
  for (const Dependency& d : pending.dependencies) {
    if (d.kind == DependencyKind::kSingleton) continue;
    if (sign > 0) {
      ++awaited_[d.target];
    } else if (auto it = awaited_.find(d.target); it != awaited_.end() && --it->second == 0) {
      awaited_.erase(it);
    }
  }
}

void Scheduler::ForgetOldFinished() {
  // A job finished again since has a later entry: only that one counts.
  auto current = [&](Time time, JobId id) -> const Slot* {
    auto it = slots_.find(id);
    if (it == slots_.end() || it->second.list != List::kFinished) return nullptr;
    return finished_time_[it->second.index] == time ? &it->second : nullptr;
  };
  std::erase_if(old_but_awaited_, [&](const std::pair<Time, JobId>& e) {
    const Slot* slot = current(e.first, e.second);
    if (!slot) return true;
    if (awaited_.count(e.second)) return false;
    RemoveFinishedAt(slot->index);
    return true;
  });
  while (!finished_at_.empty() && s_->now - finished_at_.front().first > o_.min_job_age) {
    auto [time, id] = finished_at_.front();
    finished_at_.pop_front();
    const Slot* slot = current(time, id);
    if (!slot) continue;
    if (awaited_.count(id))
      old_but_awaited_.emplace_back(time, id);  // forgotten once no pending job names it
    else
      RemoveFinishedAt(slot->index);
  }
}

engine::Plan Scheduler::Plan(Time now, PlanDetail detail) {
  s_->now = std::max(s_->now, now);
  // A window starts or ends: its holds become its nodes' own (or theirs again), from scratch.
  if (s_->now >= st_->next_window_change) Rebuild();
  st_->planner.SetNow(s_->now);
  MoveOverdueEnds();
  ForgetOldFinished();
  RefreshPriorities();
  MergeArrivals();
  queue_.context = &ctx_;  // a member: the Scheduler may have moved since the last Plan
  st_->planner.BeginPass();
  Pass pass(*st_, o_, queue_, detail);
  engine::Plan plan = pass.Run();
  skipped_jobs_ = pass.skipped_jobs();
  st_->free_index.AfterRollback(st_->planner.Rollback());
  return plan;
}

}  // namespace lockstep::engine
