// Small helpers shared by the kubernetes backend's files. Internal to lockstep_kube_backend.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

#include "common/log.h"
#include "backend/kubernetes/backend/kubernetes_backend.h"
#include "backend/kubernetes/objects/pod_builder.h"

#ifdef LOCKSTEP_HAVE_KUBE_GANGS
#include "backend/kubernetes/gangs/pod_group_scheduler.h"
#endif

namespace lockstep::kube {

// The gangs component (src/backend/kubernetes/gangs/), when built in.
#ifdef LOCKSTEP_HAVE_KUBE_GANGS
class PodGroupSchedulerHandle {
 public:
  PodGroupSchedulerHandle(KubeClient* client, backend::EventSink& events,
                          backend::Admission* admission, PodGroupSchedulerOptions options)
      : scheduler(client, events, *admission, std::move(options)) {}
  PodGroupScheduler scheduler;
};
#else
class PodGroupSchedulerHandle {};
#endif

}  // namespace lockstep::kube

namespace lockstep::kube::backend_internal {

// A type only: time is read from KubernetesBackendOptions::clock.
using Clock = std::chrono::steady_clock;

inline void Log(const std::string& message) {
  log::Warning("kubernetes: {}", message);
}

inline std::string Label(const Json& obj, const char* key) {
  const Json* labels = nullptr;
  if (obj.contains("metadata") && obj["metadata"].contains("labels"))
    labels = &obj["metadata"]["labels"];
  if (!labels || !labels->contains(key) || !(*labels)[key].is_string()) return "";
  return (*labels)[key].get<std::string>();
}

inline std::string Meta(const Json& obj, const char* key) {
  if (!obj.contains("metadata") || !obj["metadata"].contains(key) ||
      !obj["metadata"][key].is_string())
    return "";
  return obj["metadata"][key].get<std::string>();
}

inline bool ParseInt(const std::string& s, long long* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18)
    return false;
  *out = std::stoll(s);
  return true;
}

// (job, run, rank) of a pod lockstep created; false for any other pod.
inline bool JobPodIdentity(const Json& pod, JobId* job, std::int32_t* run, std::int32_t* rank) {
  long long j = 0, r = 0, k = 0;
  if (!ParseInt(Label(pod, kJobIdLabel), &j) || !ParseInt(Label(pod, kRankLabel), &k)) return false;
  std::string run_label = Label(pod, kRunLabel);
  if (!run_label.empty() && !ParseInt(run_label, &r)) return false;
  *job = static_cast<JobId>(j);
  *run = static_cast<std::int32_t>(r);
  *rank = static_cast<std::int32_t>(k);
  return true;
}

// The host directories of the storage that pods see: each category's parent directory (its
// file systems are mounted under it on the hosts), read-only when all of them are; each host
// path as itself (kubernetes_backend_launch.cc).
std::vector<HostMount> StorageMounts(const std::vector<config::FileSystem>& storage);

// Whether `path` lies on one of the mounts (the directory itself or below it).
bool OnStorage(const std::string& path, const std::vector<HostMount>& mounts);

}  // namespace lockstep::kube::backend_internal
