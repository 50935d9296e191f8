// The invariants every plan must keep, checked by the tests on every plan they make:
//  - nothing is allocated twice (CPUs, memory, GPU devices per node, with running jobs);
//  - a gang gets all of its nodes or none, on up nodes with the right GPUs and features;
//  - no started job breaks its partition's or QoS's limits;
//  - no reservation is delayed: with running jobs ending at their limits (preempted ones at
//    their grace) and started jobs running to theirs, every reserved job still fits on its
//    reserved resources for its whole window.
#pragma once

#include <string>

#include "common/status.h"
#include "engine/model.h"

namespace lockstep::engine {

// Ok, or the first broken invariant, naming the job and node.
Status CheckPlan(const Snapshot& s, const PolicyOptions& o, const Plan& plan);

// A canonical text of a plan, a line per start, preemption, pending job and priority (these by
// job id): to compare two plans of the same jobs, and print where they differ. With
// PlanDetail::kDecisions, only what such a plan holds: no priorities, and pending entries only
// for reserved jobs and jobs held back for other reasons than their turn or resources; with
// kStarts, not the reserved jobs either.
std::string DescribePlan(const Plan& plan, PlanDetail detail = PlanDetail::kFull);

}  // namespace lockstep::engine
