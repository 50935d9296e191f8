// The kubernetes backend's deletions: of terminated runs (gracefully, then at once), of runs
// whose pods vanished while lockstepd was away, of finished runs' pods after finished_pod_ttl, and
// of jobs' Services with their last pods.
#include <signal.h>

#include <algorithm>

#include "backend/kubernetes/backend/backend_internal.h"
#include "backend/kubernetes/backend/kubernetes_backend.h"
#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/objects/pod_builder.h"

namespace lockstep::kube {

using backend_internal::Clock;
using backend_internal::JobPodIdentity;
using backend_internal::Label;
using backend_internal::Log;
using backend_internal::Meta;
using backend_internal::ParseInt;

void KubernetesBackend::ReconcileVanishedRuns() {
  // lockstepd restarted: a job it recorded RUNNING whose pods were all deleted while it was
  // down would otherwise wait forever for their end. The controller is told which runs have
  // pods on the Nodes; any other run there failed like a node (requeued, or NODE_FAIL). Pod
  // groups of others are the gangs component's to reconcile: they count as alive here.
  // Every node: this backend knows every run it has (the Nodes may not all be listed yet).
  std::vector<std::string> nodes;
  std::vector<backend::RunId> alive;
  if (admission_)
    for (const backend::ExternalJob& j : admission_->ExternalJobs(nullptr))
      if (j.phase == backend::ExternalJob::Phase::kRunning) alive.push_back({j.job, j.run});
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, run] : runs_) {
      // A run being launched now (this lockstepd started it) has no pods yet, rightly.
      const bool has_pods =
          std::any_of(run.pods.begin(), run.pods.end(),
                      [](const auto& rank_pod) { return !rank_pod.second.gone; });
      // A run whose end was reported is the controller's already (its report came first), and
      // its finished pods stay for their logs.
      if (!run.reported && (run.launching || run.external || has_pods))
        alive.push_back({key.first, key.second});
    }
  }
  events_.RunsAlive(std::move(nodes), std::move(alive));
}

std::vector<std::pair<std::int32_t, std::string>> KubernetesBackend::RunPodsFromCache(
    const RunKey& key, std::string* ns) const {
  std::vector<std::pair<std::int32_t, std::string>> out;
  for (const Json& pod : pods_->List()) {
    JobId job = 0;
    std::int32_t run = 0, rank = 0;
    if (!IsOwnJobPod(pod) || !JobPodIdentity(pod, &job, &run, &rank) || job != key.first ||
        run != key.second)
      continue;
    out.emplace_back(rank, Meta(pod, "name"));
    *ns = Meta(pod, "namespace");
  }
  std::sort(out.begin(), out.end());
  return out;
}

void KubernetesBackend::DoDelete(const RunKey& key, std::int64_t grace, int signal) {
  std::string ns;
  std::vector<std::pair<std::int32_t, std::string>> pods = RunPodsFromCache(key, &ns);
  std::function<void()> report;
  bool external = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = runs_.find(key);
    if (it != runs_.end() && it->second.external) {
      external = true;
    } else if (it == runs_.end() || (it->second.pods.empty() && pods.empty())) {
      // Nothing of it exists (its pods went while lockstepd was away): it ended.
      RunState& r = runs_[key];
      if (!r.reported && !r.launch_failed) {
        r.reported = true;
        backend::EventSink* events = &events_;
        report = [events, key, signal] { events->RunExited({key.first, key.second}, {0, signal, false}); };
      }
    } else {
      RunState& r = it->second;
      if (ns.empty()) ns = r.ns;
      for (const auto& [rank, p] : r.pods)
        if (!p.gone &&
            std::none_of(pods.begin(), pods.end(), [&](const auto& x) { return x.first == rank; }))
          pods.emplace_back(rank, p.name);
      // Pods that have ended hold nothing and keep their logs: finished_pod_ttl removes them. (A
      // pod that cannot start is Pending, and holds its node's resources: it goes.)
      std::erase_if(pods, [&](const auto& rank_name) {
        auto p = r.pods.find(rank_name.first);
        return p != r.pods.end() && p->second.terminal();
      });
      const auto force_at =
          MonoNow() + std::chrono::seconds(grace) + options_.force_delete_after;
      if (!r.terminating || signal == SIGKILL || force_at < r.force_at) r.force_at = force_at;
      if (!r.terminating || signal == SIGKILL) r.kill_signal = signal;
      r.terminating = true;
    }
  }
  if (report) {
    report();
    return DoDeleteService(key.first, options_.settings.ns);  // if it is still there
  }
  if (external) {
#ifdef LOCKSTEP_HAVE_KUBE_GANGS
    gangs_->scheduler.Terminate(key.first, key.second);
#endif
    return;
  }
  for (const auto& [rank, name] : pods) {
    DeleteOptions o;
    o.grace_period_seconds = grace;
    Result<Json> d = client_->Delete(PodPath(ns, name), o);
    if (!d.ok() && !IsNotFound(d.status()))
      Log("job " + std::to_string(key.first) + ": cannot delete pod " + ns + "/" + name + ": " +
          d.status().message());
  }
  cv_.notify_all();  // the worker's next forced deletion may be sooner
}

void KubernetesBackend::DoForce() {
  std::vector<std::pair<std::string, std::string>> victims;  // ns, name
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = MonoNow();
    for (auto& [key, r] : runs_) {
      if (!r.terminating || r.reported || r.force_at > now) continue;
      r.force_at = now + std::chrono::seconds(5);  // again later if a delete does not take
      for (const auto& [rank, p] : r.pods)
        if (!p.gone && !p.status.ended) victims.emplace_back(r.ns, p.name);
      // Ended pods hold nothing, but they must go for the run to count as over only when they
      // never report; they have reported, so they are counted as done already.
    }
  }
  for (const auto& [ns, name] : victims) {
    DeleteOptions now;
    now.grace_period_seconds = 0;
    Result<Json> d = client_->Delete(PodPath(ns, name), now);
    if (!d.ok() && !IsNotFound(d.status()))
      Log("cannot delete pod " + ns + "/" + name + ": " + d.status().message());
  }
}

void KubernetesBackend::DoDeleteService(JobId job, const std::string& ns) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, r] : runs_) {
      if (key.first != job) continue;
      // A run that goes on, or pods kept (finished_pod_ttl): MASTER_ADDR still resolves.
      if (!r.reported ||
          std::any_of(r.pods.begin(), r.pods.end(), [](const auto& p) { return !p.second.gone; }))
        return;
    }
  }
  Result<Json> d =
      client_->Delete("/api/v1/namespaces/" + ns + "/services/" + JobServiceName("lockstep", job));
  if (!d.ok() && !IsNotFound(d.status()))
    Log("job " + std::to_string(job) + ": cannot delete its service: " + d.status().message());
}

void KubernetesBackend::DeleteOrphanServices() {
  const std::string& ns = options_.settings.ns;
  ListOptions o;
  o.label_selector = std::string(kJobIdLabel) + ",app.kubernetes.io/managed-by=lockstep";
  Result<Json> list = client_->ListAll("/api/v1/namespaces/" + ns + "/services", o);
  if (!list.ok()) {
    Log("cannot list the jobs' services: " + list.status().message());
    return;
  }
  for (const Json& svc : list->value("items", Json::array())) {
    long long job = 0;
    if (ParseInt(Label(svc, kJobIdLabel), &job)) DoDeleteService(static_cast<JobId>(job), ns);
  }
}

// ---------------------------------------------------------------------------------------------
// Finished pods' lifetime (finished_pod_ttl)

void KubernetesBackend::ScheduleExpiryLocked(const RunKey& key, const RunState& r) {
  const Seconds ttl = options_.settings.finished_pod_ttl;
  if (ttl >= kUnlimited || r.external) return;  // kept until someone deletes them
  Time last = 0;
  bool kept = false;
  for (const auto& [rank, p] : r.pods) {
    if (p.gone) continue;
    kept = true;
    last = std::max(last, p.ended_at);
  }
  if (!kept) return;
  expiries_.insert({last + ttl, key});
  expiries_changed_ = true;  // the callers notify cv_
}

std::chrono::steady_clock::time_point KubernetesBackend::NextExpiryLocked() const {
  if (expiries_.empty()) return Clock::time_point::max();
  const Time in = std::max<Time>(0, expiries_.begin()->first - WallNow());
  return MonoNow() + std::chrono::seconds(in);
}

void KubernetesBackend::DoExpire() {
  struct Victim {
    RunKey key;
    std::string ns, name, uid;
  };
  std::vector<Victim> victims;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const Time now = WallNow();
    while (!expiries_.empty() && expiries_.begin()->first <= now) {
      const RunKey key = expiries_.begin()->second;
      expiries_.erase(expiries_.begin());
      auto it = runs_.find(key);
      if (it == runs_.end() || !it->second.reported) continue;
      for (const auto& [rank, p] : it->second.pods)
        if (!p.gone) victims.push_back({key, it->second.ns, p.name, p.uid});
    }
  }
  for (const Victim& v : victims) {
    // The pods have ended: nothing to stop. The uid spares a later run's pod of the same name.
    DeleteOptions o;
    o.grace_period_seconds = 0;
    o.precondition_uid = v.uid;
    Result<Json> d = client_->Delete(PodPath(v.ns, v.name), o);
    if (d.ok() || IsNotFound(d.status()) || IsConflict(d.status())) continue;
    Log("job " + std::to_string(v.key.first) + ": cannot delete finished pod " + v.ns + "/" +
        v.name + ": " + d.status().message() + " (again in a minute)");
    std::lock_guard<std::mutex> lock(mu_);
    expiries_.insert({WallNow() + 60, v.key});
  }
}

}  // namespace lockstep::kube
