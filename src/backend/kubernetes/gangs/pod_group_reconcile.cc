// The pod group scheduler's reconciliation of one gang: submit it when complete, cancel its
// pending job when it loses pods, end its job when its bound pods have ended, and Events.
#include <algorithm>

#include "backend/kubernetes/gangs/gang_json.h"
#include "backend/kubernetes/gangs/pod_group_scheduler.h"
#include "backend/kubernetes/objects/pod_events.h"
#include "common/log.h"
#include "jobspec/sbatch_internal.h"

namespace lockstep::kube {
namespace {

using gangs_internal::Clock;
using gangs_internal::Meta;
using gangs_internal::Str;

}  // namespace

void PodGroupScheduler::Reconcile(const std::string& key) {
  std::vector<SharedPod> pods;
  std::map<std::string, Json> pod_groups;
  Group g;
  std::uint64_t seen = 0;  // the gang's last change this look takes into account
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (recovering_.count(key)) return;  // FinishRecovery marks it again
    // Pods of a new gang arrive one by one (a first list, a controller creating them): no look
    // until there are enough of them.
    if (auto it = groups_.find(key);
        (it == groups_.end() || it->second.phase == Phase::kNone) && TooFewPodsLocked(key))
      return;
    if (auto c = last_change_.find(key); c != last_change_.end()) seen = c->second;
    auto it = groups_.find(key);
    if (it != groups_.end()) {
      // Bound gangs are looked at in place: every Binding brings a pod update.
      if (it->second.phase == Phase::kRunning) {
        g.job = it->second.job;
        g.run = it->second.run;
        std::optional<GangExit> ended = RunningGangEndedLocked(it->second);
        if (!ended) return;
        g.exit = *ended;
      } else if (it->second.phase == Phase::kBinding || it->second.phase == Phase::kSubmitting) {
        return;
      }
    }
    if (g.job == 0) {
      pods = PodsOf(key);
      pod_groups = PodGroupsFor(pods);
      if (it == groups_.end() && pods.empty()) {
        last_change_.erase(key);
        return;
      }
      if (it != groups_.end()) g = it->second;
      if (it != groups_.end() && pods.empty() && g.phase == Phase::kNone) {
        groups_.erase(it);
        last_change_.erase(key);
        return;
      }
    }
  }
  if (g.phase == Phase::kNone && g.job != 0) return EndRunningGang(key, g);

  // Without the PodGroup CRD, a pod's PodGroup label is ignored when it also carries gang
  // annotations, and the pod waits (with an Event) when it does not.
  std::vector<std::string> notes;
  if (!pod_groups_available_) {
    std::vector<SharedPod> kept;
    for (SharedPod& shared : pods) {
      const Json& p = *shared;
      std::optional<std::string> group = PodGroupName(p);
      if (!group) {
        kept.push_back(std::move(shared));
        continue;
      }
      if (Meta(p, "annotations", kGangAnnotation).empty()) {
        notes.push_back(
            "pod " + key.substr(0, key.find('/') + 1) + Str(p, "metadata", "name") +
            " names PodGroup " + *group +
            " but the PodGroup CRD (scheduling.x-k8s.io/v1alpha1) is not installed: "
            "install it and restart lockstepd, or give the pods annotations lockstep.dev/gang and "
            "lockstep.dev/gang-size");
        continue;
      }
      notes.push_back("the PodGroup CRD (scheduling.x-k8s.io/v1alpha1) is not installed: label " +
                      std::string(kPodGroupLabel) + " ignored, gang from annotations");
      auto without_label = std::make_shared<Json>(p);  // the table's pod stays as it is
      (*without_label)["metadata"]["labels"].erase(kPodGroupLabel);
      kept.push_back(std::move(without_label));
    }
    pods = std::move(kept);
  }
  PodGroupOptions po;
  po.default_queue = options_.default_queue;
  po.scheduler_name = options_.scheduler_name;
  Gangs gangs = GroupPods(pods, pod_groups, po);
  for (const Status& e : gangs.errors) notes.push_back(e.message());
  Gang* gang = nullptr;
  for (Gang& candidate : gangs.gangs)
    if (candidate.key == key) gang = &candidate;
  std::map<std::string, std::string> members;  // the gang's unbound pods, name -> uid
  if (gang)
    for (const SharedPod& p : gang->pods)
      members[Str(*p, "metadata", "name")] = Str(*p, "metadata", "uid");

  if (g.phase == Phase::kPending) {
    // A job recovered from an earlier lockstepd asks for the placement feature its gang had:
    // give it to the nodes again (until then the job waits, with BadConstraints).
    if (gang && !g.feature.empty() && !features_->Holds(key, g.feature)) {
      Result<GangPlacement> placement = GangPlacement::OfPods(PodPointers(gang->pods));
      Result<std::string> f =
          placement.ok() ? features_->Register(key, *placement, g.feature) : placement.status();
      if (!f.ok())
        log::Warning("pod groups: gang {}: placement feature {}: {}", key, g.feature,
                     f.status().ToString());
    }
    // Pods went away (or were replaced) while the job waited: cancel it; a complete gang of the
    // pods that are there now is submitted afresh.
    if (gang && gang->Ready() && members == g.pods) return;
    Status st = admission_.Withdraw(g.job);
    if (st.ok())
      log::Info("pod groups: gang {} lost pods: job {} cancelled", key, g.job);
    else
      log::Warning("pod groups: gang {} lost pods: cancelling job {}: {}", key, g.job,
                   st.ToString());
    std::lock_guard<std::mutex> lock(mu_);
    Group& cur = groups_[key];
    if (cur.phase != Phase::kPending || cur.job != g.job) return;  // bound meanwhile
    job_keys_.erase(cur.job);
    cur.phase = Phase::kNone;
    cur.job = 0;
    cur.pods.clear();
    ++stats_.cancelled;
    dirty_.insert(key);
    return;
  }
  // kNone. Events go on every pod of the gang.
  if (!notes.empty()) {
    const std::vector<SharedPod> all_pods = PodsOf(key, /*lock=*/true);
    for (const std::string& n : notes) EventGang(key, all_pods, "FailedScheduling", n);
  }
  if (!gang || !gang->Ready()) return;
  // A gang that failed waits for its retry time, unless its pods changed.
  if (!g.failure.empty() && options_.clock->MonotonicNow() < g.retry_at && members == g.pods) return;
  // Submissions run on their own pool: each is a durable commit, and concurrent ones share the
  // store's group commit.
  {
    std::lock_guard<std::mutex> lock(mu_);
    Group& cur = groups_[key];
    cur.key = key;
    cur.phase = Phase::kSubmitting;
  }
  PostCounted(*submit_pool_,
              [this, key, seen, gang = std::move(*gang)] { SubmitGang(key, gang, seen); });
}

bool PodGroupScheduler::TooFewPodsLocked(const std::string& key) const {
  auto it = pods_.find(key);
  if (it == pods_.end() || it->second.empty()) return false;
  const Json& first = *it->second.begin()->second;
  const Json* group = nullptr;
  if (std::optional<std::string> name = PodGroupName(first))
    if (auto g = pod_groups_.find(Str(first, "metadata", "namespace") + "/" + *name);
        g != pod_groups_.end())
      group = &g->second;
  Result<PodMembership> m = MembershipOf(first, group);
  // Unreadable: Reconcile says why.
  return m.ok() && static_cast<std::int64_t>(it->second.size()) < m->min_member;
}

void PodGroupScheduler::CheckPendingJobs() {
  std::set<JobId> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, g] : groups_)
      if (g.phase == Phase::kPending) ids.insert(g.job);
  }
  if (ids.empty()) return;
  for (const backend::ExternalJob& j : admission_.ExternalJobs(&ids)) {
    if (j.phase != backend::ExternalJob::Phase::kEnded) continue;
    const std::string& state = j.state;
    const JobId id = j.job;
    std::string message;
    std::string key;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto k = job_keys_.find(id);
      if (k == job_keys_.end()) continue;
      key = k->second;
      Group& g = groups_[key];
      if (g.phase != Phase::kPending || g.job != id) continue;
      job_keys_.erase(k);
      g.phase = Phase::kNone;
      g.job = 0;
      g.failure = "job " + std::to_string(id) + " of gang " + key + " ended " + state +
                  " before its pods were bound; they stay unscheduled until the gang's pods change";
      g.retry_at = Clock::time_point::max();
      message = g.failure;
    }
    EventGang(key, PodsOf(key, true), "FailedScheduling", message);
  }
}

void PodGroupScheduler::SubmitGang(const std::string& key, const Gang& gang, std::uint64_t seen) {
  std::map<std::string, std::string> members;
  for (const SharedPod& p : gang.pods)
    members[Str(*p, "metadata", "name")] = Str(*p, "metadata", "uid");
  const std::string ns = key.substr(0, key.find('/'));
  GangOptions go;
  go.pods_per_node = options_.pods_per_node;
  go.names = options_.names;
  const std::vector<const Json*> pods = PodPointers(gang.pods);
  Result<GangRequest> req = GangToRequest(pods, go);
  // The pods' nodeSelector, required affinity and tolerations become a node feature on the
  // nodes that allow them, known to the controller before the job that asks for it.
  Result<GangPlacement> placement = GangPlacement::OfPods(pods);
  Result<std::string> feature = !placement.ok() ? Result<std::string>(placement.status())
                                : req.ok()      ? features_->Register(key, *placement)
                                                : Result<std::string>(std::string());
  auto submit = [&]() -> Result<JobId> {
    if (!req.ok()) return req.status();
    if (!feature.ok()) return feature.status();
    jobspec::JobSpec s;
    s.name = key;
    s.partition = gang.queue;
    s.min_nodes = s.max_nodes = req->request.min_nodes;
    s.ntasks = req->request.ntasks;
    s.cpus_per_task = req->request.cpus_per_task;
    s.mem_mb = req->request.mem_per_node_mb;
    s.gpus_per_task = req->request.gpus_per_task;
    s.gpu_type = req->gpu_type;
    s.time_limit = req->request.time_limit;
    s.external = key;
    s.constraint = *feature;
    s.requeue = true;
    s.work_dir = "/";
    // Kubernetes priority orders the queue: spec.priority (the PriorityClass's value) lowers
    // the job's nice, so a higher class outranks every multifactor difference.
    constexpr std::int64_t kMaxNice = 2147483645;
    s.nice =
        static_cast<std::int32_t>(-std::clamp<std::int64_t>(gang.priority, -kMaxNice, kMaxNice));
    for (const SharedPod& shared : gang.pods) {
      const Json& p = *shared;
      const std::string& t = Meta(p, "annotations", kTimeLimitAnnotation);
      if (t.empty()) continue;
      Result<Seconds> limit = jobspec::sbatch_internal::ParseTimeLimit(t);
      if (!limit.ok())
        return InvalidArgument("pod " + ns + "/" + Str(p, "metadata", "name") + ": annotation " +
                               kTimeLimitAnnotation + ": " + limit.status().message());
      s.time_limit = std::max(s.time_limit, *limit);
    }
    return admission_.Admit(std::move(s), ns);
  };
  Result<JobId> id = submit();
  // For the message: how many nodes its pods' constraints leave (taken before mu_, which is
  // never held while calling into features_).
  std::size_t allow = 0, all = 0;
  if (!id.ok() && feature.ok() && !feature->empty()) {
    allow = features_->NodesWith(*feature);
    all = features_->node_count();
  }
  std::unique_lock<std::mutex> lock(mu_);
  Group& g = groups_[key];
  g.key = key;
  g.pods = members;
  g.feature = feature.ok() ? *feature : "";
  // Looked at again only when its pods changed meanwhile.
  if (auto c = last_change_.find(key); c != last_change_.end() && c->second != seen) {
    dirty_.insert(key);
    wake_.notify_all();
  }
  if (id.ok()) {
    g.phase = Phase::kPending;
    g.job = *id;
    g.pods_per_node = req->pods_per_node;
    g.failure.clear();
    g.schedule_start = gangs_internal::NowRfc3339(*options_.clock);
    MarkStatusDirty(key);
    job_keys_[*id] = key;
    ++stats_.submitted;
    // Orders for the job that arrived before its id was known.
    for (auto it = deferred_.begin(); it != deferred_.end();) {
      if (it->external == key) {
        orders_.push_back(std::move(*it));
        it = deferred_.erase(it);
        wake_.notify_all();
      } else {
        ++it;
      }
    }
    return;
  }
  g.phase = Phase::kNone;
  ++stats_.rejected;
  g.retry_at = options_.clock->MonotonicNow() + options_.retry_interval;
  std::string shape;
  if (req.ok()) {
    shape = ", each cpu " + std::to_string(req->request.cpus_per_task) + ", memory " +
            std::to_string((req->per_pod.memory_bytes + (1 << 20) - 1) >> 20) + "Mi";
    if (!req->gpu_resource.empty())
      shape += ", " + req->gpu_resource + " " + std::to_string(req->request.gpus_per_task);
    shape += ", " + std::to_string(req->pods_per_node) + " per node on " +
             std::to_string(req->request.min_nodes) + " nodes";
  }
  // Where its pods' constraints rule nodes out, say how many are left.
  if (allow < all)
    shape += "; node feature " + *feature + ": " + std::to_string(allow) + " of " +
             std::to_string(all) +
             " nodes allow its pods' nodeSelector, node affinity and tolerations";
  g.failure = "gang " + key + " (" + std::to_string(gang.pods.size()) + " pods" + shape +
              ") cannot be scheduled: " + id.status().message() +
              "; none of its pods is bound (retried every " +
              std::to_string(options_.retry_interval.count() / 1000) + " s)";
  std::string failure = g.failure;
  lock.unlock();
  EventGang(key, gang.pods, "FailedScheduling", failure);
}

void PodGroupScheduler::EventGang(const std::string& key, const std::vector<SharedPod>& pods,
                                  const std::string& reason, const std::string& message) {
  Json group;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Group& g = groups_[key];
    g.key = key;
    if (!g.evented.insert(message).second) return;
    if (!pods.empty())
      if (std::optional<std::string> name = PodGroupName(*pods.front()))
        if (auto it = pod_groups_.find(Str(*pods.front(), "metadata", "namespace") + "/" + *name);
            it != pod_groups_.end())
          group = it->second;
  }
  log::Warning("pod groups: {}", message);  // as the Event, once per gang and message
  int posted = 0, failed = 0;
  Status first_failure;
  auto post = [&](const Json& object) {
    Status st = events_->Post(object, "Warning", reason, message);
    if (st.ok()) {
      ++posted;
    } else if (failed++ == 0) {
      first_failure = st;
    }
  };
  if (!group.is_null()) post(group);
  for (std::size_t i = 0; i < pods.size() && static_cast<int>(i) < options_.max_events_per_gang;
       ++i)
    post(*pods[i]);
  // One line for the gang, not one per pod.
  if (failed > 0)
    log::Warning("pod groups: gang {}: {} of {} Events not posted: {}", key, failed,
                 failed + posted, first_failure.ToString());
  std::lock_guard<std::mutex> lock(mu_);
  stats_.events += posted;
}

std::optional<PodGroupScheduler::GangExit> PodGroupScheduler::RunningGangEndedLocked(
    const Group& g) const {
  GangExit out;
  GangExit* exit = &out;
  auto gang = pods_.find(g.key);
  for (const auto& [name, uid] : g.pods) {
    const Json* pod = nullptr;
    if (gang != pods_.end())
      if (auto p = gang->second.find(name); p != gang->second.end()) pod = p->second.get();
    if (!pod || Str(*pod, "metadata", "uid") != uid) {
      // Gone (deleted, or replaced by a new pod of that name): killed.
      if (exit->exit_code == 0 && exit->signal == 0) exit->signal = 9;
      continue;
    }
    Result<PodStatusEvent> ev = PodStatusEventOf(*pod);
    if (!ev.ok() || !ev->ended) return std::nullopt;
    exit->oom = exit->oom || ev->oom;
    if (exit->exit_code == 0 && exit->signal == 0) {
      exit->exit_code = ev->exit_code;
      exit->signal = ev->signal;
    }
  }
  return out;
}

void PodGroupScheduler::EndRunningGang(const std::string& key, const Group& g) {
  sink_.RunExited({g.job, g.run}, {g.exit.exit_code, g.exit.signal, g.exit.oom});
  std::lock_guard<std::mutex> lock(mu_);
  Group& cur = groups_[key];
  if (cur.job != g.job || cur.phase != Phase::kRunning) return;
  job_keys_.erase(cur.job);
  cur.phase = Phase::kNone;
  cur.job = 0;
  cur.terminate_requested = false;
  ++stats_.ended;
}

}  // namespace lockstep::kube
