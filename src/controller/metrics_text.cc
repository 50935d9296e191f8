#include "controller/metrics_text.h"

#include <map>
#include <vector>

#include "controller/exposition.h"

namespace lockstep::controller {
namespace {

constexpr std::int64_t kMiB = 1 << 20;

// Slurm's per-state suffixes of slurm_jobs_*, slurm_partition_jobs_*, slurm_user_jobs_*, ...
struct StateSuffix {
  const char* suffix;
  JobState state;
  const char* help;
};
constexpr StateSuffix kStateSuffixes[] = {
    {"pending", JobState::kPending, "in Pending state"},
    {"running", JobState::kRunning, "in Running state"},
    {"completing", JobState::kCompleting, "in Completing state"},
    {"completed", JobState::kCompleted, "in Completed state"},
    {"failed", JobState::kFailed, "in Failed state"},
    {"cancelled", JobState::kCancelled, "in Cancelled state"},
    {"timeout", JobState::kTimeout, "in Timeout state"},
    {"node_failed", JobState::kNodeFail, "in Node Failed state"},
    {"preempted", JobState::kPreempted, "in Preempted state"},
    {"outofmemory", JobState::kOutOfMemory, "in Out of Memory state"},
    {"suspended", JobState::kSuspended, "in Suspended state"},
};

std::int64_t Finished(const JobCounts& c) {
  return c.total() - c.in(JobState::kPending) - c.in(JobState::kRunning) -
         c.in(JobState::kCompleting) - c.in(JobState::kSuspended);
}

// Every job count of Slurm's set, for one group or per label value: `prefix` "slurm_jobs"
// (no label) or "slurm_partition_jobs" with label "partition", and so on.
void JobCountFamilies(Exposition& x, const std::string& prefix, std::string_view label,
                      const std::map<std::string, JobCounts>& by) {
  auto family = [&](const std::string& name, const std::string& help, auto value) {
    x.Family(name, "gauge", help);
    for (const auto& [key, counts] : by) {
      if (label.empty())
        x.Sample(name, value(counts));
      else
        x.Sample(name, {label, key}, value(counts));
    }
  };
  family(prefix, "Total number of jobs", [](const JobCounts& c) { return c.total(); });
  for (const StateSuffix& s : kStateSuffixes)
    family(prefix + "_" + s.suffix, std::string("Number of jobs ") + s.help,
           [&](const JobCounts& c) { return c.in(s.state); });
  family(prefix + "_hold", "Number of jobs in Hold state",
         [](const JobCounts& c) { return c.held; });
  family(prefix + "_finished", "Number of finished jobs", Finished);
  family(prefix + "_cpus_alloc", "Total number of CPUs allocated by jobs",
         [](const JobCounts& c) { return c.cpus_alloc; });
  family(prefix + "_memory_alloc", "Total memory bytes allocated by jobs",
         [](const JobCounts& c) { return c.mem_alloc_mb * kMiB; });
  family(prefix + "_nodes_alloc", "Total number of nodes allocated by jobs",
         [](const JobCounts& c) { return c.nodes_alloc; });
}

std::map<std::string, JobCounts> CountsBy(const MetricsView& v, std::string JobGroup::*key) {
  std::map<std::string, JobCounts> by;
  for (const JobGroup& g : v.groups) by[g.*key].Add(g.counts);
  return by;
}

void GpuGauge(Exposition& x, const char* name, const char* help, std::string_view label,
              const std::map<std::string, JobCounts>& by) {
  x.Family(name, "gauge", help);
  for (const auto& [key, c] : by) x.Sample(name, {label, key}, c.gpus_alloc);
}

void Jobs(Exposition& x, const MetricsView& v) {
  std::map<std::string, JobCounts> all{{"", {}}};
  for (const JobGroup& g : v.groups) all[""].Add(g.counts);
  JobCountFamilies(x, "slurm_jobs", "", all);
  x.Family("slurm_jobs_gpus_alloc", "gauge", "Total number of GPUs allocated by jobs");
  x.Sample("slurm_jobs_gpus_alloc", all[""].gpus_alloc);
  x.Family("lockstep_queue_wait_seconds", "histogram",
           "Time from submission to start of the jobs started, by partition and GPU count class");
  for (const auto& [key, r] : v.stats.queue_wait)
    x.Histogram("lockstep_queue_wait_seconds", {{"partition", key.first}, {"gpus", key.second}}, r);
}

void JobsUsersAccounts(Exposition& x, const MetricsView& v) {
  const auto users = CountsBy(v, &JobGroup::user);
  const auto accounts = CountsBy(v, &JobGroup::account);
  JobCountFamilies(x, "slurm_user_jobs", "username", users);
  JobCountFamilies(x, "slurm_account_jobs", "account", accounts);
  GpuGauge(x, "lockstep_user_gpus_alloc", "GPUs allocated to the running jobs of the user",
           "username", users);
  GpuGauge(x, "lockstep_account_gpus_alloc", "GPUs allocated to the running jobs of the account",
           "account", accounts);
}

// A node's state as Slurm counts it: one base state, and flags.
struct NodeClass {
  bool idle = false, alloc = false, mixed = false, down = false;
  bool drain = false, drained = false, draining = false, completing = false, noresp = false;
};

NodeClass ClassOf(const NodeMetrics& n) {
  NodeClass c;
  const bool busy = n.use.jobs > 0;
  const bool full = busy && (n.use.cpus >= n.cpus || (n.gpus > 0 && n.use.gpus >= n.gpus));
  c.down = n.down || !n.responding;
  c.noresp = !n.responding;
  c.alloc = !c.down && full;
  c.mixed = !c.down && busy && !full;
  c.idle = !c.down && !busy;
  c.drain = n.drain;
  c.drained = n.drain && !busy;
  c.draining = n.drain && busy;
  c.completing = n.use.completing > 0;
  return c;
}

void NodeStateCounts(Exposition& x, const MetricsView& v) {
  struct Count {
    const char* name;
    bool NodeClass::*flag;
    const char* help;
  };
  static constexpr Count kCounts[] = {
      {"slurm_nodes_idle", &NodeClass::idle, "Number of nodes in Idle state"},
      {"slurm_nodes_alloc", &NodeClass::alloc, "Number of nodes in Allocated state"},
      {"slurm_nodes_mixed", &NodeClass::mixed, "Number of nodes in Mixed state"},
      {"slurm_nodes_down", &NodeClass::down, "Number of nodes in Down state"},
      {"slurm_nodes_drain", &NodeClass::drain, "Number of nodes with Drain flag"},
      {"slurm_nodes_drained", &NodeClass::drained, "Number of drained nodes"},
      {"slurm_nodes_draining", &NodeClass::draining,
       "Number of nodes in draining condition (Drain state with active jobs)"},
      {"slurm_nodes_completing", &NodeClass::completing, "Number of nodes with Completing flag"},
      {"slurm_nodes_noresp", &NodeClass::noresp, "Number of nodes with Not Responding flag"},
  };
  std::vector<NodeClass> classes;
  classes.reserve(v.nodes.size());
  for (const NodeMetrics& n : v.nodes) classes.push_back(ClassOf(n));
  x.Gauge("slurm_nodes", "Total number of nodes", static_cast<std::int64_t>(v.nodes.size()));
  for (const Count& c : kCounts) {
    std::int64_t k = 0;
    for (const NodeClass& nc : classes) k += nc.*c.flag ? 1 : 0;
    x.Gauge(c.name, c.help, k);
  }
}

void Nodes(Exposition& x, const MetricsView& v) {
  NodeStateCounts(x, v);
  auto per_node = [&](const char* name, const char* help, auto value) {
    x.Family(name, "gauge", help);
    for (const NodeMetrics& n : v.nodes) x.Sample(name, {"node", n.name}, value(n));
  };
  using N = const NodeMetrics&;
  per_node("slurm_node_cpus", "Total number of cpus in the node",
           [](N n) { return std::int64_t{n.cpus}; });
  per_node("slurm_node_cpus_alloc", "Allocated cpus in the node", [](N n) { return n.use.cpus; });
  per_node("slurm_node_cpus_idle", "Idle cpus in the node",
           [](N n) { return std::max<std::int64_t>(n.cpus - n.use.cpus, 0); });
  per_node("slurm_node_gpus", "Total number of GPUs in the node",
           [](N n) { return std::int64_t{n.gpus}; });
  per_node("slurm_node_gpus_alloc", "Allocated GPUs in the node", [](N n) { return n.use.gpus; });
  per_node("slurm_node_memory_bytes", "Total memory in bytes of the node",
           [](N n) { return n.mem_mb * kMiB; });
  per_node("slurm_node_memory_alloc_bytes", "Bytes allocated to jobs in the node",
           [](N n) { return n.use.mem_mb * kMiB; });
  x.Family("lockstep_agent_heartbeat_age_seconds", "gauge",
           "Seconds since the node agent was last heard of");
  for (const AgentHeartbeat& h : v.heartbeats)
    x.Sample("lockstep_agent_heartbeat_age_seconds", {"agent", h.agent}, h.age_seconds);
  RenderHealthMetrics(x, v.health);
}

void Partitions(Exposition& x, const MetricsView& v) {
  x.Gauge("slurm_partitions", "Total number of partitions",
          static_cast<std::int64_t>(v.partitions.size()));
  std::map<std::string, JobCounts> jobs;
  for (const PartitionMetrics& p : v.partitions) jobs[p.name];
  for (const JobGroup& g : v.groups) jobs[g.partition].Add(g.counts);
  JobCountFamilies(x, "slurm_partition_jobs", "partition", jobs);
  GpuGauge(x, "lockstep_partition_gpus_alloc",
           "GPUs allocated to the running jobs of the partition", "partition", jobs);
  auto per_partition = [&](const char* name, const char* help, auto value) {
    x.Family(name, "gauge", help);
    for (const PartitionMetrics& p : v.partitions) {
      std::int64_t sum = 0;
      for (std::uint32_t n : p.nodes) sum += value(v.nodes[n]);
      x.Sample(name, {"partition", p.name}, sum);
    }
  };
  using N = const NodeMetrics&;
  per_partition("slurm_partition_nodes", "Partition total nodes", [](N) { return 1; });
  per_partition("slurm_partition_cpus", "Partition total cpus",
                [](N n) { return std::int64_t{n.cpus}; });
  per_partition("slurm_partition_nodes_cpus_alloc", "Number of allocated cpus",
                [](N n) { return n.use.cpus; });
  per_partition("slurm_partition_nodes_cpus_idle", "Number of idle CPUs on all nodes",
                [](N n) { return std::max<std::int64_t>(n.cpus - n.use.cpus, 0); });
  per_partition("slurm_partition_nodes_mem_tot", "Total amount of memory of all nodes",
                [](N n) { return n.mem_mb * kMiB; });
  per_partition("slurm_partition_nodes_mem_alloc", "Amount of allocated memory of all nodes",
                [](N n) { return n.use.mem_mb * kMiB; });
  per_partition("lockstep_partition_gpus", "Partition total GPUs",
                [](N n) { return std::int64_t{n.gpus}; });
  per_partition("slurm_partition_nodes_idle", "Nodes in Idle state",
                [](N n) { return ClassOf(n).idle ? 1 : 0; });
  per_partition("slurm_partition_nodes_alloc", "Nodes allocated",
                [](N n) { return ClassOf(n).alloc ? 1 : 0; });
  per_partition("slurm_partition_nodes_mixed", "Nodes in Mixed state",
                [](N n) { return ClassOf(n).mixed ? 1 : 0; });
  per_partition("slurm_partition_nodes_down", "Nodes in Down state",
                [](N n) { return ClassOf(n).down ? 1 : 0; });
  per_partition("slurm_partition_nodes_drain", "Nodes in Drain state",
                [](N n) { return ClassOf(n).drain ? 1 : 0; });
}

void Cycles(Exposition& x, const CycleStats& c, bool backfill) {
  const std::int64_t n = static_cast<std::int64_t>(c.cycles);
  auto mean = [&](std::uint64_t total) { return n ? static_cast<std::int64_t>(total) / n : 0; };
  auto g = [&](const char* name, const char* help, std::uint64_t value) {
    x.Gauge(name, help, static_cast<std::int64_t>(value));
  };
  if (!backfill) {
    g("slurm_schedule_cycle_cnt", "Scheduling cycle count", c.cycles);
    g("slurm_schedule_cycle_last", "Last scheduling cycle time (microseconds)", c.last_us);
    g("slurm_schedule_cycle_max", "Max scheduling cycle time (microseconds)", c.max_us);
    g("slurm_schedule_cycle_tot", "Sum of scheduling cycle times (microseconds)", c.total_us);
    g("slurm_schedule_cycle_depth", "Processed jobs depth total", c.total_depth);
    g("slurm_schedule_queue_len", "Jobs pending queue length", c.last_queue_len);
    g("slurm_sched_mean_cycle", "Mean scheduling cycle time (microseconds)", mean(c.total_us));
    g("slurm_sched_mean_depth_cycle", "Mean depth of scheduling cycles", mean(c.total_depth));
    return;
  }
  g("slurm_bf_cycle_cnt", "Backfill cycle count", c.cycles);
  g("slurm_bf_cycle_last", "Last backfill cycle time (microseconds)", c.last_us);
  g("slurm_bf_cycle_max", "Max backfill cycle time (microseconds)", c.max_us);
  g("slurm_bf_cycle_tot", "Sum of backfill cycle times (microseconds)", c.total_us);
  g("slurm_bf_mean_cycle", "Mean backfill cycle time (microseconds)", mean(c.total_us));
  g("slurm_bf_last_depth", "Last backfill depth", c.last_depth);
  g("slurm_bf_depth_tot", "Sum of backfill job depths", c.total_depth);
  g("slurm_bf_depth_mean", "Mean backfill cycle depth", mean(c.total_depth));
  g("slurm_bf_queue_len", "Backfill queue length", c.last_queue_len);
  g("slurm_bf_queue_len_tot", "Sum of backfill queue lengths", c.total_queue_len);
  g("slurm_bf_queue_len_mean", "Mean backfill queue length", mean(c.total_queue_len));
  g("slurm_bf_when_last_cycle", "Timestamp of last backfill cycle",
    static_cast<std::uint64_t>(c.last_when));
  g("slurm_last_backfilled_jobs", "Backfilled jobs since last cycle", c.last_backfilled);
}

void Scheduler(Exposition& x, const MetricsView& v) {
  const StatsReading& s = v.stats;
  Cycles(x, s.main, false);
  Cycles(x, s.backfill, true);
  x.Gauge("slurm_backfilled_jobs", "Total backfilled jobs since lockstepd started",
          static_cast<std::int64_t>(s.main.backfilled + s.backfill.backfilled));
  auto g = [&](const char* name, const char* help, std::uint64_t value) {
    x.Gauge(name, help, static_cast<std::int64_t>(value));
  };
  g("slurm_sdiag_jobs_submitted", "Jobs submitted since lockstepd started", s.jobs_submitted);
  g("slurm_sdiag_jobs_started", "Jobs started since lockstepd started", s.jobs_started);
  g("slurm_sdiag_jobs_completed", "Jobs completed since lockstepd started", s.jobs_completed);
  g("slurm_sdiag_jobs_canceled", "Jobs canceled since lockstepd started", s.jobs_canceled);
  g("slurm_sdiag_jobs_failed", "Jobs failed since lockstepd started", s.jobs_failed);
  x.Family("lockstep_job_failures", "gauge",
           "Runs that did not complete since lockstepd started, by cause (user, oom, timeout, "
           "cancelled, preempted, node, gpu, launch: docs/health.md)");
  for (const auto& [cause, count] : s.failures_by_cause)
    x.Sample("lockstep_job_failures", {"cause", cause}, static_cast<std::int64_t>(count));
  x.Family("lockstep_scheduling_pass_seconds", "histogram",
           "Time the engine took to plan one scheduling pass, by kind of pass (quick on "
           "events, full periodically)");
  x.Histogram("lockstep_scheduling_pass_seconds", {{"pass", "quick"}}, s.pass_latency[0]);
  x.Histogram("lockstep_scheduling_pass_seconds", {{"pass", "full"}}, s.pass_latency[1]);
  x.Family("lockstep_api_request_seconds", "histogram",
           "Time from a request's arrival at its route to its answer, by route");
  for (const auto& [route, r] : s.api_latency)
    x.Histogram("lockstep_api_request_seconds", {{"route", route}}, r);
  x.Family("lockstep_store_commit_seconds", "histogram",
           "Time of one store transaction, from BEGIN to the end of COMMIT (its fsync)");
  x.Histogram("lockstep_store_commit_seconds", {}, v.store_commit);
}

}  // namespace

std::optional<MetricsEndpoint> MetricsEndpointOf(std::string_view path) {
  path = path.substr(0, path.find('?'));
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path == "/metrics") return MetricsEndpoint::kAll;
  if (path == "/metrics/jobs") return MetricsEndpoint::kJobs;
  if (path == "/metrics/nodes") return MetricsEndpoint::kNodes;
  if (path == "/metrics/partitions") return MetricsEndpoint::kPartitions;
  if (path == "/metrics/scheduler") return MetricsEndpoint::kScheduler;
  if (path == "/metrics/jobs-users-accts") return MetricsEndpoint::kJobsUsersAccts;
  return std::nullopt;
}

std::string RenderMetrics(const MetricsView& v, MetricsEndpoint e) {
  Exposition x;
  x.text().reserve(256 + v.nodes.size() * 400);
  const bool all = e == MetricsEndpoint::kAll;
  if (all || e == MetricsEndpoint::kJobs) Jobs(x, v);
  if (all || e == MetricsEndpoint::kNodes) Nodes(x, v);
  if (all || e == MetricsEndpoint::kPartitions) Partitions(x, v);
  if (all || e == MetricsEndpoint::kScheduler) Scheduler(x, v);
  if (all || e == MetricsEndpoint::kJobsUsersAccts) JobsUsersAccounts(x, v);
  return std::move(x.text());
}

}  // namespace lockstep::controller
