// Login environments on a real node (fixture: kubernetes_node_fixture.h; docs/login.md): two
// users of an identity file, alice and bob, each with a home on the declared storage;
// `lockstep login` as alice gives her own pod, running as her uid, gid and groups, names
// resolving, in her home; sbatch from there runs a job as alice whose output lands in her home;
// bob's refusals (another's login, another's session, another's job, the apiserver); an idle pod
// reaped and brought back; alice removed from the file: logged out, pod gone, token refused; the
// user's own sshd, and her pod kept across a restart of lockstepd; a team's shared pool.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>

#include "client/api_client.h"
#include "tests/kubernetes_node_fixture.h"
#include "tests/process_state.h"
#include "tests/pty_session.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kAlice = 2001, kBob = 2002, kCarol = 2003;
constexpr int kJobSeconds = 60;

// The users file; `keys`: alice's and bob's SSH public keys ("" : none).
std::string UsersYaml(bool with_alice, const std::pair<std::string, std::string>& keys = {}) {
  auto key_list = [](const std::string& key) {
    return key.empty() ? std::string() : ", ssh_keys: [\"" + key + "\"]";
  };
  std::string y = "groups:\n  - {name: research, gid: 3000}\nusers:\n";
  if (with_alice)
    y += "  - {name: alice, uid: 2001, groups: [research], home: HOME/alice" + key_list(keys.first) + "}\n";
  y += "  - {name: bob, uid: 2002, home: HOME/bob" + key_list(keys.second) + "}\n";
  y += "  - {name: carol, uid: 2003, groups: [research], home: HOME/carol}\n";
  return y;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at; (at = s.find(from)) != std::string::npos;) s.replace(at, from.size(), to);
  return s;
}

long long MillisecondsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

class LoginNodeTest : public RealNodeTest {
 protected:
  void SetUp() override {
    RealNodeTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (::getuid() != 0) GTEST_SKIP() << "needs root: the test makes users' homes";
    ASSERT_NO_FATAL_FAILURE(MakeSharedMountDir("lockstep-login", storage_));
    for (auto [name, uid] :
         {std::pair{"alice", kAlice}, std::pair{"bob", kBob}, std::pair{"carol", kCarol}}) {
      const std::string home = storage_ + "/home/" + name;
      fs::create_directories(home);
      ASSERT_EQ(::chown(home.c_str(), uid, uid), 0);
      ASSERT_EQ(::chmod(home.c_str(), 0700), 0);
    }
    ASSERT_TRUE(ImportLockstepImage());
  }

  void TearDown() override {
    // Every pod of the test's namespace goes (jobs keep running when lockstepd stops): the next
    // test has the node's CPUs.
    if (!ns_.empty()) {
      Result<Json> pods = kc().List(kube::PodsPath(ns_));
      kube::DeleteOptions now;
      now.grace_period_seconds = 0;
      if (pods.ok())
        for (const Json& p : (*pods)["items"])
          (void)kc().Delete(kube::PodPath(ns_, p["metadata"]["name"]), now);
      WaitFor([&] {
        Result<Json> left = kc().List(kube::PodsPath(ns_));
        return left.ok() && (*left)["items"].empty();
      }, seconds(60));
    }
    if (!storage_.empty()) {
      while (Mounted(storage_)) ::umount2(storage_.c_str(), MNT_DETACH);
      std::error_code ignored;
      fs::remove_all(storage_, ignored);
    }
    RealNodeTest::TearDown();
  }

  // lockstepd for the node labelled `tag`, serving HTTPS on 127.0.0.1 (login pods share the
  // host's network here: this one-machine cluster has no Service routing), users from a file.
  std::unique_ptr<Cluster> StartWithLogins(const std::string& tag, const std::string& idle,
                                           const std::string& more_login = "") {
    const std::string tls = run_dir_ + "/" + tag + "-tls";
    fs::create_directories(tls);
    EXPECT_EQ(std::system(("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=lockstepd"
                           " -addext subjectAltName=IP:127.0.0.1 -keyout " + tls + "/tls.key -out " +
                           tls + "/tls.crt 2>/dev/null")
                              .c_str()),
              0);
    ca_ = tls + "/tls.crt";
    ns_ = tag;
    port_ = kube::testing::FreePort();
    LabelNode(tag);
    ClusterOptions o;
    o.kill_wait_s = 1;
    o.daemon_args = {"--log-level", "debug", "--listen", "127.0.0.1:" + std::to_string(port_),
                     "--tls-cert", tls + "/tls.crt", "--tls-key", tls + "/tls.key"};
    auto c = std::make_unique<Cluster>(o);
    users_file_ = c->dir() + "/users.yaml";
    WriteUsers(true);
    WriteClusterYaml(*c, tag,
                     "storage:\n  - name: shared\n    host_path: " + storage_ + "\n" +
                         "identity:\n  users_file: " + users_file_ + "\n  removed_users_jobs: cancel\n" +
                         "login:\n  host_network: true\n  cpus: 100m\n  memory: 128M\n"
                         "  idle_timeout: " + idle + "\n  node_selector: {lockstep-test: " + tag + "}\n" +
                         more_login);
    c->Start(/*with_agent=*/false);
    EXPECT_TRUE(c->WaitNodes("idle", 1, 30)) << c->Get("/api/v1/nodes").dump();
    return c;
  }

  void WriteUsers(bool with_alice) {
    const std::string tmp = users_file_ + ".new";
    std::ofstream(tmp) << Replace(UsersYaml(with_alice, ssh_keys_), "HOME", storage_ + "/home");
    fs::rename(tmp, users_file_);
  }

  // `lockstep login -- ARGS` as `uid`.
  CommandResult Login(Cluster& c, int uid, std::vector<std::string> args) {
    args.insert(args.begin(), {"login", "--"});
    return c.Run(args, "", uid);
  }

  static std::string PodOf(const std::string& user) { return "lockstep-login-" + user; }

  // Opens a login session of `command` as `uid` through the API (POST /api/v1/login), in a
  // child that becomes the user; the session's id ("" if refused).
  static std::string OpenSessionAs(Cluster& c, int uid, const std::vector<std::string>& command) {
    int fds[2];
    if (::pipe(fds) != 0) return "";
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      if (::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(1);
      client::ApiClient api(c.dir() + "/lockstepd.sock");
      Result<Json> r = api.Post("/api/v1/login", Json{{"command", command}});
      const std::string id = r.ok() ? r->value("session", "") : r.status().message();
      [[maybe_unused]] ssize_t n = ::write(fds[1], id.data(), id.size());
      ::_exit(0);
    }
    ::close(fds[1]);
    std::string id;
    char buf[256];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) id.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    ::waitpid(pid, nullptr, 0);
    return id;
  }

  // GET `target` on lockstepd's socket as `uid`, in a child that becomes the user: the answer's
  // status code, 200 or 404 (0: another answer, or none).
  static unsigned GetAs(Cluster& c, int uid, const std::string& target) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::setgid(uid) != 0 || ::setuid(uid) != 0) ::_exit(1);
      client::ApiClient api(c.dir() + "/lockstepd.sock");
      Result<std::pair<unsigned, std::string>> r = api.GetRaw(target);
      ::_exit(!r.ok() ? 0 : r->first == 200 ? 1 : r->first == 404 ? 2 : 0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    return code == 1 ? 200u : code == 2 ? 404u : 0u;
  }

  std::string storage_, users_file_, ca_, ns_;
  std::pair<std::string, std::string> ssh_keys_;  // alice's and bob's public keys
  int port_ = 0;
};

TEST_F(LoginNodeTest, AliceGetsHerOwnPodRunsAJobFromItAndBobCannotReachIt) {
  std::unique_ptr<Cluster> c = StartWithLogins("login-a", "1-00:00:00");
  const std::string home = storage_ + "/home/alice";

  // Cold: the pod is made. Names resolve, the ids are alice's, the shell is in her home.
  auto cold = Clock::now();
  CommandResult r = Login(*c, kAlice, {"id"});
  const long long cold_ms = MillisecondsSince(cold);
  ASSERT_EQ(r.exit_code, 0) << r.err << DaemonLog(*c);
  EXPECT_TRUE(Contains(r.out, "uid=2001(alice) gid=2001(alice)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "3000(research)")) << r.out;
  auto warm = Clock::now();
  r = Login(*c, kAlice, {"whoami;", "pwd;", "ls", "-ld", "."});
  const long long warm_ms = MillisecondsSince(warm);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "alice\n" + home + "\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, " alice ")) << r.out;  // ls -l names the owner
  std::printf("[ figure ] lockstep login -- id: cold (pod made) %lld ms, warm %lld ms\n", cold_ms,
              warm_ms);

  // Exit status and stderr come back as ssh's do; standard input reaches the command.
  r = Login(*c, kAlice, {"echo", "to-stderr", ">&2;", "exit", "7"});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.err, "to-stderr\n");
  r = c->Run({"login", "--", "tr", "a-z", "A-Z"}, "", kAlice, "piped input\n");
  EXPECT_EQ(r.out, "PIPED INPUT\n") << r.err;

  // The pod: no service-account token, nothing to escalate with, the root read-only.
  r = Login(*c, kAlice, {"ls", "/var/run/secrets/kubernetes.io", "2>&1;",
                         "grep", "-E", "'^(NoNewPrivs|CapEff)'", "/proc/self/status;",
                         "touch", "/usr/x", "2>/dev/null", "||", "echo", "read-only"});
  EXPECT_TRUE(Contains(r.out, "No such file or directory")) << r.out;
  EXPECT_TRUE(Contains(r.out, "NoNewPrivs:\t1\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "CapEff:\t0000000000000000\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "read-only\n")) << r.out;

  // sbatch from the login pod (its token, over HTTPS): a job of alice's, run as alice in her
  // home, its output there; squeue --me sees it.
  r = Login(*c, kAlice, {"sbatch", "--parsable", "--wrap", "'echo ran-as $(id -u) in $(pwd); sleep 300'"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << DaemonLog(*c);
  const unsigned long long job = std::stoull(r.out);
  Json j = c->Job(job);
  EXPECT_EQ(j.value("user", ""), "alice") << j.dump();
  r = Login(*c, kAlice, {"squeue", "--me", "-h", "-o", "%i"});
  EXPECT_EQ(r.out, std::to_string(job) + "\n") << r.err;

  // Bob: not as alice, not alice's job, not her session, not the apiserver.
  r = Login(*c, kBob, {"true"});
  ASSERT_EQ(r.exit_code, 0) << r.err << DaemonLog(*c);
  r = c->Run({"login", "--user", "alice", "--", "id"}, "", kBob);
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_TRUE(Contains(r.err, "bob may log in only as bob")) << r.err;
  r = c->Run({"login", "--ssh"}, "", kBob);  // this cluster's login pods run no sshd
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_TRUE(Contains(r.err, "login pods run no sshd (login.ssh")) << r.err;
  r = Login(*c, kBob, {"scancel", std::to_string(job)});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(c->Job(job).value("state", ""), "RUNNING") << c->Job(job).dump();
  r = Login(*c, kBob, {"cat", "/var/run/lockstep/token;", "ls", "/var/run/secrets/kubernetes.io"});
  EXPECT_NE(r.exit_code, 0);  // no service account: nothing to reach the apiserver with
  const std::string bob_token = r.out.substr(0, r.out.find('\n'));
  r = Login(*c, kAlice, {"cat", "/var/run/lockstep/token"});
  const std::string alice_token = r.out.substr(0, r.out.find('\n'));
  EXPECT_EQ(alice_token.size(), 64u);
  EXPECT_NE(alice_token, bob_token);

  // A session of alice's, opened through the API: its id means nothing to bob.
  const std::string session = OpenSessionAs(*c, kAlice, {"echo", "hi;", "sleep", "600"});
  ASSERT_EQ(session.size(), 32u) << session << DaemonLog(*c);
  const std::string output = "/api/v1/login/sessions/" + session + "/output?offset=0";
  EXPECT_EQ(GetAs(*c, kBob, output), 404u);
  EXPECT_EQ(GetAs(*c, kAlice, output), 200u);
  {
    // The barrier: lockstepd has started one more session than before.
    auto sessions = [&] {
      const std::string log = DaemonLog(*c);
      std::size_t n = 0;
      for (std::size_t at = 0; (at = log.find("login: session ", at)) != std::string::npos; ++at) ++n;
      return n;
    };
    const std::size_t before = sessions();
    auto running = std::async(std::launch::async, [&] {
      return Login(*c, kAlice, {"echo", "started;", "sleep", "600"});
    });
    ASSERT_TRUE(WaitFor([&] { return sessions() > before; }, seconds(30))) << DaemonLog(*c);
    // alice leaves the identity file: logged out at once, her pod and token gone, her job cancelled.
    WriteUsers(false);
    CommandResult ended = running.get();
    EXPECT_EQ(ended.exit_code, 255);
    EXPECT_TRUE(Contains(ended.err, "alice is no longer a user of this cluster")) << ended.err;
  }
  EXPECT_TRUE(WaitFor([&] { return PodPhase("login-a", PodOf("alice")).empty(); }, seconds(60)));
  EXPECT_FALSE(PodPhase("login-a", PodOf("bob")).empty());  // bob's stays
  Json cancelled = c->WaitJob(job, kJobSeconds);
  EXPECT_EQ(cancelled.value("state", ""), "CANCELLED") << cancelled.dump();
  const std::map<std::string, std::string> https = {
      {"LOCKSTEP_SERVER", "https://127.0.0.1:" + std::to_string(port_)},
      {"LOCKSTEP_TOKEN", alice_token},
      {"LOCKSTEP_CA_CERT", ca_}};
  r = c->Run({"squeue"}, "", -1, "", https);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "authentication failed")) << r.err;
  r = Login(*c, kAlice, {"id"});
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_TRUE(Contains(r.err, "uid 2001 is not a user of this cluster")) << r.err;

  // The job's output was in alice's home, written as alice (it ran before she left).
  const std::string out = ReadAll(home + "/slurm-" + std::to_string(job) + ".out");
  EXPECT_TRUE(Contains(out, "ran-as 2001 in " + home + "\n")) << out << DaemonLog(*c);
}

TEST_F(LoginNodeTest, AnIdlePodIsReapedAndTheNextLoginBringsItBack) {
  std::unique_ptr<Cluster> c = StartWithLogins("login-b", "2");
  CommandResult r = Login(*c, kBob, {"echo", "first"});
  ASSERT_EQ(r.exit_code, 0) << r.err << DaemonLog(*c);
  EXPECT_EQ(r.out, "first\n");
  Result<Json> pod = kc().Get(kube::PodPath("login-b", PodOf("bob")));
  ASSERT_TRUE(pod.ok());
  const std::string first_uid = (*pod)["metadata"]["uid"];
  // Idle for 2 s: deleted (and its Secret with it).
  ASSERT_TRUE(WaitFor([&] { return PodPhase("login-b", PodOf("bob")).empty(); }, seconds(60)))
      << DaemonLog(*c);
  EXPECT_TRUE(Contains(DaemonLog(*c), "login: pod lockstep-login-bob deleted (idle for"));
  // Back, interactively: a shell on a terminal of the CLI's size, as bob, the time to its
  // prompt measured cold (the pod made again) and warm.
  long long to_prompt_ms[2] = {0, 0};
  for (int run = 0; run < 2; ++run) {
    const auto start = Clock::now();
    PtySession s({"/usr/bin/setpriv", "--reuid=2002", "--regid=2002", "--clear-groups",
                  std::string(LOCKSTEP_BIN_DIR) + "/lockstep", "login"},
                 {{"LOCKSTEP_STATE_DIR", c->dir()}, {"TERM", "dumb"}}, "/", 24, 80);
    ASSERT_TRUE(s.started());
    ASSERT_TRUE(s.Expect("$ ")) << s.transcript() << DaemonLog(*c);
    to_prompt_ms[run] = MillisecondsSince(start);
    s.Write("echo $((6*7)) $(whoami) $(pwd)\n");
    EXPECT_TRUE(s.Expect("42 bob " + storage_ + "/home/bob\r\n")) << s.transcript();
    s.Write("stty size\n");
    EXPECT_TRUE(s.Expect("\r\n24 80\r\n")) << s.transcript();
    s.Write("exit 3\n");
    EXPECT_EQ(s.Wait(), 3) << s.transcript();
    if (run == 0) {
      pod = kc().Get(kube::PodPath("login-b", PodOf("bob")));
      ASSERT_TRUE(pod.ok());
      EXPECT_NE((*pod)["metadata"]["uid"], first_uid);
    }
  }
  std::printf("[ figure ] lockstep login to a shell prompt: cold (pod made) %lld ms, warm %lld ms\n",
              to_prompt_ms[0], to_prompt_ms[1]);
}

// `lockstep login --ssh` (login.ssh): the user's own sshd in their pod, behind their Service's
// node port (a host-network pod listens on it itself here, where nothing routes node ports),
// taking their key and no one else's, its sessions reaching lockstepd as the user.
TEST_F(LoginNodeTest, SshReachesTheUsersOwnSshdWithTheirKeyOnly) {
  if (!fs::exists("/usr/sbin/sshd") || !fs::exists("/usr/bin/ssh")) {
    const std::string why = "needs openssh-server and openssh-client (scripts/install-deps.sh)";
    if (std::getenv("CI")) FAIL() << why;
    GTEST_SKIP() << why;
  }
  const std::string keys = run_dir_ + "/login-ssh-keys";
  fs::create_directories(keys);
  for (const char* who : {"alice", "bob"}) {
    fs::remove(keys + "/" + who);
    fs::remove(keys + "/" + who + ".pub");
    ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -C " + std::string(who) + "@test -f " +
                           keys + "/" + who)
                              .c_str()),
              0);
  }
  auto pub = [&](const char* who) {
    std::string k = ReadAll(keys + "/" + who + ".pub");
    while (!k.empty() && k.back() == '\n') k.pop_back();
    return k;
  };
  ssh_keys_ = {pub("alice"), pub("bob")};
  std::unique_ptr<Cluster> c = StartWithLogins("login-c", "1-00:00:00", "  ssh: true\n");

  CommandResult r = c->Run({"login", "--ssh"}, "", kAlice);
  ASSERT_EQ(r.exit_code, 0) << r.err << DaemonLog(*c);
  ASSERT_TRUE(r.out.rfind("ssh -p ", 0) == 0) << r.out;
  const int port = std::stoi(r.out.substr(7));
  EXPECT_TRUE(Contains(r.out, " alice@")) << r.out;
  const std::string ssh = "ssh -o BatchMode=yes -o StrictHostKeyChecking=no "
                          "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -p " +
                          std::to_string(port) + " ";
  // Her key: her shell, her identity, the Slurm commands reaching lockstepd with her token.
  std::string out;
  ASSERT_TRUE(WaitFor(
      [&] {  // sshd binds its port a moment after the pod runs
        out = Output(ssh + "-i " + keys + "/alice alice@127.0.0.1 "
                     "'id -un; squeue --me -h -o %u; echo done' 2>&1");
        return Contains(out, "done");
      },
      seconds(30)))
      << out << DaemonLog(*c);
  EXPECT_TRUE(Contains(out, "alice\n")) << out;
  // Bob's key is not hers: refused by her sshd.
  const std::string refused =
      Output("{ " + ssh + "-i " + keys + "/bob alice@127.0.0.1 true 2>&1; echo rc=$?; }");
  EXPECT_TRUE(Contains(refused, "Permission denied (publickey)")) << refused;
  EXPECT_TRUE(Contains(refused, "rc=255")) << refused;
  // Bob's own: another pod, another port.
  r = c->Run({"login", "--ssh"}, "", kBob);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(std::stoi(r.out.substr(7)), port);

  // lockstepd dies and comes back: alice's pod is still hers, and so is its sshd's host key.
  Result<Json> pod = kc().Get(kube::PodPath("login-c", PodOf("alice")));
  ASSERT_TRUE(pod.ok());
  c->KillDaemon();
  c->StartDaemon();
  ASSERT_TRUE(WaitFor([&] { return !c->Get("/api/v1/login").contains("error"); }, kWait));
  r = Login(*c, kAlice, {"squeue", "--me", "-h;", "echo", "after-restart"});
  EXPECT_EQ(r.out, "after-restart\n") << r.err << DaemonLog(*c);
  Result<Json> same = kc().Get(kube::PodPath("login-c", PodOf("alice")));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*same)["metadata"]["uid"], (*pod)["metadata"]["uid"]);
  r = c->Run({"login", "--ssh"}, "", kAlice);
  EXPECT_EQ(r.out.substr(0, r.out.find(' ', 7)), "ssh -p " + std::to_string(port));
}

// A team's shared pool (login.pools): alice and carol of group research share one pod, each
// session running as its user with that user's token alone; bob, not in research, is refused.
TEST_F(LoginNodeTest, ATeamsPoolRunsEachMembersSessionAsThemAndNoOneElses) {
  std::unique_ptr<Cluster> c = StartWithLogins("login-d", "1-00:00:00",
                                               "  pools:\n    - {name: research, groups: [research]}\n");
  CommandResult r = c->Run({"login", "--pool", "research", "--", "id", "-u;", "echo", "$USER", "$HOME;",
                            "hostname;", "grep", "CapEff", "/proc/self/status;",
                            "sbatch", "--parsable", "--wrap", "true"},
                           "", kAlice);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << DaemonLog(*c);
  std::istringstream alice(r.out);
  std::string uid, who, host, caps, job;
  std::getline(alice, uid);
  std::getline(alice, who);
  std::getline(alice, host);
  std::getline(alice, caps);
  std::getline(alice, job);
  EXPECT_EQ(uid, "2001");
  EXPECT_EQ(who, "alice " + storage_ + "/home/alice");
  EXPECT_EQ(caps, "CapEff:\t0000000000000000");  // no capability left to the session
  ASSERT_FALSE(job.empty()) << r.out;
  EXPECT_EQ(c->Job(std::stoull(job)).value("user", ""), "alice");  // her token, her job

  // carol: the same pod, as carol; alice's token is not hers to read.
  r = c->Run({"login", "--pool", "research", "--", "id", "-un;", "hostname;", "cat",
              "/run/lockstep-users/2001/token", "2>&1"},
             "", kCarol);
  EXPECT_TRUE(Contains(r.out, "carol\n" + host + "\n")) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "Permission denied")) << r.out;

  // bob is not in research.
  r = c->Run({"login", "--pool", "research", "--", "true"}, "", kBob);
  EXPECT_EQ(r.exit_code, 255);
  EXPECT_TRUE(Contains(r.err, "bob is not in a group of pool research (research)")) << r.err;
  // Nor is there a pool by another name.
  r = c->Run({"login", "--pool", "vision", "--", "true"}, "", kAlice);
  EXPECT_TRUE(Contains(r.err, "no pool vision")) << r.err;
}

}  // namespace
}  // namespace lockstep::testing
