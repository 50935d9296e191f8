// lockstep-agent: runs jobs on this host's nodes for lockstepd.
//   lockstep-agent --socket PATH --state-dir DIR                      # the host, GPUs from NVML
//   lockstep-agent --socket PATH --state-dir DIR --nodes 'node[1-4]' --cpus 8 --mem 16G --gpus 8
//                                                                     # virtual nodes, virtual GPUs
//   lockstep-agent --socket https://HOST:PORT --state-dir DIR --nodes NAME --health-only
//                                                                     # health checks only
//   lockstep-agent --socket https://HOST:PORT --state-dir DIR --nodes NAME --mounts-only \
//                  --host-root /host                                  # shared storage only
//   ... [--log-level info] [--log-file PATH] [--give-up-after SECONDS]
//   lockstep-agent keep-core ...     # run by the agent itself, as a job's user (core_dump.h)
//   lockstep-agent bcast-write ...   # likewise: one piece of an sbcast (bcast_write.h)
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <thread>

#include "backend/agent/agent.h"
#include "backend/agent/bcast_write.h"
#include "backend/agent/core_dump.h"
#include "backend/agent/nvml.h"
#include "client/api_client.h"
#include "common/duration.h"
#include "common/hostlist.h"
#include "common/log.h"

int main(int argc, char** argv) {
  // The core keeper (core_dump.h): the agent runs itself so, as a job's user.
  if (argc >= 2 && std::string_view(argv[1]) == "keep-core")
    return lockstep::agent::KeepCoreMain(std::vector<std::string>(argv + 2, argv + argc));
  // sbcast's writer (bcast_write.h): the agent runs itself so, as a job's user.
  if (argc >= 2 && std::string_view(argv[1]) == "bcast-write")
    return lockstep::agent::BroadcastWriteMain(std::vector<std::string>(argv + 2, argv + argc));
  lockstep::agent::AgentOptions o;
  std::string state_dir, nodes, mem = "0", gpu_type = "virtual";
  int cpus = 0, gpus = -1;
  CLI::App app{"lockstep's node agent", "lockstep-agent"};
  app.add_option("--socket", o.socket_path,
                 "lockstepd's socket, or https://HOST:PORT with LOCKSTEP_TOKEN an operator's "
                 "token (default: $LOCKSTEP_SERVER, else the default socket)");
  app.add_option("--state-dir", state_dir, "spool for job scripts")->required();
  app.add_option("--name", o.name, "this agent's name (default: host:first-node)");
  app.add_option("--address", o.address, "address of this host for MASTER_ADDR");
  app.add_option("--nodes", nodes, "serve these virtual nodes (a hostlist) instead of the host");
  app.add_option("--cpus", cpus, "CPUs per node (default: the host's)");
  app.add_option("--mem", mem, "memory per node, e.g. 16G (default: the host's)");
  app.add_option("--gpus", gpus, "virtual GPUs per node (default: NVML's, or none)");
  app.add_option("--gpu-type", gpu_type, "type of the virtual GPUs");
  app.add_option("--cgroup-root", o.cgroup_root,
                 "cgroup v2 directory for jobs (default: autodetect)");
  long long give_up_s = o.give_up_after.count();
  app.add_option("--give-up-after", give_up_s,
                 "exit when lockstepd has not answered for this many seconds and refuses "
                 "registration (default 3600; 0: never)")
      ->check(CLI::NonNegativeNumber);
  long long usage_s = o.usage_interval.count();
  app.add_option("--acct-gather-frequency", usage_s,
                 "sample running tasks' usage for sstat every this many seconds (Slurm's "
                 "JobAcctGatherFrequency; default 30; 0: never)")
      ->check(CLI::Range(0LL, 86400LL));
  CLI::Option* health_only =
      app.add_flag("--health-only", o.health_only,
                   "health checks only: report this host's health (NVML, the health program) and "
                   "launch nothing (the Kubernetes DaemonSet)");
  app.add_flag("--mounts-only", o.mounts_only,
               "shared file systems only: mount, check and report the cluster's declared storage "
               "for this host and launch nothing (the Kubernetes storage DaemonSet)")
      ->excludes(health_only);
  app.add_option("--host-root", o.host_root,
                 "where this host's / is seen (a container's hostPath of /): storage is mounted "
                 "and checked under it")
      ->check(CLI::ExistingDirectory);
  bool list_gpus = false;
  app.add_flag("--list-gpus", list_gpus,
               "print this host's GPUs as NVML sees them (JSON) and exit (lockstep up --nvml)");
  std::string log_level = "info", log_file;
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warning, error or off (default info)");
  app.add_option("--log-file", log_file, "append the log to this file (default: stderr)");
  CLI11_PARSE(app, argc, argv);
  if (list_gpus) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& g : lockstep::agent::DetectNvidiaGpus())
      out.push_back({{"index", g.index}, {"uuid", g.uuid}, {"type", g.type}, {"serial", g.serial}});
    std::printf("%s\n", nlohmann::json{{"gpus", out}}.dump().c_str());
    return 0;
  }
  o.give_up_after = std::chrono::seconds(give_up_s);
  o.usage_interval = std::chrono::seconds(usage_s);
  lockstep::Result<lockstep::log::Level> level = lockstep::log::ParseLevel(log_level);
  if (!level.ok()) {
    std::fprintf(stderr, "lockstep-agent: %s\n", level.status().message().c_str());
    return 2;
  }
  if (lockstep::Status st = lockstep::log::Init({"lockstep-agent", *level, log_file}); !st.ok()) {
    std::fprintf(stderr, "lockstep-agent: %s\n", st.message().c_str());  // no log to write to
    return 2;
  }
  if (o.socket_path.empty()) o.socket_path = lockstep::client::DefaultServer();

  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::vector<std::string> names = {host};
  if (!nodes.empty()) {
    auto expanded = lockstep::ExpandHostlist(nodes);
    if (!expanded.ok()) {
      lockstep::log::Error("--nodes: {}", expanded.status().message());
      return 2;
    }
    names = *expanded;
  }
  auto mem_mb = lockstep::ParseMemoryMb(mem);
  if (!mem_mb.ok()) {
    lockstep::log::Error("--mem: {}", mem_mb.status().message());
    return 2;
  }
  std::vector<lockstep::agent::AgentNode::Gpu> real =
      gpus < 0 ? lockstep::agent::DetectNvidiaGpus()
               : std::vector<lockstep::agent::AgentNode::Gpu>{};
  for (const std::string& name : names) {
    lockstep::agent::AgentNode n = lockstep::agent::DetectHostNode(name);
    if (cpus > 0) n.cpus = cpus;
    if (*mem_mb > 0) n.mem_mb = *mem_mb;
    n.gpus = real;
    n.nvml = gpus < 0 && !real.empty();
    for (int g = 0; g < gpus; ++g) n.gpus.push_back({g, "", gpu_type});
    o.nodes.push_back(n);
  }
  o.spool_dir = state_dir + "/spool-" + names.front();
  // Jobs call srun, sbatch, ... from their scripts: links to the lockstep binary beside this one.
  char self[4096] = {};
  ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string lockstep =
      len > 0 ? std::filesystem::path(std::string(self, len)).parent_path() / "lockstep" : "";
  if (!lockstep.empty() && std::filesystem::exists(lockstep)) {
    o.tool_dir = state_dir + "/bin";
    std::error_code ec;
    std::filesystem::create_directories(o.tool_dir, ec);
    for (const char* name : {"sbatch", "srun", "squeue", "scancel", "sinfo", "scontrol", "sacct",
                             "sprio", "sbcast", "lockstep"}) {
      std::filesystem::remove(std::filesystem::path(o.tool_dir) / name, ec);
      std::filesystem::create_symlink(lockstep, std::filesystem::path(o.tool_dir) / name, ec);
    }
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  auto agent = lockstep::agent::Agent::Create(o);
  if (!agent.ok()) {
    lockstep::log::Error("{}", agent.status().message());
    return 1;
  }
  std::thread runner([&] {
    (*agent)->Run();
    if ((*agent)->gave_up()) ::kill(::getpid(), SIGTERM);  // wakes the sigwait below
  });
  int sig = 0;
  sigwait(&signals, &sig);
  (*agent)->Stop();
  runner.join();
  (*agent)->Shutdown(std::chrono::seconds(5));
  return (*agent)->gave_up() ? 3 : 0;
}
