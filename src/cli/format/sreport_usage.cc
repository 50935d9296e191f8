// What sreport counts: the report window, and TRES-seconds allocated, down and idle over it,
// from lockstep's job accounting and node events (Slurm reads slurmdbd's hourly rollups).
#include <strings.h>

#include <algorithm>
#include <ctime>
#include <map>

#include "cli/format/field_format.h"
#include "cli/format/sreport.h"
#include "cli/format/sreport_internal.h"

namespace lockstep::cli {
namespace {

// Slurm's rounding of a report boundary: to the nearest hour, local time.
Time RoundToHour(Time t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  ::localtime_r(&tt, &tm);
  if (tm.tm_sec >= 30) tm.tm_min++;
  if (tm.tm_min >= 30) tm.tm_hour++;
  tm.tm_sec = 0;
  tm.tm_min = 0;
  tm.tm_isdst = -1;
  return static_cast<Time>(std::mktime(&tm));
}

// Midnight of `now`'s day, `days_back` days before (local time).
Time Midnight(Time now, int days_back) {
  std::time_t tt = static_cast<std::time_t>(now);
  std::tm tm{};
  ::localtime_r(&tt, &tm);
  tm.tm_hour = 0;
  tm.tm_min = 0;
  tm.tm_sec = 0;
  tm.tm_mday -= days_back;
  tm.tm_isdst = -1;
  return static_cast<Time>(std::mktime(&tm));
}

std::int64_t Overlap(Time from, Time to, Time window_start, Time window_end) {
  return std::max<std::int64_t>(0, std::min(to, window_end) - std::max(from, window_start));
}

bool NodeUnavailableNow(const std::string& state) {
  return state.rfind("drain", 0) == 0 || state.rfind("down", 0) == 0 ||
         (!state.empty() && state.back() == '*');
}

// Seconds node `name` was down or drained within [from, to): its events in order (a node's
// down and drain are separate: it is available only when neither holds). A node whose events
// are all older than the log keeps, but which is down or drained now, counts from its reason's
// time.
std::int64_t NodeDownSeconds(const nlohmann::json& node,
                             const std::vector<const nlohmann::json*>& events, Time from, Time to) {
  bool down = false, drained = false;
  Time since = 0;
  std::int64_t total = 0;
  if (events.empty()) {
    if (!NodeUnavailableNow(SreportStr(node, "state"))) return 0;
    return Overlap(std::max<Time>(SreportInt(node, "reason_time"), from), to, from, to);
  }
  for (const nlohmann::json* e : events) {
    const bool was = down || drained;
    const std::string kind = SreportStr(*e, "kind");
    const Time t = SreportInt(*e, "time");
    if (kind == "node_down") down = true;
    if (kind == "node_up") down = false;
    if (kind == "node_drained") drained = true;
    if (kind == "node_resumed") down = drained = false;
    const bool is = down || drained;
    if (!was && is) since = t;
    if (was && !is) total += Overlap(since, t, from, to);
  }
  if (down || drained) total += Overlap(since, to, from, to);
  return total;
}

}  // namespace

std::string SreportStr(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::int64_t SreportInt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<std::int64_t>() : 0;
}

Result<SreportTime> ParseSreportTime(const std::string& word) {
  auto is = [&word](const char* name, std::size_t least) {
    std::size_t n = std::max(word.size(), least);
    return !word.empty() && ::strncasecmp(word.c_str(), name, n) == 0;
  };
  if (is("SecPer", 6)) return SreportTime::kSecPer;
  if (is("MinPer", 6)) return SreportTime::kMinPer;
  if (is("HourPer", 6)) return SreportTime::kHourPer;
  if (is("Seconds", 1)) return SreportTime::kSeconds;
  if (is("Minutes", 1)) return SreportTime::kMinutes;
  if (is("Hours", 1)) return SreportTime::kHours;
  if (is("Percent", 1)) return SreportTime::kPercent;
  return InvalidArgument("unknown time format " + word);
}

SreportWindow MakeSreportWindow(Time start, Time end, Time now) {
  SreportWindow w;
  w.end = end ? RoundToHour(std::min(end, now)) : Midnight(now, 0);
  w.start = start ? RoundToHour(start) : Midnight(now, 1);
  if (w.end - w.start < 3600) w.end = w.start + 3600;
  return w;
}

Result<std::int64_t> TresOfJob(const std::string& tres, const nlohmann::json& job) {
  if (tres == "cpu" || tres == "billing") return SreportInt(job, "cpus");
  if (tres == "mem") return SreportInt(job, "mem_mb");
  if (tres == "node") return SreportInt(job, "node_count");
  if (tres == "gres/gpu") return SreportInt(job, "gpus");
  if (tres == "energy") return 0;  // lockstep measures no energy
  return InvalidArgument("unknown TRES '" + tres + "' (cpu, mem, node, billing, energy, gres/gpu)");
}

Result<std::int64_t> TresOfNode(const std::string& tres, const nlohmann::json& node) {
  if (tres == "cpu" || tres == "billing") return SreportInt(node, "cpus");
  if (tres == "mem") return SreportInt(node, "mem_mb");
  if (tres == "node") return 1;
  if (tres == "gres/gpu") return SreportInt(node, "gpus");
  if (tres == "energy") return 0;
  return InvalidArgument("unknown TRES '" + tres + "' (cpu, mem, node, billing, energy, gres/gpu)");
}

std::int64_t JobTresSeconds(const nlohmann::json& job, std::int64_t count,
                            const SreportOptions& o) {
  const Time start = SreportInt(job, "start_time");
  if (start <= 0 || count <= 0) return 0;
  const Time until = std::min(o.window.end, o.now);
  Time end = SreportInt(job, "end_time");
  if (end <= 0) end = o.now;  // still running
  return count * Overlap(start, end, o.window.start, until);
}

ClusterUsage ComputeClusterUsage(const std::string& tres, const nlohmann::json& jobs,
                                 const nlohmann::json& nodes, const nlohmann::json& events,
                                 const SreportOptions& o) {
  ClusterUsage u;
  u.tres = tres;
  const Time until = std::max(o.window.start, std::min(o.window.end, o.now));
  std::map<std::string, std::vector<const nlohmann::json*>> node_events;
  for (const nlohmann::json& e : events)
    if (e.is_object() && SreportStr(e, "kind").rfind("node_", 0) == 0)
      node_events[SreportStr(e, "node")].push_back(&e);
  for (auto& [name, list] : node_events)
    std::stable_sort(list.begin(), list.end(),
                     [](const nlohmann::json* a, const nlohmann::json* b) {
                       return SreportInt(*a, "time") < SreportInt(*b, "time");
                     });
  for (const nlohmann::json& n : nodes) {
    Result<std::int64_t> count = TresOfNode(tres, n);
    if (!count.ok()) return u;
    u.count += *count;
    u.down +=
        *count * NodeDownSeconds(n, node_events[SreportStr(n, "name")], o.window.start, until);
  }
  for (const nlohmann::json& j : jobs) {
    Result<std::int64_t> count = TresOfJob(tres, j);
    if (count.ok()) u.alloc += JobTresSeconds(j, *count, o);
  }
  u.reported = u.count * (until - o.window.start);
  // A drained node may still run its jobs: their time is allocated, not down (as Slurm's rollup).
  u.alloc = std::min(u.alloc, u.reported);
  u.down = std::min(u.down, u.reported - u.alloc);
  u.idle = u.reported - u.alloc - u.down - u.planned_down - u.planned;
  return u;
}

std::int64_t ClusterTresSeconds(const std::string& tres, const nlohmann::json& nodes,
                                const SreportOptions& o) {
  const Time until = std::max(o.window.start, std::min(o.window.end, o.now));
  std::int64_t total = 0;
  for (const nlohmann::json& n : nodes)
    if (Result<std::int64_t> c = TresOfNode(tres, n); c.ok())
      total += *c * (until - o.window.start);
  return total;
}

std::vector<UserUsage> ComputeUserTop(const nlohmann::json& jobs,
                                      const std::vector<std::string>& tres_list,
                                      const SreportOptions& o) {
  std::map<std::pair<std::string, std::string>, UserUsage> by_key;
  for (const nlohmann::json& j : jobs) {
    const std::string user = SreportStr(j, "user"), account = SreportStr(j, "account");
    if ((!o.users.empty() && !o.users.count(user)) ||
        (!o.accounts.empty() && !o.accounts.count(account)))
      continue;
    UserUsage& row = by_key[{user, o.group_accounts ? "" : account}];
    row.login = user;
    row.accounts.insert(account);
    row.used["cpu"] += JobTresSeconds(j, *TresOfJob("cpu", j), o);  // what orders the lines
    for (const std::string& tres : tres_list)
      if (tres != "cpu") row.used[tres] += JobTresSeconds(j, *TresOfJob(tres, j), o);
  }
  // Users without usage in the window have no line (slurmdbd has no usage rows for them).
  std::vector<UserUsage> rows;
  for (auto& [key, row] : by_key)
    if (row.used["cpu"] > 0) rows.push_back(std::move(row));
  // sort_user_dec: most CPU time first, then by name.
  std::stable_sort(rows.begin(), rows.end(), [](const UserUsage& a, const UserUsage& b) {
    if (a.used.at("cpu") != b.used.at("cpu")) return a.used.at("cpu") > b.used.at("cpu");
    return a.login < b.login;
  });
  if (o.top_count >= 0 && rows.size() > static_cast<std::size_t>(o.top_count))
    rows.resize(static_cast<std::size_t>(o.top_count));
  return rows;
}

}  // namespace lockstep::cli
