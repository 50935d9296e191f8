#include "sim/job_index.h"

#include <algorithm>
#include <string>

namespace lockstep::sim {
namespace {

// A dense table may be this many times longer than the trace; sparser ids use the sorted list.
constexpr JobId kDenseSlack = 4;

Status Duplicate(JobId id) {
  return InvalidArgument("the trace has job id " + std::to_string(static_cast<std::int64_t>(id)) +
                         " twice");
}

}  // namespace

Result<JobIndex> JobIndex::Build(const std::vector<trace::TraceJob>& jobs) {
  JobIndex index;
  const auto n = static_cast<std::uint32_t>(jobs.size());
  if (n == 0) return index;
  JobId lo = static_cast<JobId>(jobs.front().id), hi = lo;
  bool ascending = true;  // then id order is trace order, as in most traces
  for (std::uint32_t p = 1; p < n; ++p) {
    const auto id = static_cast<JobId>(jobs[p].id);
    ascending &= id > static_cast<JobId>(jobs[p - 1].id);
    lo = std::min(lo, id);
    hi = std::max(hi, id);
  }
  if (hi - lo < kDenseSlack * n) {
    index.dense_base_ = lo;
    index.dense_.assign(hi - lo + 1, kNone);
    for (std::uint32_t p = 0; p < n; ++p) {
      std::uint32_t& slot = index.dense_[static_cast<JobId>(jobs[p].id) - lo];
      if (slot != kNone) return Duplicate(static_cast<JobId>(jobs[p].id));
      slot = p;
    }
  } else {
    index.sorted_.reserve(n);
    for (std::uint32_t p = 0; p < n; ++p)
      index.sorted_.push_back({static_cast<JobId>(jobs[p].id), p});
    std::sort(index.sorted_.begin(), index.sorted_.end(), [](IdPosition a, IdPosition b) {
      return a.id != b.id ? a.id < b.id : a.position < b.position;
    });
    // Of the ids given more than once, the one whose second appearance comes first in the trace.
    std::uint32_t first_repeat = kNone;
    for (std::size_t k = 1; k < index.sorted_.size(); ++k) {
      if (index.sorted_[k].id == index.sorted_[k - 1].id &&
          (k < 2 || index.sorted_[k - 2].id != index.sorted_[k].id))
        first_repeat = std::min(first_repeat, index.sorted_[k].position);
    }
    if (first_repeat != kNone) return Duplicate(static_cast<JobId>(jobs[first_repeat].id));
  }
  if (ascending) return index;
  index.rank_.resize(n);
  std::uint32_t rank = 0;
  if (!index.dense_.empty()) {
    for (std::uint32_t p : index.dense_)
      if (p != kNone) index.rank_[p] = rank++;
  } else {
    for (const IdPosition& e : index.sorted_) index.rank_[e.position] = rank++;
  }
  return index;
}

std::uint32_t JobIndex::PositionOf(JobId id) const {
  if (!dense_.empty()) {
    const JobId offset = id - dense_base_;  // wraps to a huge value below the base
    return offset < dense_.size() ? dense_[offset] : kNone;
  }
  auto it = std::lower_bound(sorted_.begin(), sorted_.end(), id,
                             [](IdPosition a, JobId b) { return a.id < b; });
  return it != sorted_.end() && it->id == id ? it->position : kNone;
}

}  // namespace lockstep::sim
