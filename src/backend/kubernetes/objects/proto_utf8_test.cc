// Pods and Nodes in protobuf whose strings are not UTF-8 (pod_proto.h, node_proto.h): the
// fields objects are known by refuse the object, naming the field; other text comes as the
// apiserver's JSON has it, each bad byte a U+FFFD. Either way nothing decoded fails to be
// written out, as the informers' handlers do with it.
#include <gtest/gtest.h>

#include <string>

#include "backend/kubernetes/objects/node_proto.h"
#include "backend/kubernetes/objects/pod_proto.h"
#include "k8s_core.pb.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;

constexpr const char* kLatin1Cafe = "caf\xe9";  // "café" in Latin-1: 0xe9 is not UTF-8

pb::Pod RunningPod() {
  pb::Pod pod;
  pod.mutable_metadata()->set_name("job-7-0");
  pod.mutable_metadata()->set_namespace_("batch");
  pod.mutable_metadata()->set_uid("0b4f8a3e");
  pod.mutable_metadata()->set_resourceversion("42");
  (*pod.mutable_metadata()->mutable_labels())["lockstep.io/job"] = "7";
  pod.mutable_spec()->add_containers()->set_name("main");
  pod.mutable_spec()->set_nodename("gpu1");
  pod.mutable_status()->set_phase("Running");
  return pod;
}

TEST(ProtoUtf8Test, APodWhoseNameIsNotUtf8IsRefusedNamingTheField) {
  pb::Pod pod = RunningPod();
  pod.mutable_metadata()->set_name(std::string("job-") + kLatin1Cafe);
  for (auto decode : {&PodJsonFromProto, &SchedulingPodJsonFromProto}) {
    Result<Json> j = decode(pod.SerializeAsString());
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(j.status().message(),
              "protobuf: Pod metadata.name is not UTF-8 (byte 0xe9 at offset 7)");
  }
}

TEST(ProtoUtf8Test, APodWhoseLabelIsNotUtf8IsRefusedNamingTheLabel) {
  pb::Pod pod = RunningPod();
  (*pod.mutable_metadata()->mutable_labels())["app"] = kLatin1Cafe;
  Result<Json> j = PodJsonFromProto(pod.SerializeAsString());
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message(),
            "protobuf: Pod metadata.labels[\"app\"] is not UTF-8 (byte 0xe9 at offset 3)");
}

TEST(ProtoUtf8Test, ALabelKeyThatIsNotUtf8IsNamedInUtf8) {
  pb::Pod pod = RunningPod();
  (*pod.mutable_metadata()->mutable_labels())["\xff"] = "x";
  Result<Json> j = PodJsonFromProto(pod.SerializeAsString());
  ASSERT_FALSE(j.ok());
  // The message goes to logs and JSON answers: it must be UTF-8 itself.
  EXPECT_EQ(j.status().message(),
            "protobuf: Pod metadata.labels[\"\xef\xbf\xbd\"] (the key) is not UTF-8 (byte 0xff at "
            "offset 0)");
}

TEST(ProtoUtf8Test, APodBoundToANodeNameThatIsNotUtf8IsRefused) {
  pb::Pod pod = RunningPod();
  pod.mutable_spec()->set_nodename(kLatin1Cafe);
  Result<Json> j = SchedulingPodJsonFromProto(pod.SerializeAsString());
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message(),
            "protobuf: Pod spec.nodeName is not UTF-8 (byte 0xe9 at offset 3)");
}

// The kubelet writes a container's termination message as the bytes its program left in the
// file: a Latin-1 message must not hide that the pod ended.
TEST(ProtoUtf8Test, ATerminationMessageInLatin1ComesAsTheApiserversJsonHasIt) {
  pb::Pod pod = RunningPod();
  pod.mutable_status()->set_phase("Failed");
  pb::ContainerStateTerminated* t =
      pod.mutable_status()->add_containerstatuses()->mutable_state()->mutable_terminated();
  t->set_exitcode(3);
  t->set_message(std::string("erreur: ") + kLatin1Cafe + " introuvable");
  (*pod.mutable_metadata()->mutable_annotations())["note"] = kLatin1Cafe;
  Result<Json> j = PodJsonFromProto(pod.SerializeAsString());
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["status"]["phase"], "Failed");
  const Json& terminated = (*j)["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["exitCode"], 3);
  EXPECT_EQ(terminated["message"], "erreur: caf\xef\xbf\xbd introuvable");
  EXPECT_EQ((*j)["metadata"]["annotations"]["note"], "caf\xef\xbf\xbd");
  EXPECT_NO_THROW((void)j->dump());
}

TEST(ProtoUtf8Test, ANodeWhoseNameIsNotUtf8IsRefusedAndItsOtherTextMadeUtf8) {
  pb::Node node;
  node.mutable_metadata()->set_name("gpu1");
  pb::NodeCondition* ready = node.mutable_status()->add_conditions();
  ready->set_type("Ready");
  ready->set_status("False");
  ready->set_message(std::string("disk ") + kLatin1Cafe);
  Result<Json> j = NodeJsonFromProto(node.SerializeAsString());
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["status"]["conditions"][0]["message"], "disk caf\xef\xbf\xbd");

  node.mutable_metadata()->set_name(kLatin1Cafe);
  j = NodeJsonFromProto(node.SerializeAsString());
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message(),
            "protobuf: Node metadata.name is not UTF-8 (byte 0xe9 at offset 3)");
}

}  // namespace
}  // namespace lockstep::kube
