// Positions of a trace's jobs by job id (internal to the simulator). The scheduler names jobs by
// id; the replay keeps its per-job state in vectors by position in the trace, so it looks a
// position up for every start and end: a dense table when the ids are compact (SWF numbers its
// jobs 1..N), a sorted list otherwise.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "trace/trace.h"

namespace lockstep::sim {

class JobIndex {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  // An error naming the first id, in trace order, that the trace gives a second time.
  static Result<JobIndex> Build(const std::vector<trace::TraceJob>& jobs);

  // The job's position in the trace; kNone for an id the trace does not have.
  std::uint32_t PositionOf(JobId id) const;

  // Where the job at `position` comes in ascending id order (0 for the smallest id).
  std::uint32_t RankOf(std::uint32_t position) const {
    return rank_.empty() ? position : rank_[position];
  }

 private:
  struct IdPosition {
    JobId id;
    std::uint32_t position;
  };

  JobId dense_base_ = 0;
  std::vector<std::uint32_t> dense_;  // id - dense_base_ -> position, when the ids are compact
  std::vector<IdPosition> sorted_;    // by id, when they are not
  std::vector<std::uint32_t> rank_;  // by position; empty when the ids ascend in trace order
};

}  // namespace lockstep::sim
