// PlacementFeatures over a real Controller in a temporary directory (no apiserver): the
// features it gives follow the Nodes, are shared by gangs alike and dropped with the last one.
#include "controller/controller.h"
#include "backend/kubernetes/gangs/placement_features.h"

#include <gtest/gtest.h>

#include <fstream>

#include "store/test_util.h"

namespace lockstep::kube {
namespace {

using nlohmann::json;

json NodeObject(const std::string& name, json labels, json taints = json::array()) {
  json n = {{"metadata", {{"name", name}, {"labels", std::move(labels)}}}};
  if (!taints.empty()) n["spec"]["taints"] = std::move(taints);
  return n;
}

json PodSelecting(const std::string& name, json selector) {
  return {{"metadata", {{"name", name}, {"namespace", "ns"}}},
          {"spec", {{"nodeSelector", std::move(selector)}}}};
}

GangPlacement PlacementOf(const std::vector<json>& pods) {
  Result<GangPlacement> p = GangPlacement::Of(pods);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : GangPlacement();
}

class PlacementFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("cluster.yaml"))
        << "backend: kubernetes\npartitions:\n  - {name: gpu, nodes: ALL, default: true}\n";
    controller::ControllerOptions o;
    o.state_dir = dir_.File("state");
    o.cluster_config = dir_.File("cluster.yaml");
    auto c = controller::Controller::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    controller_ = std::move(*c);
    std::vector<backend::NodeReport> reports;
    for (const char* name : {"n1", "n2", "n3"}) {
      backend::NodeReport r;
      r.name = name;
      r.resources.emplace().cpus = 8;
      r.resources->mem_mb = 1024;
      reports.push_back(r);
    }
    controller_->events().NodesReported(std::move(reports), /*complete=*/true);
    controller_->SettleForTest();
    features_ = std::make_unique<PlacementFeatures>(&controller_->admission());
    EXPECT_TRUE(features_->OnNode(NodeObject("n1", {{"pool", "a100"}}), true));
    EXPECT_TRUE(features_->OnNode(NodeObject("n2", {{"pool", "t4"}}), true));
    EXPECT_TRUE(features_->OnNode(
        NodeObject("n3", {{"pool", "a100"}}, {{{"key", "spot"}, {"effect", "NoSchedule"}}}), true));
  }

  // The controller's features of `node`, as sinfo shows them.
  std::string FeaturesOf(const std::string& node) {
    json all = controller_->ListNodes();
    for (const json& n : all["nodes"])
      if (n.value("name", "") == node) return n.value("features", "");
    return "?";
  }

  store::TempDir dir_;
  std::unique_ptr<controller::Controller> controller_;
  std::unique_ptr<PlacementFeatures> features_;
};

TEST_F(PlacementFeaturesTest, AFeatureIsOnTheNodesThatAllowItAndFollowsThem) {
  GangPlacement a100 = PlacementOf({PodSelecting("p", {{"pool", "a100"}})});
  Result<std::string> f = features_->Register("ns/train", a100);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*f, "pool=a100");
  EXPECT_EQ(FeaturesOf("n1"), "pool=a100");
  EXPECT_EQ(FeaturesOf("n3"), "") << "tainted, not tolerated";
  EXPECT_EQ(features_->NodesWith("pool=a100"), 1u);
  EXPECT_EQ(features_->node_count(), 3u);
  // A status update changes nothing; a relabel moves the feature once Refresh()ed.
  EXPECT_FALSE(features_->OnNode(NodeObject("n2", {{"pool", "t4"}}), true));
  EXPECT_TRUE(features_->OnNode(NodeObject("n2", {{"pool", "a100"}}), true));
  EXPECT_TRUE(features_->Refresh());
  EXPECT_EQ(FeaturesOf("n2"), "pool=a100");
  EXPECT_FALSE(features_->Refresh()) << "nothing moved since";
  EXPECT_TRUE(features_->NodeAllows("n2", a100));
  EXPECT_FALSE(features_->NodeAllows("n3", a100));
  EXPECT_FALSE(features_->NodeAllows("n9", a100)) << "not a known node";
  // A deleted Node loses it.
  EXPECT_TRUE(features_->OnNode(NodeObject("n1", json::object()), false));
  EXPECT_TRUE(features_->Refresh());
  EXPECT_EQ(FeaturesOf("n1"), "");
}

TEST_F(PlacementFeaturesTest, GangsAlikeShareOneFeatureDroppedWithTheLast) {
  GangPlacement a100 = PlacementOf({PodSelecting("p", {{"pool", "a100"}})});
  ASSERT_TRUE(features_->Register("ns/a", a100).ok());
  ASSERT_TRUE(features_->Register("ns/b", a100).ok());
  EXPECT_TRUE(features_->Holds("ns/a", "pool=a100"));
  EXPECT_TRUE(features_->Holds("ns/b", "pool=a100"));
  features_->Retain([](const std::string& gang) { return gang == "ns/b"; });
  EXPECT_FALSE(features_->Holds("ns/a", "pool=a100"));
  EXPECT_EQ(FeaturesOf("n1"), "pool=a100") << "ns/b still waits";
  features_->Retain([](const std::string&) { return false; });
  EXPECT_EQ(FeaturesOf("n1"), "");
  EXPECT_EQ(features_->NodesWith("pool=a100"), 0u);
}

TEST_F(PlacementFeaturesTest, AGangRegisteringAnotherPlacementReleasesItsFirst) {
  GangPlacement a100 = PlacementOf({PodSelecting("p", {{"pool", "a100"}})});
  GangPlacement t4 = PlacementOf({PodSelecting("p", {{"pool", "t4"}})});
  ASSERT_TRUE(features_->Register("ns/a", a100).ok());
  ASSERT_TRUE(features_->Register("ns/a", t4).ok());
  EXPECT_EQ(FeaturesOf("n1"), "");
  EXPECT_EQ(FeaturesOf("n2"), "pool=t4");
  // A recovered job's name is kept, and an unconstrained placement needs none.
  Result<std::string> named = features_->Register("ns/r", a100, "k8s-0badcafe");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(*named, "k8s-0badcafe");
  EXPECT_EQ(FeaturesOf("n1"), "k8s-0badcafe");
  json any = {{"metadata", {{"name", "p"}, {"namespace", "ns"}}},
              {"spec", {{"tolerations", {{{"operator", "Exists"}}}}}}};
  Result<std::string> none = features_->Register("ns/r", PlacementOf({any}));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, "");
  EXPECT_EQ(FeaturesOf("n1"), "") << "ns/r's earlier feature went";
}

}  // namespace
}  // namespace lockstep::kube
