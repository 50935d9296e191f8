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
  LoginSecretData d;
  d.token = "tok";
  d.token_expires = 1700000000;
  d.passwd = "alice:x:...\n";
  d.group = "g\n";
  d.ca_pem = "PEM";
  d.authorized_keys = "ssh-ed25519 AAAA alice@laptop\n";
  Json s = BuildLoginSecret("lockstep", "alice", d);
  EXPECT_EQ(s["stringData"]["authorized_keys"], "ssh-ed25519 AAAA alice@laptop\n");
  EXPECT_FALSE(s["stringData"].contains("ssh_host_key"));
  EXPECT_EQ(s["metadata"]["name"], "lockstep-login-alice");
  EXPECT_EQ(s["stringData"]["token"], "tok");
  EXPECT_EQ(s["stringData"]["ca.crt"], "PEM");
  EXPECT_EQ(s["metadata"]["annotations"][kLoginTokenExpiresAnnotation], "1700000000");
}

TEST(LoginPod, WithSshItsMainProcessIsTheUsersSshdBehindANodePort) {
  LoginPodSpec spec = AliceSpec();
  spec.ssh_port = kLoginSshPort;
  Result<Json> pod = BuildLoginPod(spec);
  ASSERT_TRUE(pod.ok());
  const Json& c = (*pod)["spec"]["containers"][0];
  EXPECT_NE(c["command"][2].get<std::string>().find("exec /usr/sbin/sshd -D"), std::string::npos);
  EXPECT_EQ(c["ports"][0], (Json{{"name", "ssh"}, {"containerPort", 2222}, {"protocol", "TCP"}}));
  EXPECT_EQ(c["securityContext"]["capabilities"]["drop"], Json::array({"ALL"}));  // still
  bool key = false;
  for (const Json& i : (*pod)["spec"]["volumes"][0]["secret"]["items"])
    key = key || (i["key"] == "ssh_host_key" && i["mode"] == 0440);
  EXPECT_TRUE(key);
  Json svc = BuildLoginService("lockstep", "alice");
  EXPECT_EQ(svc["metadata"]["name"], "lockstep-login-alice");
  EXPECT_EQ(svc["spec"]["type"], "NodePort");
  EXPECT_EQ(svc["spec"]["selector"][kLoginUserLabel], "alice");
  EXPECT_EQ(svc["spec"]["ports"][0]["targetPort"], "ssh");
}

TEST(LoginPoolPod, RootWithOnlyWhatSwitchingUsersTakes) {
  LoginPoolPodSpec spec;
  spec.ns = "lockstep";
  spec.pool = "research";
  spec.image = "docker.io/lockstep/lockstepd:1";
  spec.mounts = {{"/data", "", false}};
  Result<Json> pod = BuildLoginPoolPod(spec);
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ((*pod)["metadata"]["name"], "lockstep-login-pool-research");
  EXPECT_EQ((*pod)["metadata"]["labels"][kLoginPoolLabel], "research");
  EXPECT_FALSE((*pod)["metadata"]["labels"].contains(kLoginUserLabel));
  const Json& spec_json = (*pod)["spec"];
  EXPECT_EQ(spec_json["automountServiceAccountToken"], false);
  const Json& c = spec_json["containers"][0];
  EXPECT_EQ(c["securityContext"]["allowPrivilegeEscalation"], false);
  EXPECT_EQ(c["securityContext"]["readOnlyRootFilesystem"], true);
  EXPECT_EQ(c["securityContext"]["capabilities"],
            (Json{{"drop", {"ALL"}}, {"add", {"SETUID", "SETGID", "CHOWN"}}}));
  bool tokens = false;
  for (const Json& m : c["volumeMounts"]) tokens = tokens || m["mountPath"] == kLoginPoolTokenDir;
  EXPECT_TRUE(tokens);
  // The Secret holds no token: each user's is stored by `lockstep login-as --store-token`.
  for (const Json& i : spec_json["volumes"][0]["secret"]["items"]) EXPECT_NE(i["key"], "token");
  spec.pool = "Not_A_Label";
  EXPECT_FALSE(BuildLoginPoolPod(spec).ok());
}

}  // namespace
}  // namespace lockstep::kube
