#include "controller/sched_stats.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

namespace lockstep::controller {

void SchedStats::RecordPass(bool full, std::chrono::nanoseconds took, std::uint64_t depth,
                            std::uint64_t queue_len, std::uint64_t started,
                            std::uint64_t backfilled, Time now) {
  pass_latency_[full ? 1 : 0].Record(took);
  const auto us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(took).count());
  std::lock_guard<std::mutex> lock(mu_);
  CycleStats& c = full ? backfill_ : main_;
  c.cycles += 1;
  c.last_us = us;
  c.max_us = std::max(c.max_us, us);
  c.total_us += us;
  c.last_depth = depth;
  c.total_depth += depth;
  c.last_queue_len = queue_len;
  c.total_queue_len += queue_len;
  c.started += started;
  c.backfilled += backfilled;
  c.last_backfilled = backfilled;
  c.last_when = now;
}

void SchedStats::RecordSubmitted(std::uint64_t jobs) {
  std::lock_guard<std::mutex> lock(mu_);
  submitted_ += jobs;
}

std::string SchedStats::GpuClass(std::int64_t gpus) {
  if (gpus <= 2) return std::to_string(std::max<std::int64_t>(gpus, 0));
  if (gpus > 64) return "64+";
  std::int64_t c = 4;
  while (c < gpus) c *= 2;
  return std::to_string(c);
}

void SchedStats::RecordStarted(const std::string& partition, std::int64_t gpus, Seconds waited) {
  LatencyHistogram* h = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_ += 1;
    auto& slot = queue_wait_[{partition, GpuClass(gpus)}];
    if (!slot) slot = std::make_unique<LatencyHistogram>();
    h = slot.get();  // never freed while the stats live
  }
  h->RecordSeconds(static_cast<double>(std::max<Seconds>(waited, 0)));
}

void SchedStats::RecordEnded(End how) {
  std::lock_guard<std::mutex> lock(mu_);
  (how == End::kCompleted ? completed_ : how == End::kCanceled ? canceled_ : failed_) += 1;
}

void SchedStats::RecordFailure(const std::string& cause) {
  std::lock_guard<std::mutex> lock(mu_);
  ++failures_by_cause_[cause];
}

LatencyHistogram& SchedStats::Histogram(std::map<std::string, std::unique_ptr<LatencyHistogram>>& m,
                                        const std::string& key) {
  auto& slot = m[key];
  if (!slot) slot = std::make_unique<LatencyHistogram>();
  return *slot;
}

void SchedStats::RecordRpc(const std::string& route, const std::string& user, std::uint32_t uid,
                           std::chrono::nanoseconds took) {
  const auto us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(took).count());
  LatencyHistogram* h = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [type, added] = rpc_by_type_.try_emplace(route);
    RpcStat& t = type->second;
    if (added) t.id = static_cast<std::uint32_t>(rpc_by_type_.size());
    t.count += 1;
    t.total_us += us;
    RpcStat& u = rpc_by_user_[user];
    u.id = uid;
    u.count += 1;
    u.total_us += us;
    h = &Histogram(api_latency_, route);
  }
  h->Record(took);
}

StatsReading SchedStats::Read() const {
  StatsReading r;
  r.since = since_;
  r.pass_latency[0] = pass_latency_[0].Read();
  r.pass_latency[1] = pass_latency_[1].Read();
  std::lock_guard<std::mutex> lock(mu_);
  r.main = main_;
  r.backfill = backfill_;
  r.jobs_submitted = submitted_;
  r.jobs_started = started_;
  r.jobs_completed = completed_;
  r.jobs_canceled = canceled_;
  r.jobs_failed = failed_;
  r.rpc_by_type = rpc_by_type_;
  r.rpc_by_user = rpc_by_user_;
  r.failures_by_cause = failures_by_cause_;
  for (const auto& [key, h] : queue_wait_) r.queue_wait[key] = h->Read();
  for (const auto& [key, h] : api_latency_) r.api_latency[key] = h->Read();
  return r;
}

namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// The words of lockstepd's paths (docs/api.md, docs/observability.md).
bool IsRouteWord(std::string_view p) {
  static constexpr std::string_view kWords[] = {"api",        "v1",
                                                "jobs",       "nodes",
                                                "state",      "agent",
                                                "register",   "commands",
                                                "events",     "output",
                                                "cancel",     "hold",
                                                "release",    "requeue",
                                                "steps",      "logs",
                                                "why",        "partitions",
                                                "diag",       "priorities",
                                                "accounting", "tokens",
                                                "revoke",     "metrics",
                                                "scheduler",  "jobs-users-accts",
                                                "sdiag",      "web",
                                                "whoami"};
  return std::find(std::begin(kWords), std::end(kWords), p) != std::end(kWords);
}

}  // namespace

std::string RouteOf(const std::string& method, std::string_view path) {
  path = path.substr(0, path.find('?'));
  std::vector<std::string_view> parts;
  for (std::size_t start = 0; start < path.size();) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  const bool api = parts.size() >= 3 && parts[0] == "api" && parts[1] == "v1";
  const bool metrics = !parts.empty() && parts[0] == "metrics" && parts.size() <= 2;
  if (!api && !metrics) return method + " other";
  std::string route = method + " ";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    // Ids (jobs, steps) and names (nodes) in the path: node names are what follows "nodes".
    const bool node_name = api && i == 3 && parts[2] == "nodes";
    route += "/";
    if (AllDigits(p))
      route += "{id}";
    else if (node_name)
      route += "{name}";
    else if (IsRouteWord(p))
      route += p;
    else
      return method + " other";  // the routes stay few, whatever clients send
  }
  return route;
}

}  // namespace lockstep::controller
