// One pending job's place in the queue's order: Slurm's partition PriorityTier, then priority,
// then submit time, then job id.
#pragma once

#include <cstdint>

#include "engine/model.h"

namespace lockstep::engine {

// `index` is the job's position in Snapshot::pending.
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

}  // namespace lockstep::engine
