// lockstep: one binary for every command. `lockstep <verb> ...`, and the Slurm names through
// argv[0] (symlinks made by `lockstep install-aliases DIR`).
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"

namespace {

using Command = int (*)(int, char**);

struct Verb {
  const char* name;
  Command run;
  const char* help;
};

constexpr Verb kVerbs[] = {
    {"sbatch", lockstep::cli::RunSbatch, "submit a batch script"},
    {"srun", lockstep::cli::RunSrun, "run a job step (inside an allocation), or allocate and run"},
    {"salloc", lockstep::cli::RunSalloc, "allocate, run a command (a shell) in it, release"},
    {"squeue", lockstep::cli::RunSqueue, "list queued and running jobs"},
    {"scancel", lockstep::cli::RunScancel, "cancel or signal jobs"},
    {"sinfo", lockstep::cli::RunSinfo, "list partitions and nodes"},
    {"scontrol", lockstep::cli::RunScontrol, "show and update jobs, nodes and partitions"},
    {"sacct", lockstep::cli::RunSacct, "accounting: jobs that ran and are running"},
    {"sprio", lockstep::cli::RunSprio, "pending jobs' priorities by factor"},
    {"sacctmgr", lockstep::cli::RunSacctmgr, "accounts, users, associations and QoS"},
    {"why", lockstep::cli::RunWhy, "why a job is pending, and when it should start"},
    {"health", lockstep::cli::RunHealth, "GPUs and nodes by failures; clear a bad actor"},
    {"storage", lockstep::cli::RunStorage, "the shared file systems nodes and jobs see"},
    {"policy", lockstep::cli::RunPolicy, "the admission policy: audit log (operators), test"},
    {"logs", lockstep::cli::RunLogs, "print a job's output (its pods' logs on Kubernetes)"},
    {"sdiag", lockstep::cli::RunSdiag, "scheduler statistics: cycles, jobs, RPCs"},
    {"sshare", lockstep::cli::RunSshare, "the fair-share tree: shares, usage, factors"},
    {"sstat", lockstep::cli::RunSstat, "a running job's usage: CPU, memory, pages, disk"},
    {"sattach", lockstep::cli::RunSattach, "attach to a running step's output"},
    {"sbcast", lockstep::cli::RunSbcast, "copy a file to every node of a running job"},
    {"sreport", lockstep::cli::RunSreport, "cluster utilization and top users from accounting"},
    {"events", lockstep::cli::RunEvents, "job and node events (--follow to keep reading)"},
    {"metrics", lockstep::cli::RunMetrics, "lockstepd's metrics as Prometheus text"},
    {"web", lockstep::cli::RunWeb, "the web view on a local port (--port N)"},
    {"up", lockstep::cli::RunUp, "start a cluster on this machine"},
    {"down", lockstep::cli::RunDown, "stop it"},
    {"login", lockstep::cli::RunLogin,
     "a shell (or -- COMMAND) in your login environment: your own pod on Kubernetes"},
    {"token", lockstep::cli::RunToken,
     "print a token for lockstepd's HTTPS API (LOCKSTEP_TOKEN=...)"},
    {"drain", lockstep::cli::RunDrain,
     "drain nodes; --rolling: maintain them a batch at a time, then resume"},
    {"resume", lockstep::cli::RunResume, "resume drained nodes"},
    {"sim", lockstep::cli::RunSim, "replay a workload trace through the scheduler in virtual time"},
    {"install-aliases", lockstep::cli::RunInstallAliases,
     "make sbatch, squeue, ... links to lockstep"},
};

void PrintUsage(std::FILE* out) {
  std::fprintf(out, "usage: lockstep <command> [options]\n\ncommands:\n");
  for (const Verb& v : kVerbs) std::fprintf(out, "  %-16s %s\n", v.name, v.help);
  std::fprintf(out, "  %-16s %s\n\n`lockstep <command> --help` describes a command.\n", "version",
               "print the version");
}

const Verb* Find(const std::string& name) {
  for (const Verb& v : kVerbs)
    if (name == v.name) return &v;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::string self = argv[0];
  std::string base =
      self.substr(self.find_last_of('/') == std::string::npos ? 0 : self.find_last_of('/') + 1);
  if (base != "lockstep") {
    // Called as sbatch, squeue, ...: only the Slurm names, not lockstep's own verbs.
    const Verb* v = Find(base);
    if (v && base[0] == 's') return v->run(argc, argv);
    if (base == "lockstep-login") return lockstep::cli::RunLogin(argc, argv);
    // A name of the site's own for `lockstep login` (login.alias), such as slogin.
    if (!v && base.rfind("lockstep", 0) != 0) return lockstep::cli::RunLoginAlias(base, argc, argv);
  }
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  std::string verb = argv[1];
  if (verb == "version" || verb == "--version") {
    std::printf("lockstep %s\n", LOCKSTEP_VERSION);
    return 0;
  }
  if (verb == "help" || verb == "--help" || verb == "-h") {
    PrintUsage(stdout);
    return 0;
  }
  if (const Verb* v = Find(verb)) return v->run(argc - 1, argv + 1);
  // Not a user's command (so not listed): lockstepd's in a team's shared login pod.
  if (verb == "login-as") return lockstep::cli::RunLoginAs(argc - 1, argv + 1);
  std::fprintf(stderr, "lockstep: unknown command '%s' (try 'lockstep help')\n", verb.c_str());
  return 2;
}
