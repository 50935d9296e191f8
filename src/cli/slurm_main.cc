// lockstep-slurm: the Slurm commands alone (sbatch, srun, squeue, ...), called through their
// names (symlinks made by `lockstep install-aliases DIR`) or as `lockstep-slurm <command>`.
// It links neither the simulator nor the cluster YAML nor the Kubernetes client, and carries
// its C++ runtime, fmt and OpenSSL inside, so that a command starts about as fast as a trivial
// process (docs/benchmarks.md, "CLI start-up"). `lockstep <command>` runs the same code.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"

namespace {

using Command = int (*)(int, char**);

struct SlurmCommand {
  const char* name;
  Command run;
};

constexpr SlurmCommand kCommands[] = {
    {"sbatch", lockstep::cli::RunSbatch},   {"srun", lockstep::cli::RunSrun},
    {"salloc", lockstep::cli::RunSalloc},
    {"squeue", lockstep::cli::RunSqueue},   {"scancel", lockstep::cli::RunScancel},
    {"sinfo", lockstep::cli::RunSinfo},     {"scontrol", lockstep::cli::RunScontrol},
    {"sacct", lockstep::cli::RunSacct},     {"sprio", lockstep::cli::RunSprio},
    {"sdiag", lockstep::cli::RunSdiag},     {"sacctmgr", lockstep::cli::RunSacctmgr},
    {"sshare", lockstep::cli::RunSshare},     {"sreport", lockstep::cli::RunSreport},
    {"sstat", lockstep::cli::RunSstat},       {"sattach", lockstep::cli::RunSattach},
    {"sbcast", lockstep::cli::RunSbcast},
};

Command Find(const char* name) {
  for (const SlurmCommand& c : kCommands)
    if (std::strcmp(c.name, name) == 0) return c.run;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const char* slash = std::strrchr(argv[0], '/');
  const char* base = slash ? slash + 1 : argv[0];
  if (Command run = Find(base)) return run(argc, argv);
  if (argc >= 2) {
    if (Command run = Find(argv[1])) return run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "usage: lockstep-slurm <command> [options], or through a command's name:");
  for (const SlurmCommand& c : kCommands) std::fprintf(stderr, " %s", c.name);
  std::fprintf(stderr, "\n");
  return 2;
}
