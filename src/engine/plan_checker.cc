#include "engine/plan_checker.h"

#include <algorithm>
#include <bit>
#include <sstream>
#include <string>
#include <unordered_map>

#include "engine/limits.h"
#include "engine/request.h"

namespace lockstep::engine {
namespace {

// A start now on node n and the reservations' windows: a job of a window only on its nodes while
// it is in force (a FLEX one's anywhere else too); any other job neither there while it is, nor so that it would run into one
// still to come.
Status CheckWindows(const Job& job, Seconds duration, std::uint32_t n, const Snapshot& s) {
  const Time end = duration >= kUnlimited ? kInfiniteTime : s.now + duration;
  bool in_own = false;
  for (const Window& w : s.windows) {
    if (w.end <= s.now || !std::binary_search(w.nodes.begin(), w.nodes.end(), n)) continue;
    const bool in_force = w.start <= s.now;
    if (job.reservation == w.id) {
      in_own = in_own || in_force;
      continue;
    }
    if (in_force)
      return Internal("job " + std::to_string(job.id) + " started on node " + s.nodes[n].name +
                      " of reservation window " + std::to_string(w.id));
    if (end > w.start)
      return Internal("job " + std::to_string(job.id) + " on node " + s.nodes[n].name +
                      " would run into reservation window " + std::to_string(w.id));
  }
  // A FLEX window's job may also run where no window is in force.
  const bool flex = std::any_of(s.windows.begin(), s.windows.end(),
                                [&](const Window& w) { return w.id == job.reservation && w.flex; });
  if (job.reservation != kNone && !in_own && !flex)
    return Internal("job " + std::to_string(job.id) + " of reservation " +
                    std::to_string(job.reservation) + " started outside its window");
  return Status::Ok();
}

// Something that occupies nodes over [start, end): a running, started or reserved job.
struct Occupant {
  JobId job = 0;
  Time start = 0, end = 0;
  const Allocation* alloc = nullptr;
  bool reserved = false;  // a reservation counts GPUs by number, not by device
  std::uint32_t gpu_type = kNone;
};

std::string Where(JobId job, const Node& node) {
  return "job " + std::to_string(job) + " on node " + node.name;
}

Status CheckStartShape(const Snapshot& s, const Job& job, const Start& st) {
  static const Partition kNoPartition;
  const Partition& part =
      job.partition < s.partitions.size() ? s.partitions[job.partition] : kNoPartition;
  JobShape shape = ShapeIn(job, s);
  int n = static_cast<int>(st.allocation.nodes.size());
  if (n < shape.nodes || n > shape.max_nodes)
    return Internal("job " + std::to_string(job.id) + " got " + std::to_string(n) +
                    " nodes, asked " + std::to_string(shape.nodes) + "-" +
                    std::to_string(shape.max_nodes));
  for (const NodeAllocation& a : st.allocation.nodes) {
    const Node& node = s.nodes[a.node];
    if (node.state != NodeState::kUp) return Internal(Where(job.id, node) + ": node is not up");
    if (std::find(part.nodes.begin(), part.nodes.end(), a.node) == part.nodes.end())
      return Internal(Where(job.id, node) + ": node is not in the job's partition");
    if ((node.features & shape.features) != shape.features)
      return Internal(Where(job.id, node) + ": node lacks a requested feature");
    if (shape.filter != nullptr && shape.filter->Excludes(a.node))
      return Internal(Where(job.id, node) + ": node is excluded (-x)");
    if (Status w = CheckWindows(job, shape.duration, a.node, s); !w.ok()) return w;
    int gpus = std::popcount(a.gpus);
    if (gpus < shape.per_node.gpus || a.cpus < shape.per_node.cpus ||
        a.mem_mb < shape.per_node.mem_mb)
      return Internal(Where(job.id, node) + ": allocation smaller than the request");
    for (std::size_t d = 0; d < node.gpus.size(); ++d)
      if ((a.gpus >> d & 1) && shape.per_node.gpu_type != kNone &&
          node.gpus[d].type != shape.per_node.gpu_type && !shape.per_node.exclusive)
        return Internal(Where(job.id, node) + ": GPU of the wrong type");
  }
  if (shape.filter != nullptr)
    for (std::uint32_t r : shape.filter->required)
      if (std::none_of(st.allocation.nodes.begin(), st.allocation.nodes.end(),
                       [&](const NodeAllocation& a) { return a.node == r; }))
        return Internal("job " + std::to_string(job.id) + " started without required node " +
                        (r < s.nodes.size() ? s.nodes[r].name : std::to_string(r)) + " (-w)");
  PendingReason limit = CheckStaticLimits(job, shape, s);
  if (limit != PendingReason::kNone)
    return Internal("job " + std::to_string(job.id) + " started beyond " +
                    PendingReasonName(limit));
  return Status::Ok();
}

// Checks capacity on every node at every moment an occupant begins: CPUs, memory, GPU devices
// never shared, and GPU counts (per type, for typed reservations) within the node's.
Status CheckNodeAt(const Node& node, std::uint32_t n, Time t,
                   const std::vector<const Occupant*>& list) {
  std::int64_t cpus = 0, mem = 0;
  std::uint64_t devices = 0;
  int reserved_any = 0;
  std::unordered_map<std::uint32_t, int> reserved_typed;
  for (const Occupant* o : list) {
    if (!(o->start <= t && t < o->end)) continue;
    for (const NodeAllocation& a : o->alloc->nodes) {
      if (a.node != n) continue;
      cpus += a.cpus;
      mem += a.mem_mb;
      if (o->reserved) {
        (o->gpu_type == kNone ? reserved_any : reserved_typed[o->gpu_type]) += a.gpu_count;
        continue;
      }
      if (devices & a.gpus) return Internal(Where(o->job, node) + ": GPU allocated twice");
      devices |= a.gpus;
    }
  }
  std::string at = " at t=" + std::to_string(t);
  if (cpus > node.cpus) return Internal("node " + node.name + ": CPUs over capacity" + at);
  if (mem > node.mem_mb && mem > 0)
    return Internal("node " + node.name + ": memory over capacity" + at);
  int free_total = static_cast<int>(node.gpus.size()) - std::popcount(devices);
  int reserved_total = reserved_any;
  for (auto& [type, count] : reserved_typed) {
    int free_of_type = 0;
    for (std::size_t d = 0; d < node.gpus.size(); ++d)
      if (node.gpus[d].type == type && !(devices >> d & 1)) ++free_of_type;
    if (count > free_of_type)
      return Internal("node " + node.name + ": typed GPUs over-reserved" + at);
    reserved_total += count;
  }
  if (reserved_total > free_total)
    return Internal("node " + node.name + ": GPUs over-reserved" + at);
  return Status::Ok();
}

Status CheckCapacity(const Snapshot& s, const std::vector<Occupant>& occ) {
  std::unordered_map<std::uint32_t, std::vector<const Occupant*>> by_node;
  for (const Occupant& o : occ)
    for (const NodeAllocation& a : o.alloc->nodes) by_node[a.node].push_back(&o);
  for (auto& [n, list] : by_node)
    for (const Occupant* probe : list)
      LOCKSTEP_RETURN_IF_ERROR(CheckNodeAt(s.nodes[n], n, probe->start, list));
  return Status::Ok();
}

}  // namespace

Status CheckPlan(const Snapshot& s, const PolicyOptions& o, const Plan& plan) {
  std::unordered_map<JobId, const Job*> pending;
  for (const Job& j : s.pending) pending[j.id] = &j;
  std::unordered_map<JobId, Seconds> grace_of;
  for (const Preemption& p : plan.preemptions) grace_of[p.victim] = p.grace;

  std::vector<Occupant> occ;
  for (const Job& j : s.running) {
    Seconds d = ShapeIn(j, s).duration;
    Time end = d >= kUnlimited ? kInfiniteTime : std::max(j.start_time + d, s.now + 1);
    if (auto it = grace_of.find(j.id); it != grace_of.end())
      end = std::min(end, s.now + std::max<Seconds>(1, it->second));
    occ.push_back({j.id, s.now, end, &j.allocation, false, kNone});
  }
  for (const Start& st : plan.starts) {
    auto it = pending.find(st.job);
    if (it == pending.end())
      return Internal("started job " + std::to_string(st.job) + " is not pending");
    LOCKSTEP_RETURN_IF_ERROR(CheckStartShape(s, *it->second, st));
    Seconds d = ShapeIn(*it->second, s).duration;
    occ.push_back(
        {st.job, s.now, d >= kUnlimited ? kInfiniteTime : s.now + d, &st.allocation, false, kNone});
  }
  // Started jobs: usage limits with the running jobs.
  LimitTracker limits(s);
  for (const Start& st : plan.starts) {
    const Job& job = *pending[st.job];
    Tres t;
    t.nodes = static_cast<std::int64_t>(st.allocation.nodes.size());
    for (const NodeAllocation& a : st.allocation.nodes) {
      t.cpus += a.cpus;
      t.mem_mb += a.mem_mb;
      t.gpus += std::popcount(a.gpus);
    }
    PendingReason r = limits.Check(job, t);
    if (r != PendingReason::kNone)
      return Internal("job " + std::to_string(st.job) + " started beyond " + PendingReasonName(r));
    limits.Add(job, t);
  }
  for (const Pending& p : plan.pending) {
    if (!p.reserved) continue;
    auto it = pending.find(p.job);
    if (it == pending.end())
      return Internal("reserved job " + std::to_string(p.job) + " is not pending");
    if (p.expected_start < s.now)
      return Internal("job " + std::to_string(p.job) + " reserved in the past");
    JobShape shape = ShapeIn(*it->second, s);
    if (static_cast<int>(p.reservation.nodes.size()) < shape.nodes)
      return Internal("job " + std::to_string(p.job) + " reserved fewer nodes than it needs");
    Time end = shape.duration >= kUnlimited ? kInfiniteTime : p.expected_start + shape.duration;
    occ.push_back({p.job, p.expected_start, end, &p.reservation, true, shape.per_node.gpu_type});
  }
  (void)o;
  LOCKSTEP_RETURN_IF_ERROR(CheckCapacity(s, occ));
  return Status::Ok();
}

std::string DescribePlan(const Plan& p, PlanDetail detail) {
  std::ostringstream out;
  auto alloc = [&](const Allocation& a) {
    for (const NodeAllocation& n : a.nodes)
      out << " n" << n.node << ":" << n.cpus << "c" << n.mem_mb << "m" << n.gpus << "g"
          << n.gpu_count;
  };
  for (const Start& s : p.starts) {
    out << "start " << s.job << (s.backfilled ? " backfilled" : "");
    alloc(s.allocation);
    out << "\n";
  }
  for (const Preemption& x : p.preemptions)
    out << "preempt " << x.victim << " for " << x.for_job << " mode " << int(x.mode) << " grace "
        << x.grace << "\n";
  const bool full = detail == PlanDetail::kFull;
  for (const Pending& x : p.pending) {
    if (!full && (!x.reserved || detail == PlanDetail::kStarts) &&
        (x.reason == PendingReason::kPriority || x.reason == PendingReason::kResources))
      continue;
    out << "pending " << x.job << " " << PendingReasonName(x.reason) << " at " << x.expected_start
        << (x.reserved ? " reserved" : "");
    alloc(x.reservation);
    for (JobId b : x.blocked_by) out << " after " << b;
    out << "\n";
  }
  auto prios = full ? p.priorities : std::vector<std::pair<JobId, PriorityBreakdown>>{};
  std::sort(prios.begin(), prios.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [id, b] : prios) out << "priority " << id << " " << b.total << "\n";
  out << "tested " << p.jobs_tested << "\n";
  return out.str();
}

}  // namespace lockstep::engine
