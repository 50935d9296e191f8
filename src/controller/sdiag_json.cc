#include "controller/sdiag_json.h"

namespace lockstep::controller {
namespace {

nlohmann::json Cycles(const CycleStats& c) {
  return {{"cycles", c.cycles},
          {"last_us", c.last_us},
          {"max_us", c.max_us},
          {"total_us", c.total_us},
          {"last_depth", c.last_depth},
          {"total_depth", c.total_depth},
          {"last_queue_len", c.last_queue_len},
          {"total_queue_len", c.total_queue_len},
          {"started", c.started},
          {"backfilled", c.backfilled},
          {"last_backfilled", c.last_backfilled},
          {"last_when", c.last_when}};
}

nlohmann::json Rpcs(const std::map<std::string, RpcStat>& by, const char* key) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, r] : by)
    out.push_back({{key, name}, {"id", r.id}, {"count", r.count}, {"total_us", r.total_us}});
  return out;
}

}  // namespace

nlohmann::json SdiagJson(const StatsReading& s, const MetricsView& v) {
  std::int64_t pending = 0, running = 0;
  for (const JobGroup& g : v.groups) {
    pending += g.counts.in(JobState::kPending);
    running += g.counts.in(JobState::kRunning) + g.counts.in(JobState::kCompleting);
  }
  return {{"time", v.now},
          {"since", s.since},
          {"jobs_submitted", s.jobs_submitted},
          {"jobs_started", s.jobs_started},
          {"jobs_completed", s.jobs_completed},
          {"jobs_canceled", s.jobs_canceled},
          {"jobs_failed", s.jobs_failed},
          {"jobs_pending", pending},
          {"jobs_running", running},
          {"main", Cycles(s.main)},
          {"backfill", Cycles(s.backfill)},
          {"rpc_by_type", Rpcs(s.rpc_by_type, "type")},
          {"rpc_by_user", Rpcs(s.rpc_by_user, "user")}};
}

}  // namespace lockstep::controller
