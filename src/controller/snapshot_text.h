// A canonical text of the jobs of an engine::Snapshot, for the controller's self-check
// ($LOCKSTEP_CHECK_SNAPSHOT): the jobs its scheduler holds, kept up to date event by event,
// against a snapshot built from every job.
#pragma once

#include <string>
#include <vector>

#include "engine/model.h"

namespace lockstep::controller {

// One line per pending or running job, in id order, of everything the engine reads of it.
// Finished jobs are left out: the scheduler keeps only those that dependencies still need.
std::vector<std::string> DescribeJobs(const engine::Snapshot& s);

}  // namespace lockstep::controller
