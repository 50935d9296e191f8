// The kubernetes backend's launches: a job's Service and Pods, all or none.
#include <algorithm>

#include "backend/kubernetes/backend/backend_internal.h"
#include "backend/kubernetes/backend/kubernetes_backend.h"
#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/objects/pod_builder.h"
#include "jobspec/container_mounts.h"

namespace lockstep::kube {

using backend_internal::Label;
using backend_internal::Log;
using backend_internal::OnStorage;
using backend_internal::StorageMounts;

std::vector<HostMount> backend_internal::StorageMounts(const std::vector<config::FileSystem>& storage) {
  std::vector<HostMount> out;
  for (const config::FileSystem& fs : storage) {
    const bool host = fs.kind == config::FileSystem::Kind::kHostPath;
    const std::string path = host ? fs.source : fs.category;
    auto it = std::find_if(out.begin(), out.end(), [&](const HostMount& m) { return m.path == path; });
    if (it == out.end())
      out.push_back({path, "", fs.read_only});
    else
      it->read_only = it->read_only && fs.read_only;
  }
  return out;
}

bool backend_internal::OnStorage(const std::string& path, const std::vector<HostMount>& mounts) {
  return std::any_of(mounts.begin(), mounts.end(),
                     [&](const HostMount& m) { return jobspec::PathWithin(path, m.path); });
}

void KubernetesBackend::SetStorage(std::vector<config::FileSystem> storage) {
  std::lock_guard<std::mutex> lock(mu_);
  storage_ = std::move(storage);
}

void KubernetesBackend::DoLaunch(const backend::LaunchOrder& order) {
  const RunKey key{order.job, order.run};
  bool service_made = false;
  auto fail = [&](const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      RunState& r = runs_[key];
      r.launching = false;
      r.launch_failed = true;
      r.reported = true;
    }
    Log("job " + std::to_string(order.job) + ": launch failed: " + why);
    // Unless pods of the job are left (their deletion then takes it).
    if (service_made) DoDeleteService(order.job, options_.settings.ns);
    events_.LaunchFailed({order.job, order.run}, why);
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
  if (options_.groups_of) spec.groups = options_.groups_of(order.user);
  spec.partition = order.partition;
  spec.ns = options_.settings.ns;
  spec.image = order.container_image.empty() ? options_.settings.image : order.container_image;
  spec.script = order.script;
  spec.args = order.script_args;
  spec.env = order.env;
  spec.mode = options_.settings.pods == config::KubernetesSettings::Pods::kPerTask
                  ? PodMode::kPerTask
                  : PodMode::kPerNode;
  spec.termination_grace = options_.kill_wait;
  spec.time_limit = order.time_limit;
  spec.master_port = options_.settings.master_port;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // On shared storage, the job starts in its directory and writes its output files there, as
    // on bare hosts; elsewhere it keeps the image's directory and its pods' logs.
    spec.host_mounts = StorageMounts(storage_);
    if (OnStorage(order.work_dir, spec.host_mounts)) spec.work_dir = order.work_dir;
    if (OnStorage(order.stdout_path, spec.host_mounts)) {
      spec.stdout_path = order.stdout_path;
      if (OnStorage(order.stderr_path, spec.host_mounts)) spec.stderr_path = order.stderr_path;
      spec.append_output = order.append_output;
    }
    for (const backend::BindMount& m : order.container_mounts)
      spec.host_mounts.push_back({m.source, m.target, m.read_only});
    for (std::size_t i = 0; i < order.nodes.size(); ++i) {
      const backend::PlacedNode& p = order.nodes[i];
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
  service_made = true;
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

}  // namespace lockstep::kube
