// The validating admission webhook (docs/policy.md, "Kubernetes"): an AdmissionReview from the
// API server in, the same review with its response out. Pods that name lockstep's scheduler and
// PodGroups are judged by the policy (and logged); other pods, deletions and the pods of trusted
// users (lockstepd's own) are allowed unjudged.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "backend/kubernetes/admission/pod_request.h"
#include "common/status.h"
#include "policy/policy_gate.h"

namespace lockstep::kube {

struct WebhookOptions {
  PodPolicyOptions pods;
  std::string scheduler_name = "lockstep";
};

// The AdmissionReview (admission.k8s.io/v1 or v1beta1) with `response` set. InvalidArgument when
// `review` is not one (no request, no uid).
Result<nlohmann::json> ReviewAdmission(policy::PolicyGate& gate, const nlohmann::json& review,
                                       const WebhookOptions& options);

// What the policy would decide of `pod` created by `as` (`lockstep policy test --pod`), as the
// policy routes answer; recorded with `caller` as who asked.
Result<nlohmann::json> TestPod(policy::PolicyGate& gate, const std::string& as,
                               const nlohmann::json& pod, const std::string& caller,
                               const WebhookOptions& options);

}  // namespace lockstep::kube
