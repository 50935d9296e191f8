#include "backend/kubernetes/admission/pod_request.h"

#include "backend/kubernetes/objects/json_util.h"
#include "backend/kubernetes/objects/quantity.h"
#include "common/duration.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;
using internal::ChildOrNull;

constexpr const char* kQueueLabel = "lockstep.dev/queue";
constexpr const char* kTimeLimitAnnotation = "lockstep.dev/time-limit";

const Json& At(const Json& j, const char* key) { return ChildOrNull(j, key); }

std::map<std::string, std::string> StringMap(const Json& j) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items())
    if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

// Name, namespace, labels, annotations and queue, shared by pods and pod groups.
Result<policy::Request> Common(const Json& obj, policy::Kind kind, const PodPolicyOptions& o) {
  if (!obj.is_object()) return InvalidArgument("the object must be a JSON object");
  policy::Request r;
  r.kind = kind;
  r.operation = "create";
  const Json& meta = At(obj, "metadata");
  const Json& name = At(meta, "name").is_string() ? At(meta, "name") : At(meta, "generateName");
  if (name.is_string()) r.name = name.get<std::string>();
  if (At(meta, "namespace").is_string()) r.ns = At(meta, "namespace").get<std::string>();
  r.labels = StringMap(At(meta, "labels"));
  r.annotations = StringMap(At(meta, "annotations"));
  auto queue = r.labels.find(kQueueLabel);
  const std::string partition = queue != r.labels.end() ? queue->second : o.default_queue;
  if (!partition.empty()) r.partitions.push_back(partition);
  if (auto t = r.annotations.find(kTimeLimitAnnotation); t != r.annotations.end()) {
    Result<Seconds> limit = ParseSlurmDuration(t->second);
    if (!limit.ok())
      return InvalidArgument(std::string("metadata.annotations.") + kTimeLimitAnnotation + ": " +
                             limit.status().message());
    r.time_limit = *limit;
  }
  return r;
}

// Adds one container's image, resources and security context.
Status AddContainer(const Json& c, const std::string& where, const PodPolicyOptions& o,
                    policy::Request& r, std::int64_t& cpu_milli, std::int64_t& mem_bytes,
                    std::int64_t& gpus) {
  if (At(c, "image").is_string()) r.images.push_back(At(c, "image").get<std::string>());
  const Json& res = At(c, "resources");
  const Json& requests = At(res, "requests");
  const Json& limits = At(res, "limits");
  auto amount = [&](const char* key, bool milli, std::int64_t& total) -> Status {
    // A request, else its limit (what Kubernetes then takes as the request).
    const Json& v = !At(requests, key).is_null() ? At(requests, key) : At(limits, key);
    if (v.is_null()) return Status::Ok();
    Result<std::int64_t> q = milli ? QuantityMilliFromJson(v) : QuantityFromJson(v);
    if (!q.ok()) return InvalidArgument(where + ".resources." + key + ": " + q.status().message());
    total += *q;
    return Status::Ok();
  };
  LOCKSTEP_RETURN_IF_ERROR(amount("cpu", true, cpu_milli));
  LOCKSTEP_RETURN_IF_ERROR(amount("memory", false, mem_bytes));
  LOCKSTEP_RETURN_IF_ERROR(amount(o.gpu_resource.c_str(), false, gpus));
  const Json& sc = At(c, "securityContext");
  if (At(sc, "privileged") == true) r.privileged = true;
  if (At(sc, "allowPrivilegeEscalation") == true) r.privilege_escalation = true;
  if (At(sc, "runAsUser").is_number_integer()) r.run_as_uids.push_back(At(sc, "runAsUser").get<std::int64_t>());
  for (const Json& cap : At(At(sc, "capabilities"), "add"))
    if (cap.is_string()) r.added_capabilities.push_back(cap.get<std::string>());
  return Status::Ok();
}

}  // namespace

Result<policy::Request> RequestOfPod(const Json& pod, const PodPolicyOptions& o) {
  Result<policy::Request> common = Common(pod, policy::Kind::kPod, o);
  if (!common.ok()) return common.status();
  policy::Request& r = *common;
  const Json& spec = At(pod, "spec");
  r.host_network = At(spec, "hostNetwork") == true;
  r.host_pid = At(spec, "hostPID") == true;
  r.host_ipc = At(spec, "hostIPC") == true;
  const Json& psc = At(spec, "securityContext");
  if (At(psc, "runAsUser").is_number_integer())
    r.run_as_uids.push_back(At(psc, "runAsUser").get<std::int64_t>());
  for (const Json& v : At(spec, "volumes"))
    if (At(At(v, "hostPath"), "path").is_string())
      r.host_paths.push_back(At(At(v, "hostPath"), "path").get<std::string>());
  std::int64_t cpu_milli = 0, mem_bytes = 0, gpus = 0;
  for (const char* list : {"containers", "initContainers", "ephemeralContainers"}) {
    const Json& cs = At(spec, list);
    for (std::size_t i = 0; cs.is_array() && i < cs.size(); ++i) {
      // Init containers run before the others: only the app containers' sizes add up.
      std::int64_t c = 0, m = 0, g = 0;
      const bool app = std::string(list) == "containers";
      LOCKSTEP_RETURN_IF_ERROR(AddContainer(cs[i], std::string("spec.") + list + "[" +
                                                       std::to_string(i) + "]",
                                            o, r, app ? cpu_milli : c, app ? mem_bytes : m,
                                            app ? gpus : g));
    }
  }
  r.nodes = 1;
  r.gpus = gpus;
  r.cpus = (cpu_milli + 999) / 1000;
  if (mem_bytes > 0) r.memory_mb = BytesToMiBCeil(mem_bytes);
  return r;
}

Result<policy::Request> RequestOfPodGroup(const Json& group, const PodPolicyOptions& o) {
  Result<policy::Request> r = Common(group, policy::Kind::kPodGroup, o);
  if (!r.ok()) return r.status();
  const Json& min = At(At(group, "spec"), "minMember");
  if (min.is_number_integer()) r->nodes = min.get<std::int64_t>();
  return r;
}

}  // namespace lockstep::kube
