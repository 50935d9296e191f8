#include "tests/cluster_harness.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "client/api_client.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Cluster::Cluster(const ClusterOptions& options) : options_(options), bin_(LOCKSTEP_BIN_DIR) {
  char tmpl[] = "/tmp/lockstep-e2e-XXXXXX";
  dir_ = ::mkdtemp(tmpl);
  work_ = dir_ + "/work";
  fs::create_directories(work_);
  // Jobs may run as other users (permission tests): let them write their output here.
  fs::permissions(dir_, fs::perms::all);
  fs::permissions(work_, fs::perms::all);
  std::string names = "node[1-" + std::to_string(options.nodes) + "]";
  std::ofstream(dir_ + "/cluster.yaml")
      << "nodes:\n  - names: \"" << names << "\"\n    cpus: " << options.cpus_per_node
      << "\n    memory: 64G\n"
      << (options.gpus_per_node > 0
              ? "    gpus: " + std::to_string(options.gpus_per_node) + "\n    gpu_type: virtual\n"
              : "")
      << options.node_yaml << options.extra_yaml;
}

Cluster::~Cluster() {
  Stop(agent_, SIGTERM);
  for (auto& [node, pid] : node_agents_) Stop(pid, SIGTERM);
  Stop(daemon_, SIGTERM);
  // A failed test shows what the daemons said: CI keeps nothing else of the cluster.
  if (::testing::Test::HasFailure()) {
    std::vector<std::string> logs = {"lockstepd.log", "agent.log"};
    for (const auto& [name, pid] : node_agents_) logs.push_back(name + ".log");
    for (const std::string& log : logs)
      std::fprintf(stderr, "---- %s ----\n%s\n", log.c_str(), Slurp(dir_ + "/" + log).c_str());
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

pid_t Cluster::Spawn(const std::vector<std::string>& argv, const std::string& log,
                     const std::map<std::string, std::string>& env) {
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
  for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  ::_exit(127);
}

void Cluster::Stop(pid_t& pid, int signo) {
  if (pid <= 0) return;
  ::kill(pid, signo);
  for (int i = 0; i < 100; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  pid = -1;
}

void Cluster::StartDaemon() {
  // Every pass checks the scheduler's incremental snapshot against one built from every job.
  ::setenv("LOCKSTEP_CHECK_SNAPSHOT", "1", 1);
  std::vector<std::string> argv = {bin_ + "/lockstepd", "--config", dir_ + "/cluster.yaml",
                                   "--state-dir", dir_};
  if (!options_.state_dir.empty()) {
    argv = {bin_ + "/lockstepd",  "--config",   dir_ + "/cluster.yaml", "--state-dir",
            options_.state_dir,   "--socket",   dir_ + "/lockstepd.sock", "--log-file",
            dir_ + "/lockstepd.log"};
  }
  for (const std::string& a :
       {std::string("--node-timeout"), std::to_string(options_.node_timeout_s),
        std::string("--kill-wait"), std::to_string(options_.kill_wait_s)})
    argv.push_back(a);
  argv.insert(argv.end(), options_.daemon_args.begin(), options_.daemon_args.end());
  daemon_ = Spawn(argv, dir_ + "/lockstepd.log");
}

void Cluster::StartAgent() {
  std::string socket =
      options_.agent_socket.empty() ? dir_ + "/lockstepd.sock" : options_.agent_socket;
  std::vector<std::string> argv = {bin_ + "/lockstep-agent", "--socket", socket, "--state-dir",
                                   dir_, "--nodes",
                                   "node[1-" + std::to_string(options_.nodes) + "]", "--cpus",
                                   std::to_string(options_.cpus_per_node), "--mem", "64G",
                                   "--gpus", std::to_string(options_.gpus_per_node)};
  argv.insert(argv.end(), options_.agent_args.begin(), options_.agent_args.end());
  agent_ = Spawn(argv, dir_ + "/agent.log", options_.agent_env);
}

void Cluster::StartNodeAgent(const std::string& node,
                             const std::map<std::string, std::string>& env,
                             const std::vector<std::string>& extra_args, const std::string& name) {
  std::string socket =
      options_.agent_socket.empty() ? dir_ + "/lockstepd.sock" : options_.agent_socket;
  StopNodeAgent(node, name);
  const std::string agent = name.empty() ? "agent-" + node : name;
  const std::string state = name.empty() ? dir_ : dir_ + "/" + name;
  std::filesystem::create_directories(state);
  std::vector<std::string> argv = {bin_ + "/lockstep-agent", "--socket", socket, "--state-dir",
                                   state, "--name", agent, "--nodes", node, "--cpus",
                                   std::to_string(options_.cpus_per_node), "--mem", "64G"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  node_agents_[agent] = Spawn(argv, dir_ + "/" + agent + ".log", env);
}

void Cluster::StopNodeAgent(const std::string& node, const std::string& name) {
  auto it = node_agents_.find(name.empty() ? "agent-" + node : name);
  if (it == node_agents_.end()) return;
  Stop(it->second, SIGTERM);
  node_agents_.erase(it);
}

bool Cluster::Start(bool with_agent) {
  StartDaemon();
  if (!with_agent) return true;
  StartAgent();
  return WaitNodes("idle", options_.nodes);
}

void Cluster::KillDaemon() {
  Stop(daemon_, SIGKILL);
}
std::optional<int> Cluster::DaemonExited() {
  int status = 0;
  if (daemon_ <= 0 || ::waitpid(daemon_, &status, WNOHANG) != daemon_) return std::nullopt;
  daemon_ = -1;
  return status;
}
void Cluster::KillAgent() {
  Stop(agent_, SIGKILL);
}
void Cluster::PauseAgent() {
  ::kill(agent_, SIGSTOP);
}
void Cluster::ResumeAgent() {
  ::kill(agent_, SIGCONT);
}

CommandResult Cluster::Run(const std::vector<std::string>& args, const std::string& cwd, int uid,
                           const std::string& stdin_text,
                           const std::map<std::string, std::string>& env) {
  std::string out = dir_ + "/cmd.out." + std::to_string(::getpid()),
              err = dir_ + "/cmd.err." + std::to_string(::getpid());
  std::string in = dir_ + "/cmd.in";
  std::ofstream(in) << stdin_text;
  pid_t pid = ::fork();
  if (pid == 0) {
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666),
        e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    int i = ::open(stdin_text.empty() ? "/dev/null" : in.c_str(), O_RDONLY);
    ::dup2(o, 1), ::dup2(e, 2), ::dup2(i, 0);
    if (::chdir((cwd.empty() ? work_ : cwd).c_str()) != 0) ::_exit(126);
    if (uid >= 0 &&
        (::setgid(static_cast<gid_t>(uid)) != 0 || ::setuid(static_cast<uid_t>(uid)) != 0))
      ::_exit(125);
    ::setenv("LOCKSTEP_STATE_DIR", dir_.c_str(), 1);
    for (const auto& [k, v] : env) {
      if (v.empty())
        ::unsetenv(k.c_str());
      else
        ::setenv(k.c_str(), v.c_str(), 1);
    }
    std::vector<std::string> argv = {bin_ + "/lockstep"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> a;
    for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    ::execv(a[0], a.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

nlohmann::json Cluster::Get(const std::string& target) {
  client::ApiClient api(dir_ + "/lockstepd.sock");
  Result<nlohmann::json> r = api.Get(target);
  return r.ok() ? *r : nlohmann::json{{"error", r.status().message()}};
}

nlohmann::json Cluster::Job(unsigned long long id) {
  return Get("/api/v1/jobs/" + std::to_string(id));
}

nlohmann::json Cluster::WaitJob(unsigned long long id, int timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  nlohmann::json j;
  while (std::chrono::steady_clock::now() < deadline) {
    j = Job(id);
    std::string s = j.value("state", "");
    if (!s.empty() && s != "PENDING" && s != "RUNNING" && s != "COMPLETING" && s != "SUSPENDED")
      return j;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return j;
}

bool Cluster::WaitNodes(const std::string& state, int count, int timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    nlohmann::json n = Get("/api/v1/nodes");
    int matching = 0;
    if (n.contains("nodes"))
      for (const auto& x : n["nodes"]) matching += x["state"] == state;
    if (matching == count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string Cluster::ReadFile(const std::string& path) const {
  return Slurp(path[0] == '/' ? path : work_ + "/" + path);
}

unsigned long long Submit(Cluster& c, std::vector<std::string> args, const std::string& cwd) {
  args.insert(args.begin(), {"sbatch", "--parsable"});
  CommandResult r = c.Run(args, cwd);
  if (r.exit_code != 0) return 0;
  return std::strtoull(r.out.c_str(), nullptr, 10);
}

}  // namespace lockstep::testing
