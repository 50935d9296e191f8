// sreport's `cluster utilization` and `user top`, as Slurm 22.05 prints them (src/sreport/
// cluster_reports.c, user_reports.c, common.c; print_fields.c), computed from lockstep's job
// accounting (GET /api/v1/accounting, what sacct reads), its nodes and its node events
// (GET /api/v1/events) instead of slurmdbd's hourly rollups. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::cli {

// sreport -t: how usage is printed.
enum class SreportTime { kMinutes, kSeconds, kHours, kPercent, kMinPer, kSecPer, kHourPer };

// Parses -t's word as sreport does (Minutes, Seconds, Hours, Percent, MinPer, SecPer, HourPer;
// case-insensitive prefixes); an unknown word is an InvalidArgument.
Result<SreportTime> ParseSreportTime(const std::string& word);

// The report window as Slurm's slurmdb_report_set_start_end_time makes it: each end rounded to
// the nearest hour, the end no later than now (sanity_check_endtime), at least one hour long;
// unset (0): from yesterday's midnight to today's (local time).
struct SreportWindow {
  Time start = 0;
  Time end = 0;
};
SreportWindow MakeSreportWindow(Time start, Time end, Time now);

struct SreportOptions {
  SreportWindow window;
  Time now = 0;  // usage is counted up to min(window.end, now)
  SreportTime time = SreportTime::kMinutes;
  bool noheader = false;  // -n
  int parsable = 0;       // 1: -p ('|' after every field), 2: -P ('|' between fields)
  // -T/--tres: TRES names ("cpu", "mem", "node", "billing", "energy", "gres/gpu"); empty: cpu,
  // and the TRES Name column is left out as Slurm does without --tres.
  std::vector<std::string> tres;
  std::vector<std::string> format;  // format=: field names as typed ("Cl", "Used%12", ...)
  std::string cluster = "lockstep";
  // user top's conditions.
  int top_count = 10;              // TopCount=
  bool group_accounts = false;     // group: one line per user, accounts together
  std::set<std::string> users;     // users=
  std::set<std::string> accounts;  // accounts=
  // The "Proper Name" of a login (its GECOS name); empty function: blank.
  std::function<std::string(const std::string& login)> proper_name;
};

// Seconds of each kind a TRES gave over the window (TRES-seconds).
struct ClusterUsage {
  std::string tres;
  std::int64_t count = 0;  // how many of the TRES the cluster has
  std::int64_t alloc = 0, down = 0, planned_down = 0, idle = 0, planned = 0, reported = 0;
};

// The cluster's usage of one TRES from `jobs` (the API's jobs, with start_time and end_time),
// `nodes` (the API's nodes) and `events` (node_down/node_up/node_drained/node_resumed events).
ClusterUsage ComputeClusterUsage(const std::string& tres, const nlohmann::json& jobs,
                                 const nlohmann::json& nodes, const nlohmann::json& events,
                                 const SreportOptions& options);

// `sreport cluster utilization`: the header block and one line per TRES. Unknown format
// fields, TRES names or input of the wrong shape are an InvalidArgument naming them.
Result<std::string> FormatClusterUtilization(const nlohmann::json& jobs,
                                             const nlohmann::json& nodes,
                                             const nlohmann::json& events,
                                             const SreportOptions& options);

// `sreport user top`: the users (or user and account pairs) that used the most CPU time,
// most first, at most TopCount of them.
Result<std::string> FormatUserTop(const nlohmann::json& jobs, const nlohmann::json& nodes,
                                  const SreportOptions& options);

}  // namespace lockstep::cli
