// deploy/kubernetes/ against a real kube-apiserver with RBAC authorization (test_apiserver.h):
// every manifest is applied (YAML -> JSON -> POST, or PUT when it exists), the objects exist
// afterwards, the ConfigMap's cluster.yaml is a valid lockstep config, and the RBAC is sufficient
// and least-privilege, checked by impersonating lockstepd's ServiceAccount.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/client/test_apiserver.h"
#include "backend/kubernetes/client/test_manifests.h"
#include "backend/kubernetes/leader/leader_election.h"
#include "config/cluster_config.h"

namespace lockstep::kube {
namespace {

using std::chrono::milliseconds;
using testing::Apply;
using testing::LoadManifest;
using testing::SourceDir;
using testing::WaitFor;

// In the order `kubectl apply -f deploy/kubernetes/` must follow (the namespace first).
const std::vector<std::string> kManifests = {
    "namespace.yaml", "podgroup-crd.yaml", "serviceaccount.yaml", "rbac.yaml",
    "configmap.yaml", "deployment.yaml",   "service.yaml"};
constexpr char kServiceAccount[] = "system:serviceaccount:lockstep:lockstepd";

constexpr char kPodGroups[] = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups";
constexpr char kPodGroupsIn[] = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/";

Json PodGroup(const std::string& ns, const std::string& name, int min_member) {
  return {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
          {"kind", "PodGroup"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"minMember", min_member}}}};
}

bool Forbidden(const Status& st) {
  return ApiErrorOf(st).http_code == 403;
}

class DeployManifestsTest : public testing::ApiServerTest {
 protected:
  static std::string DeployDir() { return SourceDir() + "/deploy/kubernetes"; }

  // Every object of every manifest, applied by the admin.
  static void ApplyAll() {
    for (const std::string& file : kManifests) {
      for (const Json& obj : LoadManifest(DeployDir() + "/" + file)) {
        Result<Json> r = Apply(admin(), obj);
        ASSERT_TRUE(r.ok()) << file << ": " << obj["kind"] << " " << obj["metadata"]["name"] << ": "
                            << r.status().ToString();
      }
    }
  }

  // A client acting as lockstepd's ServiceAccount.
  static std::unique_ptr<KubeClient> AsLockstepd() {
    ClientOptions o;
    o.max_retries = 0;
    o.transport.extra_headers = {{"Impersonate-User", kServiceAccount},
                                 {"Impersonate-Group", "system:serviceaccounts"},
                                 {"Impersonate-Group", "system:serviceaccounts:lockstep"}};
    return NewClient(o);
  }
};

TEST_F(DeployManifestsTest, EveryManifestIsAcceptedAndTheObjectsExist) {
  ApplyAll();
  ApplyAll();  // twice: applying again replaces, as kubectl apply would

  Result<Json> d = admin().Get("/apis/apps/v1/namespaces/lockstep/deployments/lockstepd");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ((*d)["spec"]["replicas"], 2);
  const Json& pod = (*d)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"], "lockstepd");
  const Json& c = pod["containers"][0];
  EXPECT_EQ(c["image"], "lockstep/lockstepd:0.1.0");
  const std::vector<std::string> args = c["args"];
  const std::vector<std::string> want = {"--config",    "/etc/lockstep/cluster.yaml",
                                         "--state-dir", "/var/lib/lockstep",
                                         "--listen",    "0.0.0.0:6820"};
  ASSERT_GE(args.size(), want.size());
  EXPECT_TRUE(std::equal(want.begin(), want.end(), args.begin()));
  EXPECT_TRUE(c.contains("readinessProbe"));

  Result<Json> pvc =
      admin().Get("/api/v1/namespaces/lockstep/persistentvolumeclaims/lockstep-state");
  ASSERT_TRUE(pvc.ok()) << pvc.status().ToString();
  EXPECT_EQ((*pvc)["spec"]["accessModes"][0], "ReadWriteMany");

  Result<Json> svc = admin().Get("/api/v1/namespaces/lockstep/services/lockstepd");
  ASSERT_TRUE(svc.ok()) << svc.status().ToString();
  EXPECT_EQ((*svc)["spec"]["type"], "ClusterIP");
  EXPECT_EQ((*svc)["spec"]["ports"][0]["port"], 6820);
  EXPECT_FALSE((*svc)["spec"].value("clusterIP", "").empty());

  // The PodGroup CRD is served, with its status subresource.
  ASSERT_TRUE(testing::WaitForCrdEstablished(admin(), "podgroups.scheduling.x-k8s.io", kPodGroups,
                                             milliseconds(20'000)));
  CreateNamespace("research");
  Result<Json> pg = Apply(admin(), PodGroup("research", "llm", 4));
  ASSERT_TRUE(pg.ok()) << pg.status().ToString();
  EXPECT_EQ((*pg)["spec"]["minMember"], 4);
  Result<Json> st = admin().Patch(std::string(kPodGroupsIn) + "research/podgroups/llm/status",
                                  PatchType::kMerge, {{"status", {{"phase", "Pending"}}}});
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ((*st)["status"]["phase"], "Pending");

  EXPECT_TRUE(admin().Get("/api/v1/namespaces/lockstep/serviceaccounts/lockstepd").ok());
  EXPECT_TRUE(admin().Get("/apis/rbac.authorization.k8s.io/v1/clusterroles/lockstepd").ok());
  EXPECT_TRUE(admin()
                  .Get("/apis/rbac.authorization.k8s.io/v1/namespaces/lockstep/roles/"
                       "lockstepd-leader-election")
                  .ok());
}

TEST_F(DeployManifestsTest, TheConfigMapHoldsAValidKubernetesClusterConfig) {
  std::vector<Json> objs = LoadManifest(DeployDir() + "/configmap.yaml");
  ASSERT_EQ(objs.size(), 1u);
  const std::string text = objs[0]["data"]["cluster.yaml"];
  Result<config::ClusterConfig> cfg = config::ParseClusterConfig(text, "configmap.yaml:cluster.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->backend, "kubernetes");
  EXPECT_EQ(cfg->kubernetes.ns, "lockstep");
  EXPECT_TRUE(cfg->kubernetes.leader_elect);
  EXPECT_EQ(cfg->kubernetes.lease_name, "lockstepd");
  EXPECT_EQ(cfg->kubernetes.finished_pod_ttl, 24 * 3600);
}

TEST_F(DeployManifestsTest, TheServiceAccountMayDoWhatLockstepdDoes) {
  ApplyAll();
  auto sa = AsLockstepd();
  ASSERT_TRUE(sa);
  // Fixtures made by the admin: a node and a namespace of researchers.
  Result<Json> node = admin().Create(
      NodesPath(), {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "gpu-001"}}}});
  ASSERT_TRUE(node.ok() || IsAlreadyExists(node.status())) << node.status().ToString();
  CreateNamespace("research");

  Result<Json> nodes = sa->List(NodesPath());
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  EXPECT_FALSE((*nodes)["items"].empty());
  EXPECT_TRUE(sa->Get(NodePath("gpu-001")).ok());
  EXPECT_TRUE(sa->List(PodsPath("")).ok());

  // Pods: create, bind (pods/binding), read, patch, read status, delete.
  const Json pod = {{"apiVersion", "v1"},
                    {"kind", "Pod"},
                    {"metadata", {{"name", "job-1-0"}, {"namespace", "research"}}},
                    {"spec",
                     {{"schedulerName", "lockstep"},
                      {"containers", {{{"name", "main"}, {"image", "ubuntu:24.04"}}}}}}};
  Result<Json> created = sa->Create(PodsPath("research"), pod);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Status bound = sa->Bind("research", "job-1-0", "gpu-001");
  EXPECT_TRUE(bound.ok()) << bound.ToString();
  EXPECT_TRUE(sa->Get(PodPath("research", "job-1-0") + "/status").ok());
  Result<Json> patched = sa->Patch(PodPath("research", "job-1-0"), PatchType::kMerge,
                                   {{"metadata", {{"labels", {{"lockstep.dev/job", "1"}}}}}});
  EXPECT_TRUE(patched.ok()) << patched.status().ToString();
  DeleteOptions now;
  now.grace_period_seconds = 0;
  Result<Json> deleted = sa->Delete(PodPath("research", "job-1-0"), now);
  EXPECT_TRUE(deleted.ok()) << deleted.status().ToString();

  // A job's headless Service, an Event, PriorityClasses.
  const Json svc = {{"apiVersion", "v1"},
                    {"kind", "Service"},
                    {"metadata", {{"name", "job-1"}, {"namespace", "lockstep"}}},
                    {"spec",
                     {{"clusterIP", "None"},
                      {"selector", {{"lockstep.dev/job", "1"}}},
                      {"ports", {{{"name", "master"}, {"port", 29500}}}}}}};
  Result<Json> s = sa->Create("/api/v1/namespaces/lockstep/services", svc);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(sa->Delete("/api/v1/namespaces/lockstep/services/job-1").ok());
  const Json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", "job-1-0.started"}, {"namespace", "research"}}},
      {"involvedObject",
       {{"kind", "Pod"}, {"namespace", "research"}, {"name", "job-1-0"}, {"apiVersion", "v1"}}},
      {"reason", "Scheduled"},
      {"message", "bound to gpu-001"},
      {"type", "Normal"}};
  Result<Json> ev = sa->Create("/api/v1/namespaces/research/events", event);
  EXPECT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_TRUE(sa->List("/apis/scheduling.k8s.io/v1/priorityclasses").ok());

  // PodGroups: read them everywhere, write their status.
  ASSERT_TRUE(testing::WaitForCrdEstablished(admin(), "podgroups.scheduling.x-k8s.io", kPodGroups,
                                             milliseconds(20'000)));
  ASSERT_TRUE(Apply(admin(), PodGroup("research", "sa-probe", 2)).ok());
  EXPECT_TRUE(sa->List(kPodGroups).ok());
  const std::string group = std::string(kPodGroupsIn) + "research/podgroups/sa-probe";
  EXPECT_TRUE(sa->Get(group).ok());
  Result<Json> st = sa->Patch(group + "/status", PatchType::kMerge,
                              {{"status", {{"phase", "Scheduled"}, {"scheduled", 2}}}});
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ((*st)["status"]["scheduled"], 2);

  // The Lease in its own namespace: create, read, update.
  Result<Json> lease = sa->Create("/apis/coordination.k8s.io/v1/namespaces/lockstep/leases",
                                  LeaseObject("lockstep", "rbac-probe", {"probe", 15, "", "", 0}));
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  Json update = *lease;
  update["spec"]["leaseTransitions"] = 1;
  EXPECT_TRUE(
      sa->Update("/apis/coordination.k8s.io/v1/namespaces/lockstep/leases/rbac-probe", update)
          .ok());
}

TEST_F(DeployManifestsTest, LeaderElectionWorksWithTheServiceAccountsRights) {
  ApplyAll();
  auto sa = AsLockstepd();
  ASSERT_TRUE(sa);
  LeaderElectionOptions o;  // namespace lockstep, lease lockstepd: as deployed
  o.identity = "lockstepd-0";
  o.lease_duration = std::chrono::seconds(2);
  o.renew_deadline = milliseconds(1500);
  o.retry_period = milliseconds(300);
  LeaderElector elector(sa.get(), o, nullptr, nullptr);
  elector.Start();
  EXPECT_TRUE(WaitFor([&] { return elector.IsLeader(); }, milliseconds(5'000)));
  // Renewals (update) are allowed too: the Lease's renewTime moves on.
  auto renewed = [&] {
    Result<Json> l = admin().Get("/apis/coordination.k8s.io/v1/namespaces/lockstep/leases/lockstepd");
    return l.ok() ? LeaseRecordFromObject(*l).renew_time : std::string();
  };
  const std::string first = renewed();
  EXPECT_TRUE(WaitFor([&] { return renewed() != first; }, milliseconds(5'000)));
  EXPECT_TRUE(elector.IsLeader());
  elector.Stop();  // release: an update
  Result<Json> l = admin().Get("/apis/coordination.k8s.io/v1/namespaces/lockstep/leases/lockstepd");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(LeaseRecordFromObject(*l).holder_identity, "");
}

TEST_F(DeployManifestsTest, TheServiceAccountMayDoNothingElse) {
  ApplyAll();
  auto sa = AsLockstepd();
  ASSERT_TRUE(sa);
  Result<Json> node = admin().Create(
      NodesPath(), {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "gpu-002"}}}});
  ASSERT_TRUE(node.ok() || IsAlreadyExists(node.status())) << node.status().ToString();
  CreateNamespace("research");

  auto expect_forbidden = [](const Result<Json>& r, const char* what) {
    EXPECT_FALSE(r.ok()) << what << " was allowed";
    if (!r.ok()) {
      EXPECT_TRUE(Forbidden(r.status())) << what << ": " << r.status().ToString();
    }
  };
  // Nodes are read-only: no delete, no cordon (patch), no create.
  expect_forbidden(sa->Delete(NodePath("gpu-002")), "delete node");
  expect_forbidden(
      sa->Patch(NodePath("gpu-002"), PatchType::kMerge, {{"spec", {{"unschedulable", true}}}}),
      "patch node");
  // Leases only in its own namespace, and never deleted.
  expect_forbidden(sa->Create("/apis/coordination.k8s.io/v1/namespaces/default/leases",
                              LeaseObject("default", "lockstepd", {"x", 15, "", "", 0})),
                   "create lease in default");
  expect_forbidden(sa->Create("/apis/coordination.k8s.io/v1/namespaces/research/leases",
                              LeaseObject("research", "lockstepd", {"x", 15, "", "", 0})),
                   "create lease in research");
  expect_forbidden(sa->Delete("/apis/coordination.k8s.io/v1/namespaces/lockstep/leases/lockstepd"),
                   "delete lease");
  // No secrets, anywhere.
  expect_forbidden(sa->List("/api/v1/namespaces/lockstep/secrets"), "list secrets in lockstep");
  expect_forbidden(sa->Get("/api/v1/namespaces/lockstep/secrets/lockstepd-tls"), "get a secret");
  expect_forbidden(sa->List("/api/v1/secrets"), "list all secrets");
  // Pods are not updated wholesale, nor their status written; no exec.
  expect_forbidden(sa->Call("PUT", "/api/v1/namespaces/research/pods/x/status", nullptr),
                   "update pods/status");
  expect_forbidden(sa->Call("POST", "/api/v1/namespaces/research/pods/x/exec", nullptr), "exec");
  expect_forbidden(sa->Call("GET", "/api/v1/namespaces/research/pods/x/exec", nullptr),
                   "exec by WebSocket");
  // ... but in its jobs' namespace, exec (steps): by WebSocket (GET) and SPDY (POST) alike, the
  // pod not being there is the only refusal.
  for (const char* method : {"GET", "POST"}) {
    Result<Json> exec = sa->Call(method, "/api/v1/namespaces/lockstep/pods/x/exec", nullptr);
    EXPECT_FALSE(exec.ok());
    EXPECT_TRUE(IsNotFound(exec.status())) << method << ": " << exec.status().ToString();
  }
  // PodGroups are their owners': no creating, changing or deleting them (only their status).
  ASSERT_TRUE(testing::WaitForCrdEstablished(admin(), "podgroups.scheduling.x-k8s.io", kPodGroups,
                                             milliseconds(20'000)));
  ASSERT_TRUE(Apply(admin(), PodGroup("research", "owned", 2)).ok());
  const std::string group = std::string(kPodGroupsIn) + "research/podgroups/owned";
  expect_forbidden(
      sa->Create(std::string(kPodGroupsIn) + "research/podgroups", PodGroup("research", "mine", 1)),
      "create podgroup");
  expect_forbidden(sa->Patch(group, PatchType::kMerge, {{"spec", {{"minMember", 1}}}}),
                   "patch podgroup");
  expect_forbidden(sa->Delete(group), "delete podgroup");
  expect_forbidden(sa->Call("PUT", group + "/status", nullptr), "update podgroups/status");
  // Nothing outside its rules: config maps, deployments, its own RBAC.
  expect_forbidden(sa->Get("/api/v1/namespaces/lockstep/configmaps/lockstep-config"),
                   "get configmap");
  expect_forbidden(sa->List("/apis/apps/v1/namespaces/lockstep/deployments"), "list deployments");
  expect_forbidden(sa->Create("/apis/rbac.authorization.k8s.io/v1/clusterroles",
                              {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                               {"kind", "ClusterRole"},
                               {"metadata", {{"name", "escalate"}}},
                               {"rules", Json::array()}}),
                   "create clusterrole");
  expect_forbidden(sa->Delete("/api/v1/namespaces/research"), "delete namespace");
  expect_forbidden(sa->Call("DELETE", "/api/v1/namespaces/lockstep/services", nullptr),
                   "delete all services");
}

}  // namespace
}  // namespace lockstep::kube
