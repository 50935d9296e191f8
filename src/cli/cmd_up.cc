// lockstep up / down: a whole cluster on this machine (lockstepd and one agent serving N
// virtual nodes with virtual GPUs), or lockstepd alone over a Kubernetes cluster (--backend
// kubernetes), and install-aliases for the Slurm command names.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "cli/cli_util.h"
#include "cli/up_health.h"
#include "cli/up_storage.h"
#include "policy/policy.h"
#include "cli/commands.h"
#include "common/types.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

const char* kAliases[] = {"sbatch", "srun",     "salloc", "squeue", "scancel",
                          "sinfo",  "scontrol", "sacct",  "sprio",  "sdiag",
                          "sacctmgr", "sshare", "sstat",
                          "sattach", "sreport", "sbcast"};

std::string SelfDir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? fs::path(std::string(buf, static_cast<std::size_t>(n))).parent_path().string()
               : ".";
}

// Starts `argv` detached from this terminal, output to `log`; returns its pid.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::setsid();
  // The daemons' logs name users' jobs: for the owner only, like the store beside them.
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  int null = ::open("/dev/null", O_RDONLY);
  if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
  if (null >= 0) ::dup2(null, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  std::fprintf(stderr, "cannot start %s\n", args[0]);
  ::_exit(127);
}

bool Alive(pid_t pid) {
  return pid > 0 && ::kill(pid, 0) == 0;
}

pid_t ReadPid(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// Whether pid is `program` (lockstepd, lockstep-agent) started on `state_dir`: its executable's
// name and its --state-dir argument, so that a pid file never makes us signal a process that
// merely got the same pid.
bool IsOurProcess(pid_t pid, const std::string& program, const std::string& state_dir) {
  if (pid <= 0) return false;
  const std::string proc = "/proc/" + std::to_string(pid);
  char exe[4096];
  const ssize_t n = ::readlink((proc + "/exe").c_str(), exe, sizeof exe - 1);
  if (n <= 0) return false;
  std::string name = fs::path(std::string(exe, static_cast<std::size_t>(n))).filename().string();
  if (name != program && name != program + " (deleted)") return false;  // rebuilt since
  std::ifstream in(proc + "/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--state-dir" &&
        fs::weakly_canonical(args[i + 1]) == fs::weakly_canonical(state_dir))
      return true;
  return false;
}

// Running: alive and not a zombie waiting for its parent.
bool Running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// SIGTERM, then SIGKILL if it is still running after 10 s.
void StopProcess(pid_t pid) {
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 100 && Running(pid); ++i) {
    ::waitpid(pid, nullptr, WNOHANG);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (Running(pid)) ::kill(pid, SIGKILL);
}

// Stops what an earlier `lockstep up` on this state directory left running (its lockstepd was
// killed, say): an agent left beside a new one would run on, unseen by `lockstep down`.
void StopPrevious(const std::string& state_dir, const char* pid_file, const std::string& program) {
  const std::string path = state_dir + "/" + pid_file;
  const pid_t pid = ReadPid(path);
  if (IsOurProcess(pid, program, state_dir) && Running(pid)) {
    std::printf("lockstep up: stopping %s (pid %d) left by an earlier lockstep up\n",
                program.c_str(), static_cast<int>(pid));
    StopProcess(pid);
  }
  ::unlink(path.c_str());
}

std::string ClusterYaml(int nodes, int gpus, int cpus, const std::string& mem,
                        const std::string& gpu_type = "virtual") {
  std::string names = nodes == 1 ? "node1" : "node[1-" + std::to_string(nodes) + "]";
  std::string y = "# Written by `lockstep up`: a cluster on one machine.\n";
  y += "nodes:\n  - names: \"" + names + "\"\n    cpus: " + std::to_string(cpus) +
       "\n    memory: " + mem + "\n";
  if (gpus > 0) y += "    gpus: " + std::to_string(gpus) + "\n    gpu_type: " + gpu_type + "\n";
  y += "partitions:\n  - name: gpu\n    nodes: ALL\n    default: true\n    max_time: UNLIMITED\n";
  y += "scheduler:\n  policy: easy\n";
  return y;
}

// `lockstep up --backend kubernetes`: no nodes of its own, they come from the cluster.
std::string KubernetesClusterYaml(const std::string& kubeconfig) {
  std::string y = "# Written by `lockstep up --backend kubernetes`: the nodes are the cluster's.\n";
  y += "backend: kubernetes\nkubernetes:\n";
  // A JSON string is a YAML string: any path is quoted safely.
  if (!kubeconfig.empty()) y += "  kubeconfig: " + nlohmann::json(kubeconfig).dump() + "\n";
  y += "  namespace: lockstep\n";
  y += "partitions:\n  - name: gpu\n    nodes: ALL\n    default: true\n    max_time: UNLIMITED\n";
  y += "scheduler:\n  policy: easy\n";
  return y;
}

// `--policy FILE`: checked here, so that a bad rule is told before anything starts, and named
// by its absolute path in the cluster YAML (lockstepd reads it again when it changes).
Result<std::string> UpPolicyYaml(const std::string& file) {
  if (file.empty()) return std::string();
  Result<std::string> text = ReadTextFile(file);
  if (!text.ok()) return Status(text.status().code(), "--policy: " + text.status().message());
  const std::string path = fs::absolute(file).lexically_normal().string();
  Result<policy::Policy> parsed = policy::ParsePolicy(*text, path);
  if (!parsed.ok()) return Status(parsed.status().code(), "--policy: " + parsed.status().message());
  return "admission:\n  policy_file: " + nlohmann::json(path).dump() + "\n";
}

// lockstepd answers once it has listed the cluster's nodes (or exits saying why it could not).
int UpKubernetes(const std::string& state_dir, const std::string& kubeconfig,
                 const std::string& storage_yaml, client::ApiClient& api) {
  std::string config = state_dir + "/cluster.yaml";
  std::ofstream(config) << KubernetesClusterYaml(kubeconfig) << storage_yaml;  // + admission
  std::string dir = SelfDir();
  pid_t d = Spawn({dir + "/lockstepd", "--config", config, "--state-dir", state_dir},
                  state_dir + "/lockstepd.log");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  Result<nlohmann::json> nodes = NotFound("not yet");
  while (std::chrono::steady_clock::now() < deadline) {
    nodes = api.Get("/api/v1/nodes");
    if (nodes.ok()) break;
    if (::waitpid(d, nullptr, WNOHANG) == d || !Alive(d))
      return Fail("lockstep up", "lockstepd exited; see " + state_dir + "/lockstepd.log");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (!nodes.ok())
    return Fail("lockstep up", "lockstepd did not list the cluster's nodes in 90 s; see " +
                                   state_dir + "/lockstepd.log");
  std::size_t n = (*nodes)["nodes"].size();
  std::printf(
      "lockstep is up on Kubernetes: %zu node%s, jobs run as pods in namespace lockstep, "
      "state in %s\n\n",
      n, n == 1 ? "" : "s", state_dir.c_str());
  std::printf("Next:\n");
  if (state_dir != client::DefaultStateDir())
    std::printf("  export LOCKSTEP_STATE_DIR=%s\n", state_dir.c_str());
  std::printf("  sinfo\n");
  std::printf("  sbatch -N 2 --gpus-per-node=8 --container-image=IMAGE train.sbatch\n");
  std::printf("  squeue; lockstep logs JOBID; sacct\n");
  std::printf("  lockstep down\n");
  return 0;
}

// The nodes' states in a few words: "4 idle", "2 idle, 1 mixed, 1 down*".
std::string NodeStates(const nlohmann::json& nodes) {
  std::map<std::string, int> count;
  for (const auto& n : nodes["nodes"]) ++count[n.value("state", "unknown")];
  std::string out;
  for (const auto& [state, n] : count)
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  return out;
}

// Waits until each of `nodes` nodes responds (its agent registered: a state without Slurm's
// "*"), whatever runs there: after a crash or a `lockstep down`, jobs may be running or
// restarted. Their states ("4 idle"), or nullopt after `timeout`.
std::optional<std::string> WaitResponding(client::ApiClient& api, int nodes,
                                          std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    Result<nlohmann::json> r = api.Get("/api/v1/nodes");
    if (r.ok()) {
      int responding = 0;
      for (const auto& n : (*r)["nodes"]) {
        const std::string state = n.value("state", "");
        responding += !state.empty() && state.back() != '*';
      }
      if (responding == nodes) return NodeStates(*r);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return std::nullopt;
}

// The jobs lockstepd has RUNNING, with their restart counts (nullopt: it does not answer).
std::optional<std::map<JobId, int>> RunningJobs(client::ApiClient& api) {
  Result<nlohmann::json> r = api.Get("/api/v1/jobs?state=RUNNING");
  if (!r.ok()) return std::nullopt;
  std::map<JobId, int> jobs;
  for (const auto& j : (*r)["jobs"])
    if (j.value("state", "") == "RUNNING")
      jobs[j.value("job_id", JobId{0})] = j.value("restart_count", 0);
  return jobs;
}

std::vector<JobId> KeysOf(const std::map<JobId, int>& jobs) {
  std::vector<JobId> ids;
  for (const auto& [id, restarts] : jobs) ids.push_back(id);
  return ids;
}

std::string Ids(const std::vector<JobId>& ids) {
  std::string out;
  for (JobId id : ids) out += (out.empty() ? "" : " ") + std::to_string(id);
  return out;
}

// What became of the jobs that were running when lockstep stopped (crashed, or `lockstep
// down`) once a new agent registered without them: lockstepd requeues them (NODE_FAIL where they
// may not be requeued), as Slurm does with the jobs of a node that failed. Waits for each to leave
// its run, then says so.
void ReportEndedRuns(client::ApiClient& api, const std::map<JobId, int>& before) {
  std::map<std::string, std::vector<JobId>> outcome;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (const auto& [id, restarts] : before) {
    std::string state = "RUNNING";
    for (;;) {
      Result<nlohmann::json> j = api.Get("/api/v1/jobs/" + std::to_string(id));
      if (j.ok()) {
        state = j->value("state", "");
        if (j->value("restart_count", 0) > restarts) state = "requeued";
      }
      if (state != "RUNNING" || std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (state == "PENDING") state = "requeued";
    outcome[state].push_back(id);
  }
  const std::vector<JobId> all = KeysOf(before);
  std::printf("lockstep up: job%s %s ran when lockstep stopped; their tasks ended with it:",
              all.size() == 1 ? "" : "s", Ids(all).c_str());
  for (const auto& [state, ids] : outcome) {
    if (state == "requeued")
      std::printf(" requeued %s;", Ids(ids).c_str());
    else if (state == "RUNNING")
      std::printf(" not yet told %s (see lockstepd.log);", Ids(ids).c_str());
    else
      std::printf(" %s %s;", state.c_str(), Ids(ids).c_str());
  }
  std::printf(" a job that may not be requeued ends NODE_FAIL\n");
}

// The command line of pid, argument by argument.
std::vector<std::string> CommandLine(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
  return args;
}

}  // namespace

int RunUp(int argc, char** argv) {
  // Virtual nodes: enough CPUs for a task per GPU with room to spare, whatever this host has.
  int nodes = 4, gpus = 8, cpus = 32;
  std::string mem = "64G", state_dir = client::DefaultStateDir();
  CLI::App app{"Start a lockstep cluster on this machine", "lockstep up"};
  app.add_option("--nodes", nodes, "virtual nodes (default 4)")->check(CLI::Range(1, 4096));
  app.add_option("--gpus-per-node", gpus, "virtual GPUs per node (default 8)")
      ->check(CLI::Range(0, 64));
  app.add_option("--cpus-per-node", cpus, "CPUs per node (default 32)")->check(CLI::Range(1, 4096));
  app.add_option("--mem-per-node", mem, "memory per node (default 64G)");
  app.add_option("--state-dir", state_dir,
                 "state, logs and socket (default $LOCKSTEP_STATE_DIR or ~/.local/state/lockstep)");
  std::string backend = "agent", kubeconfig;
  app.add_option("--backend", backend,
                 "agent (virtual nodes on this machine) or kubernetes (the nodes of a cluster)")
      ->check(CLI::IsMember({"agent", "kubernetes"}));
  app.add_option("--kubeconfig", kubeconfig,
                 "with --backend kubernetes: the cluster (default $KUBECONFIG, in-cluster, "
                 "~/.kube/config)");
  std::string health_program;
  int health_interval = 0;
  bool nvml = false;
  app.add_option("--health-program", health_program,
                 "run this health program on every node (Nagios exit codes; docs/health.md)");
  app.add_option("--health-interval", health_interval, "seconds between health checks (default 60)")
      ->check(CLI::Range(1, 86400));
  std::string prolog, epilog;
  app.add_option("--prolog", prolog, "run this program on each node before a job's tasks there");
  app.add_option("--epilog", epilog, "run this program on each node after a job ends there");
  app.add_flag("--nvml", nvml,
               "serve this host as one node whose GPUs come from NVML, with GPU health checks");
  std::vector<std::string> storage;
  app.add_option("--storage", storage,
                 "DIR[:ro]: a host directory every node and job pod sees at the same path "
                 "(repeatable; docs/storage.md)");
  std::string policy;
  app.add_option("--policy", policy,
                 "the admission policy's rules (YAML; docs/policy.md), read again when it changes");
  CLI11_PARSE(app, argc, argv);
  Result<std::string> policy_yaml = UpPolicyYaml(policy);
  if (!policy_yaml.ok()) return Fail("lockstep up", policy_yaml.status());
  Result<std::string> storage_yaml = UpStorageYaml(storage);
  if (!storage_yaml.ok()) return Fail("lockstep up", storage_yaml.status());
  Result<std::string> health_yaml = UpHealthYaml(health_program, health_interval);
  if (!health_yaml.ok()) return Fail("lockstep up", health_yaml.status());
  Result<std::string> hooks_yaml = UpJobHooksYaml(prolog, epilog);
  if (!hooks_yaml.ok()) return Fail("lockstep up", hooks_yaml.status());
  if (nvml && backend != "agent") return Fail("lockstep up", "--nvml goes with --backend agent");
  if (!kubeconfig.empty() && backend != "kubernetes")
    return Fail("lockstep up", "--kubeconfig goes with --backend kubernetes");
  if (!kubeconfig.empty()) kubeconfig = fs::absolute(kubeconfig).string();
  // Absolute: the daemons' command lines name it, and a later up or down is checked against them.
  state_dir = fs::absolute(state_dir).lexically_normal().string();
  std::error_code ec;
  fs::create_directories(state_dir, ec);
  if (ec) return Fail("lockstep up", "cannot create " + state_dir + ": " + ec.message());
  std::string socket = state_dir + "/lockstepd.sock";
  client::ApiClient api(socket);
  if (Alive(ReadPid(state_dir + "/lockstepd.pid"))) {
    if (Result<nlohmann::json> now = api.Get("/api/v1/nodes"); now.ok()) {
      std::printf("lockstep is already up (state in %s; nodes: %s); 'lockstep down' stops it\n",
                  state_dir.c_str(), NodeStates(*now).c_str());
      return 0;
    }
  }
  if (backend == "kubernetes") {
    StopPrevious(state_dir, "agent.pid", "lockstep-agent");
    StopPrevious(state_dir, "lockstepd.pid", "lockstepd");  // alive but not answering
    return UpKubernetes(state_dir, kubeconfig, *storage_yaml + *policy_yaml, api);
  }
  std::string config = state_dir + "/cluster.yaml";
  std::string dir = SelfDir();
  std::string gpu_type = "virtual";
  if (nvml) {  // this host as one node: its GPUs as NVML sees them
    Result<HostGpus> host = DetectHostGpus(dir + "/lockstep-agent", state_dir);
    if (!host.ok()) return Fail("lockstep up", host.status());
    nodes = 1, gpus = host->count, gpu_type = host->type;
  }
  std::string names = nodes == 1 ? "node1" : "node[1-" + std::to_string(nodes) + "]";
  std::vector<std::string> agent = {dir + "/lockstep-agent", "--socket", socket, "--state-dir",
                                    state_dir, "--nodes", names, "--cpus", std::to_string(cpus),
                                    "--mem", mem};
  if (!nvml) agent.insert(agent.end(), {"--gpus", std::to_string(gpus)});  // else NVML's
  // An agent that outlived its lockstepd (a crash) and serves these same nodes is kept: it
  // registers again with the new lockstepd, which adopts the jobs it still runs. Any other is
  // stopped, its tasks with it, so that no agent runs on unseen beside a new one.
  const pid_t previous = ReadPid(state_dir + "/agent.pid");
  const bool keep_agent = IsOurProcess(previous, "lockstep-agent", state_dir) &&
                          Running(previous) && CommandLine(previous) == agent;
  if (!keep_agent) StopPrevious(state_dir, "agent.pid", "lockstep-agent");
  StopPrevious(state_dir, "lockstepd.pid", "lockstepd");  // alive but not answering
  std::ofstream(config) << ClusterYaml(nodes, gpus, cpus, mem, gpu_type) << *health_yaml
                        << *hooks_yaml << *storage_yaml << *policy_yaml;
  pid_t d = Spawn({dir + "/lockstepd", "--config", config, "--state-dir", state_dir},
                  state_dir + "/lockstepd.log");
  // The jobs that ran when lockstep stopped, as lockstepd read them back, before any agent
  // registers.
  std::optional<std::map<JobId, int>> running_before;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(running_before = RunningJobs(api)) && Alive(d) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (keep_agent) {
    std::printf("lockstep up: keeping lockstep-agent (pid %d), which outlived lockstepd and "
                "still runs its jobs\n",
                static_cast<int>(previous));
  } else {
    pid_t a = Spawn(agent, state_dir + "/agent.log");
    std::ofstream(state_dir + "/agent.pid") << a << "\n";
  }
  std::optional<std::string> states =
      running_before ? WaitResponding(api, nodes, std::chrono::seconds(30)) : std::nullopt;
  if (!states) {
    std::string why = Alive(d) ? "the nodes did not register" : "lockstepd exited";
    return Fail("lockstep up", why + "; see " + state_dir + "/lockstepd.log and agent.log");
  }
  if (!running_before->empty() && !keep_agent) ReportEndedRuns(api, *running_before);
  if (!running_before->empty() && keep_agent)
    std::printf("lockstep up: running jobs kept: %s\n", Ids(KeysOf(*running_before)).c_str());
  std::printf("lockstep is up: %d node%s x %d GPUs (%s; %s), state in %s\n\n", nodes,
              nodes == 1 ? "" : "s", gpus, nvml ? "NVML" : "virtual", states->c_str(),
              state_dir.c_str());
  std::printf("Next:\n");
  if (state_dir != client::DefaultStateDir())
    std::printf("  export LOCKSTEP_STATE_DIR=%s\n", state_dir.c_str());
  std::printf("  %s/lockstep install-aliases ~/.local/bin     # sbatch, squeue, ... as commands\n",
              dir.c_str());
  std::printf("  sbatch --gpus=1 --wrap 'echo $CUDA_VISIBLE_DEVICES'\n");
  std::printf("  squeue; sinfo; sacct\n");
  std::printf("  lockstep down\n");
  return 0;
}

int RunDown(int argc, char** argv) {
  std::string state_dir = client::DefaultStateDir();
  CLI::App app{"Stop the cluster that 'lockstep up' started", "lockstep down"};
  app.add_option("--state-dir", state_dir, "as given to lockstep up");
  CLI11_PARSE(app, argc, argv);
  state_dir = fs::absolute(state_dir).lexically_normal().string();
  {  // What stopping does to the jobs that run: said before it is done.
    client::ApiClient api(state_dir + "/lockstepd.sock");
    std::optional<std::map<JobId, int>> running;
    if (IsOurProcess(ReadPid(state_dir + "/lockstepd.pid"), "lockstepd", state_dir))
      running = RunningJobs(api);
    if (running && !running->empty()) {
      const std::vector<JobId> ids = KeysOf(*running);
      std::printf("lockstep down: job%s %s running: the nodes stop and their tasks end now; the "
                  "next 'lockstep up' requeues them (a job that may not be requeued ends "
                  "NODE_FAIL)\n",
                  ids.size() == 1 ? "" : "s", Ids(ids).c_str());
    }
  }
  int stopped = 0;
  const std::pair<const char*, const char*> kStarted[] = {{"agent.pid", "lockstep-agent"},
                                                          {"lockstepd.pid", "lockstepd"}};
  for (const auto& [name, program] : kStarted) {
    std::string path = state_dir + "/" + name;
    pid_t pid = ReadPid(path);
    if (!IsOurProcess(pid, program, state_dir) || !Running(pid)) continue;
    StopProcess(pid);
    ::unlink(path.c_str());
    ++stopped;
  }
  std::printf(stopped ? "lockstep is down (state kept in %s)\n" : "lockstep was not running (%s)\n",
              state_dir.c_str());
  return 0;
}

int RunInstallAliases(int argc, char** argv) {
  std::string dir;
  CLI::App app{"Make sbatch, squeue, ... links to lockstep", "lockstep install-aliases"};
  app.add_option("dir", dir, "where to put the links")->required();
  CLI11_PARSE(app, argc, argv);
  std::error_code ec;
  fs::create_directories(dir, ec);
  // The Slurm names go to lockstep-slurm, the commands alone, which start faster (slurm_main.cc);
  // to lockstep itself where it was not built.
  std::string self = SelfDir() + "/lockstep";
  if (fs::exists(SelfDir() + "/lockstep-slurm")) self = SelfDir() + "/lockstep-slurm";
  for (const char* name : kAliases) {
    fs::path link = fs::path(dir) / name;
    fs::remove(link, ec);
    fs::create_symlink(self, link, ec);
    if (ec) return Fail("lockstep install-aliases", link.string() + ": " + ec.message());
  }
  // Every name it made, so the message cannot fall behind the list (issue 37).
  std::string names;
  for (const char* name : kAliases) names += (names.empty() ? "" : " ") + std::string(name);
  std::printf("linked %s in %s to %s\n", names.c_str(), dir.c_str(), self.c_str());
  return 0;
}

}  // namespace lockstep::cli
