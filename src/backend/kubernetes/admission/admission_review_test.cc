// The webhook's answers to AdmissionReviews as the API server sends them (v1), judged by the
// default rules and a site's file, and each decision in the audit log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "backend/kubernetes/admission/admission_review.h"
#include "identity/user_directory.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

class Webhook : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (std::filesystem::temp_directory_path() / "webhook_XXXXXX").string();
    dir_ = ::mkdtemp(t.data());
    std::ofstream(dir_ + "/policy.yaml") << R"(
rules:
  - name: gpu-cap
    match: {groups: [ml]}
    limits: {gpus_per_job: 2}
  - name: allowed-images
    match: {kinds: [pod]}
    require: {images: ["docker.io/local/*"]}
  - name: small-gangs
    match: {kinds: [podgroup]}
    limits: {nodes_per_job: 4}
)";
    auto users = identity::ParsePasswdAndGroup(
        "alice:x:1001:1001::/home/alice:/bin/sh\n", "passwd", "alice:x:1001:\nml:x:2000:alice\n",
        "group");
    ASSERT_TRUE(users.ok()) << users.status().ToString();
    std::shared_ptr<const identity::UserDirectory> directory = *users;
    policy::GateOptions o;
    o.policy_file = dir_ + "/policy.yaml";
    o.kubernetes_defaults = true;
    o.audit_log = dir_ + "/audit.log";
    o.directory = [directory] { return directory; };
    o.storage_paths = {"/mnt/data"};
    o.trusted_users = {"system:serviceaccount:lockstep:lockstepd"};
    auto gate = policy::PolicyGate::Open(o);
    ASSERT_TRUE(gate.ok()) << gate.status().ToString();
    gate_ = std::move(*gate);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static Json Pod(Json spec_extra = Json::object()) {
    Json spec = {{"schedulerName", "lockstep"},
                 {"containers",
                  {{{"name", "main"},
                    {"image", "docker.io/local/busybox:1"},
                    {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}};
    spec.update(spec_extra);
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", "p"}, {"namespace", "ml"}}},
            {"spec", spec}};
  }
  static Json Review(const Json& object, const std::string& user = "alice",
                     const std::string& kind = "Pod") {
    return {{"apiVersion", "admission.k8s.io/v1"},
            {"kind", "AdmissionReview"},
            {"request",
             {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
              {"kind", {{"group", ""}, {"version", "v1"}, {"kind", kind}}},
              {"namespace", "ml"},
              {"operation", "CREATE"},
              {"userInfo", {{"username", user}, {"groups", {"system:authenticated"}}}},
              {"object", object}}}};
  }
  Json Answer(const Json& review) {
    Result<Json> r = ReviewAdmission(*gate_, review, {});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)["response"]["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    EXPECT_EQ((*r)["kind"], "AdmissionReview");
    return (*r)["response"];
  }

  std::string dir_;
  std::unique_ptr<policy::PolicyGate> gate_;
};

TEST_F(Webhook, APodWithinPolicyIsAllowed) {
  Json r = Answer(Review(Pod()));
  EXPECT_EQ(r["allowed"], true);
}

TEST_F(Webhook, PrivilegedHostPathAndRootPodsAreRefusedWithTheRule) {
  Json privileged = Pod();
  privileged["spec"]["containers"][0]["securityContext"] = {{"privileged", true}};
  Json r = Answer(Review(privileged));
  EXPECT_EQ(r["allowed"], false);
  EXPECT_EQ(r["status"]["code"], 403);
  EXPECT_THAT(r["status"]["message"].get<std::string>(),
              HasSubstr("policy rule 'default-no-privileged'"));

  Json host = Pod({{"volumes", {{{"name", "etc"}, {"hostPath", {{"path", "/etc"}}}}}}});
  EXPECT_THAT(Answer(Review(host))["status"]["message"].get<std::string>(),
              HasSubstr("hostPath /etc is not allowed"));
  Json data = Pod({{"volumes", {{{"name", "d"}, {"hostPath", {{"path", "/mnt/data/x"}}}}}}});
  EXPECT_EQ(Answer(Review(data))["allowed"], true);

  Json root = Pod({{"securityContext", {{"runAsUser", 0}}}});
  EXPECT_THAT(Answer(Review(root))["status"]["message"].get<std::string>(),
              HasSubstr("runAsUser 0 (not alice's uid 1001)"));
  Json net = Pod({{"hostNetwork", true}});
  EXPECT_EQ(Answer(Review(net))["allowed"], false);
}

TEST_F(Webhook, TheFilesRulesComeFirstAndMatchTheUsersGroups) {
  Json four = Pod();
  four["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "4";
  EXPECT_THAT(Answer(Review(four))["status"]["message"].get<std::string>(),
              HasSubstr("policy rule 'gpu-cap'"));
  // bob is not in ml (not even known): his 4-GPU pod passes that rule.
  EXPECT_EQ(Answer(Review(four, "bob"))["allowed"], true);
  Json image = Pod();
  image["spec"]["containers"][0]["image"] = "quay.io/other:1";
  EXPECT_THAT(Answer(Review(image))["status"]["message"].get<std::string>(),
              HasSubstr("image 'quay.io/other:1' is not allowed"));
  Json group = {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                {"kind", "PodGroup"},
                {"metadata", {{"name", "g"}, {"namespace", "ml"}}},
                {"spec", {{"minMember", 8}}}};
  EXPECT_THAT(Answer(Review(group, "bob", "PodGroup"))["status"]["message"].get<std::string>(),
              HasSubstr("at most 4 nodes"));
}

TEST_F(Webhook, OtherSchedulersTrustedUsersAndDeletionsPassUnjudged) {
  Json other = Pod({{"schedulerName", "default-scheduler"}, {"hostNetwork", true}});
  EXPECT_EQ(Answer(Review(other))["allowed"], true);
  Json privileged = Pod({{"hostPID", true}});
  EXPECT_EQ(Answer(Review(privileged, "system:serviceaccount:lockstep:lockstepd"))["allowed"], true);
  Json del = Review(privileged);
  del["request"]["operation"] = "DELETE";
  EXPECT_EQ(Answer(del)["allowed"], true);
  // Only judged pods are in the audit log: none of these.
  EXPECT_TRUE(gate_->AuditTail(10).empty());
}

TEST_F(Webhook, EachDecisionIsAnAuditLine) {
  Answer(Review(Pod()));
  Answer(Review(Pod({{"hostIPC", true}})));
  std::vector<std::string> lines = gate_->AuditTail(10);
  ASSERT_EQ(lines.size(), 2u);
  Json allow = Json::parse(lines[0]), deny = Json::parse(lines[1]);
  EXPECT_EQ(allow["verdict"], "allow");
  EXPECT_EQ(allow["who"], "kubernetes:alice");
  EXPECT_EQ(allow["kind"], "pod");
  EXPECT_EQ(allow["namespace"], "ml");
  EXPECT_EQ(deny["verdict"], "deny");
  EXPECT_EQ(deny["rule"], "default-no-host-namespaces");
  EXPECT_EQ(deny["asked"]["host_ipc"], true);
  EXPECT_THAT(gate_->MetricsText(),
              HasSubstr("lockstep_policy_decisions_total{kind=\"pod\",verdict=\"deny\",rule=\"default-no-host-namespaces\"} 1"));
}

TEST_F(Webhook, WhatIsNotAReviewOrNotReadableIsRefused) {
  EXPECT_FALSE(ReviewAdmission(*gate_, Json::object(), {}).ok());
  EXPECT_FALSE(ReviewAdmission(*gate_, Json::array(), {}).ok());
  Json bad = Pod();
  bad["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "lots";
  Json r = Answer(Review(bad));
  EXPECT_EQ(r["allowed"], false);
  EXPECT_THAT(r["status"]["message"].get<std::string>(),
              HasSubstr("spec.containers[0].resources.nvidia.com/gpu"));
}

TEST_F(Webhook, APolicyFileThatBreaksKeepsTheRulesItHad) {
  std::ofstream(dir_ + "/policy.yaml") << "rules:\n  - name: x\n    limits: {gpus_per_job: -3}\n";
  Result<bool> changed = gate_->Reload();
  ASSERT_FALSE(changed.ok());
  EXPECT_THAT(changed.status().message(), HasSubstr("rules[0] (x).limits.gpus_per_job"));
  Json four = Pod();
  four["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "4";
  EXPECT_EQ(Answer(Review(four))["allowed"], false);  // gpu-cap still in force
  std::ofstream(dir_ + "/policy.yaml") << "rules:\n  - name: cap8\n    limits: {gpus_per_job: 8}\n";
  ASSERT_TRUE(gate_->Reload().ok());
  EXPECT_EQ(Answer(Review(four))["allowed"], true);
}

}  // namespace
}  // namespace lockstep::kube
