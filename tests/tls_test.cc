// End to end: lockstepd's REST API on TCP with TLS and bearer tokens. lockstepd and an agent as
// real processes (cluster_harness.h); the CLI with LOCKSTEP_SERVER, LOCKSTEP_TOKEN and
// LOCKSTEP_CA_CERT, as a user away from the cluster would run it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

#include "client/api_client.h"
#include "store/store.h"
#include "tests/cluster_harness.h"
#include "tests/pty_session.h"

namespace lockstep::testing {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A self-signed certificate (its own CA) for `cn` with these subject alternative names, written
// as PEM to PREFIX.crt and PREFIX.key.
bool MakeSelfSigned(const std::string& prefix, const std::string& cn, const std::string& san) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  if (!key || !cert) return false;
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), static_cast<long>(::getpid()));
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair<int, std::string>{NID_subject_alt_name, san},
                            {NID_basic_constraints, "critical,CA:TRUE"},
                            {NID_key_usage, "critical,digitalSignature,keyCertSign"},
                            {NID_ext_key_usage, "serverAuth"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (!ext) return false;
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  bool ok = X509_sign(cert, key, EVP_sha256()) > 0;
  FILE* c = std::fopen((prefix + ".crt").c_str(), "w");
  FILE* k = std::fopen((prefix + ".key").c_str(), "w");
  ok = ok && c && k && PEM_write_X509(c, cert) == 1 &&
       PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  if (c) std::fclose(c);
  if (k) std::fclose(k);
  X509_free(cert);
  EVP_PKEY_free(key);
  return ok;
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return 0;
  ::close(fd);
  return ntohs(a.sin_port);
}

// Certificates in a directory of their own, made before the cluster whose options name them.
struct CertDir {
  CertDir() {
    char tmpl[] = "/tmp/lockstep-tls-XXXXXX";
    path = ::mkdtemp(tmpl);
    std::filesystem::permissions(
        path, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                  std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                  std::filesystem::perms::others_exec);
    made = MakeSelfSigned(path + "/server", "localhost", "DNS:localhost,IP:127.0.0.1") &&
           MakeSelfSigned(path + "/other", "localhost", "DNS:localhost,IP:127.0.0.1");
  }
  ~CertDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
  bool made = false;
};

// A cluster whose lockstepd also listens with HTTPS on 127.0.0.1. The agent stays on the Unix
// socket unless `options` say otherwise.
struct TlsCluster {
  explicit TlsCluster(ClusterOptions options = {})
      : port(FreePort()), cluster(WithTls(std::move(options))) {}

  ClusterOptions WithTls(ClusterOptions o) {
    o.daemon_args = {"--listen",   "127.0.0.1:" + std::to_string(port),
                     "--tls-cert", certs.path + "/server.crt",
                     "--tls-key",  certs.path + "/server.key"};
    return o;
  }
  std::string Url() const { return "https://127.0.0.1:" + std::to_string(port); }
  std::string Ca() const { return certs.path + "/server.crt"; }
  std::string WrongCa() const { return certs.path + "/other.crt"; }

  // The environment of a command run away from the cluster: no Unix socket to fall back on.
  std::map<std::string, std::string> Remote(const std::string& token,
                                            const std::string& ca = "") const {
    return {{"LOCKSTEP_SERVER", Url()},
            {"LOCKSTEP_TOKEN", token},
            {"LOCKSTEP_CA_CERT", ca.empty() ? Ca() : ca},
            {"LOCKSTEP_SOCKET", "/nonexistent/lockstepd.sock"}};
  }
  CommandResult RunRemote(const std::vector<std::string>& args, const std::string& token,
                          const std::string& ca = "") {
    return cluster.Run(args, "", -1, "", Remote(token, ca));
  }

  // `lockstep <args>` on the cluster (Unix socket) that prints a token: the token, or "".
  std::string Token(const std::vector<std::string>& args, int uid = -1) {
    CommandResult r = cluster.Run(args, "", uid);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("LOCKSTEP_TOKEN=", 0), 0u) << r.out;
    if (r.exit_code != 0 || r.out.rfind("LOCKSTEP_TOKEN=", 0) != 0) return "";
    // The first line; LOCKSTEP_TOKEN_ID=... follows.
    std::string t = r.out.substr(std::string("LOCKSTEP_TOKEN=").size());
    t = t.substr(0, t.find('\n'));
    EXPECT_NE(r.out.find("\nLOCKSTEP_TOKEN_ID="), std::string::npos) << r.out;
    return t;
  }

  // Waits until lockstepd answers on its Unix socket.
  bool WaitUp(int timeout_s = 20) {
    for (int i = 0; i < timeout_s * 20; ++i) {
      if (!cluster.Get("/api/v1/partitions").contains("error")) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  CertDir certs;  // first: the cluster's options name its files
  int port;
  Cluster cluster;
};

constexpr int kNobody = 65534;

TEST(Tls, TokenedCommandsRunOverHttpsAsTheTokensUser) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to run a job as another user";
  TlsCluster t;
  ASSERT_TRUE(t.certs.made);
  ASSERT_TRUE(t.cluster.Start());
  // root, an operator, asks for nobody's token; the job it submits is nobody's.
  std::string token = t.Token({"token", "--user", "nobody", "--lifespan", "600"});
  ASSERT_FALSE(token.empty());
  CommandResult r = t.RunRemote({"sbatch", "--parsable", "--wrap", "id -u > whoami"}, token);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long long id = std::strtoull(r.out.c_str(), nullptr, 10);
  ASSERT_GT(id, 0u);
  nlohmann::json j = t.cluster.WaitJob(id);
  EXPECT_EQ(j["state"], "COMPLETED") << j.dump();
  EXPECT_EQ(j["user"], "nobody");
  EXPECT_EQ(t.cluster.ReadFile("whoami"), std::to_string(kNobody) + "\n");

  // squeue and scancel over HTTPS too, by host name this time (the certificate names both).
  r = t.RunRemote({"sbatch", "--parsable", "-J", "sleeper", "--wrap", "sleep 300"}, token);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long long sleeper = std::strtoull(r.out.c_str(), nullptr, 10);
  std::map<std::string, std::string> by_name = t.Remote(token);
  by_name["LOCKSTEP_SERVER"] = "https://localhost:" + std::to_string(t.port);
  r = t.cluster.Run({"squeue", "-o", "%i %j %u"}, "", -1, "", by_name);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, std::to_string(sleeper) + " sleeper nobody")) << r.out;
  r = t.RunRemote({"scancel", std::to_string(sleeper)}, token);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(t.cluster.WaitJob(sleeper)["state"], "CANCELLED");

  // scontrol token, Slurm's spelling, for oneself.
  std::string mine = t.Token({"scontrol", "token", "lifespan=60"});
  ASSERT_FALSE(mine.empty());
  EXPECT_NE(mine, token);
  r = t.RunRemote({"squeue"}, mine);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(Tls, NoTokenOrAWrongOneIsRefusedAndChangesNothing) {
  TlsCluster t;
  ASSERT_TRUE(t.certs.made);
  ASSERT_TRUE(t.cluster.Start());
  for (const std::string& token : {std::string(""), std::string(64, 'a')}) {
    CommandResult r = t.RunRemote({"sbatch", "--wrap", "true"}, token);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(Contains(r.err, "sbatch: error: ")) << r.err;
    EXPECT_TRUE(Contains(r.err, "authentication failed: ")) << r.err;
    EXPECT_TRUE(Contains(r.err, "LOCKSTEP_TOKEN")) << r.err;
    r = t.RunRemote({"squeue"}, token);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(Contains(r.err, "authentication failed")) << r.err;
  }
  EXPECT_EQ(t.cluster.Get("/api/v1/jobs?all=1")["jobs"].size(), 0u);
}

TEST(Tls, AServerTheCaDoesNotVouchForIsRefused) {
  TlsCluster t;
  ASSERT_TRUE(t.certs.made);
  ASSERT_TRUE(t.cluster.Start());
  std::string token = t.Token({"token"});
  ASSERT_FALSE(token.empty());
  CommandResult r = t.RunRemote({"sbatch", "--wrap", "true"}, token, t.WrongCa());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(
      Contains(r.err, "TLS certificate verification of lockstepd at " + t.Url() + " failed"))
      << r.err;
  EXPECT_EQ(t.cluster.Get("/api/v1/jobs?all=1")["jobs"].size(), 0u);
  // Nothing listening: a clear "cannot reach".
  std::map<std::string, std::string> env = t.Remote(token);
  env["LOCKSTEP_SERVER"] = "https://127.0.0.1:" + std::to_string(FreePort());
  r = t.cluster.Run({"squeue"}, "", -1, "", env);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "cannot reach lockstepd at https://127.0.0.1:")) << r.err;
  // Plain http:// is refused by the client before anything is sent.
  env["LOCKSTEP_SERVER"] = "http://127.0.0.1:" + std::to_string(t.port);
  r = t.cluster.Run({"squeue"}, "", -1, "", env);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "must be https://")) << r.err;
}

TEST(Tls, ATokenSurvivesARestartOfLockstepd) {
  TlsCluster t;
  ASSERT_TRUE(t.certs.made);
  ASSERT_TRUE(t.cluster.Start());
  std::string token = t.Token({"token"});
  ASSERT_FALSE(token.empty());
  t.cluster.KillDaemon();
  t.cluster.StartDaemon();
  ASSERT_TRUE(t.WaitUp());
  CommandResult r = t.RunRemote({"sbatch", "--parsable", "--wrap", "true"}, token);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long long id = std::strtoull(r.out.c_str(), nullptr, 10);
  EXPECT_EQ(t.cluster.WaitJob(id)["state"], "COMPLETED");
  EXPECT_EQ(t.cluster.Job(id)["user"], "root");
}

// Issue 17: tokens could not be revoked. A revoked token is refused over HTTPS at once and after
// a restart; the caller's other token is untouched.
TEST(Tls, ARevokedTokenIsRefusedAndTheOthersStillWork) {
  TlsCluster t;
  ASSERT_TRUE(t.certs.made);
  ASSERT_TRUE(t.cluster.Start());
  CommandResult first = t.cluster.Run({"token"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string id_key = "LOCKSTEP_TOKEN_ID=";
  const std::size_t at = first.out.find(id_key);
  ASSERT_NE(at, std::string::npos) << first.out;
  std::string id = first.out.substr(at + id_key.size());
  id = id.substr(0, id.find('\n'));
  std::string revoked = first.out.substr(std::string("LOCKSTEP_TOKEN=").size());
  revoked = revoked.substr(0, revoked.find('\n'));
  std::string kept = t.Token({"token"});
  ASSERT_FALSE(kept.empty());
  ASSERT_EQ(t.RunRemote({"squeue"}, revoked).exit_code, 0);
  CommandResult r = t.cluster.Run({"token", "revoke", id});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("revoked 1 token"), std::string::npos) << r.out;
  r = t.RunRemote({"sbatch", "--wrap", "true"}, revoked);
  EXPECT_NE(r.exit_code, 0) << "a revoked token submitted a job";
  EXPECT_EQ(t.RunRemote({"squeue"}, kept).exit_code, 0);
  t.cluster.KillDaemon();
  t.cluster.StartDaemon();
  ASSERT_TRUE(t.WaitUp());
  EXPECT_NE(t.RunRemote({"squeue"}, revoked).exit_code, 0) << "revocation is durable";
  EXPECT_EQ(t.RunRemote({"squeue"}, kept).exit_code, 0);
}

// Issue 17: a deleted user's token still submitted jobs as the orphaned uid. The token's record
// is made to name a user the host no longer has (as `userdel` would leave it), with lockstepd
// down, through the store's own API; lockstepd must then refuse the token.
TEST(Tls, RegressionATokenWhoseUserIsGoneFromTheHostIsRefused) {
  TlsCluster t;
  ASSERT_TRUE(t.certs.made);
  ASSERT_TRUE(t.cluster.Start());
  std::string token = t.Token({"token"});
  ASSERT_FALSE(token.empty());
  ASSERT_EQ(t.RunRemote({"squeue"}, token).exit_code, 0);
  t.cluster.KillDaemon();
  {
    store::StoreOptions so;
    so.path = t.cluster.dir() + "/lockstepd.db";
    Result<std::unique_ptr<store::Store>> st = store::Store::Open(so);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    Result<std::vector<store::Record>> records = (*st)->Scan("tokens");
    ASSERT_TRUE(records.ok() && records->size() == 1u);
    nlohmann::json j = nlohmann::json::parse(records->front().value);
    j["uid"] = 3'999'999'999u;  // no user on this host has it
    j["user"] = "ghost";
    ASSERT_TRUE((*st)->Put({{"tokens", records->front().key, j.dump()}}).ok());
  }
  t.cluster.StartDaemon();
  ASSERT_TRUE(t.WaitUp());
  CommandResult r = t.RunRemote({"sbatch", "--wrap", "true"}, token);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(
      r.err, "token refused: its user ghost (uid 3999999999) no longer exists on this host"))
      << r.err;
  EXPECT_EQ(t.cluster.Get("/api/v1/jobs?all=1")["jobs"].size(), 0u);
}

TEST(Tls, TokensAreOnlyForOneselfUnlessOperatorAndOnlyOnTheUnixSocket) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  TlsCluster t;
  ASSERT_TRUE(t.certs.made);
  ASSERT_TRUE(t.cluster.Start(false));
  ASSERT_TRUE(t.WaitUp());
  CommandResult r = t.cluster.Run({"token", "--user", "root"}, "", kNobody);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "token: error: access/permission denied")) << r.err;
  r = t.cluster.Run({"scontrol", "token", "username=root"}, "", kNobody);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "scontrol: error: access/permission denied")) << r.err;
  std::string nobody = t.Token({"token"}, kNobody);
  ASSERT_FALSE(nobody.empty());
  std::string root = t.Token({"token", "--lifespan", "60"});
  ASSERT_FALSE(root.empty());

  // The API itself, as the agent and scripts see it.
  ::setenv("LOCKSTEP_CA_CERT", t.Ca().c_str(), 1);
  ::setenv("LOCKSTEP_TOKEN", nobody.c_str(), 1);
  {
    client::ApiClient api(t.Url());
    // A token never begets another.
    Result<nlohmann::json> tok = api.Post("/api/v1/tokens", nlohmann::json::object());
    EXPECT_FALSE(tok.ok());
    EXPECT_TRUE(Contains(tok.status().message(), "only on lockstepd's Unix socket"))
        << tok.status().message();
    // Agents' endpoints take an operator's token, as on the socket they take an operator.
    Result<nlohmann::json> poll = api.Get("/api/v1/agent/commands?agent=x&wait_ms=0");
    EXPECT_EQ(poll.status().code(), StatusCode::kPermissionDenied);
  }
  ::setenv("LOCKSTEP_TOKEN", root.c_str(), 1);
  {
    client::ApiClient api(t.Url());
    Result<nlohmann::json> poll = api.Get("/api/v1/agent/commands?agent=x&wait_ms=0");
    EXPECT_TRUE(poll.ok()) << poll.status().message();
    // Keep-alive: the same connection serves a second call.
    EXPECT_TRUE(api.Get("/api/v1/partitions").ok());
  }
  ::unsetenv("LOCKSTEP_TOKEN");
  ::unsetenv("LOCKSTEP_CA_CERT");
}

TEST(Tls, AnAgentWithAnOperatorsTokenServesNodesOverHttps) {
  TlsCluster t;
  ASSERT_TRUE(t.certs.made);
  ASSERT_TRUE(t.cluster.Start(false));
  ASSERT_TRUE(t.WaitUp());
  // The agent is root here, and so is lockstepd: the token of an operator.
  std::string token = t.Token({"token"});
  ASSERT_FALSE(token.empty());
  t.cluster.options().agent_socket = t.Url();
  t.cluster.options().agent_env = {{"LOCKSTEP_TOKEN", token}, {"LOCKSTEP_CA_CERT", t.Ca()}};
  t.cluster.StartAgent();
  ASSERT_TRUE(t.cluster.WaitNodes("idle", 2));
  unsigned long long id = Submit(t.cluster, {"--wrap", "echo ran"});
  ASSERT_GT(id, 0u);
  EXPECT_EQ(t.cluster.WaitJob(id)["state"], "COMPLETED");
  EXPECT_EQ(t.cluster.ReadFile("slurm-" + std::to_string(id) + ".out"), "ran\n");
}

// Interactive work over HTTPS only: srun's stdin and `srun --pty` with a token, the agent on
// HTTPS too, so every byte of input and output crosses TLS.
TEST(Tls, StdinAndAPseudoTerminalWorkOverHttpsWithAToken) {
  TlsCluster t;
  ASSERT_TRUE(t.certs.made);
  ASSERT_TRUE(t.cluster.Start(false));
  ASSERT_TRUE(t.WaitUp());
  std::string token = t.Token({"token"});
  ASSERT_FALSE(token.empty());
  t.cluster.options().agent_socket = t.Url();
  t.cluster.options().agent_env = {{"LOCKSTEP_TOKEN", token}, {"LOCKSTEP_CA_CERT", t.Ca()}};
  t.cluster.StartAgent();
  ASSERT_TRUE(t.cluster.WaitNodes("idle", 2));
  CommandResult r = t.cluster.Run({"srun", "cat"}, "", -1, "a\nb\n", t.Remote(token));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "a\nb\n");
  std::map<std::string, std::string> env = t.Remote(token);
  env["SLURM_JOB_ID"] = "";
  env["TERM"] = "dumb";
  env["PS1"] = "$ ";
  PtySession s({std::string(LOCKSTEP_BIN_DIR) + "/lockstep", "srun", "--pty", "bash", "--norc",
                "--noprofile"},
               env, t.cluster.work(), 24, 80);
  ASSERT_TRUE(s.started());
  s.Write("echo $((6*7))\n");
  ASSERT_TRUE(s.Expect("\r\n42\r\n")) << s.transcript();
  s.Write("exit 5\n");
  EXPECT_EQ(s.Wait(), 5) << s.transcript();
}

TEST(Tls, LockstepdRefusesPlainTcp) {
  TlsCluster t;
  std::string cmd = std::string(LOCKSTEP_BIN_DIR) + "/lockstepd --config " + t.cluster.dir() +
                    "/cluster.yaml --state-dir " + t.cluster.dir() +
                    " --listen 127.0.0.1:" + std::to_string(t.port) + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  int status = ::pclose(p);
  EXPECT_NE(status, 0);
  EXPECT_TRUE(Contains(out, "--listen needs --tls-cert and --tls-key")) << out;
}

// Observability over HTTPS: the web view's page is answered without a token (it then asks for
// one); the metrics and the event stream only with one.
TEST(Tls, TheWebPageAsksForATokenAndTheMetricsNeedOne) {
  TlsCluster t;
  ASSERT_TRUE(t.certs.made);
  ASSERT_TRUE(t.cluster.Start());
  std::string token = t.Token({"token"});
  ASSERT_FALSE(token.empty());
  auto curl = [&](const std::string& path, const std::string& header) {
    std::string cmd = "curl -s --cacert " + t.Ca() + " -w '\\n%{http_code}' " +
                      (header.empty() ? "" : "-H '" + header + "' ") + t.Url() + path;
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    for (std::size_t n; p && (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (p) ::pclose(p);
    return out;
  };
  std::string page = curl("/web", "");
  EXPECT_TRUE(Contains(page, "<title>lockstep</title>") && page.ends_with("\n200")) << page;
  EXPECT_TRUE(Contains(page, "lockstep token")) << "the page says how to get a token";
  EXPECT_TRUE(curl("/metrics", "").ends_with("\n401"));
  EXPECT_TRUE(curl("/api/v1/events", "").ends_with("\n401"));
  EXPECT_TRUE(curl("/api/v1/web/whoami", "").ends_with("\n401"));
  std::string metrics = curl("/metrics/nodes", "Authorization: Bearer " + token);
  EXPECT_TRUE(Contains(metrics, "slurm_node_cpus{node=\"node1\"}") && metrics.ends_with("\n200"))
      << metrics;
  std::string who = curl("/api/v1/web/whoami", "Authorization: Bearer " + token);
  EXPECT_TRUE(Contains(who, "\"user\":\"root\"")) << who;
}

}  // namespace
}  // namespace lockstep::testing
