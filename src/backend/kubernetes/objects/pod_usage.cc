#include "backend/kubernetes/objects/pod_usage.h"

#include <algorithm>

#include "backend/kubernetes/objects/json_util.h"
#include "backend/kubernetes/objects/quantity.h"

namespace lockstep::kube {
namespace {

using internal::Json;

PodResources Max(const PodResources& a, const PodResources& b) {
  PodResources r;
  r.cpu_milli = std::max(a.cpu_milli, b.cpu_milli);
  r.memory_bytes = std::max(a.memory_bytes, b.memory_bytes);
  r.devices = a.devices;
  for (const auto& [name, n] : b.devices) r.devices[name] = std::max(r.devices[name], n);
  return r;
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return !prefix.empty() && s.size() > prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// One resource list (requests, limits or overhead) into `out`, for the names it has; `given`
// records the names read, so that a later list (limits) only fills the gaps.
Status ReadList(const Json& list, const std::string& where, const ResourceNames& names,
                PodResources& out, std::map<std::string, bool>& given) {
  if (!list.is_object()) return Status::Ok();
  for (auto it = list.begin(); it != list.end(); ++it) {
    const std::string& key = it.key();
    bool cpu = key == "cpu", mem = key == "memory", gpu = key == names.gpu;
    bool mig = StartsWith(key, names.mig_prefix);
    if (!cpu && !mem && !gpu && !mig) continue;
    if (given[key]) continue;
    Result<std::int64_t> v = cpu ? QuantityMilliFromJson(*it) : QuantityFromJson(*it);
    if (!v.ok()) return InvalidArgument(where + "." + key + ": " + v.status().message());
    given[key] = true;
    if (cpu) out.cpu_milli = *v;
    if (mem) out.memory_bytes = *v;
    if ((gpu || mig) && *v > 0) out.devices[key] = *v;
  }
  return Status::Ok();
}

Result<PodResources> ContainerRequests(const Json& container, const std::string& where,
                                       const ResourceNames& names) {
  PodResources r;
  std::map<std::string, bool> given;
  if (const Json* req = internal::Path(container, "resources", "requests"))
    LOCKSTEP_RETURN_IF_ERROR(ReadList(*req, where + ".resources.requests", names, r, given));
  if (const Json* lim = internal::Path(container, "resources", "limits"))
    LOCKSTEP_RETURN_IF_ERROR(ReadList(*lim, where + ".resources.limits", names, r, given));
  return r;
}

}  // namespace

PodResources& PodResources::operator+=(const PodResources& o) {
  cpu_milli += o.cpu_milli;
  memory_bytes += o.memory_bytes;
  for (const auto& [name, n] : o.devices) devices[name] += n;
  return *this;
}

Result<PodResources> PodRequests(const Json& pod, const ResourceNames& names) {
  const std::string who = internal::Describe(pod, "pod");
  PodResources apps;
  if (const Json* cs = internal::Path(pod, "spec", "containers"); cs && cs->is_array()) {
    for (std::size_t i = 0; i < cs->size(); ++i) {
      Result<PodResources> r =
          ContainerRequests((*cs)[i], "spec.containers[" + std::to_string(i) + "]", names);
      if (!r.ok()) return InvalidArgument(who + ": " + r.status().message());
      apps += *r;
    }
  }
  PodResources sidecars, init_peak;
  if (const Json* cs = internal::Path(pod, "spec", "initContainers"); cs && cs->is_array()) {
    for (std::size_t i = 0; i < cs->size(); ++i) {
      Result<PodResources> r =
          ContainerRequests((*cs)[i], "spec.initContainers[" + std::to_string(i) + "]", names);
      if (!r.ok()) return InvalidArgument(who + ": " + r.status().message());
      if (internal::StringAt((*cs)[i], "restartPolicy") == "Always") {
        sidecars += *r;
        init_peak = Max(init_peak, sidecars);
      } else {
        PodResources with = *r;
        with += sidecars;
        init_peak = Max(init_peak, with);
      }
    }
  }
  apps += sidecars;
  PodResources total = Max(apps, init_peak);
  if (const Json* overhead = internal::Path(pod, "spec", "overhead")) {
    PodResources o;
    std::map<std::string, bool> given;
    Status st = ReadList(*overhead, "spec.overhead", names, o, given);
    if (!st.ok()) return InvalidArgument(who + ": " + st.message());
    total += o;
  }
  return total;
}

bool PodOccupiesNode(const Json& pod) {
  if (internal::StringAt(pod, "spec", "nodeName").empty()) return false;
  std::string phase = internal::StringAt(pod, "status", "phase");
  return phase != "Succeeded" && phase != "Failed";
}

bool IsLockstepPod(const Json& pod, const std::string& scheduler_name) {
  if (internal::Label(pod, kJobIdLabel)) return true;
  return internal::StringAt(pod, "spec", "schedulerName") == scheduler_name;
}

Result<std::map<std::string, PodResources>> ForeignUsageByNode(const std::vector<Json>& pods,
                                                               const ResourceNames& names,
                                                               const std::string& scheduler_name) {
  std::map<std::string, PodResources> used;
  for (const Json& pod : pods) {
    if (IsLockstepPod(pod, scheduler_name) || !PodOccupiesNode(pod)) continue;
    Result<PodResources> r = PodRequests(pod, names);
    if (!r.ok()) return r.status();
    used[internal::StringAt(pod, "spec", "nodeName")] += *r;
  }
  return used;
}

KubeNode WithoutUsage(KubeNode node, const PodResources& used) {
  node.cpu_milli = std::max<std::int64_t>(0, node.cpu_milli - used.cpu_milli);
  node.memory_bytes = std::max<std::int64_t>(0, node.memory_bytes - used.memory_bytes);
  node.cpus = static_cast<std::int32_t>(std::min<std::int64_t>(node.cpu_milli / 1000, 0x7fffffff));
  node.mem_mb = BytesToMiBFloor(node.memory_bytes);
  for (GpuGroup& g : node.gpus) {
    std::int64_t left = g.count - used.Devices(g.resource);
    g.count = static_cast<std::int32_t>(std::max<std::int64_t>(0, left));
  }
  std::erase_if(node.gpus, [](const GpuGroup& g) { return g.count == 0; });
  return node;
}

}  // namespace lockstep::kube
