// Slurm's multifactor priority: a weighted sum of factors in [0, 1], minus nice.
//   priority = W_age*age + W_fs*fairshare + W_size*size + W_part*partition + W_qos*qos
//              + sum(W_tres_i * tres_i) - nice
#pragma once

#include <vector>

#include "engine/model.h"
#include "engine/request.h"

namespace lockstep::engine {

// Cluster-wide quantities the factors are normalised by; computed once per pass.
struct PriorityContext {
  Time now = 0;
  std::vector<double> fairshare;  // per association (Fair Tree)
  double total_nodes = 1, total_cpus = 1, total_mem = 1, total_gpus = 1;
  double max_partition_factor = 1;
  double max_qos_priority = 0;
};

// Fair Tree runs only when fair share has a weight. `at`: the moment the age factor is
// computed for (PriorityTime in queue_order.h).
PriorityContext MakePriorityContext(const Snapshot& s, const PriorityWeights& w, Time at);

// The priority of a pending job and its weighted parts. Held jobs get 0, as in Slurm.
PriorityBreakdown ComputePriority(const Job& job, const JobShape& shape, const Snapshot& s,
                                  const PriorityContext& ctx, const PriorityWeights& w);

}  // namespace lockstep::engine
