// A backend other than lockstep's agents (backend.h): its nodes, and the ends of its jobs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/output_file.h"
#include "jobspec/output_pattern.h"

namespace lockstep::controller {

void Controller::AttachBackend(Backend* backend) {
  std::lock_guard<std::mutex> lock(mu_);
  backend_ = backend;
}

namespace {

// The engine's node for a report, with what others use taken away (their pods hold it).
engine::Node EngineNodeOf(const NodeReport& r, config::ClusterConfig& cluster) {
  engine::Node n;
  n.name = r.name;
  n.cpus = std::max(0, r.cpus - r.used_cpus);
  n.mem_mb = std::max<std::int64_t>(0, r.mem_mb - r.used_mem_mb);
  const int usable = std::max(0, static_cast<int>(r.gpus.size()) - r.used_gpus);
  for (int g = 0; g < usable && g < engine::kMaxDevicesPerNode; ++g)
    n.gpus.push_back({static_cast<std::uint16_t>(g), cluster.InternGpuType(r.gpus[g]), -1, ""});
  for (const std::string& f : r.features) {
    std::uint32_t bit = cluster.InternFeature(f);
    if (bit != engine::kNone) n.features |= std::uint64_t{1} << bit;
  }
  std::uint32_t parent = engine::kNone;
  for (const std::string& sw : r.switches) parent = cluster.InternSwitch(sw, parent);
  n.leaf_switch = parent;
  if (!r.block.empty()) n.block = cluster.InternBlock(r.block);
  return n;
}

bool SameResources(const engine::Node& a, const engine::Node& b) {
  if (a.cpus != b.cpus || a.mem_mb != b.mem_mb || a.features != b.features ||
      a.leaf_switch != b.leaf_switch || a.block != b.block || a.gpus.size() != b.gpus.size())
    return false;
  for (std::size_t g = 0; g < a.gpus.size(); ++g)
    if (a.gpus[g].type != b.gpus[g].type) return false;
  return true;
}

}  // namespace

void Controller::BackendNodes(const std::vector<NodeReport>& reports) {
  std::lock_guard<std::mutex> lock(mu_);
  Time now = WallNow();
  std::set<std::uint32_t> seen;
  for (const NodeReport& r : reports) {
    engine::Node node = EngineNodeOf(r, cluster_);
    node.features |= PlacementFeatureMaskLocked(r.name);
    std::uint32_t n = NodeIndexLocked(r.name);
    if (n == engine::kNone) {
      n = cluster_.AddNode(std::move(node));
      nodes_.emplace_back();
      cluster_changed_ = true;
      std::fprintf(stderr, "lockstepd: node %s joined\n", r.name.c_str());
    } else if (!SameResources(cluster_.base.nodes[n], node)) {
      cluster_.base.nodes[n] = std::move(node);
      cluster_changed_ = true;
    }
    seen.insert(n);
    NodeInfo& info = nodes_[n];
    info.agent = "backend";
    info.address = r.address;
    info.cordoned = r.cordoned;
    info.down_reason = r.ready ? "" : r.down_reason;
    if (info.responding && !r.ready) {
      info.responding = false;
      std::fprintf(stderr, "lockstepd: node %s down: %s\n", r.name.c_str(), r.down_reason.c_str());
      NodeLostLocked(n, now);
    }
    info.responding = r.ready;
  }
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    if (seen.count(n) || nodes_[n].agent != "backend" || !nodes_[n].responding) continue;
    nodes_[n].responding = false;
    nodes_[n].down_reason = "node deleted";
    NodeLostLocked(n, now);
  }
  RequestPassLocked();
}

std::uint64_t Controller::PlacementFeatureMaskLocked(const std::string& node) const {
  auto it = placement_masks_.find(node);
  return it == placement_masks_.end() ? 0 : it->second;
}

namespace {

using FeatureNodes = std::map<std::string, std::set<std::string>>;

// The bits of the features of `of`.
std::uint64_t BitsOf(const FeatureNodes& of, const config::ClusterConfig& c) {
  std::uint64_t mask = 0;
  for (const auto& [f, nodes] : of)
    if (std::uint32_t bit = c.FeatureIndex(f); bit < 64) mask |= std::uint64_t{1} << bit;
  return mask;
}

struct FeatureChange {
  std::vector<std::string> added, dropped;
};

// What going from placement features `now` to `want` adds and drops, if it fits in 64 bits.
Result<FeatureChange> FeatureChangeOf(const FeatureNodes& now, const FeatureNodes& want,
                                      const config::ClusterConfig& c) {
  FeatureChange change;
  for (const auto& [f, nodes] : now)
    if (!want.count(f)) change.dropped.push_back(f);
  for (const auto& [f, nodes] : want) {
    if (now.count(f)) continue;
    if (f.empty() || c.FeatureIndex(f) != engine::kNone)
      return FailedPrecondition("placement feature \"" + f + "\" is a node feature already");
    change.added.push_back(f);
  }
  const std::vector<std::string>& names = c.base.features;
  const std::size_t in_use =
      std::count_if(names.begin(), names.end(), [](const std::string& n) { return !n.empty(); });
  const std::size_t kept = in_use - change.dropped.size();
  if (kept + change.added.size() > 64)
    return FailedPrecondition("a node carries at most 64 features and " + std::to_string(kept) +
                              " are in use (" + std::to_string(now.size() - change.dropped.size()) +
                              " of them for placement constraints): no room for " +
                              change.added.front());
  return change;
}

}  // namespace

Status Controller::BackendPlacementFeatures(const FeatureNodes& features) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<FeatureChange> change = FeatureChangeOf(placement_features_, features, cluster_);
  if (!change.ok()) return change.status();
  const std::uint64_t before = BitsOf(placement_features_, cluster_);
  for (const std::string& f : change->dropped)
    cluster_.base.features[cluster_.FeatureIndex(f)].clear();  // its bit is free
  for (const std::string& f : change->added)                   // FeatureChangeOf checked the room
    LOCKSTEP_CHECK(cluster_.InternFeature(f) != engine::kNone);
  placement_features_ = features;
  placement_masks_.clear();
  for (const auto& [f, nodes] : placement_features_)
    for (const std::string& node : nodes)
      placement_masks_[node] |= std::uint64_t{1} << cluster_.FeatureIndex(f);
  const std::uint64_t placement_bits = before | BitsOf(placement_features_, cluster_);
  const bool renamed = !change->added.empty() || !change->dropped.empty();
  bool changed = renamed;
  for (engine::Node& node : cluster_.base.nodes) {
    std::uint64_t f = (node.features & ~placement_bits) | PlacementFeatureMaskLocked(node.name);
    changed = changed || f != node.features;
    node.features = f;
  }
  if (!changed) return Status::Ok();
  cluster_changed_ = true;
  // Jobs hold their features as bits in the scheduler's snapshot: a bit that now means another
  // feature (or none) must be read again from the job's constraint.
  if (renamed)
    for (const auto& [id, e] : jobs_)
      if ((e.state == JobState::kPending || e.state == JobState::kRunning ||
           e.state == JobState::kCompleting) &&
          !e.spec->constraint.empty())
        dirty_.insert(id);
  RequestPassLocked();
  return Status::Ok();
}

void Controller::BackendTaskExited(JobId job, std::int32_t run, int exit_code, int signal,
                                   bool oom) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  JobEntry& e = it->second;
  if (run != e.restart_count) return;  // an earlier run of a requeued job
  if (e.state == JobState::kRunning || e.state == JobState::kCompleting)
    EndJobLocked(e, exit_code, signal, oom, WallNow());
}

void Controller::BackendLaunchFailed(JobId job, std::int32_t run, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  JobEntry& e = it->second;
  if (run != e.restart_count || (e.state != JobState::kRunning && e.state != JobState::kCompleting))
    return;
  std::fprintf(stderr, "lockstepd: job %llu: launch failed: %s\n",
               static_cast<unsigned long long>(job), why.c_str());
  Time now = WallNow();
  if (e.spec->requeue.value_or(true) && !e.cancel_requested) {
    RequeueLocked(e, "LaunchFailed", now);
  } else {
    EndJobLocked(e, 1, 0, false, now);
    e.reason = "LaunchFailed";
    (void)PersistLocked({&e});
  }
}

Result<std::string> Controller::JobLogs(const Caller& caller, JobId id) {
  Backend* backend = nullptr;
  std::int32_t run = 0;
  std::string path, node;
  std::uint32_t uid = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Result<JobEntry*> found = FindLocked(id);
    if (!found.ok()) return found.status();
    const JobEntry& job = **found;
    LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, job));
    if (job.state == JobState::kPending && job.restart_count == 0)
      return FailedPrecondition("job " + job.DisplayId() + " has not started yet");
    backend = backend_;
    run = job.restart_count;
    // A requeued job waiting again: its last run's output.
    if (job.state == JobState::kPending) run -= 1;
    uid = job.uid;
    jobspec::OutputPatternVars vars;
    vars.job_id = job.id;
    vars.array_job_id = job.array_job_id;
    vars.array_task_id = job.array_task_id;
    vars.is_array = job.is_array_task();
    vars.job_name = job.spec->name;
    vars.user = job.user;
    node = job.placement.empty() ? "" : job.placement.front().node;
    vars.node = node;
    vars.restart_count = static_cast<std::uint32_t>(run);
    path = jobspec::ExpandOutputPattern(job.spec->output.empty()
                                         ? jobspec::DefaultOutputPattern(job.is_array_task())
                                         : job.spec->output,
                                     vars);
    if (path.empty() || path[0] != '/') path = job.spec->work_dir + "/" + path;
  }
  // Without the lock: the backend may take its time (the Kubernetes API).
  if (backend) return backend->Logs(id, run);
  Result<std::string> text = ReadOwnOutput(path, uid);
  if (text.ok() || text.status().code() == StatusCode::kPermissionDenied) return text;
  return NotFound("job " + std::to_string(id) + " writes its output to " + path +
                  (node.empty() ? "" : " on " + node) + ", which is not readable here (" +
                  text.status().message() + ")");
}

}  // namespace lockstep::controller
