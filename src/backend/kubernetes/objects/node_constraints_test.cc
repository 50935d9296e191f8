#include "backend/kubernetes/objects/node_constraints.h"

#include <gtest/gtest.h>

#include "backend/kubernetes/objects/objects_test_util.h"

namespace lockstep::kube {
namespace {

using nlohmann::json;

constexpr const char* kTerms =
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
    "nodeSelectorTerms";

// testing::GangPod with the given required node affinity terms.
json PodWithTerms(json terms) {
  json pod = testing::GangPod("w-0");
  pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
      {"nodeSelectorTerms", std::move(terms)}};
  return pod;
}

json Expr(const std::string& key, const std::string& op, json values = json::array()) {
  json e = {{"key", key}, {"operator", op}};
  if (!values.empty()) e["values"] = std::move(values);
  return e;
}

NodeView Node(std::map<std::string, std::string> labels, std::vector<Taint> taints = {},
              std::string name = "gpu-a-07") {
  return NodeView{std::move(name), std::move(labels), std::move(taints)};
}

PodPlacement Parse(const json& pod) {
  Result<PodPlacement> p = PodPlacementOf(pod);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? *p : PodPlacement{};
}

// Whether a pod with one term of one expression may go to a node with `labels`.
bool ExprAllows(const json& expr, std::map<std::string, std::string> labels) {
  return PlacementAllows(Parse(PodWithTerms({{{"matchExpressions", {expr}}}})),
                         Node(std::move(labels)));
}

TEST(NodeView, LabelsAndSchedulingTaintsOfANode) {
  json node = testing::GpuNode();
  node["spec"]["taints"] = {
      {{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}},
      {{"key", "spot"}, {"effect", "PreferNoSchedule"}},
      {{"key", "maintenance"}, {"effect", "NoExecute"}}};
  NodeView v = NodeViewOf(node);
  EXPECT_EQ(v.name, "gpu-a-07");
  EXPECT_EQ(v.labels.at("nvidia.com/gpu.product"), "NVIDIA-A100-SXM4-80GB");
  ASSERT_EQ(v.taints.size(), 2u) << "PreferNoSchedule never keeps a pod off";
  EXPECT_EQ(v.taints[0], (Taint{"nvidia.com/gpu", "present", "NoSchedule"}));
  EXPECT_EQ(v.taints[1], (Taint{"maintenance", "", "NoExecute"}));
}

TEST(NodeSelector, EveryPairMustMatch) {
  json pod = testing::GangPod("w-0");
  pod["spec"]["nodeSelector"] = {{"pool", "a100"}, {"zone", "a"}};
  PodPlacement p = Parse(pod);
  EXPECT_TRUE(PlacementAllows(p, Node({{"pool", "a100"}, {"zone", "a"}, {"x", "y"}})));
  EXPECT_FALSE(PlacementAllows(p, Node({{"pool", "a100"}, {"zone", "b"}})));
  EXPECT_FALSE(PlacementAllows(p, Node({{"pool", "a100"}})));
  EXPECT_TRUE(PlacementAllows(Parse(testing::GangPod("w-0")), Node({})))
      << "no selector: any untainted node";
}

TEST(NodeAffinity, InAndNotIn) {
  json in = Expr("gpu", "In", {"a100", "h100"});
  EXPECT_TRUE(ExprAllows(in, {{"gpu", "h100"}}));
  EXPECT_FALSE(ExprAllows(in, {{"gpu", "t4"}}));
  EXPECT_FALSE(ExprAllows(in, {})) << "In needs the label";
  json not_in = Expr("gpu", "NotIn", {"t4"});
  EXPECT_TRUE(ExprAllows(not_in, {{"gpu", "a100"}}));
  EXPECT_FALSE(ExprAllows(not_in, {{"gpu", "t4"}}));
  EXPECT_TRUE(ExprAllows(not_in, {})) << "NotIn holds without the label";
}

TEST(NodeAffinity, ExistsAndDoesNotExist) {
  EXPECT_TRUE(ExprAllows(Expr("ib", "Exists"), {{"ib", ""}}));
  EXPECT_FALSE(ExprAllows(Expr("ib", "Exists"), {{"eth", "1"}}));
  EXPECT_TRUE(ExprAllows(Expr("spot", "DoesNotExist"), {{"ib", "1"}}));
  EXPECT_FALSE(ExprAllows(Expr("spot", "DoesNotExist"), {{"spot", "true"}}));
}

TEST(NodeAffinity, GtAndLtCompareIntegers) {
  EXPECT_TRUE(ExprAllows(Expr("gpus", "Gt", {"4"}), {{"gpus", "8"}}));
  EXPECT_FALSE(ExprAllows(Expr("gpus", "Gt", {"8"}), {{"gpus", "8"}}));
  EXPECT_FALSE(ExprAllows(Expr("gpus", "Gt", {"4"}), {{"gpus", "many"}}))
      << "a label that is not an integer matches neither";
  EXPECT_FALSE(ExprAllows(Expr("gpus", "Gt", {"4"}), {}));
  EXPECT_TRUE(ExprAllows(Expr("mem", "Lt", {"100"}), {{"mem", "81"}}));
  EXPECT_TRUE(ExprAllows(Expr("mem", "Lt", {"-1"}), {{"mem", "-5"}}));
  EXPECT_FALSE(ExprAllows(Expr("mem", "Lt", {"81"}), {{"mem", "81"}}));
}

TEST(NodeAffinity, TermsAreOredAndRequirementsAnded) {
  json pod = PodWithTerms(
      {{{"matchExpressions", {Expr("gpu", "In", {"a100"}), Expr("zone", "In", {"a"})}}},
       {{"matchExpressions", {Expr("gpu", "In", {"h100"})}}}});
  PodPlacement p = Parse(pod);
  EXPECT_TRUE(PlacementAllows(p, Node({{"gpu", "a100"}, {"zone", "a"}})));
  EXPECT_FALSE(PlacementAllows(p, Node({{"gpu", "a100"}, {"zone", "b"}}))) << "AND within a term";
  EXPECT_TRUE(PlacementAllows(p, Node({{"gpu", "h100"}, {"zone", "b"}}))) << "OR of terms";
  // The nodeSelector and the affinity must both hold.
  pod["spec"]["nodeSelector"] = {{"pool", "train"}};
  EXPECT_FALSE(PlacementAllows(Parse(pod), Node({{"gpu", "h100"}})));
  EXPECT_TRUE(PlacementAllows(Parse(pod), Node({{"gpu", "h100"}, {"pool", "train"}})));
}

TEST(NodeAffinity, MatchFieldsOnTheNodeName) {
  json pod = PodWithTerms({{{"matchFields", {Expr("metadata.name", "In", {"gpu-a-07"})}},
                            {"matchExpressions", {Expr("gpu", "Exists")}}}});
  PodPlacement p = Parse(pod);
  EXPECT_TRUE(PlacementAllows(p, Node({{"gpu", "a100"}}, {}, "gpu-a-07")));
  EXPECT_FALSE(PlacementAllows(p, Node({{"gpu", "a100"}}, {}, "gpu-a-08")));
  EXPECT_FALSE(PlacementAllows(p, Node({}, {}, "gpu-a-07"))) << "fields AND expressions";
  PodPlacement not_in =
      Parse(PodWithTerms({{{"matchFields", {Expr("metadata.name", "NotIn", {"gpu-a-07"})}}}}));
  EXPECT_FALSE(PlacementAllows(not_in, Node({}, {}, "gpu-a-07")));
  EXPECT_TRUE(PlacementAllows(not_in, Node({}, {}, "gpu-a-08")));
}

TEST(NodeAffinity, AnEmptyTermMatchesNoNode) {
  EXPECT_FALSE(PlacementAllows(Parse(PodWithTerms({json::object()})), Node({{"a", "b"}})));
}

TEST(Tolerations, TaintsMustBeTolerated) {
  const Taint gpu{"nvidia.com/gpu", "present", "NoSchedule"};
  const Taint maint{"maintenance", "", "NoExecute"};
  auto with = [](json tolerations) {
    json pod = testing::GangPod("w-0");
    pod["spec"]["tolerations"] = std::move(tolerations);
    return Parse(pod);
  };
  EXPECT_FALSE(PlacementAllows(with(json::array()), Node({}, {gpu})));
  // Equal: key and value; the operator defaults to Equal.
  EXPECT_TRUE(PlacementAllows(
      with({{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}}),
      Node({}, {gpu})));
  EXPECT_FALSE(PlacementAllows(
      with({{{"key", "nvidia.com/gpu"}, {"operator", "Equal"}, {"value", "absent"}}}),
      Node({}, {gpu})));
  // Exists: any value; an empty effect matches every effect.
  EXPECT_TRUE(PlacementAllows(with({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}}),
                              Node({}, {gpu})));
  // The effect must match when given.
  EXPECT_FALSE(PlacementAllows(
      with({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoExecute"}}}),
      Node({}, {gpu})));
  // Every taint must be tolerated.
  EXPECT_FALSE(PlacementAllows(with({{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}}}),
                               Node({}, {gpu, maint})));
  // An empty key with Exists tolerates everything.
  EXPECT_TRUE(PlacementAllows(with({{{"operator", "Exists"}}}), Node({}, {gpu, maint})));
  EXPECT_FALSE(PlacementAllows(with({{{"operator", "Exists"}, {"effect", "NoSchedule"}}}),
                               Node({}, {gpu, maint})));
}

TEST(GangPlacement, IntersectionOfItsPodsAndNames) {
  json a = testing::GangPod("w-0"), b = testing::GangPod("w-1");
  a["spec"]["nodeSelector"] = {{"pool", "a100"}};
  b["spec"]["nodeSelector"] = {{"pool", "a100"}};
  Result<GangPlacement> same = GangPlacement::Of({a, b});
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->pods().size(), 1u);
  EXPECT_EQ(same->FeatureName(), "pool=a100");
  // Pods that differ: a node must allow both.
  b["spec"]["nodeSelector"] = {{"zone", "a"}};
  Result<GangPlacement> both = GangPlacement::Of({a, b});
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->pods().size(), 2u);
  EXPECT_TRUE(both->Allows(Node({{"pool", "a100"}, {"zone", "a"}})));
  EXPECT_FALSE(both->Allows(Node({{"pool", "a100"}})));
  EXPECT_EQ(both->FeatureName().substr(0, 4), "k8s-");
  EXPECT_EQ(both->FeatureName().size(), 12u);
  EXPECT_EQ(both->LongFeatureName().size(), 20u);
  // Recovered jobs ask for their feature by name: the canonical form, and the names made from
  // it, never change between versions.
  EXPECT_EQ(both->canonical(), R"([[{"pool":"a100"},[],[]],[{"zone":"a"},[],[]]])");
  EXPECT_EQ(both->FeatureName(), "k8s-99888de4");
  // The order of the pods, of the terms and of the values does not change the name.
  EXPECT_EQ(GangPlacement::Of({b, a})->FeatureName(), both->FeatureName());
  json t1 = PodWithTerms({{{"matchExpressions", {Expr("g", "In", {"x", "y"})}}},
                          {{"matchExpressions", {Expr("h", "Exists")}}}});
  json t2 = PodWithTerms({{{"matchExpressions", {Expr("h", "Exists")}}},
                          {{"matchExpressions", {Expr("g", "In", {"y", "x", "x"})}}}});
  EXPECT_EQ(GangPlacement::Of({t1})->canonical(), GangPlacement::Of({t2})->canonical());
  EXPECT_NE(GangPlacement::Of({t1})->canonical(), both->canonical());
}

TEST(GangPlacement, UntaintedDefaultTolerationsAndUnconstrained) {
  json plain = testing::GangPod("w-0");
  EXPECT_EQ(GangPlacement::Of({plain})->FeatureName(), "k8s-untainted");
  // What the DefaultTolerationSeconds admission adds keeps the readable name.
  plain["spec"]["tolerations"] = {{{"key", "node.kubernetes.io/not-ready"},
                                   {"operator", "Exists"},
                                   {"effect", "NoExecute"},
                                   {"tolerationSeconds", 300}},
                                  {{"key", "node.kubernetes.io/unreachable"},
                                   {"operator", "Exists"},
                                   {"effect", "NoExecute"},
                                   {"tolerationSeconds", 300}}};
  EXPECT_EQ(GangPlacement::Of({plain})->FeatureName(), "k8s-untainted");
  plain["spec"]["nodeSelector"] = {{"pool", "a100"}};
  EXPECT_EQ(GangPlacement::Of({plain})->FeatureName(), "pool=a100");
  // Another toleration: a hashed name.
  plain["spec"]["tolerations"].push_back({{"key", "spot"}, {"operator", "Exists"}});
  EXPECT_EQ(GangPlacement::Of({plain})->FeatureName().substr(0, 4), "k8s-");
  // Tolerating every taint, with no selector: no feature at all.
  json any = testing::GangPod("w-0");
  any["spec"]["tolerations"] = {{{"operator", "Exists"}}};
  EXPECT_TRUE(GangPlacement::Of({any})->Unconstrained());
  EXPECT_EQ(GangPlacement::Of({any})->FeatureName(), "");
  EXPECT_FALSE(GangPlacement::Of({any, testing::GangPod("w-1")})->Unconstrained());
}

// The exact message of PodPlacementOf's error for `pod`.
std::string ErrorOf(const json& pod) {
  Result<PodPlacement> p = PodPlacementOf(pod);
  EXPECT_FALSE(p.ok());
  return p.ok() ? "" : p.status().message();
}

TEST(PodPlacementErrors, NameThePodAndTheField) {
  const std::string pod = "pod research/w-0: ";
  const std::string t0 = std::string(kTerms) + "[0]";
  EXPECT_EQ(ErrorOf(PodWithTerms({{{"matchExpressions", {Expr("gpu", "Near", {"a"})}}}})),
            pod + t0 +
                ".matchExpressions[0].operator: \"Near\" is not In, NotIn, Exists, "
                "DoesNotExist, Gt or Lt");
  EXPECT_EQ(ErrorOf(PodWithTerms({{{"matchExpressions", {Expr("gpu", "In")}}}})),
            pod + t0 + ".matchExpressions[0].values: In needs at least one value");
  EXPECT_EQ(ErrorOf(PodWithTerms({{{"matchExpressions", {Expr("gpu", "Exists", {"a"})}}}})),
            pod + t0 + ".matchExpressions[0].values: Exists takes no values");
  EXPECT_EQ(ErrorOf(PodWithTerms({{{"matchExpressions", {Expr("n", "Gt", {"1", "2"})}}}})),
            pod + t0 + ".matchExpressions[0].values: Gt takes exactly one value");
  EXPECT_EQ(ErrorOf(PodWithTerms({{{"matchExpressions", {Expr("n", "Lt", {"ten"})}}}})),
            pod + t0 + ".matchExpressions[0].values[0]: \"ten\" is not an integer");
  EXPECT_EQ(ErrorOf(PodWithTerms({{{"matchExpressions", {{{"operator", "Exists"}}}}}})),
            pod + t0 + ".matchExpressions[0].key: missing");
  EXPECT_EQ(ErrorOf(PodWithTerms({{{"matchFields", {Expr("metadata.uid", "In", {"x"})}}}})),
            pod + t0 +
                ".matchFields[0].key: \"metadata.uid\" is not metadata.name, the only field "
                "supported");
  EXPECT_EQ(ErrorOf(PodWithTerms({{{"matchFields", {Expr("metadata.name", "Exists")}}}})),
            pod + t0 + ".matchFields[0].operator: \"Exists\" is not In or NotIn");
  EXPECT_EQ(ErrorOf(PodWithTerms({{{"matchFields", {Expr("metadata.name", "In", {"a", "b"})}}}})),
            pod + t0 + ".matchFields[0].values: In takes exactly one value");
  EXPECT_EQ(ErrorOf(PodWithTerms(json::array())), pod + kTerms + ": at least one term is required");
  json sel = testing::GangPod("w-0");
  sel["spec"]["nodeSelector"] = {{"pool", 7}};
  EXPECT_EQ(ErrorOf(sel), pod + "spec.nodeSelector.pool: 7 is not a string");
}

TEST(PodPlacementErrors, BadTolerations) {
  const std::string pod = "pod research/w-0: ";
  auto with = [](json toleration) {
    json p = testing::GangPod("w-0");
    p["spec"]["tolerations"] = {std::move(toleration)};
    return p;
  };
  EXPECT_EQ(ErrorOf(with({{"key", "a"}, {"operator", "Maybe"}})),
            pod + "spec.tolerations[0].operator: \"Maybe\" is not Exists or Equal");
  EXPECT_EQ(ErrorOf(with({{"value", "x"}})),
            pod + "spec.tolerations[0].operator: a toleration without a key needs Exists");
  EXPECT_EQ(ErrorOf(with({{"key", "a"}, {"operator", "Exists"}, {"value", "x"}})),
            pod + "spec.tolerations[0].value: must be empty with operator Exists");
  EXPECT_EQ(ErrorOf(with({{"key", "a"}, {"operator", "Exists"}, {"effect", "Sometimes"}})),
            pod +
                "spec.tolerations[0].effect: \"Sometimes\" is not NoSchedule, PreferNoSchedule "
                "or NoExecute");
}

}  // namespace
}  // namespace lockstep::kube
