// Jobs submitted alike share one JobSpec in memory. Array tasks always do; so do the thousand
// jobs of a parameter sweep, whose scripts and environments live in the store, not here. With a
// million pending jobs the JobSpec would otherwise be most of lockstepd's memory.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "jobspec/job_spec.h"

namespace lockstep::controller {

class SpecInterner {
 public:
  explicit SpecInterner(std::size_t max_json_bytes = kMaxJsonBytes)
      : max_json_bytes_(max_json_bytes) {}

  // The shared copy equal to `spec`, made if there is none. Thread-safe.
  std::shared_ptr<const jobspec::JobSpec> Intern(jobspec::JobSpec spec);

  // jobspec::JobSpecToJson(*spec), made once per interned spec and kept while it lives: every
  // change of a job's state persists its whole entry, spec included (EntryToJson), and
  // serializing the spec was most of that. A spec not made by Intern() is serialized each time,
  // and so is every spec once the kept JSON reaches `max_json_bytes` (a million pending jobs
  // that each ask differently must not double their specs' memory). Thread-safe.
  std::shared_ptr<const std::string> JsonOf(const std::shared_ptr<const jobspec::JobSpec>& spec);
  static constexpr std::size_t kMaxJsonBytes = std::size_t{64} << 20;

  // Distinct specs alive, and the bytes of JSON kept for them (for tests).
  std::size_t size();
  std::size_t json_bytes();

 private:
  struct Entry {
    std::weak_ptr<const jobspec::JobSpec> spec;
    std::shared_ptr<const std::string> json;  // null until JsonOf() asks
  };
  void SweepLocked();

  std::mutex mu_;
  std::unordered_multimap<std::size_t, Entry> specs_;
  const std::size_t max_json_bytes_;
  std::size_t json_bytes_ = 0;  // kept in specs_' json
  std::size_t sweep_at_ = 1024;  // drop expired entries when the table grows past this
};

}  // namespace lockstep::controller
