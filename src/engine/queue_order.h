// The queue's order: Slurm's partition PriorityTier, then priority, then submit time, then job
// id. plan() computes it for every pass; the Scheduler keeps it sorted between passes and
// recomputes priorities only when their time-varying factors are due (PriorityCalcPeriod).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/model.h"
#include "engine/request.h"

namespace lockstep::engine {

// An entry whose job has left the queue (the Scheduler compacts them away now and then).
inline constexpr std::uint32_t kQueueTombstone = 0xffffffffu;

// One pending job's place in the queue; `index` is its position in Snapshot::pending, or
// kQueueTombstone.
struct QueueEntry {
  std::uint32_t tier = 0, priority = 0;
  Time submit = 0;
  JobId id = 0;
  std::uint32_t index = 0;
};

// True when `a` goes before `b` (the index plays no part).
inline bool QueueBefore(const QueueEntry& a, const QueueEntry& b) {
  if (a.tier != b.tier) return a.tier > b.tier;
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.submit != b.submit) return a.submit < b.submit;
  return a.id < b.id;
}

QueueEntry QueueEntryOf(const Job& job, std::uint32_t priority, std::uint32_t index,
                        const Snapshot& s);

// The moment time-varying priority factors (age) are computed for: `now` itself with a period
// of 0, else the start of the period `now` is in.
inline Time PriorityTime(Time now, Seconds period) {
  if (period <= 0) return now;
  Time r = now % period;
  return now - (r < 0 ? r + period : r);
}

struct PriorityContext;

// The queue in order, and what a full plan says of every pending job's priority: either the
// breakdowns themselves (plan() computes them anyway), or, when `priorities` is empty, the
// context to compute them again with (the Scheduler keeps only each job's total: the
// breakdown, 72 bytes a job, is wanted only by full plans).
struct QueueState {
  std::vector<std::pair<JobId, PriorityBreakdown>> priorities;  // per Snapshot::pending index
  std::vector<QueueEntry> order;
  const PriorityContext* context = nullptr;  // what the priorities in `order` were computed with
};

QueueState BuildQueue(const Snapshot& s, const std::vector<JobShape>& shapes,
                      const PolicyOptions& o);

}  // namespace lockstep::engine
