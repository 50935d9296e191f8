// Small readers of the JSON objects the pod group scheduler handles. Internal to gangs/.
#pragma once

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <string>

#include "common/clock.h"
#include "backend/kubernetes/objects/pod_events.h"

namespace lockstep::kube::gangs_internal {

// A type only: time is read from PodGroupSchedulerOptions::clock.
using Clock = std::chrono::steady_clock;

// o[a][b] when it is a string, else "".
inline const std::string& Str(const nlohmann::json& o, const char* a, const char* b) {
  static const std::string kEmpty;
  auto i = o.find(a);
  if (i == o.end() || !i->is_object()) return kEmpty;
  auto j = i->find(b);
  return j != i->end() && j->is_string() ? j->get_ref<const std::string&>() : kEmpty;
}

// metadata[key][name] (labels, annotations) when it is a string, else "".
inline const std::string& Meta(const nlohmann::json& o, const char* key, const std::string& name) {
  static const std::string kEmpty;
  auto m = o.find("metadata");
  if (m == o.end() || !m->is_object()) return kEmpty;
  auto i = m->find(key);
  if (i == m->end() || !i->is_object()) return kEmpty;
  auto j = i->find(name);
  return j != i->end() && j->is_string() ? j->get_ref<const std::string&>() : kEmpty;
}

// metadata.deletionTimestamp is set.
inline bool Deleting(const nlohmann::json& pod) {
  auto m = pod.find("metadata");
  return m != pod.end() && m->contains("deletionTimestamp") && !(*m)["deletionTimestamp"].is_null();
}

// `clock`'s wall time as Kubernetes writes times: "2024-05-01T10:00:00Z".
inline std::string NowRfc3339(const lockstep::Clock& clock) {
  return FormatRfc3339(clock.Now());
}

}  // namespace lockstep::kube::gangs_internal
