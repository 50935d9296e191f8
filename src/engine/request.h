// From what a job asks (JobRequest) to the shape the planner places: a node count, what each
// node must give, and how long.
#pragma once

#include "engine/model.h"
#include "engine/resources.h"

namespace lockstep::engine {

struct JobShape {
  std::int32_t nodes = 1;      // min_nodes: reservations are made for this many
  std::int32_t max_nodes = 1;  // a job starting now takes up to this many when free
  std::int32_t tasks_per_node = 1;
  NodeNeed per_node;
  std::uint64_t features = 0;
  Seconds duration = 0;  // the time limit the planner assumes
  const NodeFilter* filter = nullptr;  // the job's own (JobRequest::node_filter), or none
  std::uint32_t reservation = kNone;   // Job::reservation
};

// The job's shape in its partition. Memory per CPU and per GPU, GPUs per task or per job are
// turned into per-node amounts for `nodes` = min_nodes (tasks spread evenly, rounded up).
JobShape ShapeOf(const Job& job, const Partition& partition);

// ShapeOf in the job's own partition of `s`; a job naming no valid partition is shaped as if
// in a partition without limits (the engine then reports it as PartitionConfig).
JobShape ShapeIn(const Job& job, const Snapshot& s);

// The job's trackable resources once placed on `nodes` nodes, for limits and usage.
Tres TresOf(const JobShape& shape, std::int32_t nodes);

}  // namespace lockstep::engine
