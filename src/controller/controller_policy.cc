// The admission policy at the controller (docs/policy.md): submissions and changes of a job's
// spec, judged before anything changes; what the policy would say, for `lockstep policy test`.
#include "controller/account_access.h"
#include "controller/controller.h"
#include "jobspec/validate.h"
#include "policy/job_request.h"
#include "policy/policy_gate.h"

namespace lockstep::controller {

policy::Request Controller::JobPolicyRequestLocked(const Caller& owner,
                                                   const jobspec::JobSpec& spec,
                                                   const char* operation) const {
  policy::Request r = policy::RequestOfJob(spec, operation);
  r.user = owner.user;
  r.uid = owner.uid;
  if (r.account.empty()) r.account = DefaultAccountOf(cluster_, owner.user);
  std::vector<std::uint32_t> parts;
  for (const std::string& name : r.partitions)
    if (std::uint32_t p = cluster_.PartitionIndex(name); p != engine::kNone) parts.push_back(p);
  if (r.partitions.empty() && cluster_.default_partition < cluster_.base.partitions.size()) {
    parts.push_back(cluster_.default_partition);
    r.partitions.push_back(cluster_.base.partitions[cluster_.default_partition].name);
  }
  // No -t: the partition's DefaultTime, else its MaxTime (the longest of those it may run in).
  if (!r.time_limit && !parts.empty()) {
    Seconds longest = 0;
    for (std::uint32_t p : parts) {
      const engine::Partition& part = cluster_.base.partitions[p];
      longest = std::max(longest, part.default_time < kUnlimited ? part.default_time : part.max_time);
    }
    r.time_limit = longest;
  }
  return r;
}

Status Controller::CheckJobPolicy(const Caller& caller, const jobspec::JobSpec& spec) {
  policy::PolicyGate* gate = policy_.load();
  // Jobs for pods others created were judged by the webhook when the pods were.
  if (!gate || !spec.external.empty()) return Status::Ok();
  policy::Request r;
  {
    HeldLock lock(*this);
    r = JobPolicyRequestLocked(caller, spec, "submit");
  }
  const policy::Decision d = gate->Check(std::move(r));
  if (d.verdict == policy::Verdict::kDeny) return PermissionDenied(d.message);
  return Status::Ok();
}

Result<nlohmann::json> Controller::TestJobPolicy(const Caller& caller, const std::string& as,
                                                 jobspec::JobSpec spec) {
  policy::PolicyGate* gate = policy_.load();
  Caller owner = caller;
  if (!as.empty() && as != caller.user) {
    if (!IsOperator(caller.uid))
      return PermissionDenied("only an operator may ask what the policy decides for another user");
    owner = Caller{0, 0, as};
  }
  LOCKSTEP_RETURN_IF_ERROR(jobspec::Validate(spec, ValidationLimits(caller)));
  policy::Request r;
  {
    HeldLock lock(*this);
    r = JobPolicyRequestLocked(owner, spec, "test");
  }
  if (owner.user != caller.user) r.uid.reset();  // looked up by name
  if (!gate) {
    policy::Decision allow;
    return policy::PolicyGate::DecisionJson(r, allow);
  }
  gate->Identify(r);
  const policy::Decision d = gate->Decide(r);
  gate->Record(r, d, caller.user);
  return policy::PolicyGate::DecisionJson(r, d);
}

}  // namespace lockstep::controller
