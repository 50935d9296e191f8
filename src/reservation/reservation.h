// Slurm's advance reservations (scontrol create|update|delete reservation): the records, their
// decoding from scontrol's words, the checks a change must pass, and what they give the engine
// (engine::Window) and the views (GET /api/v1/reservations). docs/reservations.md.
//
// A ReservationBook is a plain value, not thread-safe: lockstepd keeps one under its lock and
// the simulator one of its own. A change is checked whole before anything changes: a refused
// request leaves the book as it was.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "engine/model.h"

namespace lockstep::reservation {

// Slurm's reservation flags that lockstep gives a meaning (scontrol(1), "Flags=").
enum Flag : std::uint32_t {
  kMaint = 1u << 0,       // maintenance: nodes show "maint", pending jobs say so
  kIgnoreJobs = 1u << 1,  // may be created over nodes whose running jobs run into it
  kDaily = 1u << 2,       // repeats every day
  kWeekly = 1u << 3,      // repeats every week
  kFlex = 1u << 4,        // its jobs may also use nodes outside it
  kOverlap = 1u << 5,     // may share nodes with other reservations
  kPurgeComp = 1u << 6,   // deleted once its jobs are done and it stays idle purge_comp
  kSpecNodes = 1u << 7,   // its nodes were named (Nodes=), shown by Slurm
  kAllNodes = 1u << 8,    // Nodes=ALL
};

struct Reservation {
  std::string name;
  std::uint32_t id = 0;  // its engine::Window's id; unique in a book, never reused
  Time start = 0;
  Time end = 0;                     // kInfiniteTime: Duration=infinite
  std::vector<std::string> nodes;   // in the cluster's order
  std::string partition;            // "" : (null)
  std::vector<std::string> users;   // empty: any user (Accounts decide)
  std::vector<std::string> accounts;
  std::uint32_t flags = 0;
  Seconds purge_comp = 300;  // with kPurgeComp: the idle time after which it is deleted
  // With kPurgeComp: when it was last seen without a job, once one of its jobs has ended
  // (0: none has).
  Time idle_since = 0;

  bool Has(Flag f) const { return (flags & f) != 0; }
  bool ActiveAt(Time t) const { return start <= t && t < end; }
};

// What a reservation is checked against: the cluster's nodes and partitions, and, for picking
// nodes (NodeCnt=) and refusing busy ones, when each node's running work ends.
struct ClusterFacts {
  std::vector<std::string> node_names;
  std::vector<bool> node_usable;    // neither down nor drained
  std::vector<Time> busy_until;     // the latest end of a job running there; 0: idle
  std::vector<std::string> partition_names;
  std::vector<std::vector<std::uint32_t>> partition_nodes;
  std::uint32_t default_partition = 0;
  std::vector<std::string> user_names;     // known users; empty: any name is taken
  std::vector<std::string> account_names;  // known accounts; empty: any name is taken
};

// Slurm's flag names, in Slurm's order of printing ("MAINT,IGNORE_JOBS,SPEC_NODES").
std::string FlagsText(const Reservation& r);

// The reservations of a cluster, by name.
class ReservationBook {
 public:
  // scontrol create reservation KEY=VALUE...: the new reservation's name (ReservationName=, or
  // "<first user or account>_<id>" as Slurm makes it). `now` resolves StartTime=now+1hour.
  Result<std::string> Create(const std::vector<std::string>& words, const ClusterFacts& facts,
                             Time now);
  // scontrol update ReservationName=NAME KEY=VALUE... (Users+=x, Users-=x, Flags-=MAINT too);
  // the name of the reservation changed.
  Result<std::string> Update(const std::vector<std::string>& words, const ClusterFacts& facts, Time now);
  // scontrol delete ReservationName=NAME; refused while jobs run in it (`jobs_in_it`).
  Status Delete(const std::string& name, bool jobs_in_it);

  const Reservation* Find(const std::string& name) const;
  const std::map<std::string, Reservation>& all() const { return by_name_; }

  // Whether `user` (charging `account`) may use `r`: every list it has must name them.
  static bool MayUse(const Reservation& r, const std::string& user, const std::string& account);

  // Moves ended DAILY/WEEKLY reservations to their next occurrence and deletes ended ones and
  // idle PURGE_COMP ones (`has_jobs(name)`: pending or running jobs ask for it; `had_job_end`:
  // names whose jobs ended since the last call). The names changed or deleted, in that order.
  struct Turn {
    std::vector<std::string> moved, deleted;
  };
  template <typename HasJobs>
  Turn Advance(Time now, HasJobs has_jobs, const std::vector<std::string>& had_job_end);

  // The engine's windows of every reservation not yet ended, indices into `node_names`.
  std::vector<engine::Window> Windows(Time now, const std::vector<std::string>& node_names) const;
  // The earliest start or end to come (kInfiniteTime: none): when the windows change.
  Time NextChange(Time now) const;

  // One reservation as stored and as GET /api/v1/reservations shows it (docs/api.md); `now`
  // decides its State.
  static nlohmann::json ToJson(const Reservation& r, Time now);
  static Result<Reservation> FromJson(const nlohmann::json& j);
  // Puts back a stored reservation (lockstepd's start).
  void Restore(Reservation r);

 private:
  Status Check(const Reservation& r, const ClusterFacts& facts, Time now) const;
  Turn AdvanceWith(Time now, const std::vector<std::string>& busy,
                   const std::vector<std::string>& had_job_end);

  std::map<std::string, Reservation> by_name_;
  std::uint32_t next_id_ = 1;
};

template <typename HasJobs>
ReservationBook::Turn ReservationBook::Advance(Time now, HasJobs has_jobs,
                                               const std::vector<std::string>& had_job_end) {
  std::vector<std::string> busy;
  for (const auto& [name, r] : by_name_)
    if (has_jobs(name)) busy.push_back(name);
  return AdvanceWith(now, busy, had_job_end);
}

}  // namespace lockstep::reservation
