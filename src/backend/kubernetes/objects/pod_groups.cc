#include "backend/kubernetes/objects/pod_groups.h"

#include <algorithm>
#include <charconv>

#include "backend/kubernetes/objects/json_util.h"
#include "backend/kubernetes/objects/quantity.h"

namespace lockstep::kube {
namespace {

using internal::Json;

std::optional<std::int32_t> PositiveInt(std::string_view s) {
  std::int32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0) return std::nullopt;
  return v;
}

std::int64_t CeilDiv(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

bool BeingDeleted(const Json& pod) {
  return internal::Path(pod, "metadata", "deletionTimestamp") != nullptr;
}

bool Ended(const Json& pod) {
  std::string phase = internal::StringAt(pod, "status", "phase");
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

std::optional<std::string> PodGroupName(const Json& pod) {
  std::optional<std::string> name = internal::Label(pod, kPodGroupLabel);
  if (name && name->empty()) return std::nullopt;
  return name;
}

Result<PodMembership> MembershipOf(const Json& pod, const Json* pod_group,
                                   const PodGroupOptions& options) {
  PodMembership m;
  m.ns = internal::StringAt(pod, "metadata", "namespace");
  m.pod = internal::StringAt(pod, "metadata", "name");
  const std::string who = internal::Describe(pod, "pod");
  if (m.pod.empty()) return InvalidArgument("pod object without metadata.name");
  if (std::optional<std::int64_t> p = internal::Integer(internal::Path(pod, "spec", "priority")))
    m.priority = static_cast<std::int32_t>(*p);
  m.queue = internal::Label(pod, kQueueLabel).value_or(options.default_queue);

  if (std::optional<std::string> group = PodGroupName(pod)) {
    const std::string ref = "PodGroup " + m.ns + "/" + *group;
    if (!pod_group) return NotFound(who + ": label " + kPodGroupLabel + ": " + ref + " not found");
    const Json* min = internal::Path(*pod_group, "spec", "minMember");
    std::optional<std::int64_t> v = internal::Integer(min);
    if (!v || *v <= 0 || *v > 0x7fffffff) {
      return InvalidArgument(who + ": " + ref +
                             ": spec.minMember: " + (min ? min->dump() : std::string("missing")) +
                             " is not a positive integer");
    }
    m.gang = m.ns + "/" + *group;
    m.source = GangSource::kPodGroup;
    m.min_member = static_cast<std::int32_t>(*v);
    return m;
  }
  std::optional<std::string> gang = internal::Annotation(pod, kGangAnnotation);
  std::optional<std::string> size = internal::Annotation(pod, kGangSizeAnnotation);
  if (gang && gang->empty()) gang.reset();
  if (!gang && !size) {
    m.gang = m.ns + "/" + m.pod;
    return m;
  }
  if (!gang) {
    return InvalidArgument(who + ": annotation " + kGangSizeAnnotation + " without " +
                           kGangAnnotation);
  }
  if (!size) {
    return InvalidArgument(who + ": annotation " + kGangAnnotation + " without " +
                           kGangSizeAnnotation);
  }
  std::optional<std::int32_t> n = PositiveInt(*size);
  if (!n) {
    return InvalidArgument(who + ": annotation " + kGangSizeAnnotation + ": \"" + *size +
                           "\" is not a positive integer");
  }
  m.gang = m.ns + "/" + *gang;
  m.source = GangSource::kAnnotation;
  m.min_member = *n;
  return m;
}

Gangs GroupPods(const std::vector<SharedPod>& pods, const std::map<std::string, Json>& pod_groups,
                const PodGroupOptions& options) {
  std::vector<const SharedPod*> mine;
  for (const SharedPod& p : pods) {
    const Json& pod = *p;
    if (internal::StringAt(pod, "spec", "schedulerName") != options.scheduler_name) continue;
    if (internal::Label(pod, kJobIdLabel) || BeingDeleted(pod) || Ended(pod)) continue;
    mine.push_back(&p);
  }
  std::sort(mine.begin(), mine.end(), [](const SharedPod* a, const SharedPod* b) {
    return internal::StringAt(**a, "metadata", "name") <
           internal::StringAt(**b, "metadata", "name");
  });
  Gangs out;
  std::map<std::string, Gang> by_key;
  for (const SharedPod* shared : mine) {
    const Json* pod = shared->get();
    const Json* group = nullptr;
    if (std::optional<std::string> name = PodGroupName(*pod)) {
      auto it = pod_groups.find(internal::StringAt(*pod, "metadata", "namespace") + "/" + *name);
      if (it != pod_groups.end()) group = &it->second;
    }
    Result<PodMembership> m = MembershipOf(*pod, group, options);
    if (!m.ok()) {
      out.errors.push_back(m.status());
      continue;
    }
    auto [it, added] = by_key.try_emplace(m->gang);
    Gang& g = it->second;
    if (added) {
      g.key = m->gang;
      g.source = m->source;
      g.min_member = m->min_member;
      g.priority = m->priority;
      g.queue = m->queue;
    } else if (g.min_member != m->min_member || g.queue != m->queue) {
      out.errors.push_back(InvalidArgument(
          internal::Describe(*pod, "pod") + ": gang " + g.key + " has size " +
          std::to_string(g.min_member) + " and queue \"" + g.queue + "\", this pod says " +
          std::to_string(m->min_member) + " and \"" + m->queue + "\""));
      continue;
    }
    g.priority = std::max(g.priority, m->priority);
    if (internal::StringAt(*pod, "spec", "nodeName").empty())
      g.pods.push_back(*shared);
    else
      ++g.bound;
  }
  for (auto& [key, g] : by_key)
    if (!g.pods.empty()) out.gangs.push_back(std::move(g));
  return out;
}

Gangs GroupPods(std::vector<Json> pods, const std::map<std::string, Json>& pod_groups,
                const PodGroupOptions& options) {
  std::vector<SharedPod> shared;
  shared.reserve(pods.size());
  for (Json& p : pods) shared.push_back(std::make_shared<const Json>(std::move(p)));
  return GroupPods(shared, pod_groups, options);
}

std::vector<const Json*> PodPointers(const std::vector<SharedPod>& pods) {
  std::vector<const Json*> out;
  out.reserve(pods.size());
  for (const SharedPod& p : pods) out.push_back(p.get());
  return out;
}

Result<GangRequest> GangToRequest(const std::vector<Json>& pods, const GangOptions& options) {
  std::vector<const Json*> each;
  for (const Json& p : pods) each.push_back(&p);
  return GangToRequest(each, options);
}

Result<GangRequest> GangToRequest(const std::vector<const Json*>& pods,
                                  const GangOptions& options) {
  if (pods.empty()) return InvalidArgument("gang without pods");
  GangRequest g;
  bool every_deadline = true;  // every pod has an activeDeadlineSeconds
  Seconds deadline = 0;
  for (const Json* each : pods) {
    const Json& pod = *each;
    const std::string who = internal::Describe(pod, "pod");
    Result<PodResources> r = PodRequests(pod, options.names);
    if (!r.ok()) return r.status();
    if (r->devices.size() > 1) {
      return InvalidArgument(who + ": asks for " + r->devices.begin()->first + " and " +
                             std::next(r->devices.begin())->first + "; a job has one GPU type");
    }
    if (!r->devices.empty()) {
      const std::string& resource = r->devices.begin()->first;
      if (!g.gpu_resource.empty() && g.gpu_resource != resource) {
        return InvalidArgument(who + ": asks for " + resource + ", another pod of its gang for " +
                               g.gpu_resource + "; a job has one GPU type");
      }
      g.gpu_resource = resource;
    }
    g.per_pod.cpu_milli = std::max(g.per_pod.cpu_milli, r->cpu_milli);
    g.per_pod.memory_bytes = std::max(g.per_pod.memory_bytes, r->memory_bytes);
    for (const auto& [name, n] : r->devices)
      g.per_pod.devices[name] = std::max(g.per_pod.Devices(name), n);
    std::optional<std::int64_t> d =
        internal::Integer(internal::Path(pod, "spec", "activeDeadlineSeconds"));
    if (!d || *d <= 0)
      every_deadline = false;
    else
      deadline = std::max(deadline, *d);
  }
  const auto n = static_cast<std::int32_t>(pods.size());
  const std::int32_t per_node = std::clamp(options.pods_per_node, 1, n);
  engine::JobRequest& req = g.request;
  req.min_nodes = static_cast<std::int32_t>(CeilDiv(n, per_node));
  req.ntasks = n;
  g.pods_per_node = static_cast<std::int32_t>(CeilDiv(n, req.min_nodes));
  req.cpus_per_task =
      static_cast<std::int32_t>(std::max<std::int64_t>(1, CeilDiv(g.per_pod.cpu_milli, 1000)));
  req.mem_per_node_mb = BytesToMiBCeil(g.per_pod.memory_bytes) * g.pods_per_node;
  if (!g.gpu_resource.empty()) {
    req.gpus_per_task = static_cast<std::int32_t>(g.per_pod.Devices(g.gpu_resource));
    if (g.gpu_resource != options.names.gpu)
      g.gpu_type = "mig-" + g.gpu_resource.substr(options.names.mig_prefix.size());
  }
  if (every_deadline) req.time_limit = deadline;
  return g;
}

Result<std::vector<PodBinding>> BindingsFor(const std::vector<const Json*>& pods,
                                            const GangRequest& request,
                                            const engine::Allocation& allocation,
                                            const std::vector<engine::Node>& nodes) {
  std::vector<PodBinding> out;
  const std::size_t per_node = static_cast<std::size_t>(std::max(1, request.pods_per_node));
  if (allocation.nodes.size() * per_node < pods.size()) {
    return InvalidArgument("allocation of " + std::to_string(allocation.nodes.size()) +
                           " nodes for " + std::to_string(pods.size()) + " pods, " +
                           std::to_string(per_node) + " per node");
  }
  for (std::size_t i = 0; i < pods.size(); ++i) {
    std::uint32_t node = allocation.nodes[i / per_node].node;
    if (node >= nodes.size())
      return InvalidArgument("allocation names node " + std::to_string(node) + " of " +
                             std::to_string(nodes.size()));
    out.push_back({internal::StringAt(*pods[i], "metadata", "namespace"),
                   internal::StringAt(*pods[i], "metadata", "name"), nodes[node].name});
  }
  return out;
}

Json BindingObject(const PodBinding& b) {
  return {{"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata", {{"name", b.pod}, {"namespace", b.ns}}},
          {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", b.node}}}};
}

}  // namespace lockstep::kube
