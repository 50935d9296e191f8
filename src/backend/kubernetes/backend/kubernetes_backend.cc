#include "backend/kubernetes/backend/kubernetes_backend.h"

#include <signal.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>

#include "backend/kubernetes/backend/backend_internal.h"
#include "backend/kubernetes/backend/exec_steps.h"
#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/objects/node_proto.h"
#include "backend/kubernetes/objects/pod_builder.h"
#include "backend/kubernetes/objects/pod_usage.h"
#include "backend/output_file.h"

namespace lockstep::kube {

namespace {

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

using backend_internal::Clock;
using backend_internal::JobPodIdentity;
using backend_internal::Label;
using backend_internal::Log;
using backend_internal::Meta;
using backend_internal::ParseInt;

KubernetesBackend::KubernetesBackend(KubeClient* client, backend::EventSink& events,
                                     backend::Admission* admission,
                                     KubernetesBackendOptions options)
    : client_(client), events_(events), admission_(admission), options_(std::move(options)) {
  storage_ = options_.storage;
  mapping_.switch_labels = options_.settings.switch_labels;
  mapping_.block_label = options_.settings.block_label;
  mapping_.ignored_taints = options_.settings.ignored_taints;
  for (const std::string& c : options_.settings.health_conditions)
    if (Result<TroubleCondition> t = ParseTroubleCondition(c); t.ok())  // the config checked it
      trouble_conditions_.push_back(*t);
  exec_steps_ = std::make_unique<ExecSteps>(client_->config(), events_);
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
  if (options_.protobuf_nodes) node_options.protobuf = &NodeJsonFromProto;
  // The pod-group scheduler places gangs by the Nodes' labels and taints: it gets this
  // informer's events rather than keeping a second cache of every Node.
  auto on_node = [this](const Json& node, bool present) {
    OnNode();
#ifdef LOCKSTEP_HAVE_KUBE_GANGS
    if (gangs_) gangs_->scheduler.NodeChanged(node, present);
#else
    (void)node, (void)present;
#endif
  };
  InformerHandlers node_handlers;
  node_handlers.on_add = [on_node](const Json& n) { on_node(n, true); };
  node_handlers.on_update = [on_node](const Json&, const Json& n) { on_node(n, true); };
  node_handlers.on_delete = [on_node](const Json& n) { on_node(n, false); };
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
  ClientOptions bind_options = client_->options();
  bind_options.qps = options_.settings.bind_qps;
  gang_options.bind_client_options = bind_options;
  gang_options.nodes_synced = [this] { return nodes_->HasSynced(); };  // NodeChanged() from it
  if (admission_) {
    gangs_ = std::make_unique<PodGroupSchedulerHandle>(client_, events_, admission_, gang_options);
    gangs_->scheduler.Start();
  }
#endif
  reporter_ = std::thread([this] { ReportLoop(); });
  worker_ = std::thread([this] { WorkLoop(); });
  nodes_->Start();
  pods_->Start();
  return Status();
}

bool KubernetesBackend::WaitForNodes(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;  // a real-time wait
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
  exec_steps_->Stop();
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
  std::vector<backend::NodeReport> reports;
  std::map<std::string, std::vector<Device>> devices;
  std::vector<std::string> errors;
  const std::vector<Json> nodes = nodes_->List();
  for (const Json& node : nodes) {
    Result<KubeNode> kn = NodeFromObject(node, mapping_);
    if (!kn.ok()) {
      errors.push_back(kn.status().message());
      continue;
    }
    auto u = used->find(kn->name);
    KubeNode free = u == used->end() ? *kn : WithoutUsage(*kn, u->second);
    backend::NodeReport r;
    r.name = free.name;
    backend::NodeResources& res = r.resources.emplace();
    res.cpus = free.cpus;
    res.mem_mb = free.mem_mb;
    std::vector<Device>& dev = devices[r.name];
    for (const GpuGroup& g : free.gpus)
      for (int i = 0; i < g.count; ++i) {
        res.gpus.push_back(g.type);
        dev.push_back({g.type, g.resource});
      }
    res.features = free.features;
    std::string path;
    for (const std::string& level : free.switch_path) {
      path += (path.empty() ? "" : "/") + level;
      res.switches.push_back(path);
    }
    res.block = free.block;
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
  events_.NodesReported(std::move(reports), /*complete=*/true);
  ReportNodeHealth(nodes);
}

void KubernetesBackend::ReportNodeHealth(const std::vector<Json>& nodes) {
  std::vector<backend::NodeHealthReport> changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Json& node : nodes) {
      backend::NodeHealthReport r =
          NodeHealthFromObject(node, trouble_conditions_, mapping_.gpu_resource);
      if (r.node.empty()) continue;
      std::string key;
      for (const backend::HealthFinding& f : r.findings) key += f.check + "|" + f.detail + "\n";
      auto [it, first] = node_health_sent_.try_emplace(r.node, key);
      if (!first && it->second == key) continue;
      it->second = key;
      changed.push_back(std::move(r));
    }
  }
  for (backend::NodeHealthReport& r : changed) events_.NodeHealth(std::move(r));
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
    ps.uid = Meta(*pod, "uid");
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
        if (ps.status.ended) ps.ended_at = ev->finished_at > 0 ? ev->finished_at : WallNow();
      }
    }
    report = CheckRunLocked({job, run});
    // Written once the change is accounted for (the end-to-end tests wait for it before they
    // assert that a run has not ended).
    log::Debug("kubernetes: pod {} job {} run {} phase {}{}{} expected {}{}{}", ps.name, job, run,
               PodPhaseName(ps.status.phase), ps.status.ended ? " ended" : "",
               ps.gone ? " gone" : "", r.expected, r.launching ? " launching" : "",
               report ? " -> report" : "");
    // A run that has ended and left nothing behind is forgotten; the job's Service goes with
    // its last pods.
    if (r.reported && !r.launching &&
        std::all_of(r.pods.begin(), r.pods.end(), [](const auto& x) { return x.second.gone; })) {
      runs_.erase({job, run});
      Op op;
      op.kind = Op::kDeleteService;
      op.key = {job, run};
      work_.push_back(std::move(op));
    }
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
          MonoNow() + std::chrono::seconds(options_.kill_wait) + options_.force_delete_after;
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
  ScheduleExpiryLocked(key, r);
  // A pod that cannot start (a bad image) is still Pending on its node, holding its resources;
  // nothing runs in it, so it goes at once.
  if (std::any_of(r.pods.begin(), r.pods.end(),
                  [](const auto& p) { return !p.second.gone && !p.second.terminal(); })) {
    Op op;
    op.kind = Op::kDelete;
    op.key = key;
    op.grace = 0;
    op.signal = SIGKILL;
    work_.push_back(std::move(op));
  }
  backend::EventSink* events = &events_;
  return [events, key, exit] {
    events->RunExited({key.first, key.second}, {exit.exit_code, exit.signal, exit.oom});
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

Status KubernetesBackend::Launch(backend::LaunchOrder order) {
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
  return Status::Ok();
}

Status KubernetesBackend::Terminate(backend::RunId run, Seconds grace) {
  Op op;
  op.kind = Op::kDelete;
  op.key = {run.job, run.run};
  op.grace = std::max<Seconds>(0, grace);
  op.signal = grace > 0 ? SIGTERM : SIGKILL;
  Enqueue(std::move(op));
  return Status::Ok();
}

Status KubernetesBackend::Signal(backend::RunId run, int signo) {
  if (signo == SIGKILL || signo == SIGTERM)
    return Terminate(run, signo == SIGKILL ? 0 : options_.kill_wait);
  std::lock_guard<std::mutex> lock(mu_);
  if (unsupported_signals_.insert(signo).second)
    Log("signal " + std::to_string(signo) +
        " cannot be delivered to pods (only SIGTERM and SIGKILL, by deleting them); ignored");
  return FailedPrecondition("signal " + std::to_string(signo) +
                            " cannot be delivered to pods: only SIGTERM and SIGKILL");
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
  DeleteOrphanServices();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    // The earliest forced deletion due, and the earliest finished run's pods due.
    auto next_force = Clock::time_point::max();
    for (const auto& [key, r] : runs_)
      if (r.terminating && !r.reported) next_force = std::min(next_force, r.force_at);
    const auto next_expiry = NextExpiryLocked();
    const auto next = std::min(next_force, next_expiry);
    expiries_changed_ = false;
    auto woken = [&] { return stopping_ || !work_.empty() || expiries_changed_; };
    if (work_.empty()) {
      if (next == Clock::time_point::max())
        cv_.wait(lock, woken);
      else  // `next` is on the injected clock; the wait is real time (WakeForTest ends it)
        cv_.wait_until(lock, Clock::now() + std::max(Clock::duration::zero(), next - MonoNow()),
                       woken);
    }
    if (stopping_) break;
    if (!work_.empty()) {
      Op op = std::move(work_.front());
      work_.pop_front();
      lock.unlock();
      Run(std::move(op));
      lock.lock();
      continue;
    }
    const auto now = MonoNow();
    lock.unlock();
    if (now >= next_force) DoForce();
    if (now >= next_expiry) DoExpire();
    lock.lock();
  }
}

void KubernetesBackend::WakeForTest() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    expiries_changed_ = true;
  }
  cv_.notify_all();
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

// ---------------------------------------------------------------------------------------------
// Logs

Result<std::string> KubernetesBackend::Logs(const backend::LogsRequest& request) {
  const JobId job = request.run.job;
  const std::int32_t run = request.run.run;
  bool to_storage = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    to_storage = backend_internal::OnStorage(request.stdout_path,
                                             backend_internal::StorageMounts(storage_));
  }
  if (to_storage) {
    // Rank 0 wrote the batch output into the file on shared storage: read it as the job's user,
    // as the agents' backend does, where lockstepd's host sees the storage.
    Result<std::string> text = backend::ReadOwnOutput(request.stdout_path, request.uid);
    if (text.ok() || text.status().code() == StatusCode::kPermissionDenied) return text;
    return NotFound("job " + std::to_string(job) + " writes its output to " +
                    request.stdout_path + " on shared storage, which is not readable here (" +
                    text.status().message() + ")");
  }
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
