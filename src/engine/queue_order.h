// The queue's order: Slurm's partition PriorityTier, then priority, then submit time, then job
// id. plan() computes it for every pass; the Scheduler keeps it sorted between passes and
// recomputes priorities only when their time-varying factors are due (PriorityCalcPeriod).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/model.h"
#include "engine/queue_blocks.h"
#include "engine/queue_entry.h"
#include "engine/request.h"

namespace lockstep::engine {

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
//
// The order is in two parts that a pass merges: `order`, whose blocks a pass may skip, and
// `special`, jobs a pass always visits because something besides their shape decides what
// happens to them (holds, dependencies, array throttles, a future begin time, a range of node
// counts, a switch count). plan() puts every job in `order` and never skips; the Scheduler
// files each job by EngineState::HotJob::special and keeps the summaries (`keep_summaries`).
struct QueueState {
  std::vector<std::pair<JobId, PriorityBreakdown>> priorities;  // per Snapshot::pending index
  QueueBlocks order;
  QueueBlocks special;
  bool keep_summaries = false;
  const PriorityContext* context = nullptr;  // what the priorities in `order` were computed with
};

QueueState BuildQueue(const Snapshot& s, const std::vector<JobShape>& shapes,
                      const PolicyOptions& o);

}  // namespace lockstep::engine
