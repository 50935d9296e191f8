#include "backend/kubernetes/objects/login_pod.h"

#include <gtest/gtest.h>

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;

LoginPodSpec AliceSpec() {
  LoginPodSpec s;
  s.ns = "lockstep";
  s.user = "alice";
  s.uid = 2001;
  s.gid = 2001;
  s.groups = {3000};
  s.home = "/data/home/alice";
  s.home_mounted = true;
  s.image = "docker.io/lockstep/lockstepd:1";
  s.node = "node-1";
  s.mounts = {{"/data", "", false}};
  s.server = "https://lockstepd.lockstep:6820";
  s.has_ca = true;
  return s;
}

TEST(LoginPod, RunsAsTheUserWithNothingToEscalateWith) {
  Result<Json> pod = BuildLoginPod(AliceSpec());
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  const Json& spec = (*pod)["spec"];
  EXPECT_EQ((*pod)["metadata"]["name"], "lockstep-login-alice");
  EXPECT_EQ((*pod)["metadata"]["labels"][kLoginUserLabel], "alice");
  EXPECT_EQ(spec["securityContext"]["runAsUser"], 2001);
  EXPECT_EQ(spec["securityContext"]["runAsGroup"], 2001);
  EXPECT_EQ(spec["securityContext"]["runAsNonRoot"], true);
  EXPECT_EQ(spec["securityContext"]["supplementalGroups"], Json::array({3000}));
  EXPECT_EQ(spec["automountServiceAccountToken"], false);
  EXPECT_EQ(spec["nodeName"], "node-1");
  const Json& c = spec["containers"][0];
  EXPECT_EQ(c["securityContext"]["allowPrivilegeEscalation"], false);
  EXPECT_EQ(c["securityContext"]["readOnlyRootFilesystem"], true);
  EXPECT_EQ(c["securityContext"]["capabilities"]["drop"], Json::array({"ALL"}));
  EXPECT_EQ(c["workingDir"], "/data/home/alice");
  bool token_file = false, server = false;
  for (const Json& e : c["env"]) {
    token_file = token_file || (e["name"] == "LOCKSTEP_TOKEN_FILE" && e["value"] == "/var/run/lockstep/token");
    server = server || (e["name"] == "LOCKSTEP_SERVER" && e["value"] == "https://lockstepd.lockstep:6820");
  }
  EXPECT_TRUE(token_file);
  EXPECT_TRUE(server);
  bool passwd = false, storage = false;
  for (const Json& m : c["volumeMounts"]) {
    passwd = passwd || (m["mountPath"] == "/etc/passwd" && m["subPath"] == "passwd");
    storage = storage || (m["mountPath"] == "/data" && m["mountPropagation"] == "HostToContainer");
  }
  EXPECT_TRUE(passwd);
  EXPECT_TRUE(storage);
  // The Secret's volume is the user's pod's alone; the token readable by the user's group.
  EXPECT_EQ(spec["volumes"][0]["secret"]["secretName"], "lockstep-login-alice");
  EXPECT_EQ(spec["volumes"][0]["secret"]["items"][0], (Json{{"key", "token"}, {"path", "token"}, {"mode", 0440}}));
}

TEST(LoginPod, RootAndOddNamesAreRefused) {
  LoginPodSpec s = AliceSpec();
  s.uid = 0;
  EXPECT_FALSE(BuildLoginPod(s).ok());
  s = AliceSpec();
  s.user = "bad name";
  EXPECT_FALSE(BuildLoginPod(s).ok());
}

TEST(LoginPod, NamesAreDnsLabelsAndDistinct) {
  EXPECT_EQ(LoginPodName("bob"), "lockstep-login-bob");
  const std::string a = LoginPodName("a_b"), b = LoginPodName("a.b");
  EXPECT_NE(a, b);
  EXPECT_TRUE(IsDns1123Label(a)) << a;
  const std::string long_name = LoginPodName(std::string(32, 'x') + "_y");
  EXPECT_TRUE(IsDns1123Label(long_name)) << long_name;
  EXPECT_EQ(LoginPodName("a_b"), a);  // stable
}

TEST(LoginSecret, HoldsTheTokenTheUserDatabaseAndTheCa) {
  Json s = BuildLoginSecret("lockstep", "alice", "tok", 1700000000, "alice:x:...\n", "g\n", "PEM");
  EXPECT_EQ(s["metadata"]["name"], "lockstep-login-alice");
  EXPECT_EQ(s["stringData"]["token"], "tok");
  EXPECT_EQ(s["stringData"]["ca.crt"], "PEM");
  EXPECT_EQ(s["metadata"]["annotations"][kLoginTokenExpiresAnnotation], "1700000000");
}

}  // namespace
}  // namespace lockstep::kube
