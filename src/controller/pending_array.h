// An array's tasks that have not been split off yet: one record however many tasks it has, as
// Slurm keeps a pending array as one job record (`40_[5-3999999]`). Tasks become JobEntries of
// their own (are "split off") only when the scheduler is to see them (a small window at the
// head of the array, controller_arrays.cc), when a job's dependency names one, or when a user
// acts on one; the rest stays here as ranges of positions.
//
// Task k of the array (k-th index in ascending order) has job id array_id() + k, so a task's id
// is computed, never stored, and ids are the same before and after a task is split off.
//
// Thread-safety: none; the controller's mu_ guards it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "controller/job_entry.h"

namespace lockstep::controller {

class PendingArray {
 public:
  // `tmpl`: what every task is when split off (its id is the array's: the first task's id).
  // `indices`: the array's task ids, ascending and unique, not empty.
  PendingArray(JobEntry tmpl, const std::vector<std::uint32_t>& indices);

  JobId array_id() const { return tmpl_.id; }
  JobId last_id() const { return tmpl_.id + task_count() - 1; }
  std::uint64_t task_count() const;     // split off or not
  std::uint64_t pending_count() const;  // not split off yet
  bool empty() const { return pending_.empty(); }
  // Whether the task with job id `id` is still here (not split off).
  bool Holds(JobId id) const;
  // The job id of the array's task `task` (its index), whether split off or not.
  std::optional<JobId> IdOfTask(std::uint32_t task) const;
  std::uint32_t TaskOfId(JobId id) const;  // id within [array_id(), last_id()]
  // The job id of the first task still here; the array must not be empty.
  JobId FirstPendingId() const { return tmpl_.id + pending_.front().first; }
  // Splits off the task `id` (Holds(id)): a pending entry made from the template.
  JobEntry Take(JobId id);
  // The entry task `id` would be (without splitting it off).
  JobEntry EntryOf(JobId id) const;
  // The pending tasks as Slurm prints them, without the throttle: "5-3999999", "1,8-12:4".
  std::string TaskText() const;

  // What every task is when split off; a hold or release of the array changes it.
  const JobEntry& tmpl() const { return tmpl_; }
  JobEntry& mutable_tmpl() { return tmpl_; }
  // The split-off tasks the scheduler was last given to start (controller_arrays.cc).
  std::vector<JobId>& window() { return window_; }
  const std::vector<JobId>& window() const { return window_; }

  // The store's record: the template, the index segments and the pending positions. The
  // template's spec is stored apart (in "array_specs") while it is the array's as submitted
  // (`spec_json` empty), and spliced in once an update changed it; FromJson leaves the spec
  // null in the first case.
  std::string ToJson(std::string_view spec_json = "") const;
  static Result<PendingArray> FromJson(std::string_view json);

 private:
  PendingArray() = default;
  // first_index, first_index + step, ... (count of them), from position first_pos.
  struct Segment {
    std::uint32_t first_index = 0, step = 1;
    std::uint64_t count = 0, first_pos = 0;
  };
  std::uint32_t IndexAt(std::uint64_t pos) const;
  // Appends the text of positions [lo, hi] to `out`.
  void AppendText(std::uint64_t lo, std::uint64_t hi, std::string& out) const;

  JobEntry tmpl_;
  std::vector<Segment> segments_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pending_;  // [lo, hi] positions, sorted
  std::vector<JobId> window_;
};

// Drops the array's index list when its text says the same ("0-3999999%10"), keeping the
// count, first and last (SLURM_ARRAY_TASK_COUNT/MIN/MAX): the spec of a large array lives as
// long as the array, and is written as its text anyway (JobSpecToJson).
void DropArrayIndices(jobspec::ArraySpec& array);

}  // namespace lockstep::controller
