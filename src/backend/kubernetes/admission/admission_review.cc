#include "backend/kubernetes/admission/admission_review.h"

#include <algorithm>
#include <cctype>

#include "backend/kubernetes/objects/json_util.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;
using internal::ChildOrNull;
using internal::StringAt;

const Json& At(const Json& j, const char* key) { return ChildOrNull(j, key); }

Json Answer(const Json& review, const std::string& uid, bool allowed, const std::string& message) {
  Json response = {{"uid", uid}, {"allowed", allowed}};
  if (!allowed)
    response["status"] = {{"code", 403}, {"reason", "Forbidden"}, {"message", message}};
  const std::string version = StringAt(review, "apiVersion");
  return {{"apiVersion", version.empty() ? "admission.k8s.io/v1" : version},
          {"kind", "AdmissionReview"},
          {"response", std::move(response)}};
}

}  // namespace

Result<Json> ReviewAdmission(policy::PolicyGate& gate, const Json& review,
                             const WebhookOptions& options) {
  const Json& req = At(review, "request");
  const std::string uid = StringAt(req, "uid");
  if (!req.is_object() || uid.empty())
    return InvalidArgument("not an AdmissionReview: request.uid is missing");
  std::string operation = StringAt(req, "operation");
  const std::string kind = StringAt(req, "kind", "kind");
  const Json& object = At(req, "object");
  const std::string user = StringAt(req, "userInfo", "username");
  if ((operation != "CREATE" && operation != "UPDATE") || !object.is_object() ||
      gate.Trusted(user))
    return Answer(review, uid, true, "");
  Result<policy::Request> r = InvalidArgument("");
  if (kind == "Pod") {
    if (StringAt(object, "spec", "schedulerName") != options.scheduler_name)
      return Answer(review, uid, true, "");
    r = RequestOfPod(object, options.pods);
  } else if (kind == "PodGroup") {
    r = RequestOfPodGroup(object, options.pods);
  } else {
    return Answer(review, uid, true, "");
  }
  if (!r.ok())  // an object the policy cannot read is not admitted
    return Answer(review, uid, false, "lockstep admission: " + r.status().message());
  std::transform(operation.begin(), operation.end(), operation.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  r->operation = At(req, "dryRun") == true ? operation + "-dry-run" : operation;
  r->user = user;
  if (r->ns.empty()) r->ns = StringAt(req, "namespace");
  for (const Json& g : At(At(req, "userInfo"), "groups"))
    if (g.is_string()) r->groups.push_back(g.get<std::string>());
  const policy::Decision d = gate.Check(std::move(*r), "kubernetes:" + user);
  return Answer(review, uid, d.verdict == policy::Verdict::kAllow, d.message);
}

Result<Json> TestPod(policy::PolicyGate& gate, const std::string& as, const Json& pod,
                     const std::string& caller, const WebhookOptions& options) {
  Result<policy::Request> r = RequestOfPod(pod, options.pods);
  if (!r.ok()) return r.status();
  r->operation = "test";
  r->user = as;
  gate.Identify(*r);
  const policy::Decision d = gate.Decide(*r);
  gate.Record(*r, d, caller);
  return policy::PolicyGate::DecisionJson(*r, d);
}

}  // namespace lockstep::kube
