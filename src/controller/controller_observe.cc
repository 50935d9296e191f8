// Observability: the view a metrics scrape reads, the scheduler's counters and the events of
// the stream (docs/observability.md).
#include <algorithm>
#include <set>
#include <string_view>

#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/health_book.h"
#include "engine/scheduler.h"

namespace lockstep::controller {

std::string Controller::PartitionOfLocked(const JobEntry& job) const {
  if (!job.spec || job.spec->partition.empty())
    return cluster_.base.partitions.empty()
               ? std::string()
               : cluster_.base.partitions[cluster_.default_partition].name;
  return job.spec->partition;
}

JobTally::Lookup Controller::TallyLookupLocked() const {
  JobTally::Lookup lookup;
  lookup.job = [this](JobId id) -> const JobEntry* {
    auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : &it->second;
  };
  lookup.partition = [this](const JobEntry& e) { return PartitionOfLocked(e); };
  lookup.node_count = [this] { return cluster_.base.nodes.size(); };
  lookup.node_name = [this](std::uint32_t n) -> const std::string& {
    return cluster_.base.nodes[n].name;
  };
  return lookup;
}

MetricsView Controller::Metrics() const {
  // The scheduling thread counts the jobs it replays (ReplayChangesLocked): what is left here
  // is what changed since its last pass. Should that be many, they are counted in chunks, the
  // lock released between them.
  constexpr std::size_t kJobsPerHold = 8192;
  MetricsView v;
  for (int rounds = 1;; ++rounds) {
    HeldLock lock(*this);
    // The lock goes between chunks; under a flood of changes the 64th takes what is left.
    if (!tally_.Refresh(TallyLookupLocked(), rounds < 64 ? kJobsPerHold : SIZE_MAX)) continue;
    CopyMetricsViewLocked(v);
    break;
  }
  v.stats = stats_.Read();
  v.store_commit = store_->commit_latency().Read();
  return v;
}

void Controller::CopyMetricsViewLocked(MetricsView& v) const {
  v.now = clock_.Now();
  v.groups = tally_.groups();
  // Arrays' tasks not split off are pending jobs too, one by one, as Slurm counts them.
  for (const auto& [id, a] : pending_arrays_) {
    const JobEntry& t = a.tmpl();
    const std::string partition = PartitionOfLocked(t);
    const std::string account = t.spec->account.empty() ? "root" : t.spec->account;  // as JobTally
    auto g = std::find_if(v.groups.begin(), v.groups.end(), [&](const JobGroup& x) {
      return x.partition == partition && x.user == t.user && x.account == account;
    });
    if (g == v.groups.end()) g = v.groups.insert(v.groups.end(), {partition, t.user, account, {}});
    const auto n = static_cast<std::int64_t>(a.pending_count());
    g->counts.by_state[static_cast<std::size_t>(JobState::kPending)] += n;
    if (t.held_by_user || t.held_by_admin) g->counts.held += n;
  }
  const std::vector<NodeUse>& use = tally_.nodes();
  v.nodes.resize(nodes_.size());
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    const engine::Node& node = cluster_.base.nodes[n];
    const NodeInfo& info = nodes_[n];
    NodeMetrics& m = v.nodes[n];
    m.name = node.name;
    m.cpus = node.cpus;
    m.mem_mb = node.mem_mb;
    m.gpus = static_cast<std::int32_t>(node.gpus.size());
    if (n < use.size()) m.use = use[n];
    m.drain = info.admin == engine::NodeState::kDrain ||
              (info.cordoned && info.admin == engine::NodeState::kUp);
    m.down = info.admin == engine::NodeState::kDown;
    m.responding = info.responding;
  }
  std::set<std::string_view> drained_by_health;  // few: no walk of the nodes per name
  for (std::size_t n = 0; n < nodes_.size(); ++n)
    if (nodes_[n].health_drain) drained_by_health.insert(cluster_.base.nodes[n].name);
  for (const auto& [name, standing] : health_->nodes) {
    if (standing.results.reports == 0) continue;  // known only from a GPU record
    v.health.push_back({name, standing.results, drained_by_health.count(name) > 0});
  }
  v.partitions.reserve(cluster_.base.partitions.size());
  for (const engine::Partition& p : cluster_.base.partitions)
    v.partitions.push_back({p.name, p.nodes});
}

void Controller::RecordPassStats(const engine::Plan& plan, engine::PlanDetail detail,
                                 std::chrono::steady_clock::duration took, Time now) {
  std::uint64_t backfilled = 0;
  for (const engine::Start& s : plan.starts) backfilled += s.backfilled ? 1 : 0;
  stats_.RecordPass(detail == engine::PlanDetail::kFull,
                    std::chrono::duration_cast<std::chrono::nanoseconds>(took),
                    static_cast<std::uint64_t>(plan.jobs_tested),
                    plan.pending.size() + plan.starts.size(), plan.starts.size(), backfilled, now);
}

void Controller::JobEventLocked(const char* kind, const JobEntry& e, std::size_t array_tasks) {
  nlohmann::json ev = {{"time", clock_.Now()},
                       {"kind", kind},
                       {"job_id", e.id},
                       {"job", e.DisplayId()},
                       {"user", e.user},
                       {"uid", e.uid},
                       {"name", e.spec ? e.spec->name : ""},
                       {"partition", PartitionOfLocked(e)},
                       {"state", JobStateName(e.state)}};
  if (std::string_view(kind) == "started") {
    nlohmann::json nodes = nlohmann::json::array();
    for (const PlacedNode& p : e.placement) nodes.push_back(p.node);
    ev["nodes"] = std::move(nodes);
  }
  if (array_tasks > 0) {
    ev["array_job_id"] = e.array_job_id;
    ev["array_tasks"] = array_tasks;
  }
  if (std::string_view(kind) == "ended") {
    ev["exit_code"] = e.exit_code;
    ev["signal"] = e.signal;
  }
  if (std::string_view(kind) == "ended" || std::string_view(kind) == "requeued") {
    ev["reason"] = e.reason;
    // What ended the run (docs/health.md): user, oom, timeout, node, gpu, ...
    // The run that ended: a requeue has already counted the next one.
    const std::int64_t run =
        std::int64_t{e.restart_count} - (std::string_view(kind) == "requeued" ? 1 : 0);
    if (!e.failure_cause.empty() && e.failure_run == run) {
      ev["cause"] = e.failure_cause;
      ev["cause_detail"] = e.failure_detail;
      stats_.RecordFailure(e.failure_cause);  // one ended or requeued event per run
    }
  }
  event_log_.Append(std::move(ev));
}

void Controller::JobEndedLocked(const JobEntry& e) {
  stats_.RecordEnded(e.state == JobState::kCompleted   ? SchedStats::End::kCompleted
                     : e.state == JobState::kCancelled ? SchedStats::End::kCanceled
                                                       : SchedStats::End::kFailed);
  JobEventLocked("ended", e);
}

void Controller::NodeEventLocked(const char* kind, std::uint32_t node, const std::string& reason) {
  event_log_.Append({{"time", clock_.Now()},
                     {"kind", kind},
                     {"node", cluster_.base.nodes[node].name},
                     {"reason", reason}});
}

bool Controller::MaySeeDetails(const Caller& caller, const nlohmann::json& event) const {
  if (!event.contains("job_id") || IsOperator(caller.uid)) return true;
  return event.value("uid", std::uint32_t{0xFFFFFFFF}) == caller.uid;
}

}  // namespace lockstep::controller
