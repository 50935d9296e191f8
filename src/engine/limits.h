// Partition, QoS and account limits. Static limits (a job's own size and time against its
// partition and QoS) and running-usage limits (MaxTRESPerUser, GrpTRES of a QoS or of an
// account and its ancestors, and the running-job counts GrpJobs, MaxJobs, MaxJobsPerUser and
// MaxJobsPerAccount), with Slurm's pending reasons.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/model.h"
#include "engine/request.h"

namespace lockstep::engine {

// PartitionTimeLimit, PartitionNodeLimit, QOSMaxWallDurationPerJobLimit, or kNone.
PendingReason CheckStaticLimits(const Job& job, const JobShape& shape, const Snapshot& s);

// Usage of running jobs (and jobs started in this pass) against the TRES limits. The
// Scheduler keeps one as jobs start and end (EngineState::limits); a pass works on a copy.
// Not thread-safe.
class LimitTracker {
 public:
  explicit LimitTracker(const Snapshot& s);

  // False when no usage limit is configured: Check always says kNone.
  bool any() const { return any_limit_; }
  // The limit that starting `job` with `tres` would exceed, or kNone.
  PendingReason Check(const Job& job, const Tres& tres) const;
  // Whether any usage limit applies to `job` (its QoS's, its association's, or its account's
  // and their ancestors'); when not, Check says kNone for it whatever runs.
  bool Binds(const Job& job) const;
  void Add(const Job& job, const Tres& tres);
  // A running job as Add and the constructor count it, and its removal when it ends; the
  // snapshot's QoS, accounts and associations must not have changed in between.
  void AddRunning(const Job& running) { Add(running, AllocatedTres(running)); }
  void RemoveRunning(const Job& running);
  static Tres AllocatedTres(const Job& running);

 private:
  static std::uint64_t UserKey(std::uint32_t qos, std::uint32_t user) {
    return (std::uint64_t{qos} << 32) | user;
  }
  std::uint32_t AccountOf(const Job& job) const;
  PendingReason CheckJobCounts(const Job& job) const;
  std::int64_t MaxJobsOf(std::uint32_t assoc) const;  // the association's own, else inherited

  // What running jobs (and those started in this pass) hold: their TRES and their count.
  struct Usage {
    Tres tres;
    std::int64_t jobs = 0;
    void Add(const Tres& t) { tres += t, ++jobs; }
    void Remove(const Tres& t) { tres -= t, --jobs; }
  };

  const Snapshot& s_;
  bool any_limit_ = false;  // no usage limit configured: nothing to track
  std::unordered_map<std::uint64_t, Usage> per_qos_user_;
  std::vector<Usage> per_qos_;
  std::vector<Usage> per_account_;  // subtree usage: a job counts for its account and ancestors
  // Job counts only: per (QoS, account) for MaxJobsPerAccount, and per association for MaxJobs.
  std::unordered_map<std::uint64_t, std::int64_t> jobs_per_qos_account_;
  std::vector<std::int64_t> jobs_per_assoc_;
};

}  // namespace lockstep::engine
