// What backends report about nodes (NodesReported, applied by the events thread), the
// placement features a backend evaluates itself, and `lockstep logs`.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "common/log.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "engine/gpu_devices.h"
#include "jobspec/output_pattern.h"

namespace lockstep::controller {

namespace {

// The configured devices take their UUIDs from what the host sees: a whole GPU its GPU's, a MIG
// slice the next unmatched MIG device of its GPU with its profile (a slice's type is "<gpu
// type>_<profile>"). A device the inventory does not match has none. True when any changed.
bool TakeGpuUuids(engine::Node& node, const std::vector<std::string>& types,
                  const std::vector<backend::GpuSeen>& seen) {
  std::map<int, const backend::GpuSeen*> by_index;
  for (const backend::GpuSeen& g : seen) by_index[g.index] = &g;
  std::map<int, std::vector<bool>> taken;  // per physical GPU: its MIG devices matched
  bool changed = false;
  const std::vector<int> physical_of = engine::PhysicalGpuOf(node);
  for (std::size_t i = 0; i < node.gpus.size(); ++i) {
    engine::GpuDevice& d = node.gpus[i];
    const int physical = physical_of[i];
    std::string uuid;
    if (auto it = by_index.find(physical); it != by_index.end()) {
      const backend::GpuSeen& g = *it->second;
      if (d.parent < 0) {
        if (g.mig.empty()) uuid = g.uuid;
      } else {
        const std::string type = d.type < types.size() ? types[d.type] : "";
        std::vector<bool>& used = taken[physical];
        used.resize(g.mig.size());
        for (std::size_t k = 0; k < g.mig.size() && uuid.empty(); ++k)
          if (!used[k] && type.ends_with("_" + g.mig[k].profile)) {
            used[k] = true;
            uuid = g.mig[k].uuid;
          }
      }
    }
    changed = changed || d.uuid != uuid;
    d.uuid = std::move(uuid);
  }
  return changed;
}

// The engine's node for a report, with what others use taken away (their pods hold it).
engine::Node EngineNodeOf(const NodeReport& report, config::ClusterConfig& cluster) {
  const backend::NodeResources& r = *report.resources;
  engine::Node n;
  n.name = report.name;
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

void Controller::NodesReportedLocked(const std::vector<NodeReport>& reports, bool complete,
                                     Time now) {
  std::set<std::uint32_t> seen;
  for (const NodeReport& r : reports) {
    std::uint32_t n = NodeIndexLocked(r.name);
    if (r.resources) {
      engine::Node node = EngineNodeOf(r, cluster_);
      node.features |= PlacementFeatureMaskLocked(r.name);
      if (n == engine::kNone) {
        n = cluster_.AddNode(std::move(node));
        nodes_.emplace_back();
        if (auto said = operator_states_.find(r.name); said != operator_states_.end()) {
          nodes_.back() = std::move(said->second);
          operator_states_.erase(said);
        }
        cluster_changed_ = true;
        log::Info("node {} joined", r.name);
      } else if (!SameResources(cluster_.base.nodes[n], node)) {
        cluster_.base.nodes[n] = std::move(node);
        cluster_changed_ = true;
      }
    }
    if (n == engine::kNone) continue;  // not configured, and the backend gave no resources
    seen.insert(n);
    NodeInfo& info = nodes_[n];
    info.reported = true;
    info.address = r.address;
    info.cordoned = r.cordoned;
    info.enforces_memory = r.enforces_memory;
    info.enforces_cpus = r.enforces_cpus;
    if (!r.gpus_seen.empty() &&
        TakeGpuUuids(cluster_.base.nodes[n], cluster_.base.gpu_types, r.gpus_seen))
      cluster_changed_ = true;
    info.down_reason = r.ready ? "" : r.down_reason;
    if (info.responding && !r.ready) {
      info.responding = false;
      log::Warning("node {} down: {}", r.name, r.down_reason);
      NodeEventLocked("node_down", n, r.down_reason);
      NodeLostLocked(n, now);
    } else if (!info.responding && r.ready) {
      NodeEventLocked("node_up", n, "");
    }
    info.responding = r.ready;
  }
  if (complete) {
    for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
      if (seen.count(n) || !nodes_[n].reported || !nodes_[n].responding) continue;
      nodes_[n].responding = false;
      nodes_[n].down_reason = "node deleted";
      NodeEventLocked("node_down", n, "node deleted");
      NodeLostLocked(n, now);
    }
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

Status Controller::SetPlacementFeatures(const FeatureNodes& features) {
  HeldLock lock(*this);
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
      if ((e.state == JobState::kPending || HoldsAllocation(e.state)) &&
          !e.spec->constraint.empty())
        dirty_.insert(id);
  RequestPassLocked();
  return Status::Ok();
}

Result<std::string> Controller::JobLogs(const Caller& caller, JobId id) {
  // A job purged after MinJobAge: its last run as stored (read before the lock).
  std::optional<JobEntry> stored;
  {
    HeldLock lock(*this);
    if (!jobs_.count(id) && !PendingArrayOfLocked(id)) stored.emplace();
  }
  if (stored) {
    Result<std::optional<JobEntry>> read = StoredJob(id);
    if (!read.ok()) return read.status();
    if (!read->has_value()) return NotFound("invalid job id specified: " + std::to_string(id));
    stored = std::move(**read);
  }
  backend::LogsRequest request;
  {
    HeldLock lock(*this);
    Result<JobEntry*> found = stored ? Result<JobEntry*>(&*stored) : FindLocked(id);
    if (!found.ok()) return found.status();
    const JobEntry& job = **found;
    LOCKSTEP_RETURN_IF_ERROR(CheckOwner(caller, job));
    if (job.state == JobState::kPending && job.restart_count == 0)
      return FailedPrecondition("job " + job.DisplayId() + " has not started yet");
    // A requeued job waiting again: its last run's output.
    std::int32_t run = job.state == JobState::kPending ? job.restart_count - 1 : job.restart_count;
    request.run = {job.id, run};
    request.node = job.placement.empty() ? "" : job.placement.front().node;
    request.stdout_path = OutputPathLocked(job, run);
    request.uid = job.uid;
  }
  // Without the lock: the backend may take its time (the Kubernetes API).
  return BackendLogs(request);
}

}  // namespace lockstep::controller
