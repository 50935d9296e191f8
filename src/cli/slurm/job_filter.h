// Which jobs a Slurm command line names, decided on the API's Job objects (docs/api.md): job ids
// as Slurm's commands take them ("42", an array's "40", "40_2", "40_[1-3,7]"), names, nodes,
// accounts, QoS and states; and squeue's display of an array's pending tasks as one line,
// "40_[3-8%2]". Pure functions on JSON; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace lockstep::cli {

// One job id as written: a job, a whole array, or some of an array's tasks.
struct JobIdPattern {
  std::uint64_t id = 0;
  std::optional<std::set<std::int64_t>> tasks;  // "40_2", "40_[1-3]": these tasks only
  std::optional<std::int64_t> het_offset;       // "43+1": that component of a heterogeneous job
  std::string text;                             // as written, for messages
};

// Parses a comma-separated list ("42,40_2,40_[1-3,7]"; commas inside brackets belong to the
// brackets). An error names the word: "Invalid job id specified: x".
Result<std::vector<JobIdPattern>> ParseJobIdList(const std::string& text);
// Whether an array's task text ("1,5-9,20-30:5", or "[5-9%2]" as the API's "array_task_str")
// holds `task`.
bool TaskTextHolds(std::string_view text, std::int64_t task);

// Whether `job` (a Job object) is named by `pattern`: its own id, or its array's id with the
// task in the pattern's tasks (all of them when it has none).
bool JobMatches(const nlohmann::json& job, const JobIdPattern& pattern);

// The filters of squeue, scancel and sacct that the API does not apply itself. Empty: any.
struct JobFilter {
  std::vector<JobIdPattern> ids;
  std::set<std::string> names;     // -n/--name
  std::set<std::string> nodes;     // -w/--nodelist, expanded: jobs on any of these nodes
  std::set<std::string> accounts;  // -A/--account
  std::set<std::string> qos;       // -q/--qos
  std::set<std::string> partitions;  // -p/--partition
  std::set<std::string> users;       // -u/--user, --me
  std::set<std::string> states;      // long names (PENDING, RUNNING, ...)
  std::set<std::string> reservations;  // -R/--reservation
};

// The comma-separated items of `text`, for the sets above.
std::set<std::string> CommaSet(const std::string& text);
// An option's action (SlurmOption::apply) that adds its value's comma-separated items to `to`.
std::function<Status(const std::string&)> AddCommaItems(std::set<std::string>& to);
// Adds the hosts of a hostlist ("node[1-3],gpu7") to the filter's nodes.
Status AddNodes(JobFilter& filter, const std::string& hostlist);

bool Passes(const nlohmann::json& job, const JobFilter& filter);

// `jobs` (an array of Job objects) with the pending tasks of each array merged into one object
// carrying "array_task_str" ("[3-8%2]"), as squeue shows an array's pending remainder.
nlohmann::json CollapsePendingArrays(nlohmann::json jobs);
// Joins array task texts ("0-2", "3-3999999") into one ("0-3999999"), in task order.
std::string JoinTaskTexts(const std::vector<std::string>& texts);
// An array's tasks lockstepd keeps in one record ("array_rest"), when the filter names only
// some of them ("-j 40_7"): those tasks, one record each; every other record as it is.
nlohmann::json NarrowArrayRests(nlohmann::json jobs, const JobFilter& filter);

// The API's state name for a job state word of squeue -t, sacct -s or scancel -t, long or
// compact ("PD", "pending"); "" when it is none.
std::string JobStateName(std::string word);

// Task ids as Slurm's bit_fmt writes them: "1-3,5,9-10".
std::string TaskRanges(const std::vector<std::int64_t>& sorted_ids);

}  // namespace lockstep::cli
