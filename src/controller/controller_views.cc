// What the API shows: jobs, nodes, partitions, accounting, priorities, "why", and job steps.
#include <algorithm>
#include <bit>
#include <charconv>
#include <thread>

#include "common/hostlist.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/job_convert.h"
#include "controller/job_env.h"
#include "engine/request.h"

namespace lockstep::controller {

namespace {

// What a step may use, for scontrol show steps' CPUs= and TRES=: its job's CPUs, memory and GPUs
// on the step's nodes (a lockstep step shares its job's allocation there).
void AddStepResources(const std::vector<PlacedNode>& placement,
                      const std::vector<std::string>& step_nodes, nlohmann::json& step) {
  std::int64_t cpus = 0, mem = 0, gpus = 0;
  for (const PlacedNode& p : placement) {
    if (std::find(step_nodes.begin(), step_nodes.end(), p.node) == step_nodes.end()) continue;
    cpus += p.cpus;
    mem += p.mem_mb;
    gpus += std::popcount(p.gpus);
  }
  step["cpus"] = cpus;
  step["mem_mb"] = mem;
  step["gpus"] = gpus;
}

// "gres/gpu:h100:2" for `count` GPUs of the spec's type; "" for none.
std::string GpuTres(const jobspec::JobSpec& s, std::int32_t count) {
  if (count <= 0) return "";
  return "gres/gpu:" + (s.gpu_type.empty() ? "" : s.gpu_type + ":") + std::to_string(count);
}

// Slurm's Gres= and GresUsed= of a node: each GPU type with its count, in the order of its first
// device ("gpu:a100_3g.40gb:8,gpu:a100_1g.10gb:28"), and each with the devices of `used`
// ("gpu:a100_3g.40gb:2(IDX:0,1),gpu:a100_1g.10gb:0(IDX:N/A)"). A MIG node has a type per
// profile.
std::pair<std::string, std::string> GresText(const engine::Node& node,
                                             const std::vector<std::string>& types,
                                             std::uint64_t used) {
  std::vector<std::uint32_t> order;
  for (const engine::GpuDevice& d : node.gpus)
    if (std::find(order.begin(), order.end(), d.type) == order.end()) order.push_back(d.type);
  std::string gres, gres_used;
  for (std::uint32_t t : order) {
    const std::string name = "gpu:" + (t < types.size() ? types[t] : std::string("gpu")) + ":";
    int count = 0, in_use = 0;
    std::string idx;
    for (const engine::GpuDevice& d : node.gpus) {
      if (d.type != t) continue;
      ++count;
      if (d.index < 64 && (used >> d.index & 1)) {
        ++in_use;
        idx += (idx.empty() ? "" : ",") + std::to_string(d.index);
      }
    }
    gres += (gres.empty() ? "" : ",") + name + std::to_string(count);
    gres_used += (gres_used.empty() ? "" : ",") + name + std::to_string(in_use) + "(IDX:" +
                 (idx.empty() ? "N/A" : idx) + ")";
  }
  return {gres, gres_used};
}

nlohmann::json SecondsOrNull(Seconds s) {
  return s >= kUnlimited ? nlohmann::json(nullptr) : nlohmann::json(s);
}

std::string DependencyText(const jobspec::JobSpec& s) {
  static const char* kNames[] = {"after",      "afterany",  "afterok",
                                 "afternotok", "singleton", "aftercorr"};
  std::string out;
  for (const jobspec::DependencySpec& d : s.dependencies) {
    if (!out.empty()) out += s.dependencies_any ? "?" : ",";
    out += kNames[static_cast<int>(d.type)];
    if (d.type != jobspec::DependencyType::kSingleton) out += ":" + std::to_string(d.job);
    if (d.delay_minutes > 0) out += "+" + std::to_string(d.delay_minutes);
  }
  return out;
}

bool Matches(const nlohmann::json& filter, const char* key, const std::string& value) {
  if (!filter.contains(key) || filter[key].get<std::string>().empty()) return true;
  std::string want = filter[key].get<std::string>();
  std::size_t start = 0;
  while (start <= want.size()) {
    std::size_t comma = want.find(',', start);
    if (want.substr(start, comma - start) == value) return true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return false;
}

// The job ids of the filter's "job" ("40,41"): nullopt when it names none (every job). A word
// that is not an id names no job.
std::optional<std::vector<JobId>> NamedJobIds(const nlohmann::json& filter) {
  if (!filter.contains("job") || !filter["job"].is_string() || filter["job"].get<std::string>().empty())
    return std::nullopt;
  std::vector<JobId> ids;
  const std::string text = filter["job"].get<std::string>();
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string word = text.substr(start, comma - start);
    JobId id = 0;
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (ec == std::errc() && end == word.data() + word.size() && !word.empty()) ids.push_back(id);
    start = comma + 1;
  }
  return ids;
}

// {"jobs": [...]} as nlohmann's dump() writes it, from the jobs `produce` emits, each written
// out as it comes: a list of 100,000 jobs never becomes one tree of 100,000 objects.
std::string JobsDocument(const std::function<void(const Controller::JobSink&)>& produce) {
  std::string out = "{\"jobs\":[";
  bool first = true;
  produce([&](nlohmann::json job) {
    if (!first) out += ',';
    first = false;
    out += job.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  });
  out += "]}";
  return out;
}

}  // namespace

nlohmann::json Controller::JobJsonLocked(const JobEntry& e) const {
  engine::Job j = ToEngineJob(e, const_cast<config::ClusterConfig&>(cluster_));
  const engine::Partition& part = cluster_.base.partitions[j.partition];
  engine::JobShape shape = engine::ShapeOf(j, part);
  std::vector<std::string> nodes;
  std::int64_t cpus = 0, gpus = 0, mem = 0;
  for (const PlacedNode& p : e.placement) {
    nodes.push_back(p.node);
    cpus += p.cpus;
    gpus += std::popcount(p.gpus);
    mem += p.mem_mb;
  }
  if (e.placement.empty()) {
    cpus = std::int64_t{shape.per_node.cpus} * shape.nodes;
    gpus = std::int64_t{shape.per_node.gpus} * shape.nodes;
    mem = shape.per_node.mem_mb * shape.nodes;
  }
  nlohmann::json out = {
      {"job_id", e.id},
      {"name", e.spec->name},
      {"user", e.user},
      {"uid", e.uid},
      {"gid", e.gid},
      {"account", e.spec->account.empty() ? "root" : e.spec->account},
      {"partition", part.name},
      {"qos", j.qos < cluster_.base.qos.size() ? cluster_.base.qos[j.qos].name : "normal"},
      {"reservation", e.spec->reservation},
      {"comment", e.comment},
      {"state", e.ShownState()},
      {"reason", e.state != JobState::kPending ? "None"
                 : e.requeue_held              ? "job requeued in held state"  // Slurm's words
                                               : e.reason},
      {"nodes", CompressHostlist(nodes)},
      {"node_count", e.placement.empty() ? shape.nodes : static_cast<int>(nodes.size())},
      {"cpus", cpus},
      {"gpus", gpus},
      {"gpu_type", e.spec->gpu_type},
      {"mem_mb", mem},
      {"tasks", std::max(1, j.req.ntasks)},
      // As Slurm keeps them: --gres/--gpus-per-node per node, -G/--gpus per job,
      // --gpus-per-task per task (squeue %b is the per-node one alone; issue 37).
      {"tres_per_node", GpuTres(*e.spec, e.spec->gpus_per_node)},
      {"tres_per_job", GpuTres(*e.spec, e.spec->gpus)},
      {"tres_per_task", GpuTres(*e.spec, e.spec->gpus_per_task)},
      {"time_limit", SecondsOrNull(shape.duration)},
      {"submit_time", e.submit_time},
      {"eligible_time", std::max(e.submit_time, e.spec->begin_time)},
      {"start_time", e.start_time},
      {"end_time", e.end_time},
      {"expected_start", e.state == JobState::kPending ? e.expected_start : e.start_time},
      {"priority", e.state == JobState::kPending ? e.priority : 0},
      {"exit_code", e.exit_code},
      {"signal", e.signal},
      {"work_dir", e.spec->work_dir},
      {"submit_line", e.spec->submit_line},
      {"dependency", DependencyText(*e.spec)},
      {"restart_count", e.restart_count},
      {"requeue", e.spec->requeue.value_or(true)},
      {"nice", e.spec->nice},
      {"features", e.spec->constraint},
      {"req_nodes", e.spec->nodelist},
      {"exc_nodes", e.spec->exclude},
      {"batch_host", nodes.empty() ? "" : nodes.front()},
      {"command", e.spec->name},
      // scontrol show job's StdOut=/StdErr=: the current run's files, patterns expanded.
      {"stdout", OutputPathLocked(e, e.restart_count)},
  };
  // scontrol show job's Switches=COUNT@WAIT: what the scheduler holds the job to.
  if (e.spec->max_switches > 0) {
    out["max_switches"] = e.spec->max_switches;
    out["switches_wait"] = SwitchesWait(*e.spec, cluster_);
  }
  if (e.spec->error.empty()) {
    out["stderr"] = out["stdout"];
  } else {
    JobEntry for_error = e;
    auto spec = std::make_shared<jobspec::JobSpec>(*e.spec);
    spec->output = e.spec->error;
    for_error.spec = spec;
    out["stderr"] = OutputPathLocked(for_error, e.restart_count);
  }
  if (e.is_array_task()) {
    out["array_job_id"] = e.array_job_id;
    out["array_task_id"] = e.array_task_id;
    // The array's "%N": squeue prints a pending remainder as 40_[3-8%2].
    if (j.array_max_running > 0) out["array_max_running"] = j.array_max_running;
  }
  // scontrol's OverSubscribe and squeue's %h: NO for whole nodes, USER for --exclusive=user.
  out["exclusive"] = e.spec->exclusive;
  if (e.spec->exclusive_user) out["exclusive_user"] = true;
  if (e.is_het_component()) {
    out["het_job_id"] = e.het_job_id;
    out["het_job_offset"] = e.het_offset;
    out["het_job_id_set"] = e.het_size == 1 ? std::to_string(e.het_job_id)
                                            : std::to_string(e.het_job_id) + "-" +
                                                  std::to_string(e.het_job_id + e.het_size - 1);
  }
  if (!e.spec->external.empty()) out["external"] = e.spec->external;  // a pod group's job
  // scontrol suspend: when the current suspension began (0: none) and the run's seconds
  // suspended before it (Slurm's SuspendTime and SecsPreSuspend); its time used leaves them out.
  out["suspend_time"] = e.suspend_time;
  out["suspended_seconds"] = e.suspended_seconds;
  // Why its last run did not complete (docs/health.md); null while none has failed.
  out["failure"] = e.failure_cause.empty()
                       ? nlohmann::json()
                       : nlohmann::json{{"cause", e.failure_cause},
                                        {"detail", e.failure_detail},
                                        {"run", e.failure_run}};
  // An application XID seen on one of the running job's GPUs: the evidence if it fails.
  if (!e.app_evidence.empty()) out["health_evidence"] = e.app_evidence;
  nlohmann::json steps = nlohmann::json::array();
  if (e.start_time > 0) {
    steps.push_back({{"step_id", "batch"},
                     {"name", "batch"},
                     {"state", JobStateName(e.state)},
                     {"exit_code", e.exit_code},
                     {"signal", e.signal},
                     {"start_time", e.start_time},
                     {"end_time", e.end_time},
                     {"nodes", nodes.empty() ? "" : nodes.front()}});
    if (!nodes.empty()) AddStepResources(e.placement, {nodes.front()}, steps.back());
  }
  for (auto it = steps_.lower_bound({e.id, 0}); it != steps_.end() && it->first.first == e.id;
       ++it) {
    const StepInfo& s = *it->second;
    steps.push_back({{"step_id", s.step},
                     {"name", s.name},
                     {"state", s.state},
                     {"exit_code", s.exit_code},
                     {"signal", s.signal},
                     {"start_time", s.start_time},
                     {"end_time", s.end_time},
                     {"nodes", CompressHostlist(s.nodes)},
                     {"ntasks", s.ntasks},
                     {"srun_host", s.srun_host},
                     {"srun_pid", s.srun_pid}});
    AddStepResources(e.placement, s.nodes, steps.back());
  }
  out["steps"] = std::move(steps);
  return out;
}

void Controller::VisitJobsInBatches(
    const std::function<void(JobId, const JobEntry&)>& visit) const {
  JobId next = 0;
  for (bool more = true; more;) {
    {
      HeldLock lock(*this);
      auto it = jobs_.lower_bound(next);
      for (std::size_t n = 0; it != jobs_.end() && n < kJobsPerHold; ++it, ++n)
        visit(it->first, it->second);
      more = it != jobs_.end();
      if (more) next = it->first;
    }
    if (more && between_list_batches_for_test_) between_list_batches_for_test_();
    // std::mutex is not fair: a thread that unlocks and at once locks again can keep a waiting
    // submission out for the whole listing (measured: a second). Yielding lets a waiter in.
    if (more) std::this_thread::yield();
  }
}

void Controller::ListJobsTo(const nlohmann::json& filter, const JobSink& emit) const {
  // Query values arrive as strings: "all=1" lists finished jobs too.
  bool all_states = filter.contains("all") && filter["all"] != "0" && filter["all"] != false;
  auto visit = [&](JobId id, const JobEntry& e) {
    // squeue shows what is queued or running (and what just ended: COMPLETING).
    if (!all_states && IsFinished(e.state) && !filter.contains("state")) return;
    bool job_named =
        Matches(filter, "job", std::to_string(id)) ||
        (e.is_array_task() && Matches(filter, "job", std::to_string(e.array_job_id))) ||
        (e.is_het_component() && Matches(filter, "job", std::to_string(e.het_job_id)));
    if (!job_named || !Matches(filter, "user", e.user) ||
        !Matches(filter, "state", e.ShownState()))
      return;
    nlohmann::json j = JobJsonLocked(e);
    if (!Matches(filter, "partition", j["partition"].get<std::string>())) return;
    emit(std::move(j));
  };
  // Jobs named by id (squeue -j, scontrol show job): looked up, so that the answer costs the
  // same with ten jobs held or a million.
  const std::optional<std::vector<JobId>> named = NamedJobIds(filter);
  if (!named) VisitJobsInBatches(visit);
  HeldLock lock(*this);
  if (named) {
    std::set<JobId> seen;
    for (JobId id : *named) {
      // The job itself, or an array's tasks or a heterogeneous job's components: their ids
      // follow the first's, one block.
      for (auto it = jobs_.lower_bound(id); it != jobs_.end(); ++it) {
        if (it->first != id && it->second.array_job_id != id && it->second.het_job_id != id)
          break;
        if (seen.insert(it->first).second) visit(it->first, it->second);
      }
    }
  }
  // Each array's tasks not split off: one record, as Slurm's squeue shows 40_[5-3999999].
  auto add_rest = [&](const PendingArray& a) {
    const JobEntry& t = a.tmpl();
    if (!Matches(filter, "job", std::to_string(a.array_id())) || !Matches(filter, "user", t.user) ||
        !Matches(filter, "state", JobStateName(t.state)))
      return;
    nlohmann::json j = PendingArrayJsonLocked(a);
    if (Matches(filter, "partition", j["partition"].get<std::string>())) emit(std::move(j));
  };
  auto rests = [&](const std::map<JobId, PendingArray>& arrays) {
    if (!named) {
      for (const auto& [id, a] : arrays) add_rest(a);
      return;
    }
    for (JobId id : *named)
      if (auto a = arrays.find(id); a != arrays.end()) add_rest(a->second);
  };
  rests(pending_arrays_);
  if (all_states || filter.contains("state")) rests(cancelled_arrays_);
}

nlohmann::json Controller::ListJobs(const nlohmann::json& filter) const {
  nlohmann::json jobs = nlohmann::json::array();
  ListJobsTo(filter, [&](nlohmann::json j) { jobs.push_back(std::move(j)); });
  return {{"jobs", std::move(jobs)}};
}

std::string Controller::ListJobsText(const nlohmann::json& filter) const {
  return JobsDocument([&](const JobSink& emit) { ListJobsTo(filter, emit); });
}

Result<nlohmann::json> Controller::ShowJob(JobId id) const {
  HeldLock lock(*this);
  auto it = jobs_.find(id);
  if (it != jobs_.end()) return JobJsonLocked(it->second);
  // A task still in its array's record: shown as it would be once split off.
  if (const PendingArray* a = PendingArrayOfLocked(id)) return JobJsonLocked(a->EntryOf(id));
  return NotFound("invalid job id specified: " + std::to_string(id));
}

nlohmann::json Controller::Accounting(const nlohmann::json& filter) const {
  nlohmann::json jobs = nlohmann::json::array();
  AccountingTo(filter, [&](nlohmann::json j) { jobs.push_back(std::move(j)); });
  return {{"jobs", std::move(jobs)}};
}

std::string Controller::AccountingText(const nlohmann::json& filter) const {
  return JobsDocument([&](const JobSink& emit) { AccountingTo(filter, emit); });
}

Result<nlohmann::json> Controller::Why(JobId id) const {
  {
    HeldLock lock(*this);
    auto it = jobs_.find(id);
    if (it != jobs_.end()) return WhyLocked(it->second);
  }
  // Purged after MinJobAge (or never split off its array): as stored, nothing ahead of it.
  Result<nlohmann::json> old = JobRecord(id);
  if (old.ok()) (*old)["ahead"] = nlohmann::json::array();
  return old;
}

nlohmann::json Controller::WhyLocked(const JobEntry& job) const {
  const JobId id = job.id;
  nlohmann::json out = JobJsonLocked(job);
  for (const auto& [jid, b] : last_priorities_) {
    if (jid != id) continue;
    out["priority_factors"] = {{"age", b.age},           {"fairshare", b.fairshare},
                               {"job_size", b.job_size}, {"partition", b.partition},
                               {"qos", b.qos},           {"tres", b.tres},
                               {"nice", b.nice}};
  }
  auto p = last_pending_.find(id);
  if (p != last_pending_.end()) {
    out["reserved"] = p->second.reserved;
    out["blocked_by"] = p->second.blocked_by;
    std::vector<std::string> reserved_nodes;
    for (const engine::NodeAllocation& a : p->second.reservation.nodes)
      reserved_nodes.push_back(cluster_.base.nodes[a.node].name);
    out["reserved_nodes"] = CompressHostlist(reserved_nodes);
  }
  // Jobs ahead of it in the queue: pending, higher priority, same partition.
  nlohmann::json ahead = nlohmann::json::array();
  for (const auto& [jid, e] : jobs_)
    if (e.state == JobState::kPending && jid != id && e.spec->partition == job.spec->partition &&
        e.priority > job.priority)
      ahead.push_back(jid);
  out["ahead"] = std::move(ahead);
  return out;
}

nlohmann::json Controller::Priorities() const {
  // What the answer needs is copied under the lock (a few bytes a job); the JSON, about 3 us a
  // job, is built after it: sprio over 100,000 pending jobs does not hold up the controller.
  struct Row {
    JobId id;
    std::string user, account, partition;
    engine::PriorityBreakdown b;
  };
  std::vector<Row> rows;
  {
    HeldLock lock(*this);
    rows.reserve(last_priorities_.size());
    for (const auto& [id, b] : last_priorities_) {
      auto it = jobs_.find(id);
      if (it == jobs_.end() || it->second.state != JobState::kPending) continue;
      const JobEntry& e = it->second;
      rows.push_back({id, e.user, e.spec->account.empty() ? "root" : e.spec->account,
                      e.spec->partition.empty()
                          ? cluster_.base.partitions[cluster_.default_partition].name
                          : e.spec->partition,
                      b});
    }
  }
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows)
    out.push_back({{"job_id", r.id},
                   {"user", r.user},
                   {"account", r.account},
                   {"partition", r.partition},
                   {"priority", r.b.total},
                   {"age", r.b.age},
                   {"fairshare", r.b.fairshare},
                   {"job_size", r.b.job_size},
                   {"partition_factor", r.b.partition},
                   {"qos", r.b.qos},
                   {"tres", r.b.tres},
                   {"nice", r.b.nice}});
  return {{"priorities", std::move(out)}};
}

nlohmann::json Controller::ListNodes() const {
  HeldLock lock(*this);
  std::vector<std::int32_t> cpus(nodes_.size(), 0);
  std::vector<std::int64_t> mem(nodes_.size(), 0);
  std::vector<std::uint64_t> gpus(nodes_.size(), 0);
  std::vector<bool> completing(nodes_.size(), false);
  for (const auto& [id, e] : jobs_) {
    if (!HoldsAllocation(e.state)) continue;
    for (const PlacedNode& p : e.placement) {
      std::uint32_t n = NodeIndexLocked(p.node);
      if (n == engine::kNone) continue;
      cpus[n] += p.cpus, mem[n] += p.mem_mb, gpus[n] |= p.gpus;
      if (e.state == JobState::kCompleting) completing[n] = true;
    }
  }
  // An idle node in a reservation in force shows it, as Slurm's: "maint" (MAINT) or "reserved".
  std::vector<std::string> reserved(nodes_.size());
  const Time now = clock_.Now();
  for (const auto& [name, r] : reservations_.all()) {
    if (!r.ActiveAt(now)) continue;
    for (const std::string& node : r.nodes)
      if (std::uint32_t n = NodeIndexLocked(node); n != engine::kNone && reserved[n] != "maint")
        reserved[n] = r.Has(reservation::kMaint) ? "maint" : "reserved";
  }
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    const engine::Node& node = cluster_.base.nodes[n];
    const NodeInfo& info = nodes_[n];
    bool busy = cpus[n] > 0 || gpus[n] != 0;
    bool full = cpus[n] >= node.cpus ||
                (gpus[n] != 0 && std::popcount(gpus[n]) >= static_cast<int>(node.gpus.size()));
    std::string state = completing[n]                   ? "completing"
                        : !busy && !reserved[n].empty() ? reserved[n]
                        : !busy                         ? "idle"
                        : full                          ? "allocated"
                                                        : "mixed";
    if (info.admin == engine::NodeState::kDrain) state = busy ? "draining" : "drained";
    if (info.admin == engine::NodeState::kDown) state = "down";
    // A backend's own view (Kubernetes): a cordon drains, NotReady is down, each with its reason.
    const bool cordoned = info.cordoned && info.admin == engine::NodeState::kUp;
    if (cordoned) state = busy ? "draining" : "drained";
    if (!info.responding) state = info.admin == engine::NodeState::kUp ? "down*" : state + "*";
    std::string reason = info.reason;
    if (reason.empty() && !info.responding && !info.down_reason.empty()) reason = info.down_reason;
    if (reason.empty() && cordoned) reason = "cordoned";
    std::string type = node.gpus.empty() || node.gpus[0].type >= cluster_.base.gpu_types.size()
                           ? ""
                           : cluster_.base.gpu_types[node.gpus[0].type];
    std::vector<std::string> parts, features;
    for (const engine::Partition& p : cluster_.base.partitions)
      if (std::find(p.nodes.begin(), p.nodes.end(), n) != p.nodes.end()) parts.push_back(p.name);
    for (std::size_t f = 0; f < cluster_.base.features.size(); ++f)
      if (node.features >> f & 1) features.push_back(cluster_.base.features[f]);
    std::string feat;
    for (const std::string& f : features) feat += (feat.empty() ? "" : ",") + f;
    const auto [gres, gres_used] = GresText(node, cluster_.base.gpu_types, gpus[n]);
    out.push_back(
        {{"name", node.name},
         {"state", state},
         {"reason", reason},
         {"reason_user", info.reason_user},
         {"reason_time", info.reason_time},
         {"cpus", node.cpus},
         {"cpus_alloc", cpus[n]},
         {"mem_mb", node.mem_mb},
         {"mem_alloc_mb", mem[n]},
         {"gpus", node.gpus.size()},
         {"gpus_alloc", std::popcount(gpus[n])},
         {"gpu_type", type},
         {"gres", gres},
         {"gres_used", gres_used},
         {"features", feat},
         {"partitions", parts},
         {"weight", node.weight},
         {"limits_enforced", LimitsEnforced(info.enforces_memory, info.enforces_cpus)}});
  }
  return {{"nodes", std::move(out)}};
}

nlohmann::json Controller::ListPartitions() const {
  HeldLock lock(*this);
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < cluster_.base.partitions.size(); ++i) {
    const engine::Partition& p = cluster_.base.partitions[i];
    std::vector<std::string> names;
    for (std::uint32_t n : p.nodes) names.push_back(cluster_.base.nodes[n].name);
    out.push_back({{"name", p.name},
                   {"default", i == cluster_.default_partition},
                   {"state", PartitionStateName(PartitionStateLocked(i))},
                   {"max_time", SecondsOrNull(p.max_time)},
                   {"default_time", SecondsOrNull(p.default_time)},
                   {"max_nodes", p.max_nodes},
                   {"nodes", CompressHostlist(names)},
                   {"node_count", names.size()},
                   {"priority_tier", p.priority_tier}});
  }
  return {{"partitions", std::move(out)}};
}

}  // namespace lockstep::controller
