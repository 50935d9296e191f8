// The rule language (docs/policy.md): parsing with errors that name the rule, and judgement.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "policy/job_request.h"
#include "policy/policy.h"

namespace lockstep::policy {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSitePolicy = R"(
rules:
  - name: admins-exempt
    action: allow
    match: {groups: [admins]}
  - name: ml-gpu-cap
    message: the ml group may use at most 2 GPUs per job
    match: {groups: [ml]}
    limits: {gpus_per_job: 2, nodes_per_job: 4, time: "2-00:00:00"}
  - name: gpu-partition-only
    match: {partitions: [gpu]}
    require: {qos: [normal, high], images: ["registry.example/*"]}
  - name: big-memory-audit
    action: audit
    limits: {memory_per_job: 1T}
)";

Policy Parsed(const char* text) {
  Result<Policy> p = ParsePolicy(text, "policy.yaml");
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : Policy{};
}

Decision Judge(const Policy& p, const Request& r, const Context& c = {}) {
  std::vector<const Rule*> rules;
  for (const Rule& rule : p.rules) rules.push_back(&rule);
  return Evaluate(rules, r, c);
}

Request Job(std::string user, std::vector<std::string> groups, const char* partition, int gpus) {
  jobspec::JobSpec s;
  s.partition = partition;
  s.gpus = gpus;
  Request r = RequestOfJob(s, "submit");
  r.user = std::move(user);
  r.groups = std::move(groups);
  return r;
}

TEST(Policy, AGroupsGpuCapRefusesItsUsersOnlyAndNamesTheRule) {
  const Policy p = Parsed(kSitePolicy);
  ASSERT_EQ(p.rules.size(), 4u);
  Decision d = Judge(p, Job("alice", {"ml"}, "cpu", 4));
  EXPECT_EQ(d.verdict, Verdict::kDeny);
  EXPECT_EQ(d.rule, "ml-gpu-cap");
  EXPECT_THAT(d.message, HasSubstr("policy rule 'ml-gpu-cap'"));
  EXPECT_THAT(d.message, HasSubstr("at most 2 GPUs per job (asked for 4)"));
  EXPECT_EQ(Judge(p, Job("alice", {"ml"}, "cpu", 2)).verdict, Verdict::kAllow);
  EXPECT_EQ(Judge(p, Job("bob", {"physics"}, "cpu", 4)).verdict, Verdict::kAllow);
  // An exemption ends the judgement: admins' jobs pass every later rule.
  Decision admin = Judge(p, Job("root", {"admins", "ml"}, "cpu", 64));
  EXPECT_EQ(admin.verdict, Verdict::kAllow);
  EXPECT_EQ(admin.rule, "admins-exempt");
}

TEST(Policy, TimeNodesQosImagesAndAuditRules) {
  const Policy p = Parsed(kSitePolicy);
  Request r = Job("alice", {"ml"}, "cpu", 1);
  r.time_limit = 3 * 86400;
  EXPECT_THAT(Judge(p, r).message, HasSubstr("a time limit of at most 2-00:00:00 (asked for 3-00:00:00)"));
  r = Job("alice", {"ml"}, "cpu", 1);
  r.nodes = 8;
  EXPECT_THAT(Judge(p, r).message, HasSubstr("at most 4 nodes"));
  r = Job("bob", {}, "gpu", 1);
  r.qos = "scavenger";
  EXPECT_THAT(Judge(p, r).message, HasSubstr("QOS 'scavenger' is not allowed"));
  r.qos = "high";
  r.images = {"docker.io/evil:1"};
  EXPECT_THAT(Judge(p, r).message, HasSubstr("image 'docker.io/evil:1' is not allowed"));
  r.images = {"registry.example/team/train:3"};
  EXPECT_EQ(Judge(p, r).verdict, Verdict::kAllow);
  // An audit rule broken: allowed, and the finding kept for the log.
  r.memory_mb = 2 * 1024 * 1024;
  Decision d = Judge(p, r);
  EXPECT_EQ(d.verdict, Verdict::kAllow);
  ASSERT_EQ(d.audited.size(), 1u);
  EXPECT_EQ(d.audited[0].rule, "big-memory-audit");
}

TEST(Policy, JobTotalsComeFromEveryWayOfAsking) {
  jobspec::JobSpec s;
  s.min_nodes = 2;
  s.max_nodes = 4;
  s.gpus_per_node = 8;
  s.ntasks_per_node = 8;
  s.cpus_per_task = 4;
  s.mem_mb = 1000;
  Request r = RequestOfJob(s, "submit");
  EXPECT_EQ(*r.nodes, 4);
  EXPECT_EQ(*r.gpus, 32);
  EXPECT_EQ(*r.cpus, 128);
  EXPECT_EQ(*r.memory_mb, 4000);
  s = {};
  s.ntasks = 6;
  s.gpus_per_task = 1;
  s.partition = "gpu,debug";
  r = RequestOfJob(s, "submit");
  EXPECT_EQ(*r.gpus, 6);
  EXPECT_EQ(r.partitions, (std::vector<std::string>{"gpu", "debug"}));
}

TEST(Policy, KubernetesDefaultsRefuseTheWaysOutOfAContainer) {
  std::vector<Rule> defaults = KubernetesDefaultRules();
  std::vector<const Rule*> rules;
  for (const Rule& r : defaults) rules.push_back(&r);
  Context c;
  c.storage_paths = {"/mnt/datasets/imagenet/"};
  Request pod;
  pod.kind = Kind::kPod;
  pod.user = "alice";
  pod.uid = 1001;
  EXPECT_EQ(Evaluate(rules, pod, c).verdict, Verdict::kAllow);
  auto refused = [&](auto&& change, const char* words) {
    Request r = pod;
    change(r);
    Decision d = Evaluate(rules, r, c);
    EXPECT_EQ(d.verdict, Verdict::kDeny) << words;
    EXPECT_THAT(d.message, HasSubstr(words));
  };
  refused([](Request& r) { r.privileged = true; }, "a privileged container is not allowed");
  refused([](Request& r) { r.privilege_escalation = true; }, "allowPrivilegeEscalation");
  refused([](Request& r) { r.host_network = true; }, "hostNetwork");
  refused([](Request& r) { r.host_pid = true; }, "hostPID");
  refused([](Request& r) { r.host_ipc = true; }, "hostIPC");
  refused([](Request& r) { r.host_paths = {"/etc"}; }, "hostPath /etc");
  refused([](Request& r) { r.host_paths = {"/mnt/datasets/imagenet/../../../etc"}; }, "hostPath");
  refused([](Request& r) { r.host_paths = {"/mnt/datasets/imagenet2"}; }, "hostPath");
  refused([](Request& r) { r.run_as_uids = {0}; }, "runAsUser 0 (not alice's uid 1001)");
  refused([](Request& r) { r.run_as_uids = {1001, 1002}; }, "runAsUser 1002");
  // Under the declared storage, and as oneself: allowed.
  Request ok = pod;
  ok.host_paths = {"/mnt/datasets/imagenet", "/mnt/datasets/imagenet/train"};
  ok.run_as_uids = {1001};
  EXPECT_EQ(Evaluate(rules, ok, c).verdict, Verdict::kAllow);
  // Someone lockstep does not know (a service account) may not ask for root.
  Request sa = pod;
  sa.uid.reset();
  sa.user = "system:serviceaccount:ml:trainer";
  sa.run_as_uids = {0};
  EXPECT_THAT(Evaluate(rules, sa, c).message, HasSubstr("runAsUser 0 (root)"));
  sa.run_as_uids = {5000};
  EXPECT_EQ(Evaluate(rules, sa, c).verdict, Verdict::kAllow);
  // Jobs are not pods: the defaults do not apply to them.
  Request job = pod;
  job.kind = Kind::kJob;
  job.privileged = true;
  EXPECT_EQ(Evaluate(rules, job, c).verdict, Verdict::kAllow);
}

TEST(Policy, NamespacesLabelsAnnotationsAndCapabilities) {
  const Policy p = Parsed(R"(
rules:
  - name: team-labels
    match: {namespaces: ["team-*"], kinds: [pod, podgroup]}
    require: {labels: {team: "*"}, annotations: {lockstep.dev/owner: "*"}}
    forbid: {capabilities: true, labels: [debug], host_namespaces: true}
)");
  Request r;
  r.kind = Kind::kPod;
  r.ns = "team-a";
  EXPECT_THAT(Judge(p, r).message, HasSubstr("label 'team' is required"));
  r.labels = {{"team", "a"}};
  EXPECT_THAT(Judge(p, r).message, HasSubstr("annotation 'lockstep.dev/owner' is required"));
  r.annotations = {{"lockstep.dev/owner", "alice"}};
  EXPECT_EQ(Judge(p, r).verdict, Verdict::kAllow);
  r.added_capabilities = {"NET_ADMIN"};
  EXPECT_THAT(Judge(p, r).message, HasSubstr("added capability NET_ADMIN"));
  r.added_capabilities.clear();
  r.labels["debug"] = "1";
  EXPECT_THAT(Judge(p, r).message, HasSubstr("label 'debug' is not allowed"));
  r.labels.erase("debug");
  r.host_pid = true;
  EXPECT_THAT(Judge(p, r).message, HasSubstr("hostPID"));
  // Another namespace, or a job (no namespace): the rule does not match.
  r.ns = "default";
  EXPECT_EQ(Judge(p, r).verdict, Verdict::kAllow);
  r.kind = Kind::kJob;
  r.ns = "";
  EXPECT_EQ(Judge(p, r).verdict, Verdict::kAllow);
}

TEST(Policy, ErrorsNameTheFileLineAndRule) {
  auto error = [](const char* text) {
    Result<Policy> p = ParsePolicy(text, "policy.yaml");
    return p.ok() ? std::string("parsed") : p.status().message();
  };
  EXPECT_THAT(error("rules:\n  - name: cap\n    limits: {gpus_per_job: -1}\n"),
              HasSubstr("policy.yaml:3: rules[0] (cap).limits.gpus_per_job"));
  EXPECT_THAT(error("rules:\n  - name: cap\n    limits: {gpu_per_job: 2}\n"),
              HasSubstr("gpu_per_job"));
  EXPECT_THAT(error("rules:\n  - name: a\n    forbid: {privileged: true}\n  - name: a\n    forbid: {privileged: true}\n"),
              HasSubstr("'a' names an earlier rule too"));
  EXPECT_THAT(error("rules:\n  - name: nothing\n    match: {users: [x]}\n"),
              HasSubstr("limits, requires and forbids nothing"));
  EXPECT_THAT(error("rules:\n  - name: k\n    match: {kinds: [deployment]}\n    forbid: {privileged: true}\n"),
              HasSubstr("'deployment' is not one of job|pod|podgroup"));
  EXPECT_THAT(error("rules:\n  - name: m\n    action: deny\n    forbid: {privileged: true}\n"),
              HasSubstr("rules[0] (m).action"));
  EXPECT_THAT(error("rules: [\n"), HasSubstr("policy.yaml"));
  EXPECT_THAT(error("rule:\n  - name: x\n"), HasSubstr("rule"));
  EXPECT_THAT(error("rules:\n  - just-a-string\n"), HasSubstr("a rule must be a map"));
}

TEST(Policy, GlobMatchesStarsOnly) {
  EXPECT_TRUE(Glob("registry.example/*", "registry.example/a/b:1"));
  EXPECT_FALSE(Glob("registry.example/*", "registry.example.evil/a"));
  EXPECT_TRUE(Glob("*", ""));
  EXPECT_TRUE(Glob("a*b*c", "axxbyyc"));
  EXPECT_FALSE(Glob("a*b*c", "axxbyy"));
  EXPECT_TRUE(Glob("exact", "exact"));
  EXPECT_FALSE(Glob("exact", "exactly"));
  // No backtracking blow-up on a hostile pattern.
  EXPECT_FALSE(Glob(std::string(200, '*') + "b", std::string(100000, 'a')));
}

}  // namespace
}  // namespace lockstep::policy
