// The pod group scheduler's informers and worker loop. Gangs are recovered after a restart in
// pod_group_recovery.cc, reconciled in pod_group_reconcile.cc, bound in pod_group_binding.cc.
#include "backend/kubernetes/gangs/pod_group_scheduler.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/gangs/gang_json.h"
#include "backend/kubernetes/gangs/pod_group_status.h"
#include "backend/kubernetes/objects/node_proto.h"
#include "backend/kubernetes/objects/pod_proto.h"
#include "common/log.h"

namespace lockstep::kube {

using gangs_internal::Clock;
using gangs_internal::Deleting;
using gangs_internal::Meta;
using gangs_internal::Str;

namespace {

// An object's metadata.resourceVersion as a number (0 when absent), for SettleForTest.
std::uint64_t ResourceVersionOf(const Json& object) {
  auto m = object.find("metadata");
  if (m == object.end() || !m->is_object() || !m->contains("resourceVersion")) return 0;
  const Json& v = (*m)["resourceVersion"];
  return v.is_string() ? std::strtoull(v.get_ref<const std::string&>().c_str(), nullptr, 10) : 0;
}

}  // namespace

std::string GangKeyOf(const Json& pod, bool pod_groups) {
  const std::string& ns = Str(pod, "metadata", "namespace");
  const std::string& gang = Meta(pod, "annotations", kGangAnnotation);
  if (std::optional<std::string> g = PodGroupName(pod); g && (pod_groups || gang.empty()))
    return ns + "/" + *g;
  if (!gang.empty()) return ns + "/" + gang;
  return ns + "/" + Str(pod, "metadata", "name");
}

PodGroupScheduler::PodGroupScheduler(KubeClient* client, backend::EventSink& events,
                                     backend::Admission& admission,
                                     PodGroupSchedulerOptions options)
    : client_(client),
      sink_(events),
      admission_(admission),
      options_(std::move(options)),
      binder_(client) {}

PodGroupScheduler::~PodGroupScheduler() {
  Stop();
}

void PodGroupScheduler::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_) return;
    started_ = true;
  }
  if (options_.bind_client_options) {
    // One kept-alive connection per binder: a smaller pool would close the surplus after each
    // request, and every Binding would then pay a TLS handshake.
    ClientOptions bind_options = *options_.bind_client_options;
    bind_options.transport.max_idle_connections = std::max<std::size_t>(
        bind_options.transport.max_idle_connections, std::max(options_.bind_threads, 1));
    Result<std::unique_ptr<KubeClient>> c = KubeClient::Create(client_->config(), bind_options);
    if (c.ok()) {
      bind_client_ = std::move(*c);
      binder_ = bind_client_.get();
    } else {
      log::Warning("pod groups: bind client: {}; binding with the main one", c.status().ToString());
    }
  }
  events_ = std::make_unique<GangEvents>(client_, options_.event_component, *options_.clock);
  pool_ = std::make_unique<WorkPool>(options_.bind_threads);
  submit_pool_ = std::make_unique<WorkPool>(options_.submit_threads);
  ListOptions probe;
  probe.limit = 1;
  Result<Json> groups = client_->List(kPodGroupApi, probe);
  pod_groups_available_ = groups.ok() || !IsNotFound(groups.status());
  if (!pod_groups_available_) {
    log::Info(
        "pod groups: the PodGroup CRD (scheduling.x-k8s.io/v1alpha1) is not installed: gangs "
        "come from lockstep.dev/gang annotations only");
  } else {
    PodGroupStatusWriterOptions so;
    so.interval = options_.status_interval;
    so.clock = options_.clock;
    status_ = std::make_unique<PodGroupStatusWriter>(
        client_, [this](const std::string& key) { return StatusPatchOf(key); }, so);
    if (before_status_write_for_test_)
      status_->SetBeforeWriteForTest(before_status_write_for_test_);
    status_->Start();
    InformerHandlers h;
    h.on_add = [this](const Json& g) { OnPodGroup(g, true); };
    h.on_update = [this](const Json&, const Json& g) { OnPodGroup(g, true); };
    h.on_delete = [this](const Json& g) { OnPodGroup(g, false); };
    InformerOptions go;
    go.path = kPodGroupApi;
    groups_informer_ = std::make_unique<Informer>(client_, std::move(go), std::move(h));
    groups_informer_->Start();
  }
  // Nodes: what their labels and taints allow (placement features of gangs), from an informer
  // of its own unless they are forwarded.
  features_ = std::make_unique<PlacementFeatures>(&admission_);
  if (!options_.nodes_synced) {
    InformerHandlers nh;
    nh.on_add = [this](const Json& n) { NodeChanged(n, true); };
    nh.on_update = [this](const Json&, const Json& n) { NodeChanged(n, true); };
    nh.on_delete = [this](const Json& n) { NodeChanged(n, false); };
    InformerOptions no;
    no.path = NodesPath();
    no.label_selector = options_.node_selector;
    if (options_.protobuf_nodes) no.protobuf = &NodeJsonFromProto;
    nodes_informer_ = std::make_unique<Informer>(client_, std::move(no), std::move(nh));
    nodes_informer_->Start();
  }
  InformerHandlers h;
  // The pods are kept here (pods_), not in the informer too.
  // Each change handled is noted for SettleForTest().
  auto note = [this](std::uint64_t rv) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      pods_applied_rv_ = std::max(pods_applied_rv_, rv);
    }
    settled_.notify_all();
  };
  h.on_upsert = [this, note](Json p) {
    const std::uint64_t rv = ResourceVersionOf(p);
    OnPod(std::move(p), true);
    note(rv);
  };
  h.on_delete = [this, note](const Json& p) {
    OnPod(p, false);
    note(ResourceVersionOf(p));
  };
  InformerOptions io;
  io.keep_objects = false;
  io.path = PodsPath("");
  io.page_size = options_.list_page_size;
  io.field_selector = "spec.schedulerName=" + options_.scheduler_name;
  io.label_selector = std::string("!") + kJobIdLabel;  // lockstep's own pods: the core backend's
  if (options_.protobuf_pods) io.protobuf = &SchedulingPodJsonFromProto;
  pods_informer_ = std::make_unique<Informer>(client_, std::move(io), std::move(h));
  pods_informer_->Start();
  worker_ = std::thread([this] { Run(); });
}

void PodGroupScheduler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  wake_.notify_all();
  if (status_) status_->Stop();
  if (pods_informer_) pods_informer_->Stop();
  if (groups_informer_) groups_informer_->Stop();
  if (nodes_informer_) nodes_informer_->Stop();
  if (worker_.joinable()) worker_.join();
  if (submit_pool_) submit_pool_->Stop();
  if (pool_) pool_->Stop();
}

bool PodGroupScheduler::WaitForReady(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return wake_.wait_for(lock, timeout, [&] { return ready_ || stop_; }) && ready_;
}

PodGroupSchedulerStats PodGroupScheduler::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  PodGroupSchedulerStats s = stats_;
  s.pods = static_cast<std::int64_t>(pod_gang_.size());
  if (status_) s.status_writes = status_->writes();
  return s;
}

JobId PodGroupScheduler::JobOfGangForTest(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = groups_.find(key);
  return it == groups_.end() ? 0 : it->second.job;
}

bool PodGroupScheduler::HasPodGroupForTest(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return pod_groups_.count(key) > 0;
}

void PodGroupScheduler::Bind(const backend::LaunchOrder& order) {
  Order o;
  o.job = order.job;
  o.run = order.run;
  o.external = order.external;
  for (const backend::PlacedNode& n : order.nodes) o.nodes.push_back(n.node);
  {
    std::lock_guard<std::mutex> lock(mu_);
    orders_.push_back(std::move(o));
    ++stats_.bind_orders;
  }
  wake_.notify_all();
}

void PodGroupScheduler::Terminate(JobId job, std::int32_t run) {
  Order o;
  o.bind = false;
  o.job = job;
  o.run = run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    orders_.push_back(std::move(o));
  }
  wake_.notify_all();
}

void PodGroupScheduler::OnPod(Json pod, bool present) {
  std::string key = GangKeyOf(pod, pod_groups_available_);
  const std::string name = Str(pod, "metadata", "name");
  const std::string id = Str(pod, "metadata", "namespace") + "/" + name;
  // A bound gang ends only when one of its pods ends, goes or is replaced; its other updates
  // (the Bindings, Running), one per pod per change, need no look.
  const bool may_end = !present || Str(pod, "status", "phase") == "Succeeded" ||
                       Str(pod, "status", "phase") == "Failed";
  const std::string uid = Str(pod, "metadata", "uid");
  const bool in_pod_group = PodGroupName(pod).has_value();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The worker drains dirty_ before it waits again: it needs waking only when dirty_ was
    // empty. (A first list files thousands of pods a second; a wakeup for each would take the
    // worker off the CPU as often, and the CPU it waits for is the apiserver's too.)
    const bool worker_idle = dirty_.empty();
    // A pod gone leaves the gang it was filed in: after a re-list its last state is only what
    // identifies it (the informer keeps no copy of the pods), without the labels of its gang.
    if (!present)
      if (auto filed = pod_gang_.find(id); filed != pod_gang_.end()) key = filed->second;
    // A pod whose labels moved it to another gang leaves its old one.
    auto erase = [&](const std::string& from) {
      auto it = pods_.find(from);
      if (it == pods_.end()) return;
      it->second.erase(name);
      if (it->second.empty()) pods_.erase(it);
      ChangedLocked(from);
      MarkStatusDirty(from);
    };
    std::string moved_from;
    if (auto it = pod_gang_.find(id); it != pod_gang_.end() && (!present || it->second != key)) {
      moved_from = it->second;
      erase(it->second);
      pod_gang_.erase(it);
    }
    if (in_pod_group) MarkStatusDirty(key);
    if (present) {
      pods_[key][name] = std::make_shared<const Json>(std::move(pod));
      pod_gang_[id] = key;
    }
    last_change_[key] = ++change_seq_;
    auto g = groups_.find(key);
    if (!may_end && moved_from.empty() && g != groups_.end() &&
        g->second.phase == Phase::kRunning) {
      auto member = g->second.pods.find(name);
      if (member != g->second.pods.end() && member->second == uid) return;
    }
    // A new gang's pods arrive one by one (a first list, a controller creating them): it needs
    // no look until there are enough of them (Reconcile's first test).
    const bool waits_for_pods =
        (g == groups_.end() || g->second.phase == Phase::kNone) && TooFewPodsLocked(key);
    if (!waits_for_pods) dirty_.insert(key);
    if (!worker_idle || dirty_.empty()) return;
  }
  wake_.notify_all();
}

void PodGroupScheduler::OnPodGroup(const Json& group, bool present) {
  std::string key = ObjectKey(group);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (present)
      pod_groups_[key] = group;
    else
      pod_groups_.erase(key);
    ChangedLocked(key);
  }
  wake_.notify_all();
  if (status_) {
    if (present)
      MarkStatusDirty(key);
    else
      status_->Forget(key);
  }
  {  // handled, status marks included (SettleForTest)
    std::lock_guard<std::mutex> lock(mu_);
    groups_applied_rv_ = std::max(groups_applied_rv_, ResourceVersionOf(group));
  }
  settled_.notify_all();
}

void PodGroupScheduler::ChangedLocked(const std::string& key) {
  last_change_[key] = ++change_seq_;
  dirty_.insert(key);
}

void PodGroupScheduler::NodeChanged(const Json& node, bool present) {
  if (!features_->OnNode(node, present)) return;  // labels and taints as they were
  {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_changed_ = true;
  }
  wake_.notify_all();
}

bool PodGroupScheduler::SettleForTest(std::uint64_t resource_version,
                                      std::chrono::milliseconds timeout,
                                      std::uint64_t pod_groups_rv) {
  std::unique_lock<std::mutex> lock(mu_);
  return settled_.wait_for(lock, timeout, [&] {
    return pods_applied_rv_ >= resource_version && groups_applied_rv_ >= pod_groups_rv &&
           !working_ && orders_.empty() && dirty_.empty() && !tick_for_test_ && !nodes_changed_ &&
           pool_tasks_ == 0;
  });
}

bool PodGroupScheduler::StatusSettledForTest(std::chrono::milliseconds timeout) {
  return !status_ || status_->SettleForTest(timeout);
}

void PodGroupScheduler::PostCounted(WorkPool& pool, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++pool_tasks_;
  }
  // A task that Stop() drops is never counted down: nobody settles a stopped scheduler.
  pool.Post([this, task = std::move(task)] {
    task();
    {
      std::lock_guard<std::mutex> lock(mu_);
      --pool_tasks_;
    }
    settled_.notify_all();
  });
}

void PodGroupScheduler::TickForTest() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tick_for_test_ = true;
  }
  wake_.notify_all();
}

bool PodGroupScheduler::WaitsLocked(const Group& g) {
  switch (g.phase) {
    case Phase::kSubmitting:
    case Phase::kPending:
    case Phase::kBinding:  // may fail, and the job wait again
      return true;
    case Phase::kRunning:
      return false;
    case Phase::kNone:  // submitted again when nodes change or its retry time comes
      return !g.failure.empty() && g.retry_at != Clock::time_point::max();
  }
  return false;
}

void PodGroupScheduler::RetryFailedGangs() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = options_.clock->MonotonicNow();
    for (auto& [key, g] : groups_)
      if (g.phase == Phase::kNone && WaitsLocked(g)) {
        g.retry_at = now;
        dirty_.insert(key);
      }
  }
  wake_.notify_all();
}

void PodGroupScheduler::MarkStatusDirty(const std::string& key) {
  if (status_) status_->MarkDirty(key);  // its lock is taken after ours, never before
}

std::optional<PodGroupStatusPatch> PodGroupScheduler::StatusPatchOf(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto group = pod_groups_.find(key);
  if (group == pod_groups_.end() || !ready_) return std::nullopt;
  PodGroupStatusInput in;
  in.pod_group = &group->second;
  if (auto pods = pods_.find(key); pods != pods_.end())
    for (const auto& [name, pod] : pods->second) in.pods.push_back(pod.get());
  if (auto g = groups_.find(key); g != groups_.end()) {
    in.binding = g->second.phase == Phase::kBinding;
    in.schedule_start = g->second.schedule_start;
  }
  std::optional<Json> status = PodGroupStatusUpdate(in);
  if (!status) return std::nullopt;
  const std::string ns = key.substr(0, key.find('/'));
  return PodGroupStatusPatch{"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + ns + "/podgroups/" +
                                 key.substr(key.find('/') + 1),
                             Str(group->second, "metadata", "uid"), std::move(*status)};
}

void PodGroupScheduler::MarkDirty(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirty_.insert(key);
  }
  wake_.notify_all();
}

std::vector<SharedPod> PodGroupScheduler::PodsOf(const std::string& key, bool lock) const {
  std::unique_lock<std::mutex> guard(mu_, std::defer_lock);
  if (lock) guard.lock();
  std::vector<SharedPod> out;
  if (auto it = pods_.find(key); it != pods_.end())
    for (const auto& [name, pod] : it->second) out.push_back(pod);
  return out;
}

std::map<std::string, Json> PodGroupScheduler::PodGroupsFor(
    const std::vector<SharedPod>& pods) const {
  std::map<std::string, Json> out;
  for (const SharedPod& shared : pods) {
    const Json& p = *shared;
    std::optional<std::string> g = PodGroupName(p);
    if (!g) continue;
    std::string key = Str(p, "metadata", "namespace") + "/" + *g;
    if (auto it = pod_groups_.find(key); it != pod_groups_.end()) out[key] = it->second;
  }
  return out;
}

void PodGroupScheduler::Run() {
  std::optional<Clock::time_point> listed_at;
  auto nodes_synced = [&] {
    if (nodes_informer_) {
      if (!nodes_informer_->WaitForSync(std::chrono::milliseconds(100))) return false;
    } else if (!options_.nodes_synced()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return false;
    }
    // Listed here, but the controller applies the backend's node report on its own thread: a
    // gang submitted before that would be refused as fitting no node, and retried only after
    // retry_interval. Wait (a short poll, at start only) until it knows some node, at most 10 s
    // (a cluster without Nodes, or whose Nodes' resources it cannot read).
    if (!listed_at) listed_at = Clock::now();
    if (admission_.KnownNodes() > 0 || Clock::now() - *listed_at > std::chrono::seconds(10))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return false;
  };
  // Nodes and PodGroups first (small lists): gangs are judged by them. Pods may still be
  // arriving: complete gangs are submitted as they come, while the gangs of recovered jobs wait
  // for the whole list (FinishRecovery).
  while (!nodes_synced() ||
         (groups_informer_ && !groups_informer_->WaitForSync(std::chrono::milliseconds(100)))) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
  }
  RecoverJobs();
  bool recovered = false;
  auto next_tick = Clock::now();
  auto next_check = Clock::now() + std::chrono::seconds(5);
  for (;;) {
    std::deque<Order> orders;
    std::vector<std::string> keys;
    bool tick = false, nodes_changed = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_until(lock, next_tick, [&] {
        return stop_ || !orders_.empty() || !dirty_.empty() || nodes_changed_ || tick_for_test_;
      });
      if (stop_) return;
      nodes_changed = std::exchange(nodes_changed_, false);
      if (std::exchange(tick_for_test_, false) || Clock::now() >= next_tick) {
        tick = true;
        // Gangs whose submission failed are tried again when their time comes (by the injected
        // clock; the ticks themselves are real time).
        const auto now = options_.clock->MonotonicNow();
        for (auto& [key, g] : groups_)
          if (g.phase == Phase::kNone && !g.failure.empty() && g.retry_at <= now)
            dirty_.insert(key);
        next_tick = Clock::now() + std::min<std::chrono::milliseconds>(options_.retry_interval,
                                                              std::chrono::milliseconds(1000));
      }
      // Orders first: they are jobs the controller has started and waits on; those of recovered
      // jobs wait until their pods are known.
      orders.swap(orders_);
      if (!recovering_.empty())
        for (auto it = orders.begin(); it != orders.end();) {
          auto key = job_keys_.find(it->job);
          if (key == job_keys_.end() || !recovering_.count(key->second)) {
            ++it;
            continue;
          }
          held_.push_back(std::move(*it));
          it = orders.erase(it);
        }
      for (auto it = dirty_.begin(); it != dirty_.end() && keys.size() < 64;)
        keys.push_back(*it), it = dirty_.erase(it);
      working_ = true;
    }
    // Nodes relabelled, tainted, added: the placement features follow, and gangs that no node
    // allowed are tried again.
    if (nodes_changed && features_->Refresh()) RetryFailedGangs();
    if (tick)
      features_->Retain([this](const std::string& key) {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = groups_.find(key);
        return it != groups_.end() && WaitsLocked(it->second);
      });
    if (!recovered && pods_informer_->HasSynced()) {
      FinishRecovery();
      recovered = true;
    }
    for (const Order& o : orders) o.bind ? HandleBind(o) : HandleTerminate(o);
    for (const std::string& key : keys) Reconcile(key);
    if (Clock::now() >= next_check) {
      CheckPendingJobs();
      next_check = Clock::now() + std::chrono::seconds(5);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      working_ = false;
    }
    settled_.notify_all();
  }
}

}  // namespace lockstep::kube
