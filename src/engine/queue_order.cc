#include "engine/queue_order.h"

#include <algorithm>

#include "engine/priority.h"

namespace lockstep::engine {

QueueEntry QueueEntryOf(const Job& job, std::uint32_t priority, std::uint32_t index,
                        const Snapshot& s) {
  std::uint32_t tier =
      job.partition < s.partitions.size() ? s.partitions[job.partition].priority_tier : 0u;
  return {tier, priority, job.submit_time, job.id, index};
}

QueueState BuildQueue(const Snapshot& s, const std::vector<JobShape>& shapes,
                      const PolicyOptions& o) {
  PriorityContext ctx =
      MakePriorityContext(s, o.weights, PriorityTime(s.now, o.priority_calc_period));
  QueueState q;
  q.priorities.reserve(s.pending.size());
  std::vector<QueueEntry> order;
  order.reserve(s.pending.size());
  for (std::uint32_t j = 0; j < s.pending.size(); ++j) {
    q.priorities.emplace_back(s.pending[j].id,
                              ComputePriority(s.pending[j], shapes[j], s, ctx, o.weights));
    order.push_back(QueueEntryOf(s.pending[j], q.priorities.back().second.total, j, s));
  }
  std::sort(order.begin(), order.end(), QueueBefore);
  q.order.Assign(order);
  return q;
}

}  // namespace lockstep::engine
