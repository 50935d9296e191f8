#include "backend/kubernetes/backend/kubernetes_backend.h"

#include <signal.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/objects/pod_builder.h"
#include "backend/kubernetes/objects/pod_usage.h"

#ifdef LOCKSTEP_HAVE_KUBE_GANGS
#include "backend/kubernetes/gangs/pod_group_scheduler.h"
#endif

namespace lockstep::kube {

#ifdef LOCKSTEP_HAVE_KUBE_GANGS
class PodGroupSchedulerHandle {
 public:
  PodGroupSchedulerHandle(KubeClient* client, controller::Controller* controller,
                          PodGroupSchedulerOptions options)
      : scheduler(client, controller, std::move(options)) {}
  PodGroupScheduler scheduler;
};
#else
class PodGroupSchedulerHandle {};
#endif

namespace {

using Clock = std::chrono::steady_clock;

void Log(const std::string& message) {
  std::fprintf(stderr, "lockstepd: kubernetes: %s\n", message.c_str());
}

std::string Label(const Json& obj, const char* key) {
  const Json* labels = nullptr;
  if (obj.contains("metadata") && obj["metadata"].contains("labels"))
    labels = &obj["metadata"]["labels"];
  if (!labels || !labels->contains(key) || !(*labels)[key].is_string()) return "";
  return (*labels)[key].get<std::string>();
}

std::string Meta(const Json& obj, const char* key) {
  if (!obj.contains("metadata") || !obj["metadata"].contains(key) ||
      !obj["metadata"][key].is_string())
    return "";
  return obj["metadata"][key].get<std::string>();
}

bool ParseInt(const std::string& s, long long* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18)
    return false;
  *out = std::stoll(s);
  return true;
}

// (job, run, rank) of a pod lockstep created; false for any other pod.
bool JobPodIdentity(const Json& pod, JobId* job, std::int32_t* run, std::int32_t* rank) {
  long long j = 0, r = 0, k = 0;
  if (!ParseInt(Label(pod, kJobIdLabel), &j) || !ParseInt(Label(pod, kRankLabel), &k)) return false;
  std::string run_label = Label(pod, kRunLabel);
  if (!run_label.empty() && !ParseInt(run_label, &r)) return false;
  *job = static_cast<JobId>(j);
  *run = static_cast<std::int32_t>(r);
  *rank = static_cast<std::int32_t>(k);
  return true;
}

// The node's address as the cluster knows it (InternalIP first).
std::string NodeAddress(const Json& node) {
  std::string best;
  if (!node.contains("status") || !node["status"].contains("addresses")) return best;
  for (const Json& a : node["status"]["addresses"]) {
    std::string type = a.value("type", ""), address = a.value("address", "");
    if (type == "InternalIP") return address;
    if (best.empty() && (type == "ExternalIP" || type == "Hostname")) best = address;
  }
  return best;
}

}  // namespace

KubernetesBackend::KubernetesBackend(KubeClient* client, controller::Controller* controller,
                                     KubernetesBackendOptions options)
    : client_(client), controller_(controller), options_(std::move(options)) {
  mapping_.switch_labels = options_.settings.switch_labels;
  mapping_.block_label = options_.settings.block_label;
  mapping_.ignored_taints = options_.settings.ignored_taints;
}

KubernetesBackend::~KubernetesBackend() {
  Stop();
}

Status EnsureNamespace(KubeClient& client, const std::string& ns) {
  Result<Json> created =
      client.Create(NamespacesPath(),
                    {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  if (created.ok() || IsAlreadyExists(created.status())) return Status();
  // Allowed to work in it but not to create namespaces: it may well exist.
  Result<Json> got = client.Get(NamespacesPath() + "/" + ns);
  if (got.ok() || !IsNotFound(got.status())) return Status();
  return NotFound("namespace " + ns +
                  " does not exist and cannot be created: " + created.status().message());
}

Status KubernetesBackend::Start() {
  LOCKSTEP_RETURN_IF_ERROR(EnsureNamespace(*client_, options_.settings.ns));
  InformerOptions node_options;
  node_options.path = NodesPath();
  node_options.label_selector = options_.settings.node_selector;
  InformerHandlers node_handlers;
  node_handlers.on_add = [this](const Json&) { OnNode(); };
  node_handlers.on_update = [this](const Json&, const Json&) { OnNode(); };
  node_handlers.on_delete = [this](const Json&) { OnNode(); };
  nodes_ = std::make_unique<Informer>(client_, node_options, node_handlers);
  InformerOptions pod_options;
  pod_options.path = PodsPath("");  // every namespace: others' pods take room too
  InformerHandlers pod_handlers;
  pod_handlers.on_add = [this](const Json& p) { OnPod(nullptr, &p, false); };
  pod_handlers.on_update = [this](const Json& o, const Json& p) { OnPod(&o, &p, false); };
  pod_handlers.on_delete = [this](const Json& p) { OnPod(nullptr, &p, true); };
  pods_ = std::make_unique<Informer>(client_, pod_options, pod_handlers);
#ifdef LOCKSTEP_HAVE_KUBE_GANGS
  PodGroupSchedulerOptions gang_options;
  gang_options.terminate_grace_seconds = options_.kill_wait;
  gangs_ = std::make_unique<PodGroupSchedulerHandle>(client_, controller_, gang_options);
  gangs_->scheduler.Start();
#endif
  reporter_ = std::thread([this] { ReportLoop(); });
  worker_ = std::thread([this] { WorkLoop(); });
  nodes_->Start();
  pods_->Start();
  return Status();
}

bool KubernetesBackend::WaitForNodes(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  if (!nodes_ || !nodes_->WaitForSync(timeout)) return false;
  if (!pods_->WaitForSync(std::chrono::duration_cast<std::chrono::milliseconds>(
          std::max(Clock::duration::zero(), deadline - Clock::now()))))
    return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_dirty_ = true;
  }
  cv_.notify_all();
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_until(lock, deadline, [&] { return reported_once_ || stopping_; }) &&
         reported_once_;
}

void KubernetesBackend::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !reporter_.joinable() && !worker_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
#ifdef LOCKSTEP_HAVE_KUBE_GANGS
  if (gangs_) gangs_->scheduler.Stop();
#endif
  if (nodes_) nodes_->Stop();
  if (pods_) pods_->Stop();
  if (reporter_.joinable()) reporter_.join();
  if (worker_.joinable()) worker_.join();
}

// ---------------------------------------------------------------------------------------------
// Nodes

void KubernetesBackend::OnNode() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_dirty_ = true;
  }
  cv_.notify_all();
}

void KubernetesBackend::ReportLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait(lock, [&] { return stopping_ || nodes_dirty_; });
    if (stopping_) break;
    // Gather the changes of the next moment into one report.
    cv_.wait_for(lock, options_.report_delay, [&] { return stopping_; });
    if (stopping_) break;
    if (!nodes_->HasSynced() || !pods_->HasSynced()) {
      cv_.wait_for(lock, std::chrono::milliseconds(50), [&] { return stopping_; });
      continue;
    }
    nodes_dirty_ = false;
    lock.unlock();
    ReportNodes();
    lock.lock();
    reported_once_ = true;
    cv_.notify_all();
  }
}

void KubernetesBackend::ReportNodes() {
  // What others' pods take, by node (a pod whose requests cannot be read is left out).
  std::map<std::string, PodResources> used_by;
  for (const Json& p : pods_->List()) {
    if (!TakesRoom(p)) continue;
    Result<PodResources> r = PodRequests(p);
    if (r.ok()) used_by[p["spec"].value("nodeName", "")] += *r;
  }
  const std::map<std::string, PodResources>* used = &used_by;
  std::vector<controller::NodeReport> reports;
  std::map<std::string, std::vector<Device>> devices;
  std::vector<std::string> errors;
  for (const Json& node : nodes_->List()) {
    Result<KubeNode> kn = NodeFromObject(node, mapping_);
    if (!kn.ok()) {
      errors.push_back(kn.status().message());
      continue;
    }
    auto u = used->find(kn->name);
    KubeNode free = u == used->end() ? *kn : WithoutUsage(*kn, u->second);
    controller::NodeReport r;
    r.name = free.name;
    r.cpus = free.cpus;
    r.mem_mb = free.mem_mb;
    std::vector<Device>& dev = devices[r.name];
    for (const GpuGroup& g : free.gpus)
      for (int i = 0; i < g.count; ++i) {
        r.gpus.push_back(g.type);
        dev.push_back({g.type, g.resource});
      }
    r.features = free.features;
    std::string path;
    for (const std::string& level : free.switch_path) {
      path += (path.empty() ? "" : "/") + level;
      r.switches.push_back(path);
    }
    r.block = free.block;
    r.address = NodeAddress(node);
    r.ready = free.state != engine::NodeState::kDown;
    r.down_reason = r.ready ? "" : free.reason;
    r.cordoned = free.state == engine::NodeState::kDrain;
    reports.push_back(std::move(r));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    devices_ = std::move(devices);
    for (const std::string& e : errors)
      if (node_errors_.insert(e).second) Log("node left out: " + e);
  }
  controller_->BackendNodes(reports);
}

// ---------------------------------------------------------------------------------------------
// Pods

bool KubernetesBackend::IsOwnJobPod(const Json& pod) const {
  return !Label(pod, kJobIdLabel).empty() && Meta(pod, "namespace") == options_.settings.ns;
}

bool KubernetesBackend::TakesRoom(const Json& pod) const {
  // Pods of other schedulers, and of another lockstepd (its own namespace).
  return PodOccupiesNode(pod) &&
         (!IsLockstepPod(pod) || (!Label(pod, kJobIdLabel).empty() && !IsOwnJobPod(pod)));
}

void KubernetesBackend::OnPod(const Json* old_pod, const Json* pod, bool deleted) {
  JobId job = 0;
  std::int32_t run = 0, rank = 0;
  if (!IsOwnJobPod(*pod) || !JobPodIdentity(*pod, &job, &run, &rank)) {
    if (TakesRoom(*pod) || (old_pod && TakesRoom(*old_pod))) OnNode();
    return;
  }
  std::function<void()> report;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RunState& r = runs_[{job, run}];
    if (r.ns.empty()) r.ns = Meta(*pod, "namespace");
    long long count = 0;
    const Json* ann = pod->contains("metadata") && (*pod)["metadata"].contains("annotations")
                          ? &(*pod)["metadata"]["annotations"]
                          : nullptr;
    if (r.expected < 0 && ann && ann->contains(kPodCountAnnotation) &&
        (*ann)[kPodCountAnnotation].is_string() &&
        ParseInt((*ann)[kPodCountAnnotation].get<std::string>(), &count))
      r.expected = static_cast<std::int32_t>(count);
    PodState& ps = r.pods[rank];
    ps.name = Meta(*pod, "name");
    if (deleted) {
      ps.gone = true;
    } else {
      Result<PodStatusEvent> ev = PodStatusEventOf(*pod, "job");
      if (!ev.ok()) ev = PodStatusEventOf(*pod);
      if (ev.ok() && !ps.status.ended) {
        ps.status = *ev;
        if (ev->cannot_start) {  // will not clear by itself: the run fails
          ps.status.ended = true;
          ps.status.exit_code = 1;
        }
      }
    }
    report = CheckRunLocked({job, run});
    if (std::getenv("LOCKSTEP_KUBE_DEBUG"))
      Log("pod " + ps.name + " job " + std::to_string(job) + " run " + std::to_string(run) +
          " phase " + PodPhaseName(ps.status.phase) + (ps.status.ended ? " ended" : "") +
          (ps.gone ? " gone" : "") + " expected " + std::to_string(r.expected) +
          (r.launching ? " launching" : "") + (report ? " -> report" : ""));
    // A run that has ended and left nothing behind is forgotten.
    if (r.reported && !r.launching &&
        std::all_of(r.pods.begin(), r.pods.end(), [](const auto& x) { return x.second.gone; }))
      runs_.erase({job, run});
  }
  cv_.notify_all();
  if (report) report();
}

KubernetesBackend::RunExit KubernetesBackend::RunExitOf(const RunState& r) {
  // The exit of the pod whose failure tore the run down, else of the first (by rank) that
  // failed: the pods deleted because of it are not the cause. A pod deleted before it ended was
  // killed.
  RunExit out;
  auto exit_of = [&](const PodState& p) {
    if (p.status.ended) {
      out.exit_code = p.status.exit_code;
      out.signal = p.status.signal;
    } else if (p.gone) {
      out.signal = r.kill_signal ? r.kill_signal : SIGKILL;
    }
  };
  for (const auto& [rank, p] : r.pods) out.oom = out.oom || p.status.oom;
  if (auto cause = r.pods.find(r.cause_rank); cause != r.pods.end()) {
    exit_of(cause->second);
    return out;
  }
  for (const auto& [rank, p] : r.pods) {
    if (out.exit_code != 0 || out.signal != 0) break;
    exit_of(p);
  }
  return out;
}

std::function<void()> KubernetesBackend::CheckRunLocked(const RunKey& key) {
  auto it = runs_.find(key);
  if (it == runs_.end()) return nullptr;
  RunState& r = it->second;
  if (r.reported || r.launching || r.launch_failed || r.external || r.expected < 0) return nullptr;
  int done = 0;
  std::int32_t first_failed = -1;
  for (const auto& [rank, p] : r.pods) {
    if (p.gone || p.status.ended) ++done;
    if (first_failed < 0 && p.failed()) first_failed = rank;
  }
  if (done < r.expected) {
    // One pod failed while others run: a distributed job cannot go on without it.
    if (first_failed >= 0 && !r.terminating && !stopping_) {
      r.terminating = true;
      r.cause_rank = first_failed;
      r.kill_signal = SIGTERM;
      r.force_at =
          Clock::now() + std::chrono::seconds(options_.kill_wait) + options_.force_delete_after;
      Op op;
      op.kind = Op::kDelete;
      op.key = key;
      op.grace = options_.kill_wait;
      op.signal = SIGTERM;
      work_.push_back(std::move(op));
    }
    return nullptr;
  }
  r.reported = true;
  const RunExit exit = RunExitOf(r);
  // The Service goes with the job's last run.
  Op op;
  op.kind = Op::kDeleteService;
  op.key = key;
  work_.push_back(std::move(op));
  controller::Controller* c = controller_;
  return [c, key, exit] {
    c->BackendTaskExited(key.first, key.second, exit.exit_code, exit.signal, exit.oom);
  };
}

// ---------------------------------------------------------------------------------------------
// The controller's calls: they only queue.

void KubernetesBackend::Enqueue(Op op) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    work_.push_back(std::move(op));
  }
  cv_.notify_all();
}

void KubernetesBackend::Launch(controller::LaunchOrder order) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    RunState& r = runs_[{order.job, order.run}];
    r.launching = true;
    r.external = !order.external.empty();
    r.ns = options_.settings.ns;
  }
  Op op;
  op.kind = Op::kLaunch;
  op.key = {order.job, order.run};
  op.order = std::move(order);
  Enqueue(std::move(op));
}

void KubernetesBackend::Terminate(JobId job, std::int32_t run, Seconds grace) {
  Op op;
  op.kind = Op::kDelete;
  op.key = {job, run};
  op.grace = std::max<Seconds>(0, grace);
  op.signal = grace > 0 ? SIGTERM : SIGKILL;
  Enqueue(std::move(op));
}

void KubernetesBackend::Signal(JobId job, std::int32_t run, int signo) {
  if (signo == SIGKILL || signo == SIGTERM) {
    Terminate(job, run, signo == SIGKILL ? 0 : options_.kill_wait);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (unsupported_signals_.insert(signo).second)
    Log("signal " + std::to_string(signo) +
        " cannot be delivered to pods (only SIGTERM and SIGKILL, by deleting them); ignored");
}

// ---------------------------------------------------------------------------------------------
// The worker

void KubernetesBackend::WorkLoop() {
  // Deletions and adoption need to know the pods that exist.
  while (!pods_->WaitForSync(std::chrono::milliseconds(200))) {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
  }
  ReconcileVanishedRuns();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    // The earliest forced deletion due.
    auto next = Clock::time_point::max();
    for (const auto& [key, r] : runs_)
      if (r.terminating && !r.reported) next = std::min(next, r.force_at);
    if (work_.empty()) {
      if (next == Clock::time_point::max())
        cv_.wait(lock, [&] { return stopping_ || !work_.empty(); });
      else
        cv_.wait_until(lock, next, [&] { return stopping_ || !work_.empty(); });
    }
    if (stopping_) break;
    if (!work_.empty()) {
      Op op = std::move(work_.front());
      work_.pop_front();
      lock.unlock();
      Run(std::move(op));
      lock.lock();
    } else if (Clock::now() >= next) {
      lock.unlock();
      DoForce();
      lock.lock();
    }
  }
}

void KubernetesBackend::ReconcileVanishedRuns() {
  // lockstepd restarted: a job it recorded RUNNING whose pods were all deleted while it was
  // down would otherwise wait forever for their end. Its run failed like a node: requeued, or
  // ended when it may not be. Pod groups of others are the gangs component's to reconcile.
  nlohmann::json listed = controller_->ListJobs(nlohmann::json::object());
  std::vector<std::pair<JobId, std::int32_t>> vanished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const nlohmann::json& j : listed.value("jobs", nlohmann::json::array())) {
      std::string state = j.value("state", "");
      if ((state != "RUNNING" && state != "COMPLETING") || j.contains("external")) continue;
      RunKey key{j.value("job_id", JobId{0}), j.value("restart_count", 0)};
      auto it = runs_.find(key);
      // A run being launched now (this lockstepd started it) has no pods yet, rightly.
      bool alive = it != runs_.end() &&
                   (it->second.launching || it->second.external ||
                    std::any_of(it->second.pods.begin(), it->second.pods.end(),
                                [](const auto& rank_pod) { return !rank_pod.second.gone; }));
      if (!alive) vanished.push_back(key);
    }
  }
  for (const auto& [job, run] : vanished)
    controller_->BackendLaunchFailed(job, run,
                                     "its pods are gone (deleted while lockstepd was down)");
}

void KubernetesBackend::Run(Op op) {
  switch (op.kind) {
    case Op::kLaunch:
      DoLaunch(op.order);
      break;
    case Op::kDelete:
      DoDelete(op.key, op.grace, op.signal);
      break;
    case Op::kForce:
      DoForce();
      break;
    case Op::kDeleteService: {
      std::string ns;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = runs_.find(op.key);
        ns = it == runs_.end() || it->second.ns.empty() ? options_.settings.ns : it->second.ns;
      }
      DoDeleteService(op.key.first, ns);
      break;
    }
  }
}

void KubernetesBackend::DoLaunch(const controller::LaunchOrder& order) {
  const RunKey key{order.job, order.run};
  auto fail = [&](const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      RunState& r = runs_[key];
      r.launching = false;
      r.launch_failed = true;
      r.reported = true;
    }
    Log("job " + std::to_string(order.job) + ": launch failed: " + why);
    controller_->BackendLaunchFailed(order.job, order.run, why);
  };
  if (!order.external.empty()) {
#ifdef LOCKSTEP_HAVE_KUBE_GANGS
    {
      std::lock_guard<std::mutex> lock(mu_);
      runs_[key].launching = false;
    }
    gangs_->scheduler.Bind(order);
#else
    // TODO(kubernetes-gangs): bind through PodGroupScheduler once gangs/ is built in.
    fail("pod groups of other creators are not supported by this build");
#endif
    return;
  }
  JobPodsSpec spec;
  spec.job_id = order.job;
  spec.job_name = order.name;
  spec.user = order.user;
  spec.uid = order.uid;
  spec.gid = order.gid;
  spec.partition = order.partition;
  spec.ns = options_.settings.ns;
  spec.image = order.container_image.empty() ? options_.settings.image : order.container_image;
  spec.script = order.script;
  spec.args = order.script_args;
  spec.env = order.env;
  spec.mode = options_.settings.pods == spec::KubernetesSettings::Pods::kPerTask
                  ? PodMode::kPerTask
                  : PodMode::kPerNode;
  spec.termination_grace = options_.kill_wait;
  spec.time_limit = order.time_limit;
  spec.master_port = options_.settings.master_port;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::size_t i = 0; i < order.nodes.size(); ++i) {
      const controller::PlacedNode& p = order.nodes[i];
      PodNodeAllocation a;
      a.node = p.node;
      a.cpus = p.cpus;
      a.mem_mb = p.mem_mb;
      a.tasks = i < order.tasks_per_node.size() ? std::max(1, order.tasks_per_node[i]) : 1;
      const std::vector<Device>& dev = devices_[p.node];
      for (int bit = 0; bit < 64; ++bit) {
        if (!(p.gpus >> bit & 1)) continue;
        if (static_cast<std::size_t>(bit) >= dev.size()) continue;  // the node shrank meanwhile
        auto g = std::find_if(a.gpus.begin(), a.gpus.end(),
                              [&](const GpuGroup& x) { return x.resource == dev[bit].resource; });
        if (g == a.gpus.end())
          a.gpus.push_back({dev[bit].type, 1, dev[bit].resource});
        else
          ++g->count;
      }
      spec.allocation.push_back(std::move(a));
    }
  }
  Result<JobPods> built = BuildJobPods(spec);
  if (!built.ok()) return fail(built.status().message());
  const int count = static_cast<int>(built->pods.size());
  for (Json& pod : built->pods) {
    pod["metadata"]["labels"][kRunLabel] = std::to_string(order.run);
    pod["metadata"]["annotations"][kPodCountAnnotation] = std::to_string(count);
  }
  const std::string& ns = spec.ns;
  const std::string pods_path = PodsPath(ns);
  Result<Json> svc = client_->Create("/api/v1/namespaces/" + ns + "/services", built->service);
  if (!svc.ok() && !IsAlreadyExists(svc.status()))
    return fail("service " + built->service_name + ": " + svc.status().message());
  std::vector<std::string> created;
  std::string error;
  for (const Json& pod : built->pods) {
    const std::string name = pod["metadata"]["name"].get<std::string>();
    Result<Json> r = client_->Create(pods_path, pod);
    if (!r.ok() && IsAlreadyExists(r.status())) {
      // A pod of an earlier run of this job, still being deleted: remove it and try again.
      Result<Json> old = client_->Get(PodPath(ns, name));
      if (old.ok() && Label(*old, kJobIdLabel) == std::to_string(order.job) &&
          Label(*old, kRunLabel) != std::to_string(order.run)) {
        DeleteOptions now;
        now.grace_period_seconds = 0;
        (void)client_->Delete(PodPath(ns, name), now);
        r = client_->Create(pods_path, pod);
      }
    }
    if (!r.ok()) {
      error = "pod " + ns + "/" + name + ": " + r.status().message();
      break;
    }
    created.push_back(name);
  }
  if (!error.empty()) {
    // All or none: the pods made so far go, at once.
    for (const std::string& name : created) {
      DeleteOptions now;
      now.grace_period_seconds = 0;
      Result<Json> d = client_->Delete(PodPath(ns, name), now);
      if (!d.ok() && !IsNotFound(d.status()))
        Log("job " + std::to_string(order.job) + ": cannot delete pod " + name + ": " +
            d.status().message());
    }
    return fail(error);
  }
  std::function<void()> report;
  {
    std::lock_guard<std::mutex> lock(mu_);
    RunState& r = runs_[key];
    r.launching = false;
    r.expected = count;
    r.ns = ns;
    // Known before the informer tells: a deletion right after the launch finds them.
    for (int rank = 0; rank < count; ++rank)
      if (r.pods[rank].name.empty()) r.pods[rank].name = created[rank];
    report = CheckRunLocked(key);  // pods may have ended already
  }
  cv_.notify_all();
  if (report) report();
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
        controller::Controller* c = controller_;
        report = [c, key, signal] {
          c->BackendTaskExited(key.first, key.second, 0, signal, false);
        };
      }
    } else {
      RunState& r = it->second;
      if (ns.empty()) ns = r.ns;
      for (const auto& [rank, p] : r.pods)
        if (!p.gone &&
            std::none_of(pods.begin(), pods.end(), [&](const auto& x) { return x.first == rank; }))
          pods.emplace_back(rank, p.name);
      // Pods that have ended hold nothing and keep their logs: finished_pod_ttl removes them.
      std::erase_if(pods, [&](const auto& rank_name) {
        auto p = r.pods.find(rank_name.first);
        return p != r.pods.end() && p->second.status.ended;
      });
      const auto force_at =
          Clock::now() + std::chrono::seconds(grace) + options_.force_delete_after;
      if (!r.terminating || signal == SIGKILL || force_at < r.force_at) r.force_at = force_at;
      if (!r.terminating || signal == SIGKILL) r.kill_signal = signal;
      r.terminating = true;
    }
  }
  if (report) return report();
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
    const auto now = Clock::now();
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
    for (const auto& [key, r] : runs_)
      if (key.first == job && !r.reported) return;  // a later run uses it
  }
  Result<Json> d =
      client_->Delete("/api/v1/namespaces/" + ns + "/services/" + JobServiceName("lockstep", job));
  if (!d.ok() && !IsNotFound(d.status()))
    Log("job " + std::to_string(job) + ": cannot delete its service: " + d.status().message());
}

// ---------------------------------------------------------------------------------------------
// Logs

Result<std::string> KubernetesBackend::Logs(JobId job, std::int32_t run) {
  if (!pods_) return FailedPrecondition("the kubernetes backend is not started");
  std::string ns;
  std::vector<std::pair<std::int32_t, std::string>> pods = RunPodsFromCache({job, run}, &ns);
  if (pods.empty())
    return NotFound("job " + std::to_string(job) + " has no pods (run " + std::to_string(run) +
                    "): they were deleted, or never created");
  std::string out;
  for (const auto& [rank, name] : pods) {
    Result<std::string> text = client_->GetText(PodPath(ns, name) + "/log", {{"container", "job"}});
    if (!text.ok())
      return Status(text.status().code(),
                    "logs of pod " + ns + "/" + name + ": " + text.status().message());
    if (pods.size() == 1) return *text;
    std::size_t start = 0;
    while (start < text->size()) {
      std::size_t nl = text->find('\n', start);
      std::size_t end = nl == std::string::npos ? text->size() : nl + 1;
      out += name + ": " + text->substr(start, end - start);
      if (nl == std::string::npos) out += "\n";
      start = end;
    }
  }
  return out;
}

}  // namespace lockstep::kube
