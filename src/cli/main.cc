// lockstep: one binary for every command. `lockstep <verb> ...`; the Slurm names come later
// through argv[0] (symlinks made by `lockstep install-aliases`).
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"

namespace {

void PrintUsage(std::FILE* out) {
  std::fprintf(out,
               "usage: lockstep <command> [options]\n"
               "\n"
               "commands:\n"
               "  sim        replay a workload trace through the scheduler in virtual time\n"
               "  version    print the version\n"
               "\n"
               "`lockstep <command> --help` describes a command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  std::string verb = argv[1];
  if (verb == "sim") return lockstep::cli::RunSim(argc - 1, argv + 1);
  if (verb == "version" || verb == "--version") {
    std::printf("lockstep %s\n", LOCKSTEP_VERSION);
    return 0;
  }
  if (verb == "help" || verb == "--help" || verb == "-h") {
    PrintUsage(stdout);
    return 0;
  }
  std::fprintf(stderr, "lockstep: unknown command '%s' (try 'lockstep help')\n", verb.c_str());
  return 2;
}
