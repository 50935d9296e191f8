#include "backend/kubernetes/objects/pod_groups.h"

#include <gtest/gtest.h>

#include "backend/kubernetes/objects/objects_test_util.h"
#include "engine/request.h"

namespace lockstep::kube {
namespace {

using nlohmann::json;

json AnnotatedPod(const std::string& name, const std::string& gang, const std::string& size) {
  json pod = testing::GangPod(name);
  pod["metadata"]["labels"].erase(kPodGroupLabel);
  pod["metadata"]["annotations"] = {{kGangAnnotation, gang}, {kGangSizeAnnotation, size}};
  return pod;
}

TEST(Membership, CoschedulingPodGroup) {
  json group = testing::PodGroup(4);
  json pod = testing::GangPod("bert-large-worker-0");
  EXPECT_EQ(PodGroupName(pod), "bert-large");
  Result<PodMembership> m = MembershipOf(pod, &group);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->ns, "research");
  EXPECT_EQ(m->pod, "bert-large-worker-0");
  EXPECT_EQ(m->gang, "research/bert-large");
  EXPECT_EQ(m->source, GangSource::kPodGroup);
  EXPECT_EQ(m->min_member, 4);
  EXPECT_EQ(m->priority, 100000);
  EXPECT_EQ(m->queue, "gpu");
}

TEST(Membership, MissingOrBadPodGroup) {
  json pod = testing::GangPod("bert-large-worker-0");
  Result<PodMembership> m = MembershipOf(pod, nullptr);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(m.status().message(),
            "pod research/bert-large-worker-0: label scheduling.x-k8s.io/pod-group: PodGroup "
            "research/bert-large not found");
  json group = testing::PodGroup(0);
  m = MembershipOf(pod, &group);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(),
            "pod research/bert-large-worker-0: PodGroup research/bert-large: spec.minMember: 0 "
            "is not a positive integer");
}

TEST(Membership, Annotations) {
  json pod = AnnotatedPod("w-0", "sweep-17", "3");
  pod["spec"].erase("priority");
  pod["metadata"]["labels"].erase(kQueueLabel);
  PodGroupOptions o;
  o.default_queue = "batch";
  Result<PodMembership> m = MembershipOf(pod, nullptr, o);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->gang, "research/sweep-17");
  EXPECT_EQ(m->source, GangSource::kAnnotation);
  EXPECT_EQ(m->min_member, 3);
  EXPECT_EQ(m->priority, 0);
  EXPECT_EQ(m->queue, "batch");

  for (const char* bad : {"0", "-2", "three", "2.5", ""}) {
    Result<PodMembership> b = MembershipOf(AnnotatedPod("w-0", "sweep-17", bad), nullptr);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.status().message(), std::string("pod research/w-0: annotation "
                                                "lockstep.dev/gang-size: \"") +
                                        bad + "\" is not a positive integer");
  }
  json no_size = AnnotatedPod("w-0", "sweep-17", "3");
  no_size["metadata"]["annotations"].erase(kGangSizeAnnotation);
  EXPECT_EQ(MembershipOf(no_size, nullptr).status().message(),
            "pod research/w-0: annotation lockstep.dev/gang without lockstep.dev/gang-size");
}

TEST(Membership, AloneIsAGangOfOne) {
  json pod = testing::GangPod("solo");
  pod["metadata"]["labels"].erase(kPodGroupLabel);
  Result<PodMembership> m = MembershipOf(pod, nullptr);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->gang, "research/solo");
  EXPECT_EQ(m->source, GangSource::kSingle);
  EXPECT_EQ(m->min_member, 1);
}

TEST(GroupPods, GangsAndErrors) {
  json w0 = testing::GangPod("bert-large-worker-0");
  json w1 = testing::GangPod("bert-large-worker-1");
  json w2 = testing::GangPod("bert-large-worker-2");
  w2["spec"]["nodeName"] = "gpu-a-07";  // already bound
  w2["status"]["phase"] = "Running";
  json deleting = testing::GangPod("bert-large-worker-3");
  deleting["metadata"]["deletionTimestamp"] = "2024-05-01T12:40:00Z";
  json other = testing::GangPod("not-ours");
  other["spec"]["schedulerName"] = "default-scheduler";
  json s0 = AnnotatedPod("sweep-a", "sweep", "2");
  json s1 = AnnotatedPod("sweep-b", "sweep", "3");  // disagrees
  json orphan = testing::GangPod("orphan");
  orphan["metadata"]["labels"][kPodGroupLabel] = "missing";
  std::map<std::string, json> groups = {{"research/bert-large", testing::PodGroup(4)}};

  Gangs g = GroupPods({w1, w0, w2, deleting, other, s0, s1, orphan}, groups);
  ASSERT_EQ(g.gangs.size(), 2u);
  const Gang& bert = g.gangs[0];
  EXPECT_EQ(bert.key, "research/bert-large");
  ASSERT_EQ(bert.pods.size(), 2u);
  EXPECT_EQ((*bert.pods[0])["metadata"]["name"], "bert-large-worker-0");  // by name
  EXPECT_EQ(bert.bound, 1);
  EXPECT_EQ(bert.min_member, 4);
  EXPECT_FALSE(bert.Ready());  // 2 waiting + 1 bound < 4
  const Gang& sweep = g.gangs[1];
  EXPECT_EQ(sweep.key, "research/sweep");
  EXPECT_EQ(sweep.pods.size(), 1u);
  ASSERT_EQ(g.errors.size(), 2u);
  EXPECT_NE(g.errors[0].message().find("PodGroup research/missing not found"), std::string::npos);
  EXPECT_NE(g.errors[1].message().find("pod research/sweep-b: gang research/sweep has size 2"),
            std::string::npos)
      << g.errors[1].message();
}

TEST(GangToRequest, OnePodPerNode) {
  std::vector<json> pods = {testing::GangPod("w-0"), testing::GangPod("w-1"),
                            testing::GangPod("w-2")};
  pods[1]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "40500m";
  pods[1]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "40500m";
  Result<GangRequest> g = GangToRequest(pods);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const engine::JobRequest& r = g->request;
  EXPECT_EQ(r.min_nodes, 3);
  EXPECT_EQ(r.ntasks, 3);
  EXPECT_EQ(r.cpus_per_task, 41);  // the largest pod, rounded up
  EXPECT_EQ(r.mem_per_node_mb, 200 * 1024);
  EXPECT_EQ(r.gpus_per_task, 4);
  EXPECT_EQ(r.gpu_type, engine::kNone);
  EXPECT_EQ(r.time_limit, 0);
  EXPECT_EQ(g->gpu_type, "");
  EXPECT_EQ(g->gpu_resource, "nvidia.com/gpu");
  EXPECT_EQ(g->pods_per_node, 1);

  engine::Job job;
  job.req = r;
  engine::JobShape shape = engine::ShapeOf(job, engine::Partition{});
  EXPECT_EQ(shape.nodes, 3);
  EXPECT_EQ(shape.per_node.cpus, 41);
  EXPECT_EQ(shape.per_node.gpus, 4);
  EXPECT_EQ(shape.per_node.mem_mb, 200 * 1024);
}

TEST(GangToRequest, PodsShareNodesAndMig) {
  std::vector<json> pods;
  for (int i = 0; i < 5; ++i) {
    json p = testing::GangPod("w-" + std::to_string(i));
    p["spec"]["containers"][0]["resources"] = {
        {"limits", {{"cpu", "2"}, {"memory", "1500Mi"}, {"nvidia.com/mig-1g.10gb", "1"}}},
        {"requests", {{"cpu", "2"}, {"memory", "1500Mi"}, {"nvidia.com/mig-1g.10gb", "1"}}}};
    p["spec"]["activeDeadlineSeconds"] = 600 + i;
    pods.push_back(p);
  }
  GangOptions o;
  o.pods_per_node = 4;
  Result<GangRequest> g = GangToRequest(pods, o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->request.min_nodes, 2);
  EXPECT_EQ(g->pods_per_node, 3);  // 5 pods over 2 nodes: 3 + 2
  EXPECT_EQ(g->request.mem_per_node_mb, 4500);
  EXPECT_EQ(g->request.gpus_per_task, 1);
  EXPECT_EQ(g->gpu_type, "mig-1g.10gb");
  EXPECT_EQ(g->request.time_limit, 604);

  engine::Job job;
  job.req = g->request;
  engine::JobShape shape = engine::ShapeOf(job, engine::Partition{});
  EXPECT_EQ(shape.tasks_per_node, 3);
  EXPECT_EQ(shape.per_node.cpus, 6);
  EXPECT_EQ(shape.per_node.gpus, 3);

  std::vector<engine::Node> nodes(3);
  nodes[0].name = "gpu-a-01", nodes[1].name = "gpu-a-02", nodes[2].name = "gpu-a-03";
  engine::Allocation alloc;
  alloc.nodes = {{2, 6, 4500, 0, 3}, {0, 6, 4500, 0, 3}};
  std::vector<const json*> each;
  for (const json& p : pods) each.push_back(&p);
  Result<std::vector<PodBinding>> b = BindingsFor(each, *g, alloc, nodes);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(b->size(), 5u);
  EXPECT_EQ((*b)[0], (PodBinding{"research", "w-0", "gpu-a-03"}));
  EXPECT_EQ((*b)[2], (PodBinding{"research", "w-2", "gpu-a-03"}));
  EXPECT_EQ((*b)[3], (PodBinding{"research", "w-3", "gpu-a-01"}));
  EXPECT_EQ((*b)[4], (PodBinding{"research", "w-4", "gpu-a-01"}));

  alloc.nodes.pop_back();
  EXPECT_FALSE(BindingsFor(each, *g, alloc, nodes).ok());
  alloc.nodes = {{7, 6, 4500, 0, 3}, {0, 6, 4500, 0, 3}};
  EXPECT_FALSE(BindingsFor(each, *g, alloc, nodes).ok());
}

TEST(GangToRequest, MixedGpuResourcesAreAnError) {
  std::vector<json> pods = {testing::GangPod("w-0"), testing::GangPod("w-1")};
  pods[1]["spec"]["containers"][0]["resources"]["limits"].erase("nvidia.com/gpu");
  pods[1]["spec"]["containers"][0]["resources"]["requests"].erase("nvidia.com/gpu");
  pods[1]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/mig-3g.40gb"] = "1";
  Result<GangRequest> g = GangToRequest(pods);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "pod research/w-1: asks for nvidia.com/mig-3g.40gb, another pod of its gang for "
            "nvidia.com/gpu; a job has one GPU type");
  EXPECT_FALSE(GangToRequest(std::vector<json>{}).ok());
}

TEST(BindingObject, AsTheApiWantsIt) {
  EXPECT_EQ(BindingObject({"research", "w-0", "gpu-a-07"}),
            json::parse(R"({"apiVersion":"v1","kind":"Binding",
              "metadata":{"name":"w-0","namespace":"research"},
              "target":{"apiVersion":"v1","kind":"Node","name":"gpu-a-07"}})"));
}

}  // namespace
}  // namespace lockstep::kube
