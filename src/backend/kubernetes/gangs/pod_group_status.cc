#include "backend/kubernetes/gangs/pod_group_status.h"

#include <algorithm>
#include <cstdint>

#include "backend/kubernetes/gangs/gang_json.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;
using gangs_internal::Str;

struct Counts {
  std::int64_t scheduled = 0, running = 0, succeeded = 0, failed = 0;
  bool any_unfinished = false;  // a pod neither Succeeded nor Failed
};

Counts CountPods(const std::vector<const Json*>& pods) {
  Counts c;
  for (const Json* p : pods) {
    const std::string& phase = Str(*p, "status", "phase");
    c.scheduled += !Str(*p, "spec", "nodeName").empty();
    c.running += phase == "Running";
    c.succeeded += phase == "Succeeded";
    c.failed += phase == "Failed";
    c.any_unfinished = c.any_unfinished || (phase != "Succeeded" && phase != "Failed");
  }
  return c;
}

std::int64_t MinMember(const Json& pod_group) {
  const Json* spec = pod_group.contains("spec") ? &pod_group["spec"] : nullptr;
  if (!spec || !spec->contains("minMember") || !(*spec)["minMember"].is_number_integer()) return 1;
  return std::max<std::int64_t>(1, (*spec)["minMember"].get<std::int64_t>());
}

// coscheduling's phases, the furthest one the counts reach.
const char* PhaseOf(const Counts& c, std::int64_t min_member, bool binding) {
  if (c.succeeded >= min_member) return "Finished";
  if (c.failed > 0 && c.failed + c.running + c.succeeded >= min_member) return "Failed";
  if (c.running + c.succeeded >= min_member) return "Running";
  if (c.scheduled >= min_member) return "Scheduled";
  if (binding || c.scheduled > 0) return "Scheduling";
  return "Pending";
}

// "<ns>/<owner>,..." of the first pod (by name) that has owners.
std::string OccupiedBy(const std::vector<const Json*>& pods) {
  for (const Json* p : pods) {
    const Json* refs = p->contains("metadata") ? &(*p)["metadata"] : nullptr;
    if (!refs || !refs->contains("ownerReferences") || !(*refs)["ownerReferences"].is_array())
      continue;
    std::vector<std::string> owners;
    for (const Json& r : (*refs)["ownerReferences"])
      if (r.contains("name") && r["name"].is_string())
        owners.push_back(Str(*p, "metadata", "namespace") + "/" + r["name"].get<std::string>());
    if (owners.empty()) continue;
    std::sort(owners.begin(), owners.end());
    std::string out;
    for (const std::string& o : owners) out += (out.empty() ? "" : ",") + o;
    return out;
  }
  return "";
}

// Every field of `desired` has its value in `current` (absent numbers read as 0).
bool Covers(const Json& current, const Json& desired) {
  for (const auto& [key, value] : desired.items()) {
    auto it = current.find(key);
    if (value.is_number_integer()) {
      const std::int64_t have =
          it != current.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
      if (have != value.get<std::int64_t>()) return false;
    } else if (it == current.end() || *it != value) {
      return false;
    }
  }
  return true;
}

}  // namespace

Json DesiredPodGroupStatus(const PodGroupStatusInput& in) {
  const Counts c = CountPods(in.pods);
  Json status = {{"phase", PhaseOf(c, MinMember(*in.pod_group), in.binding)},
                 {"scheduled", c.scheduled},
                 {"running", c.running},
                 {"succeeded", c.succeeded},
                 {"failed", c.failed}};
  if (!in.schedule_start.empty()) status["scheduleStartTime"] = in.schedule_start;
  if (std::string owners = OccupiedBy(in.pods); !owners.empty()) status["occupiedBy"] = owners;
  return status;
}

std::optional<Json> PodGroupStatusUpdate(const PodGroupStatusInput& in) {
  const Json current = in.pod_group->value("status", Json::object());
  const std::string phase = current.is_object() ? current.value("phase", "") : "";
  if ((phase == "Finished" || phase == "Failed") && !CountPods(in.pods).any_unfinished)
    return std::nullopt;  // the gang's end stands until a new pod comes
  Json desired = DesiredPodGroupStatus(in);
  if (current.is_object() && Covers(current, desired)) return std::nullopt;
  return desired;
}

}  // namespace lockstep::kube
