// Job counts kept up to date as jobs change, so that a metrics scrape never walks every job:
// per (partition, user, account) the jobs in each state and what the running ones hold, and
// per node what runs there. The controller marks a job when it changes (Touch, with
// TouchLocked) and counts it again when its scheduling thread replays the change into the
// engine (Count, then ForgetChanges): a scrape finds only the jobs changed since the last pass
// left to count (Refresh), so its cost is not the size of the last burst of changes.
//
// Thread-safety: none of its own; the controller guards it with its mutex.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/types.h"
#include "controller/job_entry.h"

namespace lockstep::controller {

inline constexpr std::size_t kJobStateCount = 11;  // JobState's values

// Jobs of one group (or of all), by state, and what the running and completing ones hold.
struct JobCounts {
  std::array<std::int64_t, kJobStateCount> by_state{};  // indexed by JobState
  std::int64_t held = 0;                                // pending and held (user or admin)
  std::int64_t cpus_alloc = 0, gpus_alloc = 0, mem_alloc_mb = 0, nodes_alloc = 0;

  std::int64_t in(JobState s) const { return by_state[static_cast<std::size_t>(s)]; }
  std::int64_t total() const;
  void Add(const JobCounts& other);
};

// What runs on one node: the sums of its running and completing jobs' shares.
struct NodeUse {
  std::int64_t cpus = 0, mem_mb = 0, gpus = 0;
  std::int32_t jobs = 0, completing = 0;
};

struct JobGroup {
  std::string partition, user, account;
  JobCounts counts;
};

class JobTally {
 public:
  // Where the tally reads what it needs of a job: its partition (the default one when it names
  // none) and account ("root" when none), and the nodes' names by index (nodes are only ever
  // added, so an index once given holds).
  struct Lookup {
    std::function<const JobEntry*(JobId)> job;  // null: the job is gone
    std::function<std::string(const JobEntry&)> partition;
    std::function<std::size_t()> node_count;
    std::function<const std::string&(std::uint32_t)> node_name;
  };

  // The job changed: it is counted again at the next Refresh.
  void Touch(JobId id) { dirty_.insert(id); }
  // Counts again up to `limit` of the jobs touched since the last call; true when none is left.
  bool Refresh(const Lookup& lookup, std::size_t limit);
  // Counts one job again now, from `e` (null: the job is gone). Its mark stays.
  void Count(JobId id, const JobEntry* e, const Lookup& lookup);
  // Every marked job has been counted again through Count: the marks go.
  void ForgetChanges() { dirty_.clear(); }

  const std::vector<JobGroup>& groups() const { return groups_; }
  const std::vector<NodeUse>& nodes() const { return nodes_; }
  std::size_t pending_changes() const { return dirty_.size(); }

 private:
  // What one job adds to its group and its nodes, to be taken away when it changes.
  struct Share {
    std::uint32_t group = 0;
    JobState state = JobState::kPending;
    bool held = false;
    std::vector<std::tuple<std::uint32_t, std::int32_t, std::int64_t, std::int32_t>> nodes;
  };
  void Apply(const Share& share, int sign);
  Share ShareOf(const JobEntry& e, const Lookup& lookup);
  std::uint32_t GroupOf(const std::string& partition, const std::string& user,
                        const std::string& account);
  // A node's index by name (engine::kNone: unknown), from a map of the names the lookup gave,
  // extended with the nodes added since when a name is missing.
  std::uint32_t NodeIndex(const std::string& name, const Lookup& lookup);
  // The group of a job from its spec and owner: a hash lookup, no strings, for the jobs that
  // share a spec (arrays, interned specs). The spec is kept alive so that its address is not
  // reused by another while it names a group here.
  std::uint32_t GroupOfJob(const JobEntry& e, const Lookup& lookup);
  struct SpecUser {
    const jobspec::JobSpec* spec;
    std::uint32_t uid;
    bool operator==(const SpecUser&) const = default;
  };
  struct SpecUserHash {
    std::size_t operator()(const SpecUser& k) const {
      return std::hash<const void*>()(k.spec) ^ (std::size_t{k.uid} * 0x9e3779b97f4a7c15ull);
    }
  };
  std::unordered_map<SpecUser, std::pair<std::shared_ptr<const jobspec::JobSpec>, std::uint32_t>,
                     SpecUserHash>
      spec_groups_;

  std::unordered_set<JobId> dirty_;
  std::unordered_map<JobId, Share> shares_;
  std::map<std::tuple<std::string, std::string, std::string>, std::uint32_t> group_index_;
  std::vector<JobGroup> groups_;
  std::vector<NodeUse> nodes_;  // by node index, grown as nodes appear
  std::unordered_map<std::string, std::uint32_t> node_index_;  // the names of nodes 0..size-1
};

}  // namespace lockstep::controller
