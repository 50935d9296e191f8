#include "backend/kubernetes/gangs/gang_events.h"

#include <ctime>

#include "backend/kubernetes/gangs/gang_json.h"

namespace lockstep::kube {
namespace {

std::string Field(const nlohmann::json& o, const char* a, const char* b) {
  auto i = o.find(a);
  if (i == o.end() || !i->is_object()) return "";
  auto j = i->find(b);
  return j != i->end() && j->is_string() ? j->get<std::string>() : "";
}

}  // namespace

nlohmann::json EventObject(const nlohmann::json& object, const std::string& type,
                           const std::string& reason, const std::string& message,
                           const std::string& component, const std::string& now_rfc3339) {
  const std::string ns = Field(object, "metadata", "namespace");
  const std::string name = Field(object, "metadata", "name");
  nlohmann::json involved = {{"apiVersion", object.value("apiVersion", "v1")},
                             {"kind", object.value("kind", "Pod")},
                             {"namespace", ns},
                             {"name", name}};
  if (std::string uid = Field(object, "metadata", "uid"); !uid.empty()) involved["uid"] = uid;
  if (std::string rv = Field(object, "metadata", "resourceVersion"); !rv.empty())
    involved["resourceVersion"] = rv;
  // The apiserver caps messages at 1 KiB for events.k8s.io; stay well below.
  std::string text = message.size() > 1000 ? message.substr(0, 997) + "..." : message;
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"generateName", name + "."}, {"namespace", ns}}},
          {"involvedObject", std::move(involved)},
          {"type", type},
          {"reason", reason},
          {"message", std::move(text)},
          {"source", {{"component", component}}},
          {"reportingComponent", component},
          {"reportingInstance", component},
          {"firstTimestamp", now_rfc3339},
          {"lastTimestamp", now_rfc3339},
          {"count", 1}};
}

Status GangEvents::Post(const nlohmann::json& object, const std::string& type,
                        const std::string& reason, const std::string& message) {
  const std::string ns = Field(object, "metadata", "namespace");
  nlohmann::json event =
      EventObject(object, type, reason, message, component_, gangs_internal::NowRfc3339(clock_));
  Result<nlohmann::json> r = client_->Create("/api/v1/namespaces/" + ns + "/events", event);
  return r.ok() ? Status::Ok() : r.status();
}

}  // namespace lockstep::kube
