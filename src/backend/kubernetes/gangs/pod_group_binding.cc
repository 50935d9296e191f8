// The pod group scheduler's binding of a started job's pods, all or nothing, and the termination
// of a bound gang.
#include <atomic>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/gangs/gang_json.h"
#include "backend/kubernetes/gangs/pod_group_scheduler.h"
#include "common/log.h"

namespace lockstep::kube {
using gangs_internal::Str;

// One job's Bindings in flight on the pool; the binder that finishes last settles the batch.
struct PodGroupScheduler::BindBatch {
  std::string key;
  JobId job = 0;
  std::int32_t run = 0;
  std::vector<PodBinding> bindings;
  std::atomic<int> remaining{0};
  std::mutex mu;
  std::vector<std::string> bound;     // guarded by mu: pod names
  std::vector<std::string> failures;  // guarded by mu: "pod: why"
};

void PodGroupScheduler::HandleBind(const Order& order) {
  auto fail = [&](const std::string& why) {
    log::Warning("pod groups: job {}: {}", order.job, why);
    sink_.LaunchFailed({order.job, order.run}, why);
  };
  // The order's nodes, in order: BindingsFor's view of the allocation.
  engine::Allocation alloc;
  std::vector<engine::Node> nodes;
  for (std::size_t i = 0; i < order.nodes.size(); ++i) {
    engine::NodeAllocation a;
    a.node = static_cast<std::uint32_t>(i);
    alloc.nodes.push_back(a);
    engine::Node n;
    n.name = order.nodes[i];
    nodes.push_back(std::move(n));
  }
  Result<std::vector<PodBinding>> bindings = Internal("no bindings");
  Result<GangPlacement> placement = Internal("no placement");
  std::string error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto k = job_keys_.find(order.job);
    if (k == job_keys_.end()) {
      // Started before its Submit() returned to us: wait for the id.
      auto s = groups_.find(order.external);
      if (s != groups_.end() && s->second.phase == Phase::kSubmitting) {
        deferred_.push_back(order);
        return;
      }
    }
    Group* g = k == job_keys_.end() ? nullptr : &groups_[k->second];
    if (!g || g->phase != Phase::kPending || g->key != order.external)
      error = "no pod group " + order.external + " waits for this job";
    // Every pod must still be there, the same pod, unbound and not being deleted: else nothing
    // is bound and the job goes back to the queue (Reconcile then cancels or resubmits it).
    auto gang = g ? pods_.find(g->key) : pods_.end();
    std::string missing;
    std::vector<const Json*> pods;  // read under the lock, not copied
    for (const auto& [name, uid] :
         g&& error.empty() ? g->pods : std::map<std::string, std::string>{}) {
      const Json* pod = nullptr;
      if (gang != pods_.end())
        if (auto p = gang->second.find(name); p != gang->second.end()) pod = p->second.get();
      if (!pod || Str(*pod, "metadata", "uid") != uid || !Str(*pod, "spec", "nodeName").empty() ||
          pod->at("metadata").contains("deletionTimestamp")) {
        missing = name;
        break;
      }
      pods.push_back(pod);
    }
    if (!missing.empty()) {
      dirty_.insert(g->key);
      error = "pod " + order.external.substr(0, order.external.find('/')) + "/" + missing +
              " of gang " + order.external + " is gone or was bound by another scheduler";
    }
    if (error.empty()) {
      GangRequest request;
      request.pods_per_node = g->pods_per_node;
      bindings = BindingsFor(pods, request, alloc, nodes);
      placement = GangPlacement::OfPods(pods);
    }
  }
  if (!error.empty()) return fail(error);
  if (!bindings.ok()) return fail(bindings.status().message());
  if (!placement.ok()) return fail(placement.status().message());
  // The engine placed the job by the placement feature as the nodes were at its pass; a node
  // relabelled or tainted since must not get the pods (the job waits again, and the feature
  // follows the node).
  if (!placement->Unconstrained())
    for (const PodBinding& b : *bindings)
      if (!features_->NodeAllows(b.node, *placement))
        return fail("node " + b.node + " no longer allows the pods of gang " + order.external +
                    " (nodeSelector, node affinity, taints): none is bound");

  auto batch = std::make_shared<BindBatch>();
  batch->key = order.external;
  batch->job = order.job;
  batch->run = order.run;
  batch->bindings = std::move(*bindings);
  batch->remaining = static_cast<int>(batch->bindings.size());
  {
    std::lock_guard<std::mutex> lock(mu_);
    Group& g = groups_[order.external];
    g.phase = Phase::kBinding;
    g.run = order.run;
    MarkStatusDirty(order.external);  // Scheduling
  }
  if (before_bind_for_test_) before_bind_for_test_(batch->key);
  for (std::size_t i = 0; i < batch->bindings.size(); ++i) {
    PostCounted(*pool_, [this, batch, i] {
      const PodBinding& b = batch->bindings[i];
      Status st = binder_->Bind(b.ns, b.pod, b.node);
      {
        std::lock_guard<std::mutex> lock(batch->mu);
        if (st.ok())
          batch->bound.push_back(b.pod);
        else
          batch->failures.push_back(b.pod + ": " + st.message());
      }
      if (--batch->remaining == 0) FinishBatch(batch);
    });
  }
}

void PodGroupScheduler::FinishBatch(const std::shared_ptr<BindBatch>& batch) {
  const std::string ns = batch->key.substr(0, batch->key.find('/'));
  if (batch->failures.empty()) {
    bool terminate = false;
    std::vector<std::string> names;
    {
      std::lock_guard<std::mutex> lock(mu_);
      Group& g = groups_[batch->key];
      g.phase = Phase::kRunning;
      terminate = g.terminate_requested;
      for (const auto& [name, uid] : g.pods) names.push_back(name);
      stats_.bound_pods += static_cast<std::int64_t>(batch->bindings.size());
      dirty_.insert(batch->key);  // its pods may have ended already
    }
    wake_.notify_all();
    if (terminate) DeletePods(ns, names, options_.terminate_grace_seconds);
    return;
  }
  // Never half a gang: the pods bound are deleted at once (their owner, a Job or JobSet
  // controller, recreates them) and the job goes back to the queue.
  DeletePods(ns, batch->bound, 0);
  std::string why = "binding gang " + batch->key + " failed (" + batch->failures.front() + ")";
  if (!batch->bound.empty())
    why += "; its " + std::to_string(batch->bound.size()) + " pods already bound were deleted";
  {
    std::lock_guard<std::mutex> lock(mu_);
    Group& g = groups_[batch->key];
    g.phase = Phase::kPending;
    ++stats_.bind_failures;
    dirty_.insert(batch->key);
    MarkStatusDirty(batch->key);
  }
  wake_.notify_all();
  log::Warning("pod groups: job {}: {}", batch->job, why);
  sink_.LaunchFailed({batch->job, batch->run}, why);
}

void PodGroupScheduler::HandleTerminate(const Order& order) {
  std::vector<std::string> names;
  std::string key;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto k = job_keys_.find(order.job);
    if (k != job_keys_.end()) {
      key = k->second;
      Group& g = groups_[key];
      if (g.phase == Phase::kBinding) {
        g.terminate_requested = true;  // FinishBatch deletes them once bound
        return;
      }
      if (g.phase == Phase::kRunning) {
        g.terminate_requested = true;
        for (const auto& [name, uid] : g.pods) names.push_back(name);
      }
    }
  }
  if (names.empty()) {
    // Nothing was bound for this run: it has ended.
    sink_.RunExited({order.job, order.run}, {0, 9, false});
    return;
  }
  // The pods end as their kubelet stops them; ReconcileRunning then ends the job.
  DeletePods(key.substr(0, key.find('/')), names, options_.terminate_grace_seconds);
}

void PodGroupScheduler::DeletePods(const std::string& ns, const std::vector<std::string>& names,
                                   std::optional<std::int64_t> grace) {
  DeleteOptions o;
  o.grace_period_seconds = grace;
  for (const std::string& name : names) {
    Result<Json> r = client_->Delete(PodPath(ns, name), o);
    if (!r.ok() && !IsNotFound(r.status()))
      log::Warning("pod groups: deleting pod {}/{}: {}", ns, name, r.status().ToString());
  }
}

}  // namespace lockstep::kube
