#include "cli/format/sdiag.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <iterator>
#include <vector>

namespace lockstep::cli {
namespace {

// Slurm's slurm_ctime2: "Wed Dec 02 13:50:00 2026", local time.
std::string Ctime(std::int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", &tm);
  return buf;
}

std::uint64_t U(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<std::uint64_t>() : 0;
}

void Main(std::string& out, const nlohmann::json& m, std::int64_t elapsed) {
  auto o = std::back_inserter(out);
  const std::uint64_t cycles = U(m, "cycles");
  fmt::format_to(o, "\nMain schedule statistics (microseconds):\n");
  fmt::format_to(o, "\tLast cycle:   {}\n", U(m, "last_us"));
  fmt::format_to(o, "\tMax cycle:    {}\n", U(m, "max_us"));
  fmt::format_to(o, "\tTotal cycles: {}\n", cycles);
  if (cycles > 0) {
    fmt::format_to(o, "\tMean cycle:   {}\n", U(m, "total_us") / cycles);
    fmt::format_to(o, "\tMean depth cycle:  {}\n", U(m, "total_depth") / cycles);
  }
  if (elapsed > 60) fmt::format_to(o, "\tCycles per minute: {}\n", cycles / (elapsed / 60));
  fmt::format_to(o, "\tLast queue length: {}\n", U(m, "last_queue_len"));
  // lockstep's passes have none of Slurm's limits: every cycle reaches the queue's end.
  fmt::format_to(o, "\nMain scheduler exit:\n\tEnd of job queue:{:2}\n", cycles);
  for (const char* e : {"Hit default_queue_depth", "Hit sched_max_job_start", "Blocked on licenses",
                        "Hit max_rpc_cnt", "Timeout (max_sched_time)"})
    fmt::format_to(o, "\t{}:{:2}\n", e, 0);
}

void Backfill(std::string& out, const nlohmann::json& b) {
  auto o = std::back_inserter(out);
  const std::uint64_t cycles = U(b, "cycles");
  fmt::format_to(o, "\nBackfilling stats\n");
  fmt::format_to(o, "\tTotal backfilled jobs (since last slurm start): {}\n", U(b, "backfilled"));
  fmt::format_to(o, "\tTotal backfilled jobs (since last stats cycle start): {}\n",
                 U(b, "backfilled"));
  fmt::format_to(o, "\tTotal backfilled heterogeneous job components: 0\n");
  fmt::format_to(o, "\tTotal cycles: {}\n", cycles);
  const std::uint64_t when = U(b, "last_when");
  if (when > 0)
    fmt::format_to(o, "\tLast cycle when: {} ({})\n", Ctime(static_cast<std::int64_t>(when)), when);
  else
    fmt::format_to(o, "\tLast cycle when: N/A\n");
  fmt::format_to(o, "\tLast cycle: {}\n", U(b, "last_us"));
  fmt::format_to(o, "\tMax cycle:  {}\n", U(b, "max_us"));
  if (cycles > 0) fmt::format_to(o, "\tMean cycle: {}\n", U(b, "total_us") / cycles);
  fmt::format_to(o, "\tLast depth cycle: {}\n", U(b, "last_depth"));
  fmt::format_to(o, "\tLast depth cycle (try sched): {}\n", U(b, "last_depth"));
  if (cycles > 0) {
    fmt::format_to(o, "\tDepth Mean: {}\n", U(b, "total_depth") / cycles);
    fmt::format_to(o, "\tDepth Mean (try depth): {}\n", U(b, "total_depth") / cycles);
  }
  fmt::format_to(o, "\tLast queue length: {}\n", U(b, "last_queue_len"));
  if (cycles > 0) fmt::format_to(o, "\tQueue length mean: {}\n", U(b, "total_queue_len") / cycles);
  fmt::format_to(o, "\tLast table size: 0\n");
  fmt::format_to(o, "\nBackfill exit\n\tEnd of job queue:{:2}\n", cycles);
  for (const char* e : {"Hit bf_max_job_start", "Hit bf_max_job_test", "System state changed",
                        "Hit table size limit (bf_node_space_size)", "Timeout (bf_max_time)"})
    fmt::format_to(o, "\t{}:{:2}\n", e, 0);
}

// Slurm's default order: most requests first.
std::vector<nlohmann::json> ByCount(const nlohmann::json& rows) {
  std::vector<nlohmann::json> v;
  if (rows.is_array()) v.assign(rows.begin(), rows.end());
  std::stable_sort(v.begin(), v.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return U(a, "count") > U(b, "count");
  });
  return v;
}

void Rpcs(std::string& out, const nlohmann::json& s) {
  auto o = std::back_inserter(out);
  fmt::format_to(o, "\nRemote Procedure Call statistics by message type\n");
  for (const nlohmann::json& r : ByCount(s.value("rpc_by_type", nlohmann::json::array()))) {
    const std::uint64_t n = U(r, "count");
    fmt::format_to(o, "\t{:<40}({:5}) count:{:<6} ave_time:{:<6} total_time:{}\n",
                   r.value("type", ""), U(r, "id"), n, n ? U(r, "total_us") / n : 0,
                   U(r, "total_us"));
  }
  fmt::format_to(o, "\nRemote Procedure Call statistics by user\n");
  for (const nlohmann::json& r : ByCount(s.value("rpc_by_user", nlohmann::json::array()))) {
    const std::uint64_t n = U(r, "count");
    fmt::format_to(o, "\t{:<16}({:8}) count:{:<6} ave_time:{:<6} total_time:{}\n",
                   r.value("user", ""), U(r, "id"), n, n ? U(r, "total_us") / n : 0,
                   U(r, "total_us"));
  }
  fmt::format_to(o, "\nPending RPC statistics\n\tNo pending RPCs\n");
}

}  // namespace

std::string FormatSdiag(const nlohmann::json& s) {
  std::string out;
  auto o = std::back_inserter(out);
  const auto now = static_cast<std::int64_t>(U(s, "time"));
  const auto since = static_cast<std::int64_t>(U(s, "since"));
  fmt::format_to(o, "*******************************************************\n");
  fmt::format_to(o, "sdiag output at {} ({})\n", Ctime(now), now);
  fmt::format_to(o, "Data since      {} ({})\n", Ctime(since), since);
  fmt::format_to(o, "*******************************************************\n");
  fmt::format_to(o, "Jobs submitted: {}\n", U(s, "jobs_submitted"));
  fmt::format_to(o, "Jobs started:   {}\n", U(s, "jobs_started"));
  fmt::format_to(o, "Jobs completed: {}\n", U(s, "jobs_completed"));
  fmt::format_to(o, "Jobs canceled:  {}\n", U(s, "jobs_canceled"));
  fmt::format_to(o, "Jobs failed:    {}\n\n", U(s, "jobs_failed"));
  fmt::format_to(o, "Job states ts:  {} ({})\n", Ctime(now), now);
  fmt::format_to(o, "Jobs pending:   {}\n", U(s, "jobs_pending"));
  fmt::format_to(o, "Jobs running:   {}\n", U(s, "jobs_running"));
  Main(out, s.value("main", nlohmann::json::object()), now - since);
  Backfill(out, s.value("backfill", nlohmann::json::object()));
  Rpcs(out, s);
  return out;
}

}  // namespace lockstep::cli
