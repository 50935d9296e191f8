// The admission policy (docs/policy.md): ordered, named rules that match who asks (users,
// groups, accounts, partitions, namespaces) and limit or forbid what they ask for: sizes per job,
// partitions, QoS, images, labels and annotations, and for pods the ways out of a container
// (privileged, host namespaces, hostPath, capabilities, privilege escalation, another uid).
//
// A request is judged by every rule that matches it, in order: the first `enforce` rule it
// breaks refuses it; an `audit` rule it breaks is only recorded; an `allow` rule that matches
// admits it with no later rule looked at (an exemption). Pure values and functions: no I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::policy {

// What a request is: a job of sbatch, srun, salloc or the REST API (or its change by scontrol
// update), a pod handed to lockstep, or a PodGroup.
enum class Kind : std::uint8_t { kJob, kPod, kPodGroup };
std::string_view KindName(Kind kind);  // "job", "pod", "podgroup"

// Everything a rule may look at. Sizes are per job (a pod: per pod); unset: not asked for.
struct Request {
  Kind kind = Kind::kJob;
  std::string operation = "submit";  // submit, update, create (pods), test
  // Who: a user known to lockstepd (uid set), or a Kubernetes user (the name only).
  std::string user;
  std::optional<std::uint32_t> uid;
  std::vector<std::string> groups;  // names, the primary one included
  std::string account;
  std::vector<std::string> partitions;
  std::string qos;
  std::string ns;    // Kubernetes namespace; "" for jobs
  std::string name;  // the job's or object's name, for the log

  std::optional<std::int64_t> gpus, nodes, cpus, memory_mb;
  std::optional<Seconds> time_limit;
  std::vector<std::string> images;
  std::map<std::string, std::string> labels, annotations;

  // Pods only.
  bool privileged = false;
  bool host_network = false, host_pid = false, host_ipc = false;
  bool privilege_escalation = false;  // a container sets allowPrivilegeEscalation: true
  std::vector<std::string> host_paths;
  std::vector<std::string> added_capabilities;
  std::vector<std::int64_t> run_as_uids;  // every runAsUser named (pod and containers)
};

// A rule's `match:`: every key given must match (one of its values); no key: everything.
struct Match {
  std::vector<std::string> users, groups, accounts, partitions, namespaces;
  std::vector<Kind> kinds;
};

struct Limits {
  std::optional<std::int64_t> gpus_per_job, nodes_per_job, cpus_per_job, memory_per_job_mb;
  std::optional<Seconds> time;
};

struct Forbid {
  bool privileged = false, host_network = false, host_pid = false, host_ipc = false;
  bool host_path = false;  // a hostPath that is not under a declared storage path
  bool capabilities = false;
  bool privilege_escalation = false;
  bool run_as_other_user = false;
  std::vector<std::string> labels, annotations;  // keys that must not be set
};

struct Require {
  // Only these (patterns: '*' matches any run of characters); empty: any.
  std::vector<std::string> partitions, qos, images;
  std::map<std::string, std::string> labels, annotations;  // key: value pattern
};

enum class Action : std::uint8_t { kEnforce, kAudit, kAllow };

struct Rule {
  std::string name;
  Action action = Action::kEnforce;
  std::string message;  // told to the user before the details; "": the rule's name says it
  Match match;
  Limits limits;
  Require require;
  Forbid forbid;
};

struct Policy {
  std::vector<Rule> rules;
  std::string source;  // the file, for messages
};

// Parses the policy file's text. Errors name the file, the line and the rule
// ("policy.yaml:7: rules[1] (gpu-cap).limits.gpus_per_job: ...") and nothing is returned.
Result<Policy> ParsePolicy(std::string_view yaml_text, std::string_view source_name);

// The rules that apply on Kubernetes without a policy file (after the file's): no privileged
// containers, no host namespaces, no hostPath outside the declared storage, no other user's uid.
std::vector<Rule> KubernetesDefaultRules();

// What the rules know of the cluster and the identity source.
struct Context {
  std::vector<std::string> storage_paths;  // hostPaths allowed: these and below them
  // The uid of a user name the identity source knows, else none (impersonation checks).
  std::function<std::optional<std::uint32_t>(const std::string&)> uid_of;
};

enum class Verdict : std::uint8_t { kAllow, kDeny };

struct Finding {
  std::string rule;
  Action action = Action::kEnforce;
  std::string message;  // what broke the rule, for the user
};

struct Decision {
  Verdict verdict = Verdict::kAllow;
  std::string rule;     // the refusing rule, or the exempting `allow` rule
  std::string message;  // the refusal, for the user: names the rule
  std::vector<Finding> audited;  // `audit` rules the request broke (it is still allowed)
};

Decision Evaluate(const std::vector<const Rule*>& rules, const Request& request,
                  const Context& context);

// '*' matches any run of characters, everything else itself.
bool Glob(std::string_view pattern, std::string_view text);

}  // namespace lockstep::policy
