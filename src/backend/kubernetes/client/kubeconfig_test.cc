#include "backend/kubernetes/client/kubeconfig.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace lockstep::kube {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/kubeconfig_test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr const char* kConfig = R"(apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: ca.crt
- name: remote
  cluster:
    server: https://[::1]:8443/prefix
    certificate-authority-data: Q0EtUEVN
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: secret-token
- name: filetoken
  user:
    tokenFile: token.txt
- name: cert
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
contexts:
- name: local
  context: {cluster: local, user: admin, namespace: jobs}
- name: remote
  context: {cluster: remote, user: cert}
- name: file
  context: {cluster: local, user: filetoken}
current-context: local
)";

TEST(KubeConfig, CurrentContextWithFileReferences) {
  TempDir dir;
  dir.Write("ca.crt", "CA-FROM-FILE");
  const std::string path = dir.Write("config", kConfig);
  Result<KubeConfig> c = LoadKubeConfigFile(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "CA-FROM-FILE");
  EXPECT_EQ(c->token, "secret-token");
  EXPECT_EQ(c->namespace_, "jobs");
  EXPECT_EQ(c->context, "local");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
}

TEST(KubeConfig, NamedContextWithDataFields) {
  Result<KubeConfig> c = ParseKubeConfig(kConfig, "/nowhere/config", "remote");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://[::1]:8443/prefix");
  EXPECT_EQ(c->ca_pem, "CA-PEM");
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->client_cert_pem, "CERT");
  EXPECT_EQ(c->client_key_pem, "KEY");
  EXPECT_EQ(c->token, "");
  EXPECT_EQ(c->namespace_, "default");
}

TEST(KubeConfig, TokenFileIsReadAndTrimmed) {
  TempDir dir;
  dir.Write("ca.crt", "CA");
  dir.Write("token.txt", "  tok-from-file\n");
  const std::string path = dir.Write("config", kConfig);
  Result<KubeConfig> c = LoadKubeConfigFile(path, "file");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->token, "tok-from-file");
  EXPECT_EQ(c->token_file, dir.path() + "/token.txt");
}

TEST(KubeConfig, ErrorsNameFileAndField) {
  Result<KubeConfig> c = ParseKubeConfig(kConfig, "/x/config", "nope");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "/x/config: context: names context 'nope', which is not in contexts");

  c = ParseKubeConfig(kConfig, "/x/config");  // ca.crt missing
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/x/config: clusters[local].cluster.certificate-authority: "
                                      "cannot read /x/ca.crt"),
            std::string::npos)
      << c.status().message();

  c = ParseKubeConfig("clusters: []\ncontexts: []\n", "/y", "");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "/y: current-context: not set, and no context was named");

  c = ParseKubeConfig(
      "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\nclusters:\n- name: c\n"
      "  cluster: {server: http://h:1}\n",
      "/z");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/z: clusters[c].cluster.server: 'http://h:1' is not an "
                                      "https:// URL"),
            std::string::npos)
      << c.status().message();

  c = ParseKubeConfig(
      "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\nclusters:\n- name: c\n"
      "  cluster: {server: https://h, certificate-authority-data: '@@'}\n",
      "/w");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/w: clusters[c].cluster.certificate-authority-data: not "
                                      "base64"),
            std::string::npos)
      << c.status().message();

  c = ParseKubeConfig("a: [unclosed\n", "/v");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("/v: line ", 0), 0u) << c.status().message();
}

TEST(KubeConfig, CertificateWithoutKeyIsAnError) {
  Result<KubeConfig> c = ParseKubeConfig(
      "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n"
      "- name: c\n  cluster: {server: https://h}\nusers:\n- name: u\n  user: "
      "{client-certificate-data: Q0VSVA==}\n",
      "/k");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "/k: users[u].user: client-certificate without client-key");
}

TEST(KubeConfig, InCluster) {
  TempDir dir;
  dir.Write("token", "sa-token\n");
  dir.Write("ca.crt", "SA-CA");
  dir.Write("namespace", "lockstep-system");
  InClusterOptions o;
  o.service_account_dir = dir.path();
  o.env = {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}};
  Result<KubeConfig> c = LoadInClusterConfig(o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://10.0.0.1:443");
  EXPECT_EQ(c->token, "sa-token");
  EXPECT_EQ(c->ca_pem, "SA-CA");
  EXPECT_EQ(c->namespace_, "lockstep-system");

  o.env["KUBERNETES_SERVICE_HOST"] = "fd00::1";
  c = LoadInClusterConfig(o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->server, "https://[fd00::1]:443");

  o.env.clear();
  c = LoadInClusterConfig(o);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("KUBERNETES_SERVICE_HOST"), std::string::npos);

  o.env = {{"KUBERNETES_SERVICE_HOST", "h"}, {"KUBERNETES_SERVICE_PORT", "1"}};
  o.service_account_dir = dir.path() + "/missing";
  c = LoadInClusterConfig(o);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(dir.path() + "/missing/token"), std::string::npos);
}

TEST(Base64, Decodes) {
  EXPECT_EQ(*DecodeBase64("aGVsbG8gd29ybGQ="), "hello world");
  EXPECT_EQ(*DecodeBase64("aGVs\nbG8="), "hello");
  EXPECT_EQ(*DecodeBase64(""), "");
  EXPECT_FALSE(DecodeBase64("a$b").ok());
}

}  // namespace
}  // namespace lockstep::kube
