#include "backend/kubernetes/objects/node_health.h"

#include "backend/kubernetes/objects/quantity.h"

namespace lockstep::kube {

Result<TroubleCondition> ParseTroubleCondition(const std::string& entry) {
  TroubleCondition c;
  const std::size_t eq = entry.find('=');
  c.type = entry.substr(0, eq);
  if (eq != std::string::npos) c.bad_status = entry.substr(eq + 1);
  if (c.type.empty() || (c.bad_status != "True" && c.bad_status != "False" &&
                         c.bad_status != "Unknown"))
    return InvalidArgument("'" + entry +
                           "' is not a condition: TYPE (trouble when True) or TYPE=True|False|"
                           "Unknown");
  return c;
}

backend::NodeHealthReport NodeHealthFromObject(const nlohmann::json& node,
                                               const std::vector<TroubleCondition>& conditions,
                                               const std::string& gpu_resource) {
  backend::NodeHealthReport r;
  r.source = "k8s";
  r.full_round = true;
  r.checks = {"k8s_condition", "gpu_count"};
  r.node = node.value("/metadata/name"_json_pointer, "");
  const nlohmann::json status = node.value("status", nlohmann::json::object());
  for (const nlohmann::json& c : status.value("conditions", nlohmann::json::array())) {
    const std::string type = c.value("type", "");
    for (const TroubleCondition& t : conditions) {
      if (t.type != type || c.value("status", "") != t.bad_status) continue;
      std::string detail = type + "=" + t.bad_status;
      for (const char* field : {"reason", "message"})
        if (!c.value(field, "").empty()) detail += ": " + c.value(field, "");
      r.findings.push_back({"k8s_condition", -1, 0, detail});
    }
  }
  const nlohmann::json capacity = status.value("capacity", nlohmann::json::object());
  const nlohmann::json allocatable = status.value("allocatable", nlohmann::json::object());
  if (capacity.contains(gpu_resource)) {
    Result<std::int64_t> cap = QuantityFromJson(capacity[gpu_resource]);
    Result<std::int64_t> alloc = allocatable.contains(gpu_resource)
                                     ? QuantityFromJson(allocatable[gpu_resource])
                                     : Result<std::int64_t>(std::int64_t{0});
    if (cap.ok() && alloc.ok() && *alloc < *cap)
      r.findings.push_back({"gpu_count", -1, *alloc,
                            "allocatable " + gpu_resource + " " + std::to_string(*alloc) +
                                " of capacity " + std::to_string(*cap)});
  }
  return r;
}

}  // namespace lockstep::kube
