#include "cli/scontrol_options.h"

#include "cli/slurm/slurm_options.h"

namespace lockstep::cli {

ScontrolCommandLine ParseScontrolCommandLine(int argc, char** argv) {
  ScontrolCommandLine out;
  auto ignore = [](const std::string&) { return Status::Ok(); };
  const std::vector<SlurmOption> table = {
      {"all", 'a', OptArg::kNone, ignore, "show all partitions (all are shown)"},
      {"details", 'd', OptArg::kNone, ignore, "more details (no more than shown)"},
      {"federation", 0, OptArg::kNone, ignore, "federated information (no effect)"},
      {"future", 'F', OptArg::kNone, ignore, "nodes in the FUTURE state (lockstep has none)"},
      {"hide", 0, OptArg::kNone, ignore, "hide hidden partitions (none are hidden)"},
      {"local", 0, OptArg::kNone, ignore, "this cluster only (the only one)"},
      {"clusters", 'M', OptArg::kRequired, ignore, "cluster to issue commands to (this one)", "cluster"},
      {"cluster", 'M', OptArg::kRequired, ignore, nullptr},
      {"oneliner", 'o', OptArg::kNone, [&out](const std::string&) { out.oneliner = true; return Status::Ok(); }, "one line per record"},
      {"quiet", 'Q', OptArg::kNone, [&out](const std::string&) { out.quiet = true; return Status::Ok(); }, "no warnings"},
      {"sibling", 0, OptArg::kNone, ignore, "sibling jobs of a federation (no effect)"},
      {"uid", 'u', OptArg::kRequired, ignore, "act as this user (only as yourself: no effect)", "uid"},
      {"verbose", 'v', OptArg::kNone, ignore, "verbosity level"},
      {"version", 'V', OptArg::kNone, ignore, "output version information and exit"},
  };
  ParsedCommandLine cl = ParseSlurmCommandLine("scontrol", argc, argv, table, "[OPTIONS] [command]");
  out.exit_code = cl.exit_code;
  out.words = std::move(cl.operands);
  return out;
}

}  // namespace lockstep::cli
