// A real cluster for end-to-end tests: lockstepd and lockstep-agent as processes of their own
// in a temporary state directory, and the lockstep CLI run as a user would run it. Every
// process the harness starts is stopped by its PID when the harness goes away (and dies with
// the test process if that crashes first: PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/wait_for.h"  // WaitFor: the one polling wait of the tests

namespace lockstep::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

struct ClusterOptions {
  int nodes = 2;
  int gpus_per_node = 4;
  int cpus_per_node = 16;
  int node_timeout_s = 30;
  int kill_wait_s = 2;
  std::string extra_yaml;  // appended to the cluster YAML (partitions, qos, scheduler)
  std::string node_yaml;   // appended to the nodes' entry (indented 4: "    mig: ...")
  std::vector<std::string> daemon_args;  // appended to lockstepd's command line
  std::string agent_socket;              // the agent's --socket (default: lockstepd's Unix socket)
  std::map<std::string, std::string> agent_env;  // set in the agent's environment
  std::vector<std::string> agent_args;           // appended to the agent's command line
  // Not empty: lockstepd's --state-dir (a volume replicas share); its socket and log stay in dir().
  std::string state_dir;
};

class Cluster {
 public:
  explicit Cluster(const ClusterOptions& options = {});
  ~Cluster();

  // Starts lockstepd (and the agent unless `with_agent` is false); waits for idle nodes.
  bool Start(bool with_agent = true);
  void StartDaemon();
  void StartAgent();
  // SIGKILL, as a crash would.
  void KillDaemon();
  // lockstepd's wait status once it has exited by itself (reaped then), else nullopt.
  std::optional<int> DaemonExited();
  void KillAgent();
  // An agent of its own for one node, serving it as a host (GPUs from NVML, not virtual ones),
  // with `env` (LD_LIBRARY_PATH for a fake NVML); its log is agent-<node>.log. Stopped with the
  // cluster, or by StopNodeAgent (SIGTERM). `extra_args` go on its command line (--health-only).
  // An agent for `node` named `name` (default "agent-NODE"; a second one for the same node, a
  // checker, needs its own), logging to NAME.log, its state in a directory of its own when named.
  void StartNodeAgent(const std::string& node, const std::map<std::string, std::string>& env,
                      const std::vector<std::string>& extra_args = {},
                      const std::string& name = "");
  void StopNodeAgent(const std::string& node, const std::string& name = "");
  // SIGSTOP / SIGCONT: an agent that stops heartbeating without dying.
  void PauseAgent();
  void ResumeAgent();

  // Runs `lockstep <args>` (args[0] is the verb, e.g. "sbatch") in `cwd` as `uid` (-1: as is).
  // `env` is set in the command's environment on top of the test's (an empty value unsets).
  CommandResult Run(const std::vector<std::string>& args, const std::string& cwd = "", int uid = -1,
                    const std::string& stdin_text = "",
                    const std::map<std::string, std::string>& env = {});
  // GET on the API as JSON (through `lockstep`-independent curl-free client).
  nlohmann::json Get(const std::string& target);
  // Polls until the job reaches a finished state or `timeout_s` passes; its JSON.
  nlohmann::json WaitJob(unsigned long long id, int timeout_s = 20);
  nlohmann::json Job(unsigned long long id);
  bool WaitNodes(const std::string& state, int count, int timeout_s = 20);

  // The options, which a test may change between starts (say, the agent's environment).
  ClusterOptions& options() { return options_; }
  const std::string& dir() const { return dir_; }
  const std::string& work() const { return work_; }
  pid_t agent_pid() const { return agent_; }  // the cluster's agent; -1 when not running
  std::string ReadFile(const std::string& path) const;

 private:
  pid_t Spawn(const std::vector<std::string>& argv, const std::string& log,
              const std::map<std::string, std::string>& env = {});
  void Stop(pid_t& pid, int signo);

  ClusterOptions options_;
  std::string dir_;   // state
  std::string work_;  // where jobs are submitted from
  std::string bin_;   // build/bin
  pid_t daemon_ = -1;
  pid_t agent_ = -1;
  std::map<std::string, pid_t> node_agents_;  // StartNodeAgent's, by name
};

// Submits with `sbatch --parsable`; 0 on failure.
unsigned long long Submit(Cluster& c, std::vector<std::string> args, const std::string& cwd = "");

}  // namespace lockstep::testing
